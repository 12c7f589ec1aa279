"""Append-only cache of retriever answers, so that an interrupted evaluation resumes.

The cache is a JSONL file.  Line 1 is a header that fingerprints the evaluation::

    {"rankscope_cache": 2, "k": 10, "retriever": "mine", "identity": "mymod.MyRetriever[mine]",
     "testset": "questions", "testset_fingerprint": "3f1c...", "texts": false, "docs_key": null}

``identity`` is :func:`~rankscope.retrieval.protocol.retriever_identity` (a
retriever's own ``fingerprint()`` when it has one), ``settings`` what the
retriever declares about itself (:func:`~rankscope.retrieval.protocol.retriever_settings`:
a dataclass's or pydantic model's fields), ``cache_key`` the caller's own name
for what the retriever answers from (an index version); ``testset_fingerprint``
hashes every query id and text (:func:`testset_fingerprint`).  Every further
line is one finished query (a :class:`QueryOutcome`), written as soon as the
query finishes and flushed at least every :data:`FLUSH_SECONDS` (and at the end)::

    {"query_id": "q7", "ids": ["d3", "d1"], "scores": [0.8, 0.5], "latency": 0.012, "error": null}

On resume the last line for each query wins; queries recorded with an error
are run again.  A last line cut short by the interruption is dropped (the
file is truncated to the last complete line); a malformed line elsewhere
raises :class:`~rankscope.errors.ParseError`.  A cache whose header differs
from the evaluation's (another retriever, settings, cache key, test set, ``k``,
or an older cache without fingerprint) is refused with
:class:`~rankscope.errors.InvalidParameterError` naming what differs, never
mixed; ``overwrite=True`` starts the file afresh.  A header proves little
(another index of the same class has the same one): before the answers are
used, :func:`~rankscope.retrieval.runner.evaluate_retriever` asks a seeded
sample of the cached queries again and refuses the cache when the answers
differ (:func:`same_answer`).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import IO, Any

from rankscope.errors import InvalidParameterError, Message, ParseError
from rankscope.i18n import _, pgettext

__all__ = ["QueryOutcome", "CachedQuery", "RunCache", "testset_fingerprint", "same_answer", "check_sample"]

VERSION = 2
FLUSH_SECONDS = 0.2
"""Finished queries reach the cache file (the OS) at least this often, and when the evaluation ends or is
interrupted: a process killed outright loses at most this much work."""
_FIELDS = ("k", "retriever", "identity", "settings", "cache_key", "testset", "testset_fingerprint", "texts", "docs_key",
           "places")
#: each field as a cache refusal names it ("retriever name", "test set name" ...)
_LABELS = {"k": pgettext("cache field", "k"), "retriever": _("retriever name"),
           "identity": pgettext("cache field", "retriever"), "settings": _("retriever settings"),
           "cache_key": _("cache key"), "testset": _("test set name"),
           "testset_fingerprint": _("test set (query ids and texts)"), "texts": _("hit texts kept"),
           "docs_key": _("chunk metadata key"), "places": _("chunk places kept")}


@dataclass(frozen=True)
class _Differences:
    """What differs between a cache and the evaluation, said in the reader's language: ``a; b`` in English,
    ``a；b`` in Chinese (each part a :class:`~rankscope.i18n.Message`)."""

    parts: tuple[Message, ...]

    def text(self, lang: str = "en") -> str:
        return ("；" if lang == "zh" else "; ").join(p.text(lang) for p in self.parts)

    def __str__(self) -> str:
        return self.text("en")


@dataclass(frozen=True)
class QueryOutcome:
    """What one query gave: the ranking as scored, or the failure.

    ``ids`` / ``scores`` are the hits kept (repeats dropped, cut at ``k``; the scores as
    :func:`~rankscope.retrieval.protocol.ranking_scores` makes them); ``duplicates`` the repeated ids dropped;
    ``latency`` seconds (a share of a batch when ``batch`` is true); ``error`` ``"Type:
    message"`` with ``error_type`` and ``traceback`` when every attempt failed; ``attempts``
    calls made; ``scores_replaced`` true when the returned scores increased down the list and
    were replaced by ``n, n-1, ..., 1``; ``ties_reordered`` true when tied scores are ranked
    (doc id descending) in another order than the list's.
    """

    query_id: str
    ids: list[str]
    scores: list[float]
    latency: float
    error: str | None = None
    texts: list[str | None] | None = None
    docs: list[str | None] | None = None
    places: list[list[Any] | None] | None = None  # [doc_id, start, end] of each hit, for span measures
    duplicates: int = 0
    batch: bool = False
    attempts: int = 1
    error_type: str | None = None
    traceback: str | None = None
    scores_replaced: bool = False
    ties_reordered: bool = False

    def to_json(self) -> str:
        rec: dict[str, Any] = {"query_id": self.query_id, "ids": self.ids, "scores": self.scores,
                               "latency": round(self.latency, 6), "error": self.error}
        for key, default in _OPTIONAL.items():
            value = getattr(self, key)
            if value != default:
                rec[key] = value
        return json.dumps(rec, ensure_ascii=False)

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> QueryOutcome:
        """Read one cache line's object (``KeyError`` / ``TypeError`` / ``ValueError`` when malformed)."""
        extra = {k: rec[k] for k in ("duplicates", "batch", "attempts", "error_type", "traceback",
                                     "scores_replaced", "ties_reordered", "places") if k in rec}
        return cls(str(rec["query_id"]), [str(i) for i in rec["ids"]], [float(s) for s in rec["scores"]],
                   float(rec.get("latency", 0.0)), rec.get("error"), rec.get("texts"), rec.get("docs"), **extra)


