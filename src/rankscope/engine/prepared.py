"""The input of every metric kernel: :class:`Prepared`, the ranked, judged rows of each query."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from rankscope.data._columns import arrow_ints

if TYPE_CHECKING:
    from rankscope.data import Run
    from rankscope.engine.ranking import Ranking
    from rankscope.measures._spans import SpanInput

__all__ = ["Prepared"]


@dataclass(kw_only=True)
class Prepared:
    """Ranked rows of every evaluated query, with their judgments (the input of every kernel).

    Rows are grouped by query (``query_ids`` order) and ranked within a query.
    :func:`~rankscope.engine.prepare.prepare` returns the **judged view**: only the
    retrieved rows that have a qrels entry for their query (judged, or pooled with
    a negative grade) — a few percent of a deep run — each with its true rank in
    the full ranking.  Every measure that only looks at such rows (plus
    ``num_ret``) runs on it; :meth:`complete_view` adds the unjudged rows (grade
    0, ``judged`` False) for the measures that need every rank (``G``,
    ``ndcg_rel``, ``Rndcg``, relstring, custom metrics unless they declare
    otherwise).

    Attributes
    ----------
    query_ids : object array (n,)   evaluated query ids, sorted
    offsets : int64 (n+1,)          rows of query i are ``offsets[i]:offsets[i+1]``
    qidx : int32 (rows,)            query index of each row
    rank : int (rows,)              0-based rank within its query in the full ranking
    grade : int64 (rows,)           relevance grade, 0 when unjudged
    judged : bool (rows,)           whether the (query, doc) pair is judged (grade >= 0 in the qrels)
    num_ret : int64 (n,)            documents retrieved per query (after the depth cut)
    all_rows : bool                 whether the rows are every retrieved row (complete view)
    score : float64 (rows,)         retrieval score (a property: gathered from the run on first use)
    dcode : int (rows,)             index into ``doc_ids``: ``doc_ids.take(dcode)`` are the rows'
                                    doc ids (``doc_ids`` is the run's doc dictionary, or its
                                    per-row doc strings when no dictionary was built)
    ideal_offsets, ideal_grade      every judged grade of query i, sorted descending,
                                    in ``ideal_grade[ideal_offsets[i]:ideal_offsets[i+1]]``
    in_run : bool (n,)              whether the query has a ranking in the run
    relevance_level : int           default threshold for binary relevance
    spans : SpanInput | None        judged spans and the place of every retrieved chunk (span
                                    measures; see :mod:`rankscope.engine.spans`)
    """

    query_ids: np.ndarray
    offsets: np.ndarray
    qidx: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    judged: np.ndarray
    num_ret: np.ndarray
    ideal_offsets: np.ndarray
    ideal_grade: np.ndarray
    in_run: np.ndarray
    relevance_level: int = 1
    all_rows: bool = True
    run: Run | None = field(default=None, repr=False)
    ranking: Ranking | None = field(default=None, repr=False)
    depth: int | None = None
    source_rows: np.ndarray | None = field(default=None, repr=False)
    spans: SpanInput | None = field(default=None, repr=False)
    _cache: dict[object, object] = field(default_factory=dict, repr=False)

    # -- views ----------------------------------------------------------------------
    def complete_view(self) -> Prepared:
        """Every retrieved row, judged or not (built from this view once, then cached).

        >>> from rankscope import Qrels, Run
        >>> from rankscope.engine.prepare import QrelsIndex, prepare
        >>> p, _ = prepare(QrelsIndex(Qrels.from_dict({"q": {"a": 1}})), Run.from_ranked_lists({"q": ["x", "a"]}))
        >>> p.rank.tolist(), p.complete_view().rank.tolist(), p.complete_view().grade.tolist()
        ([1], [0, 1], [0, 1])
        """
        if self.all_rows:
            return self
        key = ("complete",)
        if key not in self._cache:
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
            self._cache[key] = Prepared(
                query_ids=self.query_ids, offsets=offsets, qidx=qidx, rank=rank, grade=grade, judged=judged,
                num_ret=num_ret, ideal_offsets=self.ideal_offsets, ideal_grade=self.ideal_grade, in_run=self.in_run,
                relevance_level=self.relevance_level, all_rows=True, run=self.run, ranking=self.ranking,
                depth=self.depth, spans=self.spans,
            )
        out = self._cache[key]
        assert isinstance(out, Prepared)
        return out

    @property
    def rows(self) -> np.ndarray:
        """The run row of each row (what ``score``, ``dcode`` and ``doc_ids`` read)."""
        if self.source_rows is None:
            if self.ranking is None:
                raise ValueError("this Prepared was built without its run")
            order = self.ranking.ranked_rows()  # complete view: every ranked row
            if self.depth is not None:
                order = order[_depth_rows(self.ranking.num_ret, self.depth)]
            self.source_rows = order
        return self.source_rows

    @property
    def score(self) -> np.ndarray:
        """Retrieval score of every row (float64), gathered from the run on first use."""
        key = ("score",)
        if key not in self._cache:
            self._cache[key] = self._run().scores[self.rows]
        out = self._cache[key]
        assert isinstance(out, np.ndarray)
        return out

    @property
    def doc_ids(self) -> pa.Array | pa.ChunkedArray:
        """What ``dcode`` indexes: the run's doc dictionary, or its per-row doc strings."""
        run = self._run()
        return run.doc_ids if run.docs_encoded else run.doc_column()

    @property
    def dcode(self) -> np.ndarray:
        """Index of each row's doc id in :attr:`doc_ids`."""
        run = self._run()
        return run.dcode[self.rows] if run.docs_encoded else self.rows

    def doc_strings(self) -> list[str]:
        """The doc id of every row."""
        return self.doc_ids.take(arrow_ints(self.dcode)).to_pylist()

    def _run(self) -> Run:
        if self.run is None:
            raise ValueError("this Prepared was built without its run")
        return self.run

    # -- per-query helpers ----------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of evaluated queries."""
        return len(self.query_ids)

    def level(self, rel: int | None) -> int:
        """``rel`` if given, else the evaluation's relevance level."""
        return self.relevance_level if rel is None else int(rel)

    def _cached(self, key: tuple[object, ...]) -> np.ndarray | None:
        out = self._cache.get(key)
        return out if isinstance(out, np.ndarray) else None

    def is_rel(self, rel: int | None = None) -> np.ndarray:
        """Boolean per row: grade >= relevance level."""
        lv = self.level(rel)
        key = ("is_rel", lv)
        out = self._cached(key)
        if out is None:
            # a level <= 0 must not make unjudged rows (grade 0 or negative) relevant (trec_eval -l0)
            out = self.grade >= lv if lv >= 1 else (self.grade >= lv) & self.judged
            self._cache[key] = out
        return out

    def num_rel(self, rel: int | None = None) -> np.ndarray:
        """Number of relevant judged documents per query (from the qrels, not the run)."""
        lv = self.level(rel)
        key = ("num_rel", lv)
        out = self._cached(key)
        if out is None:
            out = self.ideal_sum((self.ideal_grade >= max(lv, 0)).astype(np.float64)).astype(np.int64)
            self._cache[key] = out
        return out

    def num_judged(self) -> np.ndarray:
        """Number of judged documents per query."""
        return np.diff(self.ideal_offsets)

    def cum_rel(self, rel: int | None = None) -> np.ndarray:
        """Per row: relevant documents at or above this rank within the query (int64)."""
        lv = self.level(rel)
        key = ("cum_rel", lv)
        out = self._cached(key)
        if out is None:
            out = self.cumsum_in_query(self.is_rel(lv).astype(np.int64))
            self._cache[key] = out
        return out

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
        return np.bincount(self.qidx[mask], minlength=self.n).astype(np.int64)

    def ideal_qidx(self) -> np.ndarray:
        """Query index of each ideal (qrels) row, computed once."""
        key = ("ideal_qidx",)
        out = self._cached(key)
        if out is None:
            out = np.repeat(np.arange(self.n), np.diff(self.ideal_offsets))
            self._cache[key] = out
        return out

    def ideal_sum(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Per-query sum over the ideal (qrels) arrays."""
        w = values if mask is None else np.where(mask, values, 0)
        return np.bincount(self.ideal_qidx(), weights=w.astype(np.float64, copy=False), minlength=self.n)

    def ideal_rank(self) -> np.ndarray:
        """0-based position of each ideal row within its query."""
        key = ("ideal_rank",)
        out = self._cached(key)
        if out is None:
            counts = np.diff(self.ideal_offsets)
            out = np.arange(len(self.ideal_grade)) - np.repeat(self.ideal_offsets[:-1], counts)
            self._cache[key] = out
        return out

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


def _depth_rows(num_ret: np.ndarray, depth: int) -> np.ndarray:
    """Positions in a ranked order (queries of ``num_ret`` rows each) of the first ``depth`` rows of each query."""
    offsets = np.concatenate(([0], np.cumsum(num_ret)[:-1])).astype(np.int64)
    kept = np.minimum(num_ret, depth)
    return np.repeat(offsets, kept) + (np.arange(int(kept.sum())) - np.repeat(np.cumsum(kept) - kept, kept))
