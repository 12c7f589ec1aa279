"""A rankscope cache file in SQLite: opened for several threads, in WAL mode, its schema version checked.

The label cache (:mod:`rankscope.labels.cache`) and the embeddings cache
(:mod:`rankscope.retrieval.openai_embeddings`) keep their answers this way; each says in its own words which file
it could not read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection
from pathlib import Path

from rankscope.errors import RankscopeError
from rankscope.i18n import Message

__all__ = ["open_cache"]


def open_cache(path: Path, schema: str, version: int, *, wrong_version: Callable[[str], Message],
               not_a_cache: Callable[[str], Message], upgrades: Collection[str] = ()) -> sqlite3.Connection:
    """The SQLite database at ``path`` (created with its folder when missing), its tables made by ``schema`` (which
    creates ``meta (key, value)`` among them) and its ``schema_version`` in ``meta`` set to ``version`` when new.

    A file at an older version listed in ``upgrades`` is marked ``version`` (the caller's new tables are there by
    ``schema``); another version raises :class:`RankscopeError` with ``wrong_version(found)``, a file SQLite cannot
    read with ``not_a_cache(reason)``.

    >>> import os, tempfile
    >>> from rankscope.i18n import _
    >>> path = Path(tempfile.mkdtemp()) / "c.sqlite"
    >>> say = lambda found: _("schema {found}", found=found)
    >>> schema = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    >>> open_cache(path, schema, 2, wrong_version=say, not_a_cache=say).close()
    >>> open_cache(path, schema, 3, wrong_version=say, not_a_cache=say)
    Traceback (most recent call last):
    rankscope.errors.RankscopeError: schema 2
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.executescript(schema)
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(version),))
            db.commit()
        elif row[0] in upgrades:
            db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
            db.commit()
        elif row[0] != str(version):
            db.close()
            raise RankscopeError(wrong_version(row[0]))
    except sqlite3.DatabaseError as exc:
        raise RankscopeError(not_a_cache(str(exc))) from None
    return db
