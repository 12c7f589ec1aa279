"""The documents several runs retrieved, lined up once: :class:`Pool` and its normalised :class:`Features`.

A pool row is one (query, document) pair that at least one run retrieved (after
each run's ``depth`` cut).  Rows are grouped by query (query ids sorted); for
every run ``r`` the pool keeps, per row, whether ``r`` retrieved it, its raw
score and its 0-based rank in ``r``'s own trec_eval order (score descending,
scores compared as float32, ties by doc id descending:
:func:`rankscope.engine.ranking.trec_order`).  :meth:`Pool.features` applies one
normalisation; every fusion method reads those arrays.  Everything is numpy
over all rows of all queries at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data._columns import arrow_ints, encode, encode_sorted, take, to_numpy
from rankscope.data.run import Run
from rankscope.engine.ranking import trec_order
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _

__all__ = ["Pool", "Features", "ABSENT_RANK", "normalize_scores"]

ABSENT_RANK = 1_000_000_000  # the rank of a document a run did not retrieve (below every retrieved one)
_EPS = 1e-9  # ranx's floor of a normaliser's denominator


def normalize_scores(scores: np.ndarray, groups: np.ndarray, norm: str | None) -> np.ndarray:
    """Normalise ``scores`` within each group id of ``groups`` (``"minmax"``, ``"zscore"`` or ``None``).

    >>> normalize_scores(np.array([3.0, 1.0, 2.0, 5.0]), np.array([0, 0, 0, 1]), "minmax").tolist()
    [1.0, 0.0, 0.5, 1.0]
    >>> normalize_scores(np.array([3.0, 1.0, 2.0]), np.array([0, 0, 0]), "zscore").round(4).tolist()
    [1.2247, -1.2247, 0.0]
    """
    if norm is None or len(scores) == 0:
        return scores.astype(np.float64, copy=True)
    n = int(groups.max()) + 1
    if norm == "minmax":
        lo = np.full(n, np.inf)
        hi = np.full(n, -np.inf)
        np.minimum.at(lo, groups, scores)
        np.maximum.at(hi, groups, scores)
        span = (hi - lo)[groups]
        out = np.ones(len(scores))
        np.divide(scores - lo[groups], span, out=out, where=span > 0)
        return out
    if norm == "zscore":
        counts = np.bincount(groups, minlength=n).astype(np.float64)
        mean = np.bincount(groups, weights=scores, minlength=n) / np.maximum(counts, 1)
        dev = scores - mean[groups]
        std = np.sqrt(np.bincount(groups, weights=dev * dev, minlength=n) / np.maximum(counts, 1))[groups]
        out = np.zeros(len(scores))
        np.divide(dev, std, out=out, where=std > 0)
        return out
    choices = Items(("minmax", "zscore", "None"))
    raise InvalidParameterError(_("norm must be one of {choices}; got {value!r}", choices=choices, value=norm))


def _ranked(run: Run, depth: int | None, invert: bool) -> tuple[pa.Array, pa.Array, np.ndarray, np.ndarray]:
    """``(query ids, doc ids, scores, 0-based ranks)`` of ``run``'s rows in trec order, cut at ``depth``."""
    if len(run) == 0:
        empty = pa.array([], type=pa.string())
        return empty, empty, np.zeros(0), np.zeros(0, dtype=np.int64)
    ranked_run = Run(run.query_column(), run.doc_column(), -run.scores) if invert else run
    order = trec_order(ranked_run)
    q = run.qcode[order]
    counts = np.bincount(q, minlength=len(run.query_ids))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(len(q)) - np.repeat(starts, counts)
    if depth is not None:
        keep = rank < depth
        order, q, rank = order[keep], q[keep], rank[keep]
    queries = pa.array(run.query_ids[q].tolist(), type=pa.string())
    docs = take(run.doc_column(), order).cast(pa.string())
    return queries, docs, run.scores[order], rank.astype(np.int64)


