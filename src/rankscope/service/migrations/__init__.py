"""Alembic migrations of the service schema; :func:`upgrade` runs them (called on start)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text

from rankscope.service.db.session import Database

__all__ = ["upgrade", "HERE"]

HERE = Path(__file__).resolve().parent


def upgrade(db: Database, revision: str = "head") -> None:
    """Bring the schema of ``db`` to ``revision`` (``alembic upgrade head``).

    On PostgreSQL an advisory lock keeps two servers starting at once from
    migrating the same database twice; SQLite's write lock does the same there.
    """
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(HERE))
    with db.engine.connect() as conn:
        if not db.is_sqlite:
            conn.execute(text("SELECT pg_advisory_lock(72417001)"))
            conn.commit()
        try:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
            conn.commit()
        finally:
            if not db.is_sqlite:
                conn.execute(text("SELECT pg_advisory_unlock(72417001)"))
                conn.commit()