CachedQuery = QueryOutcome  # the name of earlier versions
#: the fields a cache line holds only when they differ from their default
_OPTIONAL = {f.name: f.default for f in fields(QueryOutcome)
             if f.name not in ("query_id", "ids", "scores", "latency", "error")}


def testset_fingerprint(pairs: Iterable[tuple[str, str]]) -> str:
    """A hash of ``(query id, query text)`` pairs, independent of their order.

    >>> testset_fingerprint([("q1", "a"), ("q2", "b")]) == testset_fingerprint([("q2", "b"), ("q1", "a")])
    True
    """
    h = hashlib.sha256(b"rankscope-testset-v1\0")
    for qid, text in sorted(pairs):
        h.update(qid.encode())
        h.update(b"\0")
        h.update(text.encode())
        h.update(b"\1")
    return h.hexdigest()[:24]


def same_answer(cached: QueryOutcome, fresh: QueryOutcome) -> bool:
    """Whether a query asked again gave the cached answer: the same ids in the same order, except within a group
    of tied scores, and scores equal up to float noise (relative 1e-4: a batch computed otherwise).

    >>> a = QueryOutcome("q", ["d1", "d2", "d3"], [0.9, 0.5, 0.5], 0.0)
    >>> same_answer(a, QueryOutcome("q", ["d1", "d3", "d2"], [0.9, 0.5, 0.5], 0.0))
    True
    >>> same_answer(a, QueryOutcome("q", ["d2", "d1", "d3"], [0.9, 0.5, 0.5], 0.0))
    False
    """
    import numpy as np

    if len(cached.ids) != len(fresh.ids):
        return False
    old, new = np.asarray(cached.scores, dtype=np.float64), np.asarray(fresh.scores, dtype=np.float64)
    if not np.allclose(old, new, rtol=1e-4, atol=1e-6):
        return False
    start = 0
    for i in range(1, len(old) + 1):  # groups of (nearly) equal scores may list their ids in any order
        if i == len(old) or not np.isclose(old[i], old[i - 1], rtol=1e-4, atol=1e-6):
            if set(cached.ids[start:i]) != set(fresh.ids[start:i]):
                return False
            start = i
    return True


CHECK_SEED = 0
"""The seed of the sample of cached queries asked again (the same queries every time)."""


