"""Rendered reports (cached, rendered in the background), each query's first-relevant rank, and how
many queries of a run have judgments (the dashboard's mismatch warning).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25 10:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('query_scores', schema=None) as batch_op:
        batch_op.add_column(sa.Column('first_rank', sa.Integer(), nullable=True))
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('n_judged', sa.Integer(), nullable=True))
    op.create_table('reports',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('job_id', sa.String(length=36), nullable=False),
    sa.Column('format', sa.String(length=20), nullable=False),
    sa.Column('lang', sa.String(length=8), nullable=False),
    sa.Column('baseline_run_id', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('body', sa.Text(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('lease_until', sa.Float(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('rendered_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['job_id'], ['jobs.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('job_id', 'format', 'lang', 'baseline_run_id', name='uq_reports_job_key')
    )
    with op.batch_alter_table('reports', schema=None) as batch_op:
        batch_op.create_index('ix_reports_status_lease', ['status', 'lease_until'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('reports', schema=None) as batch_op:
        batch_op.drop_index('ix_reports_status_lease')
    op.drop_table('reports')
    with op.batch_alter_table('runs', schema=None) as batch_op:
        batch_op.drop_column('n_judged')
    with op.batch_alter_table('query_scores', schema=None) as batch_op:
        batch_op.drop_column('first_rank')
