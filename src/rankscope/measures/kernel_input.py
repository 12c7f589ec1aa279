"""What a metric kernel reads: :class:`KernelInput`, the flat ranked arrays of every evaluated query.

This module sits at the bottom of the package (it imports nothing of rankscope):
:func:`rankscope.engine.prepare.prepare` builds the value, the kernels in
:mod:`rankscope.measures` only read it, and :func:`rankscope.engine.score` is
the one function that hands it to them.  A kernel has the type :data:`Kernel`:
``(KernelInput, Measure) -> float64 array of length n`` (one value per query).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["KernelInput", "count_relevant"]


def count_relevant(ideal_grade: np.ndarray, ideal_query: np.ndarray, level: int, n: int) -> np.ndarray:
    """Relevant judged documents per query: grades >= ``level`` (and >= 0) in the ideal arrays (int64)."""
    return np.bincount(ideal_query[ideal_grade >= max(level, 0)], minlength=n).astype(np.int64, copy=False)


@dataclass(frozen=True, kw_only=True)
class KernelInput:
    """Ranked rows of every evaluated query, with their judgments.

    Rows are grouped by query and ranked within a query.  The **judged view**
    holds only the retrieved rows that have a qrels entry for their query (judged,
    or pooled with a negative grade) — a few percent of a deep run — each with its
    true rank in the full ranking; every measure that only looks at such rows
    (plus ``num_ret``) runs on it.  :meth:`complete_view` adds the unjudged rows
    (grade 0, ``judged`` False) for the measures that need every rank.

    Attributes
    ----------
    offsets : int64 (n+1,)          rows of query i are ``offsets[i]:offsets[i+1]``
    qidx : int32 (rows,)            query index of each row
    rank : int (rows,)              0-based rank within its query in the full ranking
    grade : int64 (rows,)           relevance grade, 0 when unjudged
    judged : bool (rows,)           whether the (query, doc) pair is judged (grade >= 0 in the qrels)
    num_ret : int64 (n,)            documents retrieved per query (after the depth cut)
    ideal_offsets, ideal_grade      every judged grade of query i, sorted descending,
                                    in ``ideal_grade[ideal_offsets[i]:ideal_offsets[i+1]]``
    ideal_query : int (judged,)     query index of each ideal row
    relevant : int64 (n,)           relevant documents per query in the qrels (grade >= relevance_level)
    in_run : bool (n,)              whether the query has a ranking in the run
    relevance_level : int           default threshold for binary relevance
    all_rows : bool                 whether the rows are every retrieved row (complete view)
    spans : SpanInput | None        span judgments and the place of every retrieved chunk (only for
                                    the span measures; a ``rankscope.measures._spans.SpanInput``)
    subtopics : SubtopicInput | None  subtopic judgments of the evaluated queries, linked to the judged
                                    rows (only for the diversity measures; a
                                    ``rankscope.measures._subtopics.SubtopicInput``)
    ideal_memo : dict | None        where a kernel may keep what it computed from the ideal arrays alone
                                    (:meth:`ideal_memoized`); the qrels index gives its own when these
                                    arrays are its own, so that many runs against the same qrels compute
                                    it once; None: computed every time

    >>> ki = KernelInput(offsets=np.array([0, 2]), qidx=np.array([0, 0]), rank=np.array([0, 3]),
    ...                  grade=np.array([1, 2]), judged=np.array([True, True]), num_ret=np.array([5]),
    ...                  ideal_offsets=np.array([0, 3]), ideal_grade=np.array([2, 1, 1]),
    ...                  ideal_query=np.array([0, 0, 0]), relevant=np.array([3]), in_run=np.array([True]),
    ...                  all_rows=False)
    >>> ki.n, ki.num_rel().tolist(), ki.first_row(ki.is_rel(2)).tolist()
    (1, [3], [3])
    >>> ki.complete_view().grade.tolist()
    [1, 0, 0, 2, 0]
    """

    offsets: np.ndarray
    qidx: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    judged: np.ndarray
    num_ret: np.ndarray
    ideal_offsets: np.ndarray
    ideal_grade: np.ndarray
    ideal_query: np.ndarray
    relevant: np.ndarray
    in_run: np.ndarray
    relevance_level: int = 1
    all_rows: bool = True
    spans: Any = None
    subtopics: Any = None
    ideal_memo: dict[Any, np.ndarray] | None = field(default=None, compare=False, repr=False)

    # -- views ----------------------------------------------------------------------
    def complete_view(self) -> KernelInput:
        """Every retrieved row, judged or not (``self`` when it already is)."""
        if self.all_rows:
            return self
        num_ret = self.num_ret
        offsets = np.concatenate(([0], np.cumsum(num_ret))).astype(np.int64)
        total = int(offsets[-1])
        idx = np.int32 if total < 2**31 else np.int64
        qidx = np.repeat(np.arange(self.n, dtype=np.int32), num_ret)
        rank: np.ndarray = np.arange(total, dtype=idx)
        rank -= np.repeat(offsets[:-1].astype(idx), num_ret)
        at = offsets[self.qidx] + self.rank
        grade = np.zeros(total, dtype=np.int64)
        grade[at] = self.grade
        judged = np.zeros(total, dtype=bool)
        judged[at] = self.judged
        return KernelInput(
            offsets=offsets, qidx=qidx, rank=rank, grade=grade, judged=judged, num_ret=num_ret,
            ideal_offsets=self.ideal_offsets, ideal_grade=self.ideal_grade, ideal_query=self.ideal_query,
            relevant=self.relevant, in_run=self.in_run,
            relevance_level=self.relevance_level, all_rows=True, spans=self.spans,
            subtopics=None,  # its links are to the judged rows
            ideal_memo=self.ideal_memo,
        )

    def condensed_view(self) -> KernelInput:
        """Only the judged rows (grade >= 0), re-ranked 0, 1, ... in their order: Sakai's condensed lists.

        Unjudged rows (absent from the qrels, or with a negative grade) are removed before
        ranking, so ``num_ret`` becomes the number of judged documents retrieved; the
        result holds every row of its rankings (``all_rows``).  A query keeps its place
        (``in_run``) even when none of its documents is judged.

        >>> ki = KernelInput(offsets=np.array([0, 2]), qidx=np.array([0, 0]), rank=np.array([1, 3]),
        ...                  grade=np.array([1, 0]), judged=np.array([True, True]), num_ret=np.array([5]),
        ...                  ideal_offsets=np.array([0, 2]), ideal_grade=np.array([1, 0]),
        ...                  ideal_query=np.array([0, 0]), relevant=np.array([1]), in_run=np.array([True]),
        ...                  all_rows=False)
        >>> c = ki.condensed_view()
        >>> c.rank.tolist(), c.num_ret.tolist(), c.all_rows
        ([0, 1], [2], True)
        """
        keep = self.judged
        qidx = self.qidx[keep]
        num_ret = np.bincount(qidx, minlength=self.n).astype(np.int64)
        offsets = np.concatenate(([0], np.cumsum(num_ret))).astype(np.int64)
        rank = (np.arange(len(qidx), dtype=np.int64) - np.repeat(offsets[:-1], num_ret)).astype(self.rank.dtype)
        return KernelInput(
            offsets=offsets, qidx=qidx, rank=rank, grade=self.grade[keep], judged=self.judged[keep],
            num_ret=num_ret, ideal_offsets=self.ideal_offsets, ideal_grade=self.ideal_grade,
            ideal_query=self.ideal_query, relevant=self.relevant, in_run=self.in_run,
            relevance_level=self.relevance_level, all_rows=True, spans=None,
            # the subtopic links stay valid when every row is kept (subtopic qrels judge every document they hold)
            subtopics=self.subtopics if bool(keep.all()) else None,
            ideal_memo=self.ideal_memo,
        )

    # -- per-query helpers ----------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of evaluated queries."""
        return len(self.offsets) - 1

    def level(self, rel: int | None) -> int:
        """``rel`` if given, else the evaluation's relevance level."""
        return self.relevance_level if rel is None else int(rel)

    def is_rel(self, rel: int | None = None) -> np.ndarray:
        """Boolean per row: grade >= relevance level (a level <= 0 never makes an unjudged row relevant)."""
        lv = self.level(rel)
        return self.grade >= lv if lv >= 1 else (self.grade >= lv) & self.judged

    def num_rel(self, rel: int | None = None) -> np.ndarray:
        """Number of relevant judged documents per query (from the qrels, not the run)."""
        lv = self.level(rel)
        if lv == self.relevance_level:
            return self.relevant
        return count_relevant(self.ideal_grade, self.ideal_query, lv, self.n)

    def num_judged(self) -> np.ndarray:
        """Number of judged documents per query."""
        return np.diff(self.ideal_offsets)

    def judged_in_top(self, k: int | None) -> tuple[np.ndarray, np.ndarray]:
        """Per query: judged documents (grade >= 0) in the top ``k``, and documents in the top ``k``
        (``min(k, num_ret)``; every retrieved document when ``k`` is None), both int64.

        judged@k is their ratio (ir_measures' ``Judged@k``).
        """
        mask = self.judged if k is None else self.judged & (self.rank < k)
        top = self.num_ret if k is None else np.minimum(self.num_ret, k)
        return self.count(mask), np.asarray(top, dtype=np.int64)

    def cum_rel(self, rel: int | None = None) -> np.ndarray:
        """Per row: relevant documents at or above this rank within the query (int64)."""
        return self.cumsum_in_query(self.is_rel(rel).astype(np.int64))

    def cumsum_in_query(self, values: np.ndarray) -> np.ndarray:
        """Cumulative sum of ``values`` over the rows, restarting at every query."""
        cs = np.cumsum(values)
        if len(cs) == 0:
            return cs
        start = self.offsets[:-1]
        base = np.where(start > 0, cs[np.maximum(start - 1, 0)], 0)
        return cs - np.repeat(base, np.diff(self.offsets))

    def sum(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Per-query sum of a per-row array (optionally only where ``mask``)."""
        w = values if mask is None else np.where(mask, values, 0)
        return np.bincount(self.qidx, weights=w.astype(np.float64, copy=False), minlength=self.n)

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per-query number of rows where ``mask`` is true."""
        return np.bincount(self.qidx[mask], minlength=self.n).astype(np.int64, copy=False)

    def ideal_qidx(self) -> np.ndarray:
        """Query index of each ideal (qrels) row."""
        return self.ideal_query

    def ideal_sum(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Per-query sum over the ideal (qrels) arrays."""
        w = values if mask is None else np.where(mask, values, 0)
        return np.bincount(self.ideal_query, weights=w.astype(np.float64, copy=False), minlength=self.n)

    def ideal_memoized(self, key: Any, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """``compute()``, a per-query array that depends on the ideal arrays (and ``key``) only, kept in
        ``ideal_memo`` when there is one (read-only: it is shared by every run scored against the same qrels)."""
        memo = self.ideal_memo
        if memo is None:
            return compute()
        found = memo.get(key)
        if found is None:
            found = compute()
            found.flags.writeable = False
            memo[key] = found
        return found

    def ideal_rank(self) -> np.ndarray:
        """0-based position of each ideal row within its query."""
        counts = np.diff(self.ideal_offsets)
        return np.arange(len(self.ideal_grade)) - np.repeat(self.ideal_offsets[:-1], counts)

    def first_row(self, mask: np.ndarray) -> np.ndarray:
        """Per query: rank of the first row where ``mask`` holds, or -1."""
        rows = np.flatnonzero(mask)
        out = np.full(self.n, -1, dtype=np.int64)
        if len(rows):
            q = self.qidx[rows]
            first = np.ones(len(rows), dtype=bool)
            first[1:] = q[1:] != q[:-1]
            out[q[first]] = self.rank[rows[first]]
        return out
