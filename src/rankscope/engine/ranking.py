"""The ranking of a run's evaluated rows: score descending, ties broken by doc id descending.

trec_eval sorts each query's documents by score, then by ``strcmp`` of the doc
ids, descending.  It keeps every score in a C ``float``, so scores that differ
as doubles but are equal once rounded to single precision tie (reranker
probabilities near 1, large scores differing past the 7th significant digit).
With ``score_precision="float32"`` (the default) the ranking compares the
float32-rounded scores exactly as trec_eval does, and :attr:`Ranking.reordered`
counts the evaluated queries whose order differs from the float64 order;
``"float64"`` compares the full scores.  :class:`Ranking` gives that order for
the rows of the evaluated queries, computing as little as it can:

* **Grouped, sorted input** (a run file or a DataFrame: each query one block
  of rows, scores non-increasing within the block) needs no sort.  A row's rank
  is its position in its block; only rows inside a group of tied scores move,
  and the tie groups are ordered by an Arrow sort of their doc ids (bytewise,
  as ``strcmp``).  :meth:`Ranking.rank_of` ranks a few rows (the judged ones)
  without building the ranked order of all rows; :meth:`Ranking.ranked_rows`
  builds it (blocks permuted into query order) only when asked.
* **Anything else** is sorted once with ``np.lexsort`` (query, score
  descending), then the tie groups are ordered as above.

Every step is a numpy / Arrow pass over the rows; nothing loops over queries
or documents in Python.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.choices import ScorePrecisionValue
from rankscope.data import Run
from rankscope.data._columns import arrow_ints, take, to_numpy

__all__ = ["Ranking", "sorted_within_blocks", "trec_order", "ranking_scores"]


def ranking_scores(score: np.ndarray, precision: ScorePrecisionValue) -> np.ndarray:
    """The scores the ranking compares: rounded to float32 (trec_eval's C ``float``) or the float64 themselves.

    Rounding is to nearest, as C's conversion of ``atof``'s double to ``float``;
    magnitudes beyond float32's range become infinite, as in C.

    >>> ranking_scores(np.array([0.99999952, 0.99999951]), "float32").tolist()
    [0.9999995231628418, 0.9999995231628418]
    """
    if precision == "float64":
        return score
    with np.errstate(over="ignore"):
        return score.astype(np.float32)


def sorted_within_blocks(score: np.ndarray, starts: np.ndarray) -> bool:
    """Whether ``score`` is non-increasing inside each block ``starts[i]:starts[i+1]``.

    >>> sorted_within_blocks(np.array([3.0, 1.0, 5.0, 5.0, 2.0]), np.array([0, 2]))
    True
    """
    if len(score) < 2:
        return True
    ok = score[1:] <= score[:-1]
    ok[starts[1:] - 1] = True  # a block boundary may go up
    return bool(ok.all())


def _tie_pairs(score: np.ndarray, qidx: np.ndarray | None, starts: np.ndarray | None) -> np.ndarray:
    """Positions ``i`` where rows ``i`` and ``i + 1`` are in one query and have equal scores."""
    if len(score) < 2:
        return np.empty(0, dtype=np.int64)
    eq = score[1:] == score[:-1]
    if starts is not None:
        eq[starts[1:] - 1] = False
    if qidx is not None:
        eq &= qidx[1:] == qidx[:-1]
    return np.flatnonzero(eq)


def _tie_slots(
    ties: np.ndarray, docs_of: Callable[[np.ndarray], pa.Array], wanted: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Order every group of tied positions by doc id descending.

    ``ties`` are the positions ``i`` tied with ``i + 1`` (sorted); ``docs_of(pos)``
    gives the doc ids at positions ``pos`` (only tied positions are asked for).
    Returns ``(pos, slot)``: the position ``pos[j]`` (sorted) moves to ``slot[j]``
    within its group.  With ``wanted``, only the
    groups holding one of those positions are ordered.
    """
    pos = np.union1d(ties, ties + 1)
    # a position starts a new group unless it ties with the one before it
    prev = np.searchsorted(ties, pos - 1)
    starts_group = ~((prev < len(ties)) & (ties[np.minimum(prev, len(ties) - 1)] == pos - 1))
    group = np.cumsum(starts_group)
    if wanted is not None:
        at = np.searchsorted(pos, wanted)
        inside = at < len(pos)
        inside[inside] = pos[at[inside]] == wanted[inside]
        keep = np.isin(group, group[at[inside]])
        pos, group = pos[keep], group[keep]
    if len(pos) == 0:
        return pos, pos
    # Arrow compares strings bytewise: strcmp order, as trec_eval
    table = pa.table({"g": arrow_ints(group), "d": docs_of(pos)})
    sub = to_numpy(pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")]))
    slot = np.empty(len(pos), dtype=np.int64)
    slot[sub] = pos  # the position placed at pos[t] is pos[sub[t]]
    return pos, slot


class Ranking:
    """The trec_eval ranking of the rows of ``run`` whose query is evaluated.

    ``code_to_eval`` maps each run query code to its evaluated query index
    (-1: not evaluated); ``num_ret[i]`` is the number of rows of evaluated query
    ``i`` (before any depth cut); ``reordered`` the number of evaluated queries
    whose float32 ranking differs from their float64 ranking (0 with ``"float64"``).
    """

    def __init__(
        self, run: Run, code_to_eval: np.ndarray, n_eval: int, score_precision: ScorePrecisionValue = "float32"
    ) -> None:
        self.run = run
        self.n_eval = n_eval
        self.code_to_eval = code_to_eval
        self.reordered = 0
        self._order: np.ndarray | None = None  # ranked run rows, grouped by evaluated query
        self._inverse: np.ndarray | None = None
        full = run.scores
        score = ranking_scores(full, score_precision)
        rounded = score is not full
        starts = run.block_starts
        self.blocks = starts is not None and len(run) > 0 and sorted_within_blocks(score, starts)
        if self.blocks:
            assert starts is not None
            self.starts = starts
            self.lengths = np.diff(np.append(starts, len(run)))
            self.block_q = code_to_eval[run.qcode[starts]].astype(np.int64)
            valid = self.block_q >= 0
            self.num_ret = np.bincount(self.block_q[valid], weights=self.lengths[valid], minlength=n_eval).astype(
                np.int64
            )
            self._ties = _tie_pairs(score, None, starts)
            if rounded and len(self._ties):
                self.reordered = self._reordered_blocks(full)
        else:
            qidx = code_to_eval[run.qcode]
            rows = np.flatnonzero(qidx >= 0)
            self.num_ret = np.bincount(qidx[rows], minlength=n_eval).astype(np.int64)
            # query ascending, score descending; ties fixed below
            order = rows[np.lexsort((-score[rows], qidx[rows]))]
            ties = _tie_pairs(score[order], qidx[order], None)
            if len(ties):
                pos, slot = _tie_slots(ties, lambda at: self._docs(order[at]))
                order[slot] = order[pos]
                if rounded:  # the float64 order differs where a full score rises inside a float32 tie group
                    rise = full[order[ties + 1]] > full[order[ties]]
                    self.reordered = len(np.unique(qidx[order[ties[rise]]]))
            self._order = order

    @classmethod
    def from_order(cls, run: Run, code_to_eval: np.ndarray, n_eval: int, order: np.ndarray, num_ret: np.ndarray,
                   reordered: int) -> Ranking:
        """The ranking whose ranked rows (grouped by evaluated query) are ``order``, ranked elsewhere
        (:mod:`rankscope.engine.small`)."""
        new = object.__new__(cls)
        new.run, new.n_eval, new.code_to_eval, new.reordered = run, n_eval, code_to_eval, reordered
        new._order, new._inverse, new.blocks, new.num_ret = order, None, False, num_ret
        return new

    def _reordered_blocks(self, full: np.ndarray) -> int:
        """Evaluated queries (grouped input) whose float32 ranking differs from their float64 ranking.

        Only tie groups holding two rows with different float64 scores can differ;
        those groups alone are put in their float32 order (doc id descending) and
        checked for a full score that rises from one rank to the next.
        """
        ties = self._ties
        new = ties[full[ties] != full[ties + 1]]
        if len(new) == 0:
            return 0
        pos, slot = _tie_slots(ties, self._docs, wanted=new)
        by_slot = np.argsort(slot)
        at, row = slot[by_slot], pos[by_slot]  # the row placed at each position of those groups
        k = np.searchsorted(ties, at[:-1])
        tied_next = (k < len(ties)) & (ties[np.minimum(k, len(ties) - 1)] == at[:-1]) & (at[1:] == at[:-1] + 1)
        rise = tied_next & (full[row[1:]] > full[row[:-1]])
        blk = np.searchsorted(self.starts, at[:-1][rise], side="right") - 1
        q = self.block_q[blk]
        return len(np.unique(q[q >= 0]))

    def _docs(self, rows: np.ndarray) -> pa.Array:
        """Doc id strings of ``rows`` of the run."""
        run = self.run
        if run.docs_encoded:
            return take(run.doc_ids, run.dcode[rows])
        return take(run.doc_column(), rows)

    def rank_of(self, rows: np.ndarray) -> np.ndarray:
        """0-based rank of each run row in ``rows`` (all of evaluated queries) within its query (int64)."""
        rows = np.asarray(rows, dtype=np.int64)
        if not self.blocks:
            inv = self._inverse_order()
            qstart = np.concatenate(([0], np.cumsum(self.num_ret)[:-1]))
            return inv[rows] - qstart[self.query_of(rows)]
        blk = np.searchsorted(self.starts, rows, side="right") - 1
        slot = rows.copy()
        if len(self._ties) and len(rows):
            pos, new = _tie_slots(self._ties, self._docs, wanted=rows)
            at = np.minimum(np.searchsorted(pos, rows), max(len(pos) - 1, 0))
            hit = pos[at] == rows if len(pos) else np.zeros(len(rows), dtype=bool)
            slot[hit] = new[at[hit]]
        return slot - self.starts[blk]

    def query_of(self, rows: np.ndarray) -> np.ndarray:
        """Evaluated query index of each run row (-1 when its query is not evaluated)."""
        return self.code_to_eval[self.run.qcode[rows]].astype(np.int64)

    def _inverse_order(self) -> np.ndarray:
        if self._inverse is None:
            order = self.ranked_rows()
            inv = np.full(len(self.run), -1, dtype=np.int64)
            inv[order] = np.arange(len(order))
            self._inverse = inv
        return self._inverse

    def ranked_rows(self) -> np.ndarray:
        """The run rows of every evaluated query, grouped by query (evaluated order) and ranked."""
        if self._order is None:
            valid = np.flatnonzero(self.block_q >= 0)
            border = valid[np.argsort(self.block_q[valid], kind="stable")]
            new_len = self.lengths[border]
            new_start = np.concatenate(([0], np.cumsum(new_len)[:-1])).astype(np.int64)
            total = int(new_len.sum())
            idx = np.int32 if len(self.run) < 2**31 else np.int64
            order: np.ndarray = np.arange(total, dtype=idx)
            order += np.repeat((self.starts[border] - new_start).astype(idx), new_len)
            if len(self._ties):
                shift = np.zeros(len(self.starts), dtype=np.int64)
                shift[border] = new_start - self.starts[border]
                pos, slot = _tie_slots(self._ties, self._docs)
                blk = np.searchsorted(self.starts, pos, side="right") - 1
                keep = self.block_q[blk] >= 0
                order[slot[keep] + shift[blk[keep]]] = pos[keep]
            self._order = order
        return self._order


def trec_order(run: Run, score_precision: ScorePrecisionValue = "float32") -> np.ndarray:
    """Row order of ``run``: query (sorted ids), then score descending, then doc id descending.

    Scores are compared as float32 by default, as trec_eval does (see the module doc).

    >>> trec_order(Run.from_dict({"q2": {"a": 1.0}, "q1": {"b": 0.5, "c": 0.5, "d": 0.9}})).tolist()
    [3, 2, 1, 0]
    """
    n_q = len(run.query_ids)
    return Ranking(run, np.arange(n_q, dtype=np.int32), n_q, score_precision).ranked_rows()
