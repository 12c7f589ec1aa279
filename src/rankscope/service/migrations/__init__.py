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
    On SQLite the migrations run with foreign keys off (a migration that rebuilds a table drops the old
    one: with foreign keys on, that would delete the rows that refer to it) and are checked after.
    """
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(HERE))
    with db.engine.connect() as conn:
        if not db.is_sqlite:
            conn.execute(text("SELECT pg_advisory_lock(72417001)"))
            conn.commit()
        else:  # outside any transaction: the pragma is ignored inside one
            conn.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
        try:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
            conn.commit()
            if db.is_sqlite:
                broken = conn.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
                conn.commit()
                if broken:
                    raise RuntimeError(f"the migrated database has rows whose references are gone: {broken[:5]}")
        finally:
            if not db.is_sqlite:
                conn.execute(text("SELECT pg_advisory_unlock(72417001)"))
                conn.commit()
            else:
                conn.connection.driver_connection.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]
