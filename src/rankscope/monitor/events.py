"""Production retrieval events: what a live system retrieved for one user query, read and checked.

An event is one retrieval call: the query text, the ranked results (id, score, text), when it
happened, how long it took, and which retriever version answered.  Events arrive as JSON Lines
(:func:`parse_jsonl`, one object a line)::

    {"time": "2026-05-01T12:00:00Z", "query": "what is bm25", "retriever": "v2", "latency_ms": 41.5,
     "results": [{"id": "d1", "score": 12.3, "text": "BM25 is ..."}, {"id": "d7", "score": 9.1}]}

or as OpenTelemetry traces (:mod:`rankscope.monitor.otlp`).  Every event is checked before it is
kept; a bad one is *rejected with a reason* (:class:`Rejection`, counted per reason), never guessed
at and never allowed to stop the others: a malformed line, an unknown field (a misspelt ``reslts``
would otherwise lose the results silently), no query, results that are not a list of objects with
an id, a document text over :data:`MAX_TEXT_CHARS`, more than :data:`MAX_RESULTS` results, a time
or latency that is not a number.

``time`` is epoch seconds or an ISO 8601 text (a time without a zone is UTC); an event without
``time`` takes the time it was received.  ``retriever`` (the version that answered; ``"default"``
when absent) makes its own series.  ``query_id`` is optional: an event is identified by
:attr:`RetrievalEvent.key`, a hash of its fields, so that the same event sent twice is stored once.

>>> ev = parse_event({"query": "what is bm25", "results": [{"id": "d1", "score": 2.0}], "time": 0})
>>> ev.query, ev.ids, ev.retriever
('what is bm25', ('d1',), 'default')
>>> parse_event({"query": "q", "reslts": []})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankscope.monitor.events.EventRejected: unknown field 'reslts' (known: query, results, time, ...); did you mean ...
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import Message, _

__all__ = [
    "Hit", "RetrievalEvent", "EventRejected", "Rejection", "parse_event", "parse_jsonl", "parse_time",
    "EVENT_FIELDS", "HIT_FIELDS", "MAX_RESULTS", "MAX_TEXT_CHARS", "MAX_QUERY_CHARS", "REASONS",
]

EVENT_FIELDS = ("query", "results", "time", "latency_ms", "retriever", "query_id")
HIT_FIELDS = ("id", "score", "text")
#: the most results one event may hold
MAX_RESULTS = 1000
#: the longest document text an event may carry (characters); longer: rejected as oversized
MAX_TEXT_CHARS = 100_000
#: the longest query text (characters)
MAX_QUERY_CHARS = 10_000
MAX_ID_CHARS = 512
#: every reason an event can be rejected for (the counters' labels)
REASONS = ("malformed", "not_an_object", "unknown_field", "no_query", "bad_results", "oversized_document",
           "too_many_results", "bad_time", "bad_latency", "bad_score", "bad_retriever", "malformed_otlp",
           "span_without_query")


class EventRejected(InvalidParameterError):
    """An event that cannot be kept: ``reason`` is one of :data:`REASONS`, the message says what is wrong."""

    def __init__(self, reason: str, message: Message | str) -> None:
        self.reason = reason
        super().__init__(message)


@dataclass(frozen=True)
class Rejection:
    """A rejected event: where it was (``line`` of a JSON Lines body, or the span's position), the reason code
    and the message."""

    where: str
    reason: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"where": self.where, "reason": self.reason, "problem": self.message}


@dataclass(frozen=True)
class Hit:
    """One retrieved document: its id, the retriever's score (None: not given) and its text (None: not sent)."""

    id: str
    score: float | None = None
    text: str | None = None


@dataclass(frozen=True)
class RetrievalEvent:
    """One retrieval call seen in production (see the module docstring)."""

    time: float
    query: str
    results: tuple[Hit, ...]
    latency_ms: float | None = None
    retriever: str = "default"
    query_id: str | None = None
    source: str = "jsonl"
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)
    #: the identity it was stored under (an event read back from storage keeps it)
    stored_key: str | None = field(default=None, compare=False)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(h.id for h in self.results)

    @property
    def key(self) -> str:
        """A stable identity (40 hex digits): a hash of time, retriever, query and result ids, so that an event
        delivered twice (a client's retry) is kept once."""
        if self.stored_key is not None:
            return self.stored_key
        h = hashlib.sha1(usedforsecurity=False)
        for part in (repr(round(self.time, 6)), self.retriever, self.query_id or "", self.query, *self.ids):
            h.update(part.encode("utf-8", "surrogatepass"))
            h.update(b"\x1f")
        return h.hexdigest()

    def to_dict(self) -> dict[str, Any]:
        """The JSON Lines form (what :func:`parse_event` reads back)."""
        out: dict[str, Any] = {"time": self.time, "query": self.query, "retriever": self.retriever,
                               "results": [{k: v for k, v in (("id", h.id), ("score", h.score), ("text", h.text))
                                            if v is not None} for h in self.results]}
        if self.latency_ms is not None:
            out["latency_ms"] = self.latency_ms
        if self.query_id is not None:
            out["query_id"] = self.query_id
        return out


