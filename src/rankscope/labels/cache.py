"""A disk cache of LLM answers (SQLite), so that re-runs and new pools pay only for what is new.

An answer is keyed by the SHA-256 of the exact request (:func:`request_digest`):
the endpoint's URL, the whole request body — model, every message with the
prompt's full text and the query and document as sent, temperature,
``max_tokens`` and the prompt's other parameters — and the prompt's retry
message.  The same passage judged for the same query by the same model at the
same endpoint with the same prompt text and parameters is never asked twice,
whatever pool, file or query id it comes from; another ``--base-url`` serving a
model of the same name, a prompt edited without a version bump or another
``--max-tokens`` is a new key.  Only successful answers are stored (a failure is
asked again next time); each is committed as soon as it arrives, so an
interrupted batch resumes where it stopped.  The API key and the query/document
ids are not stored.  A cache file of the earlier layout (keyed by model, prompt
id and texts only) is upgraded in place: its old answers are kept in their own
table but never served, since their requests are unknown.

>>> import os, tempfile
>>> cache = LabelCache(os.path.join(tempfile.mkdtemp(), "labels.sqlite"))
>>> key = cache_key("http://127.0.0.1:8000/v1", {"model": "m", "messages": [{"role": "user", "content": "hi"}]},
...                 model="m", prompt="graded-1/en")
>>> cache.put(key, grade=2, reply='{"grade": 2}', tokens_in=120, tokens_out=6)
>>> cache.get(key).grade, len(cache)
(2, 1)
>>> cache.close()
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rankscope._sqlite import open_cache
from rankscope.i18n import _

__all__ = ["CacheKey", "CachedAnswer", "LabelCache", "cache_key", "request_digest", "text_hash"]

SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS requests (
    digest TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    prompt TEXT NOT NULL,
    grade INTEGER,
    reply TEXT NOT NULL,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
) WITHOUT ROWID;
"""

def text_hash(text: str) -> str:
    """SHA-256 of the UTF-8 text, hex.

    >>> text_hash("")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_digest(url: str, body: Mapping[str, Any], retry: str = "") -> str:
    """SHA-256 (hex) of the exact request: the URL, the JSON body (keys sorted) and the retry message.

    >>> a = request_digest("http://a/v1/chat/completions", {"model": "m", "max_tokens": 5})
    >>> a == request_digest("http://b/v1/chat/completions", {"model": "m", "max_tokens": 5})
    False
    """
    data = json.dumps({"url": url, "body": body, "retry": retry}, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheKey:
    """What an answer is keyed by (``digest``), with the model and prompt id it is about (for reading the file)."""

    digest: str
    model: str = ""
    prompt: str = ""


def cache_key(url: str, body: Mapping[str, Any], *, retry: str = "", model: str = "", prompt: str = "") -> CacheKey:
    """The key of the answer to the request ``body`` sent to ``url`` (:func:`request_digest`)."""
    return CacheKey(request_digest(url, body, retry), model, prompt)


@dataclass(frozen=True)
class CachedAnswer:
    """A stored answer: the grade (None for a generated question), the reply text, the tokens it used and when it
    was made (seconds since the epoch)."""

    grade: int | None
    reply: str
    tokens_in: int
    tokens_out: int
    created: float = 0.0


class LabelCache:
    """The SQLite file at ``path`` (created with its folder when missing); thread-safe."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = open_cache(  # a version-1 file is upgraded: its old answers stay in their table, never served
            self.path, _SCHEMA, SCHEMA_VERSION, upgrades=("1",),
            wrong_version=lambda found: _("{path}: label cache schema {found}, this rankscope reads {reads}; use "
                                          "another --cache file", path=str(self.path), found=found,
                                          reads=SCHEMA_VERSION),
            not_a_cache=lambda reason: _("{path}: not a rankscope label cache ({reason})", path=str(self.path),
                                         reason=reason))

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM requests").fetchone()[0])

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
                "SELECT grade, reply, tokens_in, tokens_out, created FROM requests WHERE digest = ?", (key.digest,),
            ).fetchone()
        return None if row is None else CachedAnswer(row[0], row[1], row[2], row[3], row[4])

    def get_many(self, keys: Iterable[CacheKey]) -> dict[CacheKey, CachedAnswer]:
        """The stored answers among ``keys``."""
        out = {}
        for key in keys:
            hit = self.get(key)
            if hit is not None:
                out[key] = hit
        return out

    def put(self, key: CacheKey, *, grade: int | None, reply: str, tokens_in: int = 0, tokens_out: int = 0,
            created: float | None = None) -> None:
        """Store (or replace) an answer made at ``created`` (default: now) and commit at once."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO requests VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (key.digest, key.model, key.prompt, grade, reply, tokens_in, tokens_out,
                 time.time() if created is None else created),
            )
            self._db.commit()
