"""What the diversity kernels read: :class:`SubtopicInput`, the subtopic judgments of the evaluated queries.

Built by :meth:`rankscope.engine.subtopics.SubtopicSource.input_for` and carried by the kernel input
(``KernelInput.subtopics``).  Every array is one entry per subtopic judgment of an evaluated query,
sorted by (query, document, subtopic); ``row`` is the judged-view row that retrieved the document
(-1: not retrieved), so a kernel reads the entry's rank from the view it is given (``p.rank[row]``:
the condensed view of ``judged_only`` keeps the rows and re-ranks them).

The ideal ranking of a query is ndeval's greedy one: at each rank the document that adds the most
gain (Σ over its relevant subtopics of (1 − α)^(times the subtopic was covered above)), ties to the
larger document id; it is computed once per (α, relevance level) for every query at once, one rank
after another.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

__all__ = ["SubtopicInput", "discount", "repeated_products"]

_GREEDY_CELLS = 20_000_000  # queries x documents x subtopics held at once by the greedy ideal ranking


@lru_cache(maxsize=8)
def discount(size: int) -> np.ndarray:
    """ndeval's rank discount of 0-based ranks ``0..size-1``: 1 at rank 0, log(2)/log(i+2) after (C's ``log``)."""
    return np.array([1.0] + [math.log(2.0) / math.log(i + 2.0) for i in range(1, size)])[:size]


def repeated_products(factor: float, size: int) -> np.ndarray:
    """1, f, f·f, … multiplied one at a time (as ndeval's running gains are), ``size`` values."""
    out = np.empty(size)
    if size:
        out[0] = 1.0
        out[1:] = factor
        np.cumprod(out, out=out)
    return out


@dataclass(frozen=True)
class SubtopicInput:
    """The subtopic judgments of the evaluated queries (see module doc)."""

    n: int
    query: np.ndarray  # int64 (entries,) evaluated query index
    doc: np.ndarray  # int64 (entries,) document code: larger code = larger document id
    subtopic: np.ndarray  # int64 (entries,) subtopic code within its query, in ndeval's order
    grade: np.ndarray  # int64 (entries,)
    row: np.ndarray  # int64 (entries,) judged-view row that retrieved the document, -1 when not retrieved
    _ideal: dict[tuple[float, int], np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    def relevant(self, level: int) -> np.ndarray:
        """Entries whose grade counts as relevant to their subtopic (grade >= level, pyndeval's rule)."""
        return self.grade >= level

    def covered(self, level: int) -> np.ndarray:
        """Per query: the subtopics with at least one relevant document (ndeval's "actual subtopics"), float."""
        rel = self.relevant(level)
        pairs = np.unique(self.query[rel] * (int(self.subtopic.max(initial=0)) + 1) + self.subtopic[rel])
        return np.bincount(pairs // (int(self.subtopic.max(initial=0)) + 1), minlength=self.n).astype(np.float64)

    def relevant_per_subtopic(self, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query, subtopic, relevant documents) of every (query, subtopic) with one, sorted by query and subtopic."""
        rel = self.relevant(level)
        width = int(self.subtopic.max(initial=0)) + 1
        keys, counts = np.unique(self.query[rel] * width + self.subtopic[rel], return_counts=True)
        return keys // width, keys % width, counts

    def ideal(self, alpha: float, level: int) -> np.ndarray:
        """The gain at each rank of every query's greedy ideal ranking: a (queries x documents) matrix, 0-padded."""
        key = (float(alpha), int(level))
        if key not in self._ideal:
            self._ideal[key] = self._greedy(float(alpha), int(level))
        return self._ideal[key]

    def _greedy(self, alpha: float, level: int) -> np.ndarray:
        rel = self.relevant(level)
        q, d, s = self.query[rel], self.doc[rel], self.subtopic[rel]
        # relevant documents of each query, by document id ascending (ndeval's list order)
        width = int(d.max(initial=0)) + 1
        pair = q * width + d
        docs, slot_of = np.unique(pair, return_inverse=True)
        slot_of = slot_of.ravel()
        dq = docs // width
        per_query = np.bincount(dq, minlength=self.n)
        start = np.concatenate(([0], np.cumsum(per_query)[:-1]))
        col = np.arange(len(docs)) - start[dq]
        n_docs = int(per_query.max(initial=0))
        n_sub = int(s.max(initial=-1)) + 1
        out = np.zeros((self.n, n_docs))
        if n_docs == 0:
            return out
        step = max(1, _GREEDY_CELLS // max(n_docs * n_sub, 1))
        for lo in range(0, self.n, step):  # blocks of queries; each rank is one vectorised step over a block
            hi = min(lo + step, self.n)
            inside = (q >= lo) & (q < hi)
            cover = np.zeros((hi - lo, n_docs, n_sub), dtype=bool)
            cover[q[inside] - lo, col[slot_of[inside]], s[inside]] = True
            out[lo:hi] = _greedy_block(cover, per_query[lo:hi], alpha)
        return out


def _greedy_block(cover: np.ndarray, n_docs: np.ndarray, alpha: float) -> np.ndarray:
    """ndeval's idealResult for a block of queries: the gain taken at each rank (queries x ranks)."""
    nq, width, n_sub = cover.shape
    gain = np.ones((nq, n_sub))
    taken = np.zeros((nq, width), dtype=bool)
    taken[np.arange(width)[None, :] >= n_docs[:, None]] = True  # padding is never chosen
    out = np.zeros((nq, width))
    for rank in range(width):
        live = np.flatnonzero(n_docs > rank)
        if len(live) == 0:
            break
        score = np.zeros((len(live), width))
        for j in range(n_sub):  # summed subtopic by subtopic, in ndeval's order
            score += np.where(cover[live, :, j], gain[live, j][:, None], 0.0)
        score[taken[live]] = -1.0
        best = score.max(axis=1)
        # ties go to the larger document id: the last of the tied columns
        pick = width - 1 - np.argmax((score == best[:, None])[:, ::-1], axis=1)
        out[live, rank] = best
        taken[live, pick] = True
        hit = cover[live, pick, :]
        gain[live] = np.where(hit, gain[live] * (1.0 - alpha), gain[live])
        if not (best > 0).any():
            break
    return out
