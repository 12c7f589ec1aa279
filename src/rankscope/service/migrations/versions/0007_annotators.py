"""Annotators with an identity the service checks (invitation tokens, stored hashed), and a record of every
pre-label the service showed (what makes a judgment not blind).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 09:10:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('judging_annotators',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('task_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('blind', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['judging_tasks.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('task_id', 'name', name='uq_judging_annotators_task_name'),
    sa.UniqueConstraint('token_hash', name='uq_judging_annotators_token'),
    sqlite_autoincrement=True
    )
    with op.batch_alter_table('judging_annotators', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_judging_annotators_task_id'), ['task_id'], unique=False)

    op.create_table('prelabel_views',
    sa.Column('id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('task_id', sa.Integer(), nullable=False),
    sa.Column('item_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('annotator', sa.String(length=100), nullable=True),
    sa.Column('via', sa.String(length=10), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['item_id'], ['judging_items.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['task_id'], ['judging_tasks.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('prelabel_views', schema=None) as batch_op:
        batch_op.create_index('ix_prelabel_views_item_annotator', ['item_id', 'annotator'], unique=False)
        batch_op.create_index(batch_op.f('ix_prelabel_views_task_id'), ['task_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('prelabel_views', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_prelabel_views_task_id'))
        batch_op.drop_index('ix_prelabel_views_item_annotator')
    op.drop_table('prelabel_views')
    with op.batch_alter_table('judging_annotators', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_judging_annotators_task_id'))
    op.drop_table('judging_annotators')
