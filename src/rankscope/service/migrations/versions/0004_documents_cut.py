"""How many document texts of a test set were cut at the stored length (never silently: API and test set page).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25 13:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('test_sets', schema=None) as batch_op:
        batch_op.add_column(sa.Column('n_documents_cut', sa.Integer(), nullable=False, server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('test_sets', schema=None) as batch_op:
        batch_op.drop_column('n_documents_cut')
