"""People judging in the dashboard: judging tasks (a pool with its texts and pre-labels) and judgments.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25 11:11:56
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('judging_tasks',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=200), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('n_items', sa.Integer(), nullable=False),
    sa.Column('n_queries', sa.Integer(), nullable=False),
    sa.Column('n_prelabels', sa.Integer(), nullable=False),
    sa.Column('info', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('judging_docs',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('task_id', sa.Integer(), nullable=False),
    sa.Column('doc_id', sa.String(length=512), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('length', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['judging_tasks.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('task_id', 'doc_id', name='uq_judging_docs_task_doc')
    )
    with op.batch_alter_table('judging_docs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_judging_docs_task_id'), ['task_id'], unique=False)

    op.create_table('judging_items',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('task_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('query_id', sa.String(length=512), nullable=False),
    sa.Column('doc_id', sa.String(length=512), nullable=False),
    sa.Column('best_rank', sa.Integer(), nullable=True),
    sa.Column('runs', sa.JSON(), nullable=True),
    sa.Column('prelabel', sa.Integer(), nullable=True),
    sa.Column('prelabel_source', sa.String(length=10), nullable=True),
    sa.Column('prelabel_model', sa.String(length=200), nullable=True),
    sa.Column('prelabel_prompt', sa.String(length=200), nullable=True),
    sa.Column('prelabel_error', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['task_id'], ['judging_tasks.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('task_id', 'query_id', 'doc_id', name='uq_judging_items_task_pair')
    )
    with op.batch_alter_table('judging_items', schema=None) as batch_op:
        batch_op.create_index('ix_judging_items_task_position', ['task_id', 'position'], unique=False)

    op.create_table('judging_queries',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('task_id', sa.Integer(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('query_id', sa.String(length=512), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['judging_tasks.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('task_id', 'query_id', name='uq_judging_queries_task_query')
    )
    with op.batch_alter_table('judging_queries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_judging_queries_task_id'), ['task_id'], unique=False)

    op.create_table('judgments',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('task_id', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('annotator', sa.String(length=100), nullable=False),
    sa.Column('grade', sa.Integer(), nullable=True),
    sa.Column('note', sa.Text(), nullable=False),
    sa.Column('prelabel_shown', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['item_id'], ['judging_items.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['judging_tasks.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('item_id', 'annotator', name='uq_judgments_item_annotator')
    )
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.create_index('ix_judgments_task_annotator', ['task_id', 'annotator'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('judgments', schema=None) as batch_op:
        batch_op.drop_index('ix_judgments_task_annotator')

    op.drop_table('judgments')
    with op.batch_alter_table('judging_queries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_judging_queries_task_id'))

    op.drop_table('judging_queries')
    with op.batch_alter_table('judging_items', schema=None) as batch_op:
        batch_op.drop_index('ix_judging_items_task_position')

    op.drop_table('judging_items')
    with op.batch_alter_table('judging_docs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_judging_docs_task_id'))

    op.drop_table('judging_docs')
    op.drop_table('judging_tasks')
