"""The one join of a run with the qrels, and the ranked per-query arrays it yields.

:func:`prepare` aligns a :class:`~rankscope.data.Run` with a :class:`QrelsIndex`
and returns a :class:`Prepared` bundle: every retrieved row of every evaluated
query, grouped by query (queries in sorted id order) and ranked within it by
score descending, ties broken by doc id descending (trec_eval's order), cut at
``depth``.  Each row carries its grade (0 when unjudged) and a judged flag.
Every metric kernel works on these flat arrays with numpy reductions; nothing
loops over queries or documents in Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data import Qrels, Run
from rankscope.data._columns import arrow_ints, positions, to_numpy
from rankscope.errors import InvalidParameterError, NoOverlapError

__all__ = ["QrelsIndex", "Prepared", "prepare", "MissingPolicy"]

MissingPolicy = Literal["zero", "ignore"]


class QrelsIndex:
    """Qrels prepared once for many runs: sorted join keys and per-query ideal grades."""

    def __init__(self, qrels: Qrels) -> None:
        self.qrels = qrels
        self.query_ids = qrels.query_ids
        n_docs = max(len(qrels.doc_ids), 1)
        keys = qrels.qcode.astype(np.int64) * n_docs + qrels.dcode
        order = np.argsort(keys, kind="stable")
        self.n_docs = n_docs
        self.keys = keys[order]
        self.key_grades = qrels.grades[order]
        # judged grades per query, sorted descending: the ideal ranking
        by_q = np.lexsort((-qrels.grades, qrels.qcode))
        self.ideal_grade = qrels.grades[by_q]
        counts = np.bincount(qrels.qcode, minlength=len(self.query_ids))
        self.ideal_offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)

    def grades_for(self, qidx: np.ndarray, doc_ids: pa.Array, dcode: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Grade and judged flag of each (qrels query index, run doc code) row."""
        to_qdoc = pc.index_in(doc_ids, value_set=self.qrels.doc_ids)
        to_qdoc_np = positions(to_qdoc).astype(np.int32)
        return self.grades_at(qidx, to_qdoc_np[dcode])

    def grades_at(self, qidx: np.ndarray, qd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Grade and judged flag of each row, given its qrels query index and qrels doc code (-1: unknown)."""
        grade = np.zeros(len(qd), dtype=np.int64)
        judged = np.zeros(len(qd), dtype=bool)
        rows = np.flatnonzero(qd >= 0)  # only rows whose doc is judged for some query
        if len(rows) and len(self.keys):
            keys = qidx[rows].astype(np.int64) * self.n_docs + qd[rows]
            pos = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
            hit = self.keys[pos] == keys
            g = self.key_grades[pos]
            grade[rows] = np.where(hit, g, 0)
            # trec_eval: a negative grade means "in the pool but not judged"
            judged[rows] = hit & (g >= 0)
        return grade, judged


@dataclass
class Prepared:
    """Ranked, judged rows of every evaluated query (the input of every kernel).

    Rows are grouped by query (``query_ids`` order) and ranked within a query.

    Attributes
    ----------
    query_ids : object array (n,)   evaluated query ids, sorted
    offsets : int64 (n+1,)          rows of query i are ``offsets[i]:offsets[i+1]``
    qidx : int32 (rows,)            query index of each row
    rank : int32 (rows,)            0-based rank within its query (int64 beyond 2**31 rows)
    grade : int64 (rows,)           relevance grade, 0 when unjudged
    judged : bool (rows,)           whether the (query, doc) pair is in the qrels
    score : float64 (rows,)         retrieval score (a property: gathered from the run on first use)
    dcode : int (rows,)             index into ``doc_ids``: ``doc_ids.take(dcode)`` are the rows'
                                    doc ids (``doc_ids`` is the run's doc dictionary, or its
                                    per-row doc strings when no dictionary was built)
    ideal_offsets, ideal_grade      every judged grade of query i, sorted descending,
                                    in ``ideal_grade[ideal_offsets[i]:ideal_offsets[i+1]]``
    in_run : bool (n,)              whether the query has a ranking in the run
    relevance_level : int           default threshold for binary relevance
    """

    query_ids: np.ndarray
    offsets: np.ndarray
    qidx: np.ndarray
    rank: np.ndarray
    grade: np.ndarray
    judged: np.ndarray
    dcode: np.ndarray
    doc_ids: pa.Array
    ideal_offsets: np.ndarray
    ideal_grade: np.ndarray
    in_run: np.ndarray
    relevance_level: int = 1
    score_source: tuple[np.ndarray, np.ndarray | None] = field(default=(np.empty(0), None), repr=False)
    _cache: dict[object, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def score(self) -> np.ndarray:
        """Retrieval score of every row (float64), ``scores[rows]`` of ``score_source``, gathered on first use.

        Most metrics never read it, so evaluation does not keep a row-sized copy.
        """
        key = ("score",)
        if key not in self._cache:
            scores, rows = self.score_source
            self._cache[key] = scores if rows is None else scores[rows]
        return self._cache[key]

    @property
    def n(self) -> int:
        """Number of evaluated queries."""
        return len(self.query_ids)

    @property
    def num_ret(self) -> np.ndarray:
        """Number of retrieved documents per query (after the depth cut)."""
        return np.diff(self.offsets)

    def level(self, rel: int | None) -> int:
        """``rel`` if given, else the evaluation's relevance level."""
        return self.relevance_level if rel is None else int(rel)

    def is_rel(self, rel: int | None = None) -> np.ndarray:
        """Boolean per row: grade >= relevance level."""
        lv = self.level(rel)
        key = ("is_rel", lv)
        if key not in self._cache:
            # a level <= 0 must not make unjudged rows (grade 0 or negative) relevant (trec_eval -l0)
            self._cache[key] = self.grade >= lv if lv >= 1 else (self.grade >= lv) & self.judged
        return self._cache[key]

    def num_rel(self, rel: int | None = None) -> np.ndarray:
        """Number of relevant judged documents per query (from the qrels, not the run)."""
        lv = self.level(rel)
        key = ("num_rel", lv)
        if key not in self._cache:
            self._cache[key] = self.ideal_sum((self.ideal_grade >= max(lv, 0)).astype(np.float64)).astype(np.int64)
        return self._cache[key]

    def num_judged(self) -> np.ndarray:
        """Number of judged documents per query."""
        return np.diff(self.ideal_offsets)

    def cum_rel(self, rel: int | None = None) -> np.ndarray:
        """Per row: relevant documents at or above this rank within the query (int64)."""
        lv = self.level(rel)
        key = ("cum_rel", lv)
        if key not in self._cache:
            self._cache[key] = self.cumsum_in_query(self.is_rel(lv).astype(np.int64))
        return self._cache[key]

    def cumsum_in_query(self, values: np.ndarray) -> np.ndarray:
        """Cumulative sum of ``values`` restarting at every query."""
        cs = np.cumsum(values)
        if len(cs) == 0:
            return cs
        start = self.offsets[:-1]
        base = np.where(start > 0, cs[np.maximum(start - 1, 0)], 0)
        return cs - np.repeat(base, self.num_ret)

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
        if key not in self._cache:
            self._cache[key] = np.repeat(np.arange(self.n), np.diff(self.ideal_offsets))
        return self._cache[key]

    def ideal_sum(self, values: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Per-query sum over the ideal (qrels) arrays."""
        w = values if mask is None else np.where(mask, values, 0)
        return np.bincount(self.ideal_qidx(), weights=w.astype(np.float64, copy=False), minlength=self.n)

    def ideal_rank(self) -> np.ndarray:
        """0-based position of each ideal row within its query."""
        key = ("ideal_rank",)
        if key not in self._cache:
            counts = np.diff(self.ideal_offsets)
            self._cache[key] = np.arange(len(self.ideal_grade)) - np.repeat(self.ideal_offsets[:-1], counts)
        return self._cache[key]

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


@dataclass(frozen=True)
class PolicyCounts:
    """How many queries each query policy touched."""

    evaluated: int
    missing_from_run: int
    not_in_qrels: int


def _block_order(qidx: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The grouping order when every query is one block already ranked by score, else None.

    Returns ``(order, starts, shift)``: input block ``k`` starts at row ``starts[k]``
    and its rows move by ``shift[k]`` (input row ``i`` of block ``k`` is ranked row ``i + shift[k]``).

    A run file or a DataFrame is usually grouped by query and sorted by score
    within each query, with the queries in some other order (e.g. numeric ids
    while rankscope orders them as strings).  Then the ranking only permutes
    whole blocks, no sort of the rows is needed.
    """
    n = len(qidx)
    brk = qidx[1:] != qidx[:-1]
    if not bool(np.all(brk | (score[1:] <= score[:-1]))):
        return None
    starts = np.flatnonzero(np.concatenate(([True], brk)))
    block_q = qidx[starts]
    idx = np.int32 if n < 2**31 else np.int64  # row numbers: half the memory traffic of int64
    if bool(np.all(block_q[1:] > block_q[:-1])):
        return np.arange(n, dtype=idx), starts, np.zeros(len(starts), dtype=np.int64)
    border = np.argsort(block_q, kind="stable")
    if bool(np.any(block_q[border][1:] == block_q[border][:-1])):
        return None  # a query split over several blocks
    lengths = np.diff(np.append(starts, n))
    new_len = lengths[border]
    new_start = np.concatenate(([0], np.cumsum(new_len)[:-1]))
    order: np.ndarray = np.arange(n, dtype=idx)
    order += np.repeat((starts[border] - new_start).astype(idx), new_len)
    shift = np.empty(len(starts), dtype=np.int64)
    shift[border] = new_start - starts[border]
    return order, starts, shift


def _rank_order(qidx: np.ndarray, score: np.ndarray, dcode: np.ndarray, doc_ids: pa.Array) -> np.ndarray:
    """Row order grouping by query, score descending, doc id descending."""
    return _ranked(qidx, score, dcode, doc_ids)[0]


def _ranked(
    qidx: np.ndarray, score: np.ndarray, dcode: np.ndarray | None, doc_ids: pa.Array, with_score: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(order, qidx[order], score[order])`` of :func:`_rank_order`; ``dcode=None``: row ``i`` is doc ``i``.

    ``with_score=False`` returns None for the ranked scores (not gathered when not needed).
    """
    n = len(qidx)
    if n == 0:
        return np.arange(0), qidx[:0], score[:0]
    # ties: equal (query, score) neighbours must be in doc id descending order
    layout = _block_order(qidx, score)
    ss: np.ndarray | None
    if layout is None:
        order = np.lexsort((-score, qidx))
        sq, ss = qidx[order], score[order]
        tie = (sq[1:] == sq[:-1]) & (ss[1:] == ss[:-1])
    else:
        # whole blocks move: input neighbours of one query stay neighbours, so the
        # ties are found in input order, without gathering the scores
        order, starts, shift = layout
        sq = qidx[order]
        ss = score[order] if with_score else None
        ti = np.flatnonzero((qidx[1:] == qidx[:-1]) & (score[1:] == score[:-1]))
        tie = np.zeros(n - 1, dtype=bool)
        tie[ti + shift[np.searchsorted(starts, ti, side="right") - 1]] = True
    if tie.any():
        in_group = np.zeros(n, dtype=bool)
        in_group[1:] |= tie
        in_group[:-1] |= tie
        pos = np.flatnonzero(in_group)
        # a tied row starts a new group unless it ties with the row before it
        starts_group = np.ones(len(pos), dtype=bool)
        inner = pos > 0
        starts_group[inner] = ~tie[pos[inner] - 1]
        group = np.cumsum(starts_group)
        tied = order[pos]
        docs = doc_ids.take(arrow_ints(tied if dcode is None else dcode[tied]))
        # Arrow compares strings bytewise: strcmp order, as trec_eval
        sub_arrow = pc.sort_indices(
            pa.table({"g": arrow_ints(group), "d": docs}), sort_keys=[("g", "ascending"), ("d", "descending")]
        )
        sub = to_numpy(sub_arrow)
        order[pos] = order[pos][sub]  # rows move only within a tie group: sq and ss stay valid
    return order, sq, ss


def prepare(
    index: QrelsIndex,
    run: Run,
    *,
    relevance_level: int = 1,
    missing: MissingPolicy = "zero",
    depth: int | None = None,
) -> tuple[Prepared, PolicyCounts]:
    """Join ``run`` with the qrels and rank every evaluated query (see module doc)."""
    if missing not in ("zero", "ignore"):
        raise InvalidParameterError(f"missing must be 'zero' or 'ignore', got {missing!r}")
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise InvalidParameterError(f"depth must be a positive integer or None, got {depth!r}")
    qrels_q = index.query_ids
    # run query code -> qrels query index (both id lists are sorted)
    pos = np.searchsorted(qrels_q, run.query_ids) if len(qrels_q) else np.zeros(len(run.query_ids), dtype=np.int64)
    pos_c = np.minimum(pos, max(len(qrels_q) - 1, 0))
    found = (qrels_q[pos_c] == run.query_ids) if len(qrels_q) else np.zeros(len(run.query_ids), dtype=bool)
    run2q = np.where(found, pos_c, -1)
    run_has = np.zeros(len(qrels_q), dtype=bool)
    present_codes = np.flatnonzero(np.bincount(run.qcode, minlength=len(run.query_ids)))
    present_q = run2q[present_codes]
    run_has[present_q[present_q >= 0]] = True
    not_in_qrels = int((present_q < 0).sum())
    if not run_has.any() and len(run):
        raise NoOverlapError(
            f"run {run.name!r} and the qrels have no query in common "
            f"(run: {len(present_codes)} queries such as {run.query_ids[present_codes[0]]!r}; "
            f"qrels: {len(qrels_q)} queries such as {qrels_q[0] if len(qrels_q) else None!r})"
        )
    eval_mask = np.ones(len(qrels_q), dtype=bool) if missing == "zero" else run_has
    n_eval = int(eval_mask.sum())
    # run query code -> evaluated query index, -1 for rows that are not evaluated (int32: rows are many)
    q_new = (np.cumsum(eval_mask) - 1).astype(np.int32)
    valid = run2q >= 0
    valid[valid] = eval_mask[run2q[valid]]
    code_to_eval = np.full(len(run.query_ids), -1, dtype=np.int32)
    code_to_eval[valid] = q_new[run2q[valid]]
    qidx_all = code_to_eval[run.qcode]
    src_rows: np.ndarray | None = None  # kept run rows, None when every row is kept
    score = run.scores
    if len(qidx_all) and int(qidx_all.min()) < 0:
        src_rows = np.flatnonzero(qidx_all >= 0)
        qidx_all, score = qidx_all[src_rows], score[src_rows]
    # doc references: codes into the run's doc dictionary when it exists, else run row
    # numbers into its doc strings (building the dictionary would hash every row)
    dref: np.ndarray | None
    if run.docs_encoded:
        dref, doc_ids = (run.dcode if src_rows is None else run.dcode[src_rows]), run.doc_ids
    else:
        dref, doc_ids = src_rows, run.doc_column()
    # the rows whose doc is judged for some query, and their grades (a few percent of a deep run)
    m_rows, m_qdoc = run.doc_matches(index.qrels.doc_ids)
    m_grade, m_judged = index.grades_at(run2q[run.qcode[m_rows]], m_qdoc)
    in_qrels = (m_grade != 0) | m_judged
    if src_rows is not None:
        in_qrels &= code_to_eval[run.qcode[m_rows]] >= 0
    m_rows, m_grade, m_judged = m_rows[in_qrels], m_grade[in_qrels], m_judged[in_qrels]
    if src_rows is not None:
        m_rows = np.searchsorted(src_rows, m_rows)  # positions among the kept rows
    del m_qdoc, in_qrels, valid
    order, qidx, _ = _ranked(qidx_all, score, dref, doc_ids, with_score=False)
    del qidx_all
    counts = np.bincount(qidx, minlength=n_eval)
    n_rows = len(qidx)
    rank: np.ndarray = np.arange(n_rows, dtype=np.int32 if n_rows < 2**31 else np.int64)
    rank -= np.repeat(np.concatenate(([0], np.cumsum(counts)[:-1])).astype(rank.dtype), counts)
    if depth is not None and len(rank) and int(rank.max()) >= depth:
        sel = rank < depth
        order, qidx, rank = order[sel], qidx[sel], rank[sel]
        counts = np.minimum(counts, depth)
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    r_dcode = order if dref is None else dref[order]
    # scatter the matched rows' grades to their ranked positions
    matched = np.zeros(len(score), dtype=bool)
    matched[m_rows] = True
    r_rows = np.flatnonzero(matched[order])
    del matched
    j = np.searchsorted(m_rows, order[r_rows])  # m_rows is ascending
    grade = np.zeros(len(order), dtype=np.int64)
    grade[r_rows] = m_grade[j]
    judged = np.zeros(len(order), dtype=bool)
    judged[r_rows] = m_judged[j]
    ev_q = np.flatnonzero(eval_mask)
    ic = np.diff(index.ideal_offsets)[ev_q]
    if n_eval == len(qrels_q):
        ideal_grade, ideal_offsets = index.ideal_grade, index.ideal_offsets
    else:
        take = np.repeat(index.ideal_offsets[:-1][ev_q], ic) + (
            np.arange(int(ic.sum())) - np.repeat(np.concatenate(([0], np.cumsum(ic)[:-1])), ic)
        )
        ideal_grade = index.ideal_grade[take]
        ideal_offsets = np.concatenate(([0], np.cumsum(ic))).astype(np.int64)
    prepared = Prepared(
        query_ids=qrels_q[eval_mask],
        offsets=offsets,
        qidx=qidx,
        rank=rank,
        grade=grade,
        judged=judged,
        score_source=(run.scores, order if src_rows is None else src_rows[order]),
        dcode=r_dcode,
        doc_ids=doc_ids,
        ideal_offsets=ideal_offsets,
        ideal_grade=ideal_grade,
        in_run=run_has[eval_mask],
        relevance_level=relevance_level,
    )
    policy = PolicyCounts(
        evaluated=n_eval,
        missing_from_run=int((~run_has).sum()),
        not_in_qrels=not_in_qrels,
    )
    return prepared, policy