def check_sample(query_ids: Iterable[str], n: int) -> list[str]:
    """``n`` of ``query_ids`` drawn with :data:`CHECK_SEED` (all of them when there are fewer), sorted.

    >>> check_sample(["q3", "q1", "q2"], 5)
    ['q1', 'q2', 'q3']
    >>> len(check_sample([f"q{i}" for i in range(100)], 3))
    3
    """
    import numpy as np

    ids = sorted(query_ids)
    if n >= len(ids):
        return ids
    picked = np.random.default_rng(CHECK_SEED).choice(len(ids), size=n, replace=False)
    return sorted(ids[i] for i in picked.tolist())


class RunCache:
    """The cache file of one evaluation: :meth:`load` what is done, :meth:`append` as queries finish.

    ``header`` holds the fingerprint fields (``k``, ``retriever``, ``identity``, ``testset``,
    ``testset_fingerprint``, ``texts``, ``docs_key``); ``overwrite`` empties an existing file.
    """

    def __init__(self, path: str | Path, *, overwrite: bool = False, **header: Any) -> None:
        self.path = Path(path)
        # as the file gives it back (tuples become lists), so that a header read back compares equal
        self.header = json.loads(json.dumps({"rankscope_cache": VERSION, **{k: header.get(k) for k in _FIELDS}}))
        self.overwrite = overwrite
        self._fh: IO[str] | None = None
        self._lock = threading.Lock()
        self._flushed = time.monotonic()

    def _refuse(self, differences: list[Message]) -> InvalidParameterError:
        said = _Differences(tuple(differences))
        return InvalidParameterError(_("cache {path} was written by another evaluation ({differences}); pass "
                                       "overwrite_cache=True (CLI: --overwrite-cache) to start it afresh, or use "
                                       "another cache file", path=str(self.path), differences=said))

    def load(self) -> dict[str, QueryOutcome]:
        """The queries finished without error, by id (empty when the file does not exist or is overwritten)."""
        if self.overwrite or not self.path.exists() or self.path.stat().st_size == 0:
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
            raise ParseError(_("not a rankscope cache (bad header line)"), source=src, line=1) from None
        if not isinstance(head, dict) or "rankscope_cache" not in head:
            raise ParseError(_("not a rankscope cache (no 'rankscope_cache' header)"), source=src, line=1)
        if head.get("rankscope_cache") != VERSION:
            raise self._refuse([_("cache format {found} without the fingerprint of format {version}",
                                  found=head.get("rankscope_cache"), version=VERSION)])
        differences = [_("{what} differs", what=_LABELS[key]) if key == "testset_fingerprint"
                       else _("{what} {there} there, {now} now", what=_LABELS[key], there=repr(head.get(key)),
                              now=repr(self.header[key]))
                       for key in _FIELDS if head.get(key) != self.header[key]]
        if differences:
            raise self._refuse(differences)
        done: dict[str, QueryOutcome] = {}
        for line_no, line in enumerate(lines[1:], start=2):
            if not line.strip():
                continue
            try:
                entry = QueryOutcome.from_record(json.loads(line))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ParseError(_("malformed cache line ({error})", error=exc), source=src, line=line_no) from None
            if len(entry.ids) != len(entry.scores):
                raise ParseError(_("ids and scores differ in length"), source=src, line=line_no)
            if entry.error is None:
                done[entry.query_id] = entry
            else:
                done.pop(entry.query_id, None)
        return done

    def open(self) -> None:
        """Open for appending (writing the header to a new or overwritten file)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = self.overwrite or not self.path.exists() or self.path.stat().st_size == 0
        self._fh = open(self.path, "w" if new else "a", encoding="utf-8")  # noqa: SIM115 - open while queries finish
        if new:
            self._fh.write(json.dumps(self.header, ensure_ascii=False) + "\n")
            self._fh.flush()

    def append(self, entry: QueryOutcome) -> None:
        """Write one finished query; the lines reach the OS at least every :data:`FLUSH_SECONDS` and on
        :meth:`close` (a flush per query costs more than a fast retriever's answer)."""
        line = entry.to_json() + "\n"
        with self._lock:
            if self._fh is None:
                self.open()
            assert self._fh is not None
            self._fh.write(line)
            now = time.monotonic()
            if now - self._flushed >= FLUSH_SECONDS:
                self._fh.flush()
                self._flushed = now

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
