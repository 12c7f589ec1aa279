"""What every part of the store shares: :class:`NotFound`, chunked exactly-once inserts, lookups by key."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.orm import Session

from rankscope.errors import Keyed, Said
from rankscope.service.db import Database

__all__ = ["NotFound", "insert_rows", "fetch", "CHUNK"]

M = TypeVar("M")
CHUNK = 2000


class NotFound(Keyed, LookupError):
    """A referenced object does not exist; ``what`` names it (``"test set 3"``), ``field`` the request field.

    Keyed as rankscope's errors are (``error.service.not_found``, filled with the object said in the reader's
    language), so that the dashboard says it in the page's language:

    >>> NotFound.of("test set", 3).text("zh")
    '未找到测试集 3'
    """

    def __init__(self, what: str, field: str = "path") -> None:
        self.what = what
        self.field = field
        super().__init__(f"{what} not found")

    @classmethod
    def of(cls, what: str, key: Any, field: str = "path", **more: Any) -> NotFound:
        """``<what> <key> not found`` (``what``: ``test set``, ``run``, ``evaluation``, ``judging task``, or ``item``
        with the task in ``more``), said in every language by message ``error.service.what.<what>``."""
        said = Said(f"error.service.what.{what.replace(' ', '_')}", (("key", key), *more.items()))
        return cls(str(said), field).keyed("service.not_found", what=said)


def insert_rows(db: Database, session: Session, table: Any, rows: list[dict[str, Any]]) -> None:
    """Insert rows in chunks, skipping rows that hit a unique constraint (exactly-once writes)."""
    for i in range(0, len(rows), CHUNK):
        session.execute(db.insert(table).on_conflict_do_nothing(), rows[i:i + CHUNK])


def fetch(s: Session, model: type[M], key: Any, what: str, field: str) -> M:
    """The row of ``model`` with primary key ``key``, or :class:`NotFound` naming ``what`` and the request field."""
    row = s.get(model, key)
    if row is None:
        raise NotFound.of(what, key, field)
    return row
