"""What every part of the store shares: :class:`NotFound`, chunked exactly-once inserts, lookups by key."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.orm import Session

from rankscope.i18n import N_, Message, _, say
from rankscope.service.db import Database

__all__ = ["NotFound", "insert_rows", "fetch", "CHUNK"]

M = TypeVar("M")
CHUNK = 2000


#: the objects of the store, said in an error
WHAT = {"test set": N_("test set {key}"), "run": N_("run {key}"), "evaluation": N_("evaluation {key}"),
        "judging task": N_("judging task {key}"), "item": N_("item {key} of judging task {task}"),
        "monitor": N_("monitor {key}"), "window": N_("window {key}")}


class NotFound(LookupError):
    """A referenced object does not exist; ``what`` names it (``"test set 3"``), ``field`` the request field.

    Message in the reader's language as rankscope's errors are, so that the dashboard says it in the page's language:

    >>> NotFound.of("test set", 3).text("zh")
    '未找到测试集 3'
    """

    def __init__(self, message: Message | str, field: str = "path") -> None:
        self.message = message
        self.field = field
        super().__init__(str(message))

    def text(self, lang: str = "en") -> str:
        return str(say(self.message, lang))

    @classmethod
    def of(cls, what: str, key: Any, field: str = "path", **more: Any) -> NotFound:
        """``<what> <key> not found`` (``what``: ``test set``, ``run``, ``evaluation``, ``judging task``, or ``item``
        with the task in ``more``)."""
        return cls(_("{what} not found", what=_(WHAT[what], key=key, **more)), field)


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