def _reject(reason: str, message: Message, /) -> EventRejected:
    return EventRejected(reason, message)


def parse_time(value: Any, *, now: float | None = None) -> float:
    """Epoch seconds from a number or an ISO 8601 text (no zone: UTC); None gives ``now``.

    >>> parse_time("1970-01-01T00:01:00Z"), parse_time(60.5), parse_time("1970-01-01 00:00:02")
    (60.0, 60.5, 2.0)
    """
    import time as _time

    if value is None:
        return _time.time() if now is None else now
    if isinstance(value, bool):
        raise _reject("bad_time", _("time must be epoch seconds or an ISO 8601 text, got {value!r}", value=value))
    if isinstance(value, (int, float)):
        t = float(value)
    elif isinstance(value, str):
        try:
            d = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise _reject("bad_time", _("time must be epoch seconds or an ISO 8601 text, got {value!r}",
                                        value=value[:40])) from None
        if d.tzinfo is None:
            d = d.replace(tzinfo=dt.timezone.utc)
        t = d.timestamp()
    else:
        raise _reject("bad_time", _("time must be epoch seconds or an ISO 8601 text, got {kind}",
                                    kind=type(value).__name__))
    if not math.isfinite(t) or not 0 <= t < 32503680000:  # years 1970 .. 3000
        raise _reject("bad_time", _("time out of range: {value!r}", value=value))
    return t


def _unknown(name: str, known: tuple[str, ...], index: int | None) -> EventRejected:
    close = difflib.get_close_matches(name, known, n=1)
    shown = Items(known)
    if index is None:
        if close:
            return _reject("unknown_field", _("unknown field {name!r} (known: {known}); did you mean {close!r}?",
                                              name=name[:60], known=shown, close=close[0]))
        return _reject("unknown_field", _("unknown field {name!r} (known: {known})", name=name[:60], known=shown))
    return _reject("unknown_field", _("unknown field {name!r} in results[{i}] (known: {known})", name=name[:60],
                                      known=shown, i=index))


