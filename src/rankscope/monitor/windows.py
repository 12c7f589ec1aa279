"""Time windows of a traffic stream and what each holds without any judgment.

Events are grouped by window (``floor(time / seconds) * seconds``, UTC) and retriever version.
A :class:`WindowStats` counts the events, those with no result (*empty*), with fewer than
``short_below`` results (*short*), the result ids not in a known corpus (*unknown*; only when a
corpus is known), and keeps two bounded samples: the top-1 score and the latency of at most
:data:`SAMPLE` events each.  The samples are *bottom-k sketches*: the events with the smallest
hash of their key, so a sample is the same whatever the arrival order, and two windows' samples
merge into the sample of their union (the service aggregates incrementally and keeps the
aggregates after raw events are deleted).

:meth:`WindowStats.signals` gives the rates, latency percentiles and, against a reference window,
the score shift (PSI and a KS test on the top-1 scores).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.monitor.events import RetrievalEvent
from rankscope.monitor.signals import ks_test, latency_percentiles, psi, rbo

__all__ = ["WindowStats", "window_start", "aggregate", "SAMPLE", "version_overlap", "hash_fraction"]

#: the most values a window's score or latency sample keeps
SAMPLE = 2000


def window_start(t: float, seconds: float) -> float:
    """The start of the window holding time ``t``.

    >>> window_start(3725.0, 3600)
    3600.0
    """
    return float(math.floor(t / seconds) * seconds)


def hash_fraction(key: str, seed: int = 0) -> float:
    """A number in [0, 1) fixed by an event key (hex) and a seed: what sampling and the sketches order by."""
    import hashlib

    h = hashlib.blake2b(f"{seed}:{key}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "big") / 2**64


class _Sketch:
    """A bottom-k sample: the values of the ``k`` smallest hashes (arrays kept sorted by hash)."""

    def __init__(self, hashes: Any = (), values: Any = (), k: int = SAMPLE) -> None:
        self.k = k
        self.h = np.asarray(hashes, dtype=np.float64)
        self.v = np.asarray(values, dtype=np.float64)

    def extend(self, hashes: Iterable[float], values: Iterable[float]) -> None:
        h = np.concatenate([self.h, np.fromiter(hashes, dtype=np.float64)])
        v = np.concatenate([self.v, np.fromiter(values, dtype=np.float64)])
        h, first = np.unique(h, return_index=True)  # an event seen twice counts once
        order = np.arange(len(h))[: self.k]
        self.h, self.v = h[order], v[first][order]

    def to_dict(self) -> dict[str, list[float]]:
        return {"h": self.h.tolist(), "v": self.v.tolist()}


@dataclass
class WindowStats:
    """What one window of one retriever version holds (see the module docstring)."""

    start: float
    seconds: float
    retriever: str
    events: int = 0
    empty: int = 0
    short: int = 0
    results: int = 0
    checked: int = 0
    unknown: int = 0
    latency_max: float | None = None
    short_below: int = 3
    _scores: _Sketch = field(default_factory=_Sketch, repr=False)
    _latency: _Sketch = field(default_factory=_Sketch, repr=False)

    def add(self, events: Iterable[RetrievalEvent], known_ids: Any = None) -> WindowStats:
        """Count ``events`` (all of this window and version); ``known_ids`` (a set) enables the unknown-id rate."""
        sh: list[float] = []
        sv: list[float] = []
        lh: list[float] = []
        lv: list[float] = []
        for ev in events:
            self.events += 1
            n = len(ev.results)
            self.results += n
            if n == 0:
                self.empty += 1
            elif n < self.short_below:
                self.short += 1
            if known_ids is not None:
                self.checked += n
                self.unknown += sum(1 for h in ev.results if h.id not in known_ids)
            hf = hash_fraction(ev.key)
            if n and ev.results[0].score is not None:
                sh.append(hf)
                sv.append(float(ev.results[0].score))
            if ev.latency_ms is not None:
                lh.append(hf)
                lv.append(float(ev.latency_ms))
                self.latency_max = max(self.latency_max or 0.0, float(ev.latency_ms))
        self._scores.extend(sh, sv)
        self._latency.extend(lh, lv)
        return self

    def merge(self, other: WindowStats) -> WindowStats:
        """Add another aggregate of the same window and version (a later batch of its events)."""
        for name in ("events", "empty", "short", "results", "checked", "unknown"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.latency_max is not None:
            self.latency_max = max(self.latency_max or 0.0, other.latency_max)
        self._scores.extend(other._scores.h.tolist(), other._scores.v.tolist())
        self._latency.extend(other._latency.h.tolist(), other._latency.v.tolist())
        return self

    @property
    def scores(self) -> np.ndarray:
        """The sampled top-1 scores."""
        return self._scores.v

    @property
    def latencies(self) -> np.ndarray:
        return self._latency.v

    def signals(self, reference: WindowStats | None = None) -> dict[str, Any]:
        """Rates, latency percentiles (ms) and, against ``reference``, PSI and the KS test of the top-1 scores."""
        n = self.events
        out: dict[str, Any] = {
            "events": n,
            "empty_rate": self.empty / n if n else None,
            "short_rate": self.short / n if n else None,
            "unknown_rate": self.unknown / self.checked if self.checked else None,
            "mean_results": self.results / n if n else None,
        }
        lat = latency_percentiles(self.latencies)
        out.update({f"latency_{k}": (lat or {}).get(k) for k in ("p50", "p95", "p99")})
        out["latency_max"] = self.latency_max
        out["psi"] = out["ks_statistic"] = out["ks_p_value"] = None
        if reference is not None and reference is not self:
            out["psi"] = psi(reference.scores, self.scores)
            ks = ks_test(reference.scores, self.scores)
            if ks is not None:
                out["ks_statistic"], out["ks_p_value"] = ks.statistic, ks.p_value
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"start": self.start, "seconds": self.seconds, "retriever": self.retriever, "events": self.events,
                "empty": self.empty, "short": self.short, "results": self.results, "checked": self.checked,
                "unknown": self.unknown, "latency_max": self.latency_max, "short_below": self.short_below,
                "scores": self._scores.to_dict(), "latency": self._latency.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WindowStats:
        w = cls(d["start"], d["seconds"], d["retriever"], d["events"], d["empty"], d["short"], d["results"],
                d["checked"], d["unknown"], d.get("latency_max"), d.get("short_below", 3))
        w._scores = _Sketch(d["scores"]["h"], d["scores"]["v"])
        w._latency = _Sketch(d["latency"]["h"], d["latency"]["v"])
        return w


def aggregate(events: Iterable[RetrievalEvent], seconds: float, known_ids: Any = None,
              short_below: int = 3) -> dict[tuple[float, str], WindowStats]:
    """``{(window start, retriever): WindowStats}`` of a batch of events.

    >>> from rankscope.monitor.events import parse_event
    >>> evs = [parse_event({"query": "q", "results": ["a"], "time": t, "latency_ms": 5}) for t in (10, 20, 3700)]
    >>> {k: w.events for k, w in aggregate(evs, 3600).items()}
    {(0.0, 'default'): 2, (3600.0, 'default'): 1}
    """
    groups: dict[tuple[float, str], list[RetrievalEvent]] = {}
    for ev in events:
        groups.setdefault((window_start(ev.time, seconds), ev.retriever), []).append(ev)
    return {k: WindowStats(k[0], float(seconds), k[1], short_below=short_below).add(evs, known_ids)
            for k, evs in sorted(groups.items())}


def _norm(query: str) -> str:
    return " ".join(query.lower().split())


def version_overlap(current: Iterable[RetrievalEvent], reference: Mapping[str, Any], *, depth: int = 10,
                    p: float = 0.9) -> dict[str, Any]:
    """Rank-biased overlap of the top ``depth`` of each current event with the reference ranking of the same query
    (``reference``: normalised query text -> ids, e.g. the previous version's or a shadow's latest answer); the
    mean over the queries found on both sides and how many there were.

    >>> from rankscope.monitor.events import parse_event
    >>> ev = parse_event({"query": "What  is BM25", "results": ["a", "b"]})
    >>> version_overlap([ev], {"what is bm25": ["a", "b"]})
    {'rbo': 1.0, 'queries': 1}
    """
    values = []
    for ev in current:
        ref = reference.get(_norm(ev.query))
        if ref is None:
            continue
        values.append(rbo(list(ev.ids[:depth]), list(ref)[:depth], p))
    return {"rbo": float(np.mean(values)) if values else None, "queries": len(values)}


def normalise_query(query: str) -> str:
    """How queries are matched across versions: lower case, runs of white space as one space."""
    return _norm(query)
