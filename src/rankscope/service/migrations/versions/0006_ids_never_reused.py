"""Ids users see are never given again after a delete: SQLite tables rebuilt with AUTOINCREMENT.

Without it SQLite gives the highest id again once its row is deleted, and a stale id (a bookmark, a
script, a link) names another test set, run or judging task.  PostgreSQL's sequences never reuse: nothing
to do there.  The rebuild runs with SQLite's foreign keys off (:func:`rankscope.service.migrations.upgrade`),
so that dropping the old table deletes nothing that refers to it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 09:00:00
"""

from __future__ import annotations

from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

TABLES = ('test_sets', 'runs', 'judging_tasks', 'judging_items')


def upgrade() -> None:
    if op.get_bind().dialect.name != 'sqlite':
        return
    for table in TABLES:
        with op.batch_alter_table(table, recreate='always', table_kwargs={'sqlite_autoincrement': True}):
            pass


def downgrade() -> None:
    if op.get_bind().dialect.name != 'sqlite':
        return
    for table in TABLES:
        with op.batch_alter_table(table, recreate='always', table_kwargs={'sqlite_autoincrement': False}):
            pass
