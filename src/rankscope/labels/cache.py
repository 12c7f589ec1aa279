"""A disk cache of LLM answers (SQLite), so that re-runs and new pools pay only for what is new.

An answer is keyed by ``(model, prompt id, sha256 of the query text, sha256 of the
document text)``: the same passage judged for the same query by the same model
with the same prompt version is never asked twice, whatever pool, file or query
id it comes from.  A changed text, model or prompt version is a new key.  Only
successful answers are stored (a failure is asked again next time); each is
committed as soon as it arrives, so an interrupted batch resumes where it
stopped.  The API key, the endpoint URL and the query/document ids are not
stored.

>>> import os, tempfile
>>> cache = LabelCache(os.path.join(tempfile.mkdtemp(), "labels.sqlite"))
>>> key = cache_key("gpt-4o-mini", "umbrela-1/en", "what is bm25", "BM25 is a ranking function")
>>> cache.put(key, grade=2, reply='{"grade": 2}', tokens_in=120, tokens_out=6)
>>> cache.get(key).grade, len(cache)
(2, 1)
>>> cache.close()
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rankscope.errors import RankscopeError
from rankscope.i18n import _

__all__ = ["CacheKey", "CachedAnswer", "LabelCache", "cache_key", "text_hash"]

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    query_hash TEXT NOT NULL,
    doc_hash TEXT NOT NULL,
    grade INTEGER,
    reply TEXT NOT NULL,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL,
    PRIMARY KEY (model, prompt, query_hash, doc_hash)
) WITHOUT ROWID;
"""


def text_hash(text: str) -> str:
    """SHA-256 of the UTF-8 text, hex.

    >>> text_hash("")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheKey:
    """What an answer is keyed by."""

    model: str
    prompt: str
    query_hash: str
    doc_hash: str


def cache_key(model: str, prompt: str, query: str, doc: str) -> CacheKey:
    """The key of the answer of ``model`` with prompt id ``prompt`` for the texts ``query`` and ``doc``."""
    return CacheKey(model, prompt, text_hash(query), text_hash(doc))


@dataclass(frozen=True)
class CachedAnswer:
    """A stored answer: the grade (None for a generated question), the reply text and the tokens it used."""

    grade: int | None
    reply: str
    tokens_in: int
    tokens_out: int


class LabelCache:
    """The SQLite file at ``path`` (created with its folder when missing); thread-safe."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row is None:
                self._db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                self._db.commit()
            elif row[0] != str(SCHEMA_VERSION):
                raise RankscopeError(_("{path}: label cache schema {found}, this rankscope reads {reads}; use "
                                       "another --cache file", path=str(self.path), found=row[0], reads=SCHEMA_VERSION))
        except sqlite3.DatabaseError as exc:
            raise RankscopeError(_("{path}: not a rankscope label cache ({reason})", path=str(self.path),
                                   reason=str(exc))) from None

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def __enter__(self) -> LabelCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def get(self, key: CacheKey) -> CachedAnswer | None:
        """The stored answer for ``key``, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT grade, reply, tokens_in, tokens_out FROM answers "
                "WHERE model = ? AND prompt = ? AND query_hash = ? AND doc_hash = ?",
                (key.model, key.prompt, key.query_hash, key.doc_hash),
            ).fetchone()
        return None if row is None else CachedAnswer(row[0], row[1], row[2], row[3])

    def get_many(self, keys: Iterable[CacheKey]) -> dict[CacheKey, CachedAnswer]:
        """The stored answers among ``keys``."""
        out = {}
        for key in keys:
            hit = self.get(key)
            if hit is not None:
                out[key] = hit
        return out

    def put(self, key: CacheKey, *, grade: int | None, reply: str, tokens_in: int = 0, tokens_out: int = 0) -> None:
        """Store (or replace) an answer and commit at once."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key.model, key.prompt, key.query_hash, key.doc_hash, grade, reply, tokens_in, tokens_out,
                 time.time()),
            )
            self._db.commit()
