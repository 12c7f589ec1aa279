"""The receipt of each pre-label (the raw reply, time, endpoint, prompt hash, tokens and cache hit that
``rankscope judge`` records), kept so that the export gives it back.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 09:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('judging_items', schema=None) as batch_op:
        batch_op.add_column(sa.Column('prelabel_receipt', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('judging_items', schema=None) as batch_op:
        batch_op.drop_column('prelabel_receipt')
