"""Append-only cache of retriever answers, so that an interrupted evaluation resumes.

The cache is a JSONL file.  Line 1 is a header
``{"rankscope_cache": 1, "k": 10, "retriever": ..., "testset": ...}``; every
further line is one finished query, written and flushed as soon as the query
finishes::

    {"query_id": "q7", "ids": ["d3", "d1"], "scores": [0.8, 0.5], "latency": 0.012, "error": null}

(plus ``"texts"`` when chunk texts are needed for answer matching,
``"docs"`` when chunks fold through their metadata and ``"places"`` —
``[doc_id, start, end]`` or null per hit — when span measures need to know where
each chunk lies).  On resume the last line
for each query wins; queries recorded with an error are run again.  A last line
cut short by the interruption is dropped (the file is truncated to the last
complete line); a malformed line elsewhere raises
:class:`~rankscope.errors.ParseError`.  A cache written with another ``k``
is refused rather than mixed.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rankscope.errors import InvalidParameterError, ParseError

__all__ = ["CachedQuery", "RunCache"]

VERSION = 1


@dataclass(frozen=True)
class CachedQuery:
    """One finished query as stored in the cache."""

    query_id: str
    ids: list[str]
    scores: list[float]
    latency: float
    error: str | None = None
    texts: list[str | None] | None = None
    docs: list[str | None] | None = None
    places: list[list[Any] | None] | None = None

    def to_json(self) -> str:
        rec: dict[str, Any] = {"query_id": self.query_id, "ids": self.ids, "scores": self.scores,
                               "latency": round(self.latency, 6), "error": self.error}
        if self.texts is not None:
            rec["texts"] = self.texts
        if self.docs is not None:
            rec["docs"] = self.docs
        if self.places is not None:
            rec["places"] = self.places
        return json.dumps(rec, ensure_ascii=False)


class RunCache:
    """The cache file of one evaluation: :meth:`load` what is done, :meth:`append` as queries finish."""

    def __init__(self, path: str | Path, *, k: int, retriever: str, testset: str) -> None:
        self.path = Path(path)
        self.header = {"rankscope_cache": VERSION, "k": k, "retriever": retriever, "testset": testset}
        self._fh: IO[str] | None = None
        self._lock = threading.Lock()

    def load(self) -> dict[str, CachedQuery]:
        """The queries finished without error, by id (empty when the file does not exist)."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return {}
        raw = self.path.read_bytes()
        complete = raw[: raw.rfind(b"\n") + 1]
        if len(complete) != len(raw):  # a line cut short by the interruption
            with open(self.path, "r+b") as fh:
                fh.truncate(len(complete))
        lines = complete.decode("utf-8").splitlines()
        if not lines:
            return {}
        src = str(self.path)
        try:
            head = json.loads(lines[0])
        except json.JSONDecodeError:
            raise ParseError("not a rankscope cache (bad header line)", source=src, line=1) from None
        if not isinstance(head, dict) or head.get("rankscope_cache") != VERSION:
            raise ParseError("not a rankscope cache (no 'rankscope_cache' header)", source=src, line=1)
        if head.get("k") != self.header["k"]:
            raise InvalidParameterError(
                f"cache {src} was written with k={head.get('k')}, this evaluation uses k={self.header['k']}; "
                "use another cache file or the same k"
            )
        done: dict[str, CachedQuery] = {}
        for line_no, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                entry = CachedQuery(
                    str(rec["query_id"]), [str(i) for i in rec["ids"]], [float(s) for s in rec["scores"]],
                    float(rec.get("latency", 0.0)), rec.get("error"), rec.get("texts"), rec.get("docs"),
                    rec.get("places"),
                )
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ParseError(f"malformed cache line ({exc})", source=src, line=line_no) from None
            if len(entry.ids) != len(entry.scores):
                raise ParseError("ids and scores differ in length", source=src, line=line_no)
            if entry.error is None:
                done[entry.query_id] = entry
            else:
                done.pop(entry.query_id, None)
        return done

    def open(self) -> None:
        """Open for appending (writing the header to a new file)."""
        new = not self.path.exists() or self.path.stat().st_size == 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - stays open while queries finish
        if new:
            self._fh.write(json.dumps(self.header, ensure_ascii=False) + "\n")
            self._fh.flush()

    def append(self, entry: CachedQuery) -> None:
        """Write one finished query and flush it to the OS."""
        if self._fh is None:
            self.open()
        assert self._fh is not None
        with self._lock:
            self._fh.write(entry.to_json() + "\n")
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