@dataclass
class Pool:
    """The union of the runs' (query, doc) pairs with each run's score and rank (see the module doc).

    Attributes
    ----------
    query_ids : object (Q,)      the queries any run retrieved for, sorted
    qidx : int64 (P,)            query index of each pool row (rows grouped by query)
    docs : Arrow string (P,)     doc id of each row
    offsets : int64 (Q+1,)       rows of query q are ``offsets[q]:offsets[q+1]``
    present : bool (R, P)        run r retrieved the row
    score : float64 (R, P)       run r's raw score (0 where absent)
    rank : int64 (R, P)          0-based rank in run r (``ABSENT_RANK`` where absent)
    length : int64 (R, Q)        documents run r retrieved for query q
    names : tuple of run names
    """

    query_ids: np.ndarray
    qidx: np.ndarray
    docs: pa.Array
    offsets: np.ndarray
    present: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    length: np.ndarray
    names: tuple[str, ...]
    _tie: np.ndarray | None = field(default=None, repr=False)
    _features: dict[str | None, Features] = field(default_factory=dict, repr=False)
    _inverted: Pool | None = field(default=None, repr=False)
    _runs: list[Run] = field(default_factory=list, repr=False)
    _depth: int | None = None

    @classmethod
    def build(cls, runs: list[Run], depth: int | None = None, *, invert: bool = False) -> Pool:
        """The pool of ``runs``, each cut at its top ``depth`` documents per query (ranks reversed with ``invert``)."""
        parts = [_ranked(r, depth, invert) for r in runs]
        n_runs = len(runs)
        sizes = [len(p[2]) for p in parts]
        all_q = pa.concat_arrays([p[0] for p in parts]) if parts else pa.array([], type=pa.string())
        all_d = pa.concat_arrays([p[1] for p in parts]) if parts else pa.array([], type=pa.string())
        if len(all_q) == 0:
            empty = np.zeros((n_runs, 0))
            return cls(np.zeros(0, dtype=object), np.zeros(0, dtype=np.int64), pa.array([], type=pa.string()),
                       np.zeros(1, dtype=np.int64), empty.astype(bool), empty, empty.astype(np.int64),
                       np.zeros((n_runs, 0), dtype=np.int64), tuple(r.name for r in runs), _runs=list(runs),
                       _depth=depth)
        qcode, query_ids, _ = encode_sorted(all_q)
        dcode, doc_dict = encode(all_d)
        n_docs = max(len(doc_dict), 1)
        key = qcode.astype(np.int64) * n_docs + dcode
        uniq, inverse = np.unique(key, return_inverse=True)
        n_rows, n_q = len(uniq), len(query_ids)
        qidx = uniq // n_docs
        docs = take(doc_dict, uniq % n_docs)
        offsets = np.concatenate(([0], np.cumsum(np.bincount(qidx, minlength=n_q)))).astype(np.int64)
        present = np.zeros((n_runs, n_rows), dtype=bool)
        score = np.zeros((n_runs, n_rows))
        rank = np.full((n_runs, n_rows), ABSENT_RANK, dtype=np.int64)
        length = np.zeros((n_runs, n_q), dtype=np.int64)
        at = np.concatenate(([0], np.cumsum(sizes)))
        for r, (_, _, s, rk) in enumerate(parts):  # one pass per run (a handful), vectorised over its rows
            rows = inverse[at[r]:at[r + 1]]
            present[r, rows] = True
            score[r, rows] = s
            rank[r, rows] = rk
            length[r] = np.bincount(qcode[at[r]:at[r + 1]], minlength=n_q)
        return cls(query_ids, qidx.astype(np.int64), docs, offsets, present, score, rank, length,
                   tuple(r.name for r in runs), _runs=list(runs), _depth=depth)

    @property
    def n_runs(self) -> int:
        """Number of runs."""
        return int(self.present.shape[0])

    @property
    def n_rows(self) -> int:
        """Number of pool rows (distinct (query, doc) pairs)."""
        return int(self.present.shape[1])

    @property
    def candidates(self) -> np.ndarray:
        """Documents any run retrieved, per query (int64, (Q,))."""
        return np.diff(self.offsets)

    def tie_order(self) -> np.ndarray:
        """Each row's position among its query's rows sorted by doc id descending (trec_eval's tie order)."""
        if self._tie is None:
            table = pa.table({"q": arrow_ints(self.qidx), "d": self.docs})
            order = to_numpy(pc.sort_indices(table, sort_keys=[("q", "ascending"), ("d", "descending")]))
            tie = np.empty(self.n_rows, dtype=np.int64)
            tie[order] = np.arange(self.n_rows) - self.offsets[self.qidx[order]]
            self._tie = tie
        return self._tie

    def to_run(self, scores: np.ndarray, name: str) -> Run:
        """The fused run: every pool row with its fused score."""
        return Run(pa.array(self.query_ids[self.qidx].tolist(), type=pa.string()), self.docs, scores, name)

    def features(self, norm: str | None) -> Features:
        """Every run's scores normalised by ``norm`` (a canonical name from the registry, or None), kept."""
        if norm == "min-max-inverted":
            if self._inverted is None:
                self._inverted = Pool.build(self._runs, self._depth, invert=True)
            return self._inverted.features("min-max-inverted-scores")
        if norm not in self._features:
            self._features[norm] = _normalise(self, norm)
        return self._features[norm]


