"""What every part of the store shares: :class:`NotFound`, chunked exactly-once inserts, lookups by key."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.orm import Session

from rankscope.service.db import Database

__all__ = ["NotFound", "insert_rows", "fetch", "CHUNK"]

M = TypeVar("M")
CHUNK = 2000


class NotFound(LookupError):
    """A referenced object does not exist; ``what`` names it (``"test set 3"``), ``field`` the request field."""

    def __init__(self, what: str, field: str = "path") -> None:
        self.what = what
        self.field = field
        super().__init__(f"{what} not found")


def insert_rows(db: Database, session: Session, table: Any, rows: list[dict[str, Any]]) -> None:
    """Insert rows in chunks, skipping rows that hit a unique constraint (exactly-once writes)."""
    for i in range(0, len(rows), CHUNK):
        session.execute(db.insert(table).on_conflict_do_nothing(), rows[i:i + CHUNK])


def fetch(s: Session, model: type[M], key: Any, what: str, field: str) -> M:
    """The row of ``model`` with primary key ``key``, or :class:`NotFound` naming ``what`` and the request field."""
    row = s.get(model, key)
    if row is None:
        raise NotFound(f"{what} {key}", field)
    return row
