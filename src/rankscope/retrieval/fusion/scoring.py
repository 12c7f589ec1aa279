"""Score many fused rankings of one pool against the qrels, without building a run for each: :class:`PoolScorer`.

The pool (every document any run retrieved) is joined with the qrels once
(:func:`rankscope.engine.prepare.prepare` on a run holding every pool row); the
judged rows it finds are the only rows a judged-view metric reads.  For a fused
scoring of the pool, each judged row's rank is the number of rows of its query
that come before it in trec_eval's order (score descending, compared as float32;
ties by doc id descending) — counted over the rows of its query, or read from one
sort of the pool when judged rows are many — and the engine's own metric kernels
(:func:`rankscope.engine.scoring.score`) score the resulting
:class:`~rankscope.measures.kernel_input.KernelInput`.  The values equal
``Evaluator.evaluate(fused_run)``'s.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rankscope.engine.evaluator import Evaluator
from rankscope.engine.policies import Policies
from rankscope.engine.prepare import PolicyCounts, prepare
from rankscope.engine.ranking import ranking_scores
from rankscope.engine.scoring import score
from rankscope.measures.base import Measure
from rankscope.retrieval.fusion.pool import Pool

__all__ = ["PoolScorer"]

_PAIR_BUDGET = 8  # pairs per pool row up to which ranks are counted pairwise rather than by sorting
_CELLS = 1 << 23  # (settings x pairs) counted at once


class PoolScorer:
    """Per-query metric values of fused scorings of ``pool`` (see the module doc).

    ``evaluator`` gives the qrels (prepared once), the metrics and the relevance level;
    every qrels query is evaluated (one no run answered scores as an empty ranking).
    ``mode`` forces how ranks are counted (``"grid"``, ``"pairs"`` or ``"sort"``; default: the cheapest).
    """

    def __init__(self, pool: Pool, evaluator: Evaluator, measures: tuple[Measure, ...] | None = None,
                 mode: str | None = None) -> None:
        self.pool = pool
        self.measures = tuple(measures if measures is not None else evaluator.measures)
        pol = evaluator.policies
        policies = Policies(relevance_level=pol.relevance_level, missing="zero", score_precision=pol.score_precision)
        self.score_precision = pol.score_precision
        run = pool.to_run(np.zeros(pool.n_rows), "pool")
        prepared, counts = prepare(evaluator.index, run, policies)
        self.counts: PolicyCounts = counts
        self.data = prepared.data
        self.query_ids = prepared.query_ids
        rows = prepared.source_rows
        assert rows is not None
        self.rows = rows  # the pool row of each judged row
        self.n_eval = len(self.query_ids)
        pos = np.minimum(np.searchsorted(self.query_ids, pool.query_ids), max(self.n_eval - 1, 0))
        found = self.query_ids[pos] == pool.query_ids if self.n_eval else np.zeros(len(pool.query_ids), bool)
        self.pool_to_eval = np.where(found, pos, -1).astype(np.int64)
        self.num_ret = np.zeros(self.n_eval, dtype=np.int64)
        self.num_ret[self.pool_to_eval[found]] = pool.candidates[found]
        self.jq = self.data.qidx.astype(np.int64)
        self.tie = pool.tie_order()
        # the rows of each judged row's query: compared in a (query x candidates) grid when the queries'
        # pools are of similar sizes, else pair by pair when few enough, else by sorting
        qj = pool.qidx[rows]
        sizes = pool.candidates[qj]
        n_q = len(pool.query_ids)
        width = int(pool.candidates.max()) if n_q else 0
        if mode is None:
            self.grid = n_q * width <= 2 * pool.n_rows + 1024
            self.pairwise = not self.grid and int(sizes.sum()) <= _PAIR_BUDGET * max(pool.n_rows, 1)
        else:
            self.grid, self.pairwise = mode == "grid", mode == "pairs"
        if self.grid:
            self.width = width
            self.cell = pool.qidx * width + (np.arange(pool.n_rows) - pool.offsets[pool.qidx])
            ties = np.full(n_q * width, np.iinfo(np.int64).max)
            ties[self.cell] = self.tie
            self.judged_q = qj
            self.tie_before = ties.reshape(n_q, width)[qj] < self.tie[rows][:, None]  # (J, width)
        if self.pairwise:
            self.seg_starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
            within = np.arange(int(sizes.sum())) - np.repeat(self.seg_starts, sizes)
            self.pair_j = np.repeat(rows, sizes)
            self.pair_i = pool.offsets[qj].repeat(sizes) + within

    def ranks(self, fused: np.ndarray) -> np.ndarray:
        """The 0-based rank of every judged row under each fused scoring ``(B, P)``, ``(B, J)``."""
        f = ranking_scores(np.atleast_2d(fused), self.score_precision)
        n_b = f.shape[0]
        if len(self.rows) == 0:
            return np.zeros((n_b, 0), dtype=np.int64)
        if self.grid:
            n_q = len(self.pool.query_ids)
            out = np.empty((n_b, len(self.rows)), dtype=np.int64)
            step = max(1, _CELLS // max(len(self.rows) * self.width, n_q * self.width, 1))
            for b0 in range(0, n_b, step):
                part = f[b0:b0 + step]
                cells = np.full((len(part), n_q * self.width), -np.inf, dtype=part.dtype)
                cells[:, self.cell] = part
                g = cells.reshape(len(part), n_q, self.width)[:, self.judged_q, :]  # (b, J, width)
                own = part[:, self.rows][:, :, None]
                out[b0:b0 + step] = np.count_nonzero(g > own, axis=2) + np.count_nonzero(
                    (g == own) & self.tie_before[None, :, :], axis=2)
            return out
        if self.pairwise:
            out = np.empty((n_b, len(self.rows)), dtype=np.int64)
            step = max(1, _CELLS // max(len(self.pair_i), 1))
            tie_i, tie_j = self.tie[self.pair_i], self.tie[self.pair_j]
            earlier = tie_i < tie_j
            for b0 in range(0, n_b, step):
                fi, fj = f[b0:b0 + step][:, self.pair_i], f[b0:b0 + step][:, self.pair_j]
                before = (fi > fj) | ((fi == fj) & earlier)
                out[b0:b0 + step] = np.add.reduceat(before, self.seg_starts, axis=1)
            return out
        pool = self.pool
        out = np.empty((n_b, len(self.rows)), dtype=np.int64)
        for b in range(n_b):  # one sort of the pool per setting
            order = np.lexsort((self.tie, -f[b], pool.qidx))
            inv = np.empty(pool.n_rows, dtype=np.int64)
            inv[order] = np.arange(pool.n_rows)
            out[b] = inv[self.rows] - pool.offsets[pool.qidx[self.rows]]
        return out

    def values_from_ranks(self, rank: np.ndarray, keep: np.ndarray | None = None,
                          num_ret: np.ndarray | None = None) -> np.ndarray:
        """``(queries, measures)`` values of one ranking given as the rank of each judged row.

        ``keep``: the judged rows the ranking holds (default all); ``num_ret``: documents
        ranked per evaluated query (default: every pool document of the query).
        """
        q, grade, judged = self.jq, self.data.grade, self.data.judged
        if keep is not None:
            q, grade, judged, rank = q[keep], grade[keep], judged[keep], rank[keep]
        order = np.argsort((q << 32) | rank, kind="stable")
        n_ret = self.num_ret if num_ret is None else num_ret
        data = replace(
            self.data, qidx=q[order].astype(np.int32), rank=rank[order], grade=grade[order], judged=judged[order],
            offsets=np.concatenate(([0], np.cumsum(np.bincount(q, minlength=self.n_eval)))).astype(np.int64),
            num_ret=n_ret, in_run=n_ret > 0,
        )
        return score(data, self.measures)

    def values(self, fused: np.ndarray) -> np.ndarray:
        """Per-query values of each fused scoring ``(B, P)``: ``(B, queries, measures)``."""
        ranks = self.ranks(fused)
        return np.stack([self.values_from_ranks(r) for r in ranks]) if len(ranks) else np.zeros(
            (0, self.n_eval, len(self.measures)))

    def run_values(self, rank: np.ndarray, present: np.ndarray, length: np.ndarray) -> np.ndarray:
        """Per-query values of one input run given by its pool ``rank`` / ``present`` and per-query ``length``."""
        keep = present[self.rows]
        num_ret = np.zeros(self.n_eval, dtype=np.int64)
        ok = self.pool_to_eval >= 0
        num_ret[self.pool_to_eval[ok]] = length[ok]
        return self.values_from_ranks(rank[self.rows], keep, num_ret)

    def pool_query_values(self, values: np.ndarray) -> np.ndarray:
        """Per-query values (evaluated queries) put on the pool's queries (0 for a pool query not in the qrels)."""
        out = np.zeros(len(self.pool.query_ids))
        ok = self.pool_to_eval >= 0
        out[ok] = values[self.pool_to_eval[ok]]
        return out
