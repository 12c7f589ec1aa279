"""The :class:`Database` handle: engine, sessions, dialect-specific setup.

SQLite runs in WAL mode with a busy timeout, foreign keys on, and write
transactions opened with ``BEGIN IMMEDIATE`` so that concurrent writers queue up
instead of failing on a lock upgrade.  PostgreSQL needs nothing special.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, sessionmaker

__all__ = ["Database"]


class Database:
    """Engine plus two session factories: :meth:`read` and :meth:`write`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.is_sqlite = url.startswith("sqlite")
        kwargs: dict[str, Any] = {"future": True}
        if self.is_sqlite:
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": 60}
        else:
            kwargs.update(pool_size=10, max_overflow=20, pool_pre_ping=True)
        self.engine: Engine = create_engine(url, **kwargs)
        if self.is_sqlite:
            _setup_sqlite(self.engine)
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        self._write = sessionmaker(self.engine.execution_options(immediate=True), expire_on_commit=False)

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A session for reading (rolled back at the end)."""
        with self._read() as session:
            yield session

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A session whose transaction is committed on success, rolled back on error."""
        with self._write() as session, session.begin():
            yield session

    def insert(self, table: Any) -> Any:
        """An INSERT for ``table`` of this dialect (it has ``on_conflict_do_nothing``)."""
        return sqlite.insert(table) if self.is_sqlite else postgresql.insert(table)

    def dispose(self) -> None:
        self.engine.dispose()


def _setup_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (below)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=60000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("immediate") else "BEGIN")