@dataclass(frozen=True)
class Features:
    """What the fusion methods read: each run's normalised score, presence and rank per pool row.

    ``x`` is 0 where a run did not retrieve the row; ``length`` the list length per run and
    query (after ``borda``, which gives every run every candidate, the number of candidates).
    """

    pool: Pool
    x: np.ndarray
    present: np.ndarray
    rank: np.ndarray
    length: np.ndarray

    @property
    def n(self) -> np.ndarray:
        """Runs that retrieved each row (int64, (P,))."""
        return self.present.sum(axis=0)


def _per_query(values: np.ndarray, groups: np.ndarray, n: int, how: str) -> np.ndarray:
    """Minimum / maximum / sum of ``values`` per group id (0 for an empty group)."""
    if how == "sum":
        return np.bincount(groups, weights=values, minlength=n)
    out = np.full(n, np.inf if how == "min" else -np.inf)
    (np.minimum if how == "min" else np.maximum).at(out, groups, values)
    out[~np.isfinite(out)] = 0.0
    return out


def _normalise(pool: Pool, norm: str | None) -> Features:
    """Apply ``norm`` to every run of ``pool`` (see :data:`~rankscope.retrieval.fusion.registry.NORMS`)."""
    x = np.zeros_like(pool.score)
    present, rank, length = pool.present, pool.rank, pool.length
    n_q = len(pool.query_ids)
    if norm == "borda":
        cand = pool.candidates.astype(np.float64)
        c = cand[pool.qidx]
        for r in range(pool.n_runs):
            n_r = length[r][pool.qidx].astype(np.float64)
            x[r] = np.where(present[r], 1 - rank[r] / c, 0.5 - (n_r - 1) / (2 * c))
        # a run's missing candidates follow its own list, ordered by doc id descending (trec_eval's tie order)
        tie = pool.tie_order()
        new_rank = rank.copy()
        for r in range(pool.n_runs):
            miss = np.flatnonzero(~present[r])
            order = miss[np.lexsort((tie[miss], pool.qidx[miss]))]
            q = pool.qidx[order]
            counts = np.bincount(q, minlength=n_q)
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
            new_rank[r, order] = length[r][q] + np.arange(len(order)) - starts[q]
        full = np.broadcast_to(pool.candidates, length.shape).astype(np.int64)
        return Features(pool, x, np.ones_like(present), new_rank, full)
    for r in range(pool.n_runs):
        rows = np.flatnonzero(present[r])
        s, g = pool.score[r, rows], pool.qidx[rows]
        x[r, rows] = _norm_rows(norm, s, g, n_q, rank[r, rows], length[r])
    return Features(pool, x, present, rank, length)


def _norm_rows(norm: str | None, s: np.ndarray, g: np.ndarray, n_q: int, rank: np.ndarray,
               length: np.ndarray) -> np.ndarray:
    """One run's retrieved rows (scores ``s``, query ids ``g``) normalised by ``norm``."""
    if norm is None or len(s) == 0:
        return s.copy()
    if norm in ("minmax", "zscore"):
        return normalize_scores(s, g, norm)
    if norm == "rank":
        return 1 - rank / length[g]
    lo = _per_query(s, g, n_q, "min")
    if norm in ("min-max", "min-max-inverted-scores"):
        hi = _per_query(s, g, n_q, "max")
        den = np.maximum(hi - lo, _EPS)[g]
        if norm == "min-max":
            return (s - lo[g]) / den
        return (hi[g] - s) / den  # the inverted pool: ranks from the lowest score up
    if norm == "max":
        hi = _per_query(s, g, n_q, "max")
        return s / np.maximum(hi, _EPS)[g]
    if norm == "sum":
        total = _per_query(s, g, n_q, "sum")
        count = np.bincount(g, minlength=n_q)
        return (s - lo[g]) / np.maximum(total - lo * count, _EPS)[g]
    if norm == "zmuv":
        count = np.maximum(np.bincount(g, minlength=n_q), 1)
        mean = _per_query(s, g, n_q, "sum") / count
        dev = s - mean[g]
        std = np.sqrt(_per_query(dev * dev, g, n_q, "sum") / count)
        return dev / np.maximum(std, _EPS)[g]
    raise AssertionError(norm)  # the registry refused it before