def _number(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise ValueError
    return float(value)


def _hit(obj: Any, i: int, max_text: int) -> Hit:
    if isinstance(obj, str):  # a bare id
        obj = {"id": obj}
    if not isinstance(obj, Mapping):
        raise _reject("bad_results", _("results[{i}] must be an object with an id, got {kind}", i=i,
                                       kind=type(obj).__name__))
    for name in obj:
        if name not in HIT_FIELDS:
            raise _unknown(str(name), HIT_FIELDS, i)
    doc = obj.get("id")
    if isinstance(doc, bool) or not isinstance(doc, (str, int)) or not str(doc).strip():
        raise _reject("bad_results", _("results[{i}] has no id (a non-empty text or number)", i=i))
    doc = str(doc)
    if len(doc) > MAX_ID_CHARS:
        raise _reject("bad_results", _("results[{i}]: the id is longer than {n} characters", i=i, n=MAX_ID_CHARS))
    try:
        score = _number(obj.get("score"))
    except ValueError:
        raise _reject("bad_score", _("results[{i}]: score must be a finite number, got {value!r}", i=i,
                                     value=obj.get("score"))) from None
    text = obj.get("text")
    if text is not None and not isinstance(text, str):
        raise _reject("bad_results", _("results[{i}]: text must be a string", i=i))
    if text is not None and len(text) > max_text:
        raise _reject("oversized_document", _("results[{i}]: the text has {n} characters, over the limit of {limit}",
                                              i=i, n=len(text), limit=max_text))
    return Hit(doc, score, text)


def make_event(*, query: Any, results: Any, time: Any = None, latency_ms: Any = None, retriever: Any = None,
               query_id: Any = None, source: str = "jsonl", now: float | None = None,
               max_text: int = MAX_TEXT_CHARS) -> RetrievalEvent:
    """Check the fields of one event and build it (the checks of :func:`parse_event`, for any source)."""
    if not isinstance(query, str) or not query.strip():
        raise _reject("no_query", _("the event has no query text"))
    if len(query) > MAX_QUERY_CHARS:
        raise _reject("no_query", _("the query has {n} characters, over the limit of {limit}", n=len(query),
                                    limit=MAX_QUERY_CHARS))
    if results is None:
        results = []
    if not isinstance(results, (list, tuple)):
        raise _reject("bad_results", _("results must be a list, got {kind}", kind=type(results).__name__))
    if len(results) > MAX_RESULTS:
        raise _reject("too_many_results", _("{n} results, over the limit of {limit}", n=len(results),
                                            limit=MAX_RESULTS))
    hits = tuple(_hit(h, i, max_text) for i, h in enumerate(results))
    t = parse_time(time, now=now)
    try:
        lat = _number(latency_ms)
    except ValueError:
        lat = -1.0
    if lat is not None and lat < 0:
        raise _reject("bad_latency", _("latency_ms must be a number >= 0, got {value!r}", value=latency_ms))
    version = "default" if retriever is None else retriever
    if not isinstance(version, str) or not version.strip() or len(version) > 200:
        raise _reject("bad_retriever", _("retriever must be a non-empty text of at most 200 characters"))
    if query_id is not None and (not isinstance(query_id, (str, int)) or isinstance(query_id, bool)):
        raise _reject("bad_results", _("query_id must be a text or a number"))
    return RetrievalEvent(t, query, hits, lat, version.strip(), None if query_id is None else str(query_id), source)


def parse_event(obj: Any, *, now: float | None = None, max_text: int = MAX_TEXT_CHARS) -> RetrievalEvent:
    """One event from its JSON object, checked (see the module docstring); :class:`EventRejected` otherwise."""
    if not isinstance(obj, Mapping):
        raise _reject("not_an_object", _("an event must be a JSON object, got {kind}", kind=type(obj).__name__))
    for name in obj:
        if name not in EVENT_FIELDS:
            raise _unknown(str(name), EVENT_FIELDS, None)
    return make_event(query=obj.get("query"), results=obj.get("results"), time=obj.get("time"),
                      latency_ms=obj.get("latency_ms"), retriever=obj.get("retriever"), query_id=obj.get("query_id"),
                      now=now, max_text=max_text)


def parse_jsonl(lines: bytes | str | Iterable[str], *, now: float | None = None, max_text: int = MAX_TEXT_CHARS,
                source: str = "") -> tuple[list[RetrievalEvent], list[Rejection]]:
    """Events of a JSON Lines body (blank lines skipped), and the lines rejected with their reason.

    >>> good, bad = parse_jsonl('{"query": "a", "results": ["d1"]}\\n{"query": ""}\\nnot json\\n')
    >>> len(good), [(r.where, r.reason) for r in bad]
    (1, [('line 2', 'no_query'), ('line 3', 'malformed')])
    """
    if isinstance(lines, bytes):
        lines = lines.decode("utf-8", errors="replace")
    if isinstance(lines, str):
        lines = lines.splitlines()
    events: list[RetrievalEvent] = []
    rejected: list[Rejection] = []
    prefix = f"{source}:" if source else "line "
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{prefix}{n}"
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            rejected.append(Rejection(where, "malformed", str(_reject("malformed", _("not a JSON object ({reason})",
                                                                                     reason=exc)))))
            continue
        try:
            events.append(parse_event(obj, now=now, max_text=max_text))
        except EventRejected as exc:
            rejected.append(Rejection(where, exc.reason, str(exc)))
    return events, rejected
