"""The one join of a run with the qrels, and the ranked per-query arrays it yields.

:func:`prepare` aligns a :class:`~rankscope.data.Run` with a :class:`QrelsIndex`
and returns a :class:`Prepared` bundle: the retrieved rows of every evaluated
query that have a qrels entry for it, grouped by query (queries in sorted id
order), each with its rank in the query's full ranking (score descending, ties
broken by doc id descending: trec_eval's order, see :mod:`rankscope.engine.ranking`),
cut at ``depth``, plus the number of documents each query retrieved.
:meth:`Prepared.complete_view` adds the unjudged rows (grade 0) for the metrics
that need every rank.  Every metric kernel works on these flat arrays with numpy
reductions; nothing loops over queries or documents in Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope._threads import thread_map
from rankscope.choices import JUDGED_K, MissingPolicy
from rankscope.data import Qrels, Run
from rankscope.data._columns import positions, str_array, take, to_numpy
from rankscope.data._segments import argsort_within_blocks, blocks_in_order, sort_segments
from rankscope.data._strings import StringBuffers, fingerprint, row_ranges
from rankscope.engine.judged import TopCounts
from rankscope.engine.policies import Policies
from rankscope.engine.prepared import Prepared
from rankscope.engine.ranking import Ranking
from rankscope.engine.small import SMALL_ROWS, prepare_small
from rankscope.errors import NoOverlapError
from rankscope.i18n import _, ngettext
from rankscope.measures.kernel_input import KernelInput, count_relevant

__all__ = ["QrelsIndex", "Prepared", "prepare", "MissingPolicy", "PolicyCounts"]

# smaller runs: one exact Arrow lookup of every row is cheaper than building and probing the join tables
_FINGERPRINT_JOIN_MIN_ROWS = 1 << 16
_FINGERPRINT_MIN_QUERIES = 4096  # fewer qrels queries: their ids are found by one Arrow lookup
_SMALL_QRELS = 1 << 16  # fewer judgments: the join keys are sorted at once rather than block by block
_SMALL_QRELS_DOCS = 1 << 14  # at most this many judgments: query_docs reads every doc id into Python once
_QUERY_DOCS_KEPT = 100_000  # queries whose {doc: row} dicts a QrelsIndex keeps for small runs


class QrelsIndex:
    """Qrels prepared once for many runs: the (query, doc) join keys and per-query ideal grades.

    The join of a run with the qrels (:meth:`lookup`) never hashes the run's doc
    ids into a dictionary.  It works on the 32-bit doc fingerprints the run kept
    from its duplicate check: a bit table of the qrels docs' fingerprints keeps
    the candidate rows (a few percent of a deep run), a second bit table of the
    qrels' (query, doc fingerprint) pairs drops most false candidates, a hash
    binary search in the sorted qrels keys finds the entry of each remaining key,
    and every hit is confirmed by comparing the doc id strings exactly.
    """

    def __init__(self, qrels: Qrels, model: np.ndarray | None = None) -> None:
        self.qrels = qrels
        # labels with provenance: True for each qrels row a model gave (counted in judged@k as model@k)
        self.model = None if model is None else np.asarray(model, dtype=bool)
        self.query_ids = qrels.query_ids
        # judged grades per query, sorted descending: the ideal ranking
        self.ideal_grade, self.ideal_offsets = _ideal_grades(qrels)
        # no judgment below grade 1: the qrels list relevant documents only (every other one is non-relevant)
        self.relevant_only = bool(len(self.ideal_grade)) and not bool((self.ideal_grade <= 0).any())
        # int32: one per judgment, kept for the life of the index
        self.ideal_query = np.repeat(np.arange(len(self.query_ids), dtype=np.int32), np.diff(self.ideal_offsets))
        self._join: _JoinTables | None = None  # built on the first large run
        self._query_docs: dict[int, dict[str, int]] = {}  # per qrels query: doc id -> qrels row (small runs)
        self._query_rows: np.ndarray | None = None  # qrels rows grouped by query (ideal_offsets bounds them)
        self._doc_list: list[str] | None = None  # small qrels: every doc id as a Python string
        self._relevant: dict[int, np.ndarray] = {}
        self._judged_count: np.ndarray | None = None
        self._query_ids_arrow: pa.Array | None = None
        self._query_fp: tuple[np.ndarray, np.ndarray] | None = None  # sorted query id fingerprints, their rows
        # what the kernels compute from the ideal arrays alone (ideal DCG ...), for runs that evaluate every query
        self.ideal_memo: dict[Any, np.ndarray] = {}

    def query_docs(self, q: int) -> dict[str, int]:
        """``{doc id: qrels row}`` of the judged documents of qrels query ``q`` (built on first use, then kept:
        a small run looks its documents up here, see :mod:`rankscope.engine.small`)."""
        found = self._query_docs.get(q)
        if found is None:
            if self._query_rows is None:
                self._query_rows = np.argsort(self.qrels.qcode, kind="stable")
            if len(self._query_docs) >= _QUERY_DOCS_KEPT:
                self._query_docs = {}
            rows = self._query_rows[int(self.ideal_offsets[q]) : int(self.ideal_offsets[q + 1])].tolist()
            if len(self.qrels) <= _SMALL_QRELS_DOCS:  # every doc id read once into Python, then indexed
                if self._doc_list is None:
                    self._doc_list = self.qrels.doc_column().to_pylist()
                docs = self._doc_list
                found = {docs[r]: r for r in rows}
            else:
                found = dict(zip(take(self.qrels.doc_column(), np.asarray(rows, dtype=np.int64)).to_pylist(),
                                 rows))
            self._query_docs[q] = found
        return found

    def relevant(self, level: int) -> np.ndarray:
        """Relevant judged documents of every qrels query at ``level`` (computed once per level, then kept)."""
        found = self._relevant.get(level)
        if found is None:
            found = count_relevant(self.ideal_grade, self.ideal_query, level, len(self.query_ids))
            found.flags.writeable = False  # shared by every run's kernel input
            self._relevant[level] = found
        return found

    def judged_count(self) -> np.ndarray:
        """Judged documents (grade >= 0) of every qrels query (computed once, then kept)."""
        if self._judged_count is None:
            count = np.bincount(self.ideal_query[self.ideal_grade >= 0], minlength=len(self.query_ids))
            count.flags.writeable = False
            self._judged_count = count
        return self._judged_count

    def ideal_of(self, eval_mask: np.ndarray, n_eval: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(ideal_grade, ideal_offsets, ideal_query)`` of the evaluated queries (``eval_mask`` over the qrels
        queries, ``n_eval`` of them)."""
        if n_eval == len(self.query_ids):
            return self.ideal_grade, self.ideal_offsets, self.ideal_query
        ev_q = np.flatnonzero(eval_mask)
        ic = np.diff(self.ideal_offsets)[ev_q]
        take_rows = np.repeat(self.ideal_offsets[:-1][ev_q], ic) + (
            np.arange(int(ic.sum())) - np.repeat(np.concatenate(([0], np.cumsum(ic)[:-1])), ic)
        )
        return (self.ideal_grade[take_rows], np.concatenate(([0], np.cumsum(ic))).astype(np.int64),
                np.repeat(np.arange(n_eval), ic))

    @property
    def query_ids_arrow(self) -> pa.Array:
        """The qrels query ids as an Arrow array (built on first use)."""
        if self._query_ids_arrow is None:
            self._query_ids_arrow = _arrow_ids(self.query_ids)
        return self._query_ids_arrow

    def positions_of(self, ids: pa.Array) -> np.ndarray:
        """Position of each id in the sorted qrels query ids, -1 when absent (int64).

        Many qrels queries: the 64-bit fingerprints of the qrels ids are sorted once,
        each id's fingerprint is binary-searched among them and every hit is confirmed
        by comparing the strings (a block of a streamed run asks this again and again;
        an Arrow hash lookup would hash every qrels id again each time).
        """
        if len(self.query_ids) < _FINGERPRINT_MIN_QUERIES:
            return positions(pc.index_in(ids, value_set=self.query_ids_arrow)).astype(np.int64)
        if self._query_fp is None:
            fp = fingerprint(self.query_ids_arrow)
            order = np.argsort(fp)
            self._query_fp = (fp[order], order)
        sfp, order = self._query_fp
        fp = fingerprint(ids)
        at = np.searchsorted(sfp, fp)
        # equal fingerprints of two qrels ids: the first one is found, the exact check below may refuse it
        pos = np.full(len(ids), -1, dtype=np.int64)
        found = np.flatnonzero(sfp[np.minimum(at, len(sfp) - 1)] == fp)
        pos[found] = order[at[found]]
        if len(found):
            same = to_numpy(pc.equal(take(ids, found), take(self.query_ids_arrow, pos[found])))
            wrong = found[~same]
            if len(wrong):  # a fingerprint collision: ask Arrow for those ids
                pos[wrong] = positions(pc.index_in(take(ids, wrong), value_set=self.query_ids_arrow))
        return pos

    def _join_tables(self) -> _JoinTables:
        if self._join is None:
            self._join = _JoinTables(self.qrels)
        return self._join

    def lookup(self, run: Run, run2q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The run rows that have a qrels entry for their query: ``(rows, grade, judged)``, rows in any order.

        ``run2q`` maps each run query code to its qrels query index (-1: skip the
        query).  ``judged`` is False for a negative grade (trec_eval: in the pool
        but not judged).
        """
        rows, qrow = self.lookup_rows(run, run2q)
        grade = self.qrels.grades[qrow]
        return rows, grade, grade >= 0

    def lookup_rows(self, run: Run, run2q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The run rows that have a qrels entry for their query and that entry's qrels row: ``(rows, qrow)``."""
        if len(run) < _FINGERPRINT_JOIN_MIN_ROWS or run.docs_encoded or not self._join_tables().distinct:
            return self._lookup_exact(run, run2q)
        jt = self._join_tables()
        fph = run.doc_fingerprints()
        cand = np.concatenate(thread_map(lambda r: jt.doc_bits.rows_in(fph, *r), row_ranges(len(fph))))
        qq = run2q[run.qcode[cand]]
        keep = qq >= 0
        cand, qq = cand[keep], qq[keep]
        keys = _pair_keys(qq, fph[cand])
        keep = jt.pair_bits.contains(_mix32(keys))
        cand, keys = cand[keep], keys[keep]
        # sorted needles: the binary searches walk the sorted keys in order (cache-friendly)
        by_key = np.argsort(keys)
        pos = np.minimum(np.searchsorted(jt.keys, keys[by_key]), len(jt.keys) - 1)
        hit = jt.keys[pos] == keys[by_key]
        cand, qrow = cand[by_key[hit]], jt.key_rows[pos[hit]]
        # exact check: equal fingerprints and lengths prove equal ids up to 8 bytes; longer ids compare bytes
        run_docs = StringBuffers(run.doc_column())
        length = run_docs.lengths(cand)
        exact = (run.doc_fingerprints64()[cand] == jt.fp[qrow]) & (length == jt.docs.lengths(qrow))
        longer = np.flatnonzero(exact & (length > 8))
        if len(longer):
            exact[longer] = run_docs.equal_rows(cand[longer], jt.docs, qrow[longer])
        return cand[exact], qrow[exact]

    def _lookup_exact(self, run: Run, run2q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`lookup_rows` by an exact Arrow lookup of every row's doc id in the qrels docs."""
        qrels = self.qrels
        qd = run.doc_lookup(qrels.doc_ids)
        rows = np.flatnonzero((qd >= 0) & (run2q[run.qcode] >= 0))
        n_docs = max(len(qrels.doc_ids), 1)
        qkeys = qrels.qcode.astype(np.int64) * n_docs + qrels.dcode
        order = np.argsort(qkeys)
        qkeys = qkeys[order]
        keys = run2q[run.qcode[rows]].astype(np.int64) * n_docs + qd[rows]
        pos = np.minimum(np.searchsorted(qkeys, keys), max(len(qkeys) - 1, 0))
        hit = qkeys[pos] == keys if len(qkeys) else np.zeros(len(keys), dtype=bool)
        return rows[hit], order[pos[hit]]


def _ideal_grades(qrels: Qrels) -> tuple[np.ndarray, np.ndarray]:
    """Every judged grade of each qrels query, sorted descending, and the per-query offsets."""
    counts = np.bincount(qrels.qcode, minlength=len(qrels.query_ids))
    offsets = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    starts = qrels.block_starts
    if starts is None or len(qrels) < 4096:  # small: one lexsort is cheaper than per-block sorts
        return qrels.grades[np.lexsort((-qrels.grades, qrels.qcode))], offsets
    # grouped by query: sort each block, then put the blocks in query order
    neg = sort_segments(-qrels.grades, np.append(starts, len(qrels)))
    return -neg[blocks_in_order(qrels.qcode, starts)], offsets


def _query_positions(ids: np.ndarray, index: QrelsIndex) -> np.ndarray:
    """Position of each id in the qrels' sorted query ids, -1 when absent (int64)."""
    qrels_q = index.query_ids
    if len(ids) > 256 and len(qrels_q):  # many ids: an Arrow hash lookup, no Python string comparisons
        return index.positions_of(_arrow_ids(ids))
    if len(qrels_q) == 0:
        return np.full(len(ids), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(qrels_q, ids), len(qrels_q) - 1)
    return np.where(qrels_q[pos] == ids, pos, -1).astype(np.int64)


def _arrow_ids(ids: np.ndarray) -> pa.Array:
    return str_array(ids.tolist())


class _JoinTables:
    """What the fingerprint join needs from the qrels (see :class:`QrelsIndex`).

    Kept for the life of the index, one entry per judgment: the sorted keys (8 bytes) and their
    qrels rows (4 bytes; the doc ids, their fingerprints and lengths are the qrels' own); built
    without keeping a second copy of a per-judgment array alive longer than it takes to make the next.
    """

    def __init__(self, qrels: Qrels) -> None:
        self.docs = StringBuffers(qrels.doc_column())
        self.fp = qrels.doc_fingerprints64()
        fph = qrels.doc_fingerprints()
        self.doc_bits = _BitTable(fph)
        order = _key_order(qrels, fph)
        self.key_rows = order.astype(np.int32) if len(order) < 2**31 else order
        del order
        self.keys = _pair_keys(qrels.qcode[self.key_rows], fph[self.key_rows])
        # equal keys (two docs of one query with equal 32-bit fingerprints): the exact lookup decides
        self.distinct = len(self.keys) > 0 and not bool((self.keys[1:] == self.keys[:-1]).any())
        self.pair_bits = _BitTable(_mix32(self.keys))


def _key_order(qrels: Qrels, fph: np.ndarray) -> np.ndarray:
    """The qrels rows sorted by (query code, doc fingerprint): per-block sorts when grouped by query."""
    starts = qrels.block_starts
    if starts is not None and len(qrels) >= _SMALL_QRELS:
        within = argsort_within_blocks(fph, starts)  # fingerprint order inside each query block
        if within is not None:
            return within[blocks_in_order(qrels.qcode, starts)]  # a block's code is the same in any row order
    return np.argsort(_pair_keys(qrels.qcode, fph))


def _pair_keys(qidx: np.ndarray, fph: np.ndarray) -> np.ndarray:
    """``query << 32 | doc fingerprint``: one uint64 per (query index, 32-bit doc fingerprint) pair."""
    key = qidx.astype(np.uint64) << np.uint64(32)
    key |= fph.astype(np.uint64)
    return key


def _mix32(keys: np.ndarray) -> np.ndarray:
    """A well-spread 32-bit hash of 64-bit keys."""
    return ((keys * np.uint64(0xBF58476D1CE4E5B9)) >> np.uint64(32)).astype(np.uint32)


class _BitTable:
    """A packed bit table of the top 24 bits of uint32 hashes: cache-friendly set membership with false positives."""

    def __init__(self, hashes: np.ndarray) -> None:
        bits = min(max((16 * len(hashes)).bit_length(), 16), 24)
        self.shift = np.uint32(32 - bits)
        table = np.zeros(1 << bits, dtype=bool)
        table[hashes >> self.shift] = True
        self.packed = np.packbits(table, bitorder="little")

    def contains(self, hashes: np.ndarray) -> np.ndarray:
        """Per hash: possibly in the set (True) or surely not (False)."""
        idx = hashes >> self.shift
        byte = np.take(self.packed, idx >> np.uint32(3))
        return ((byte >> (idx & np.uint32(7)).astype(np.uint8)) & np.uint8(1)).view(bool)

    def rows_in(self, hashes: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """Rows ``lo <= i < hi`` whose hash may be in the set."""
        return np.flatnonzero(self.contains(hashes[lo:hi])) + lo


def _no_overlap(run: Run, run_q: np.ndarray, qrels_q: np.ndarray) -> NoOverlapError:
    """The error of a run that shares no query with the qrels: both sides' ids and a hint."""
    from rankscope.engine.judged import id_relation

    rel = id_relation(run_q, qrels_q) if len(qrels_q) else None
    if rel is not None and rel[0] == "prefix":
        hint = _("hint: the query ids differ by the prefix {prefix}: strip it from one side", prefix=repr(rel[1]))
    else:
        hint = (_("hint: the run's query ids extend the qrels' ones (a suffix): strip it from the run")
                if rel is not None else _("hint: check that the run answers the topics of these qrels (query ids "
                                          "are compared as exact strings)"))
    qrels_example = qrels_q[0] if len(qrels_q) else None
    n_run = ngettext("{n} query", "{n} queries", len(run_q))
    n_qrels = ngettext("{n} query", "{n} queries", len(qrels_q))
    return NoOverlapError(_("run {run} and the qrels have no query in common (run: {n_run} such as {run_example}; "
                            "qrels: {n_qrels} such as {qrels_example}); {hint}", run=repr(run.name), n_run=n_run,
                            run_example=repr(run_q[0]), n_qrels=n_qrels, qrels_example=repr(qrels_example), hint=hint))


@dataclass(frozen=True)
class PolicyCounts:
    """How many queries each policy touched.

    ``float32_reordered``: evaluated queries whose ranking differs from the one the
    full float64 scores give, because scores were compared as float32 (trec_eval's
    rule, ``score_precision="float32"``): their tied scores are ordered by doc id.

    ``no_relevant``: evaluated queries with no document judged at or above the relevance level
    (every run scores 0 on them with most metrics).
    """

    evaluated: int
    missing_from_run: int
    not_in_qrels: int
    float32_reordered: int = 0
    no_relevant: int = 0


def prepare(
    index: QrelsIndex, run: Run, policies: Policies | None = None, *, judged_k: int = JUDGED_K, **values: Any
) -> tuple[Prepared, PolicyCounts]:
    """Join ``run`` with the qrels and rank every evaluated query (see module doc).

    ``policies`` (or its fields as keywords: ``relevance_level``, ``missing``,
    ``depth``, ``score_precision``, ``unjudged``) say how.  ``Prepared.top_counts`` holds
    the judged documents in each query's top ``judged_k``, counted before any condensing.
    """
    pol = policies if policies is not None else Policies.of("prepare", **values)
    qrels_q = index.query_ids
    # run query code -> qrels query index (Arrow hash lookup: no Python string comparisons)
    run2q = _query_positions(run.query_ids, index)
    run_has = np.zeros(len(qrels_q), dtype=bool)
    starts = run.block_starts
    if starts is not None:
        present_codes = np.sort(run.qcode[starts])
    else:
        present_codes = np.flatnonzero(np.bincount(run.qcode, minlength=len(run.query_ids)))
    present_q = run2q[present_codes]
    run_has[present_q[present_q >= 0]] = True
    not_in_qrels = int((present_q < 0).sum())
    if not run_has.any() and len(run):
        raise _no_overlap(run, run.query_ids[present_codes], qrels_q)
    eval_mask = np.ones(len(qrels_q), dtype=bool) if pol.missing == "zero" else run_has
    n_eval = int(eval_mask.sum())
    # run query code -> evaluated query index, -1 for rows that are not evaluated (int32: rows are many)
    q_new = (np.cumsum(eval_mask) - 1).astype(np.int32)
    valid = run2q >= 0
    valid[valid] = eval_mask[run2q[valid]]
    code_to_eval = np.full(len(run.query_ids), -1, dtype=np.int32)
    code_to_eval[valid] = q_new[run2q[valid]]
    if len(run) <= SMALL_ROWS:
        prepared, reordered = prepare_small(index, run, pol, judged_k, run2q, run_has, eval_mask, code_to_eval,
                                            n_eval)
    else:
        prepared, reordered = _prepare_rows(index, run, pol, judged_k, run2q, run_has, eval_mask, code_to_eval,
                                            n_eval)
    if pol.unjudged == "condense":  # Sakai's condensed lists (trec_eval -J): after the depth cut
        prepared = prepared.condensed_view()
    counts = PolicyCounts(
        evaluated=n_eval,
        missing_from_run=int((~run_has).sum()),
        not_in_qrels=not_in_qrels,
        float32_reordered=reordered,
        no_relevant=int((prepared.data.relevant == 0).sum()),
    )
    return prepared, counts


def _prepare_rows(
    index: QrelsIndex, run: Run, pol: Policies, judged_k: int, run2q: np.ndarray, run_has: np.ndarray,
    eval_mask: np.ndarray, code_to_eval: np.ndarray, n_eval: int,
) -> tuple[Prepared, int]:
    """:func:`prepare` from the point where the evaluated queries are known, with numpy / Arrow passes over the
    rows: the prepared run and the number of float32 reorderings."""
    depth = pol.depth
    ranking = Ranking(run, code_to_eval, n_eval, pol.score_precision)
    # the rows whose doc is judged for their query, and their grades (a few percent of a deep run)
    run2q_eval = np.where(code_to_eval >= 0, run2q, -1)
    m_rows, m_qrow = index.lookup_rows(run, run2q_eval)
    m_grade = index.qrels.grades[m_qrow]
    m_judged = m_grade >= 0
    m_q = code_to_eval[run.qcode[m_rows]]
    del run2q_eval
    m_rank = ranking.rank_of(m_rows)
    num_ret = ranking.num_ret
    matched = len(m_rows)  # retrieved rows with a qrels entry, at any rank: 0 means the ids do not match
    if depth is not None:
        cut = m_rank < depth
        m_rows, m_grade, m_judged, m_q, m_rank = m_rows[cut], m_grade[cut], m_judged[cut], m_q[cut], m_rank[cut]
        m_qrow = m_qrow[cut]
        num_ret = np.minimum(num_ret, depth)
    order = np.argsort((m_q.astype(np.int64) << 32) | m_rank)  # query, then rank
    idx = np.int32 if len(run) < 2**31 else np.int64
    qidx = m_q[order].astype(np.int32)
    offsets = np.concatenate(([0], np.cumsum(np.bincount(qidx, minlength=n_eval)))).astype(np.int64)
    ideal_grade, ideal_offsets, ideal_query = index.ideal_of(eval_mask, n_eval)
    every = n_eval == len(index.query_ids)  # every qrels query evaluated: the index's own counts
    data = KernelInput(
        offsets=offsets,
        qidx=qidx,
        rank=m_rank[order].astype(idx),
        grade=m_grade[order],
        judged=m_judged[order],
        num_ret=num_ret,
        ideal_offsets=ideal_offsets,
        ideal_grade=ideal_grade,
        ideal_query=ideal_query,
        relevant=index.relevant(pol.relevance_level) if every else count_relevant(
            ideal_grade, ideal_query, pol.relevance_level, n_eval),
        in_run=run_has[eval_mask],
        relevance_level=pol.relevance_level,
        all_rows=False,
        ideal_memo=index.ideal_memo if every else None,
    )
    judged_top, top = data.judged_in_top(judged_k)
    judged_count = index.judged_count() if every else np.bincount(ideal_query[ideal_grade >= 0], minlength=n_eval)
    judgeable = np.minimum(judged_count, top)
    model_top = None
    if index.model is not None:
        model_top = data.count(index.model[m_qrow[order]] & data.judged & (data.rank < judged_k))
    prepared = Prepared(
        data, index.query_ids[eval_mask], run=run, ranking=ranking, depth=depth, source_rows=m_rows[order],
        top_counts=TopCounts(judged_k, top, judged_top, model_top, matched, judgeable, index.relevant_only),
    )
    return prepared, ranking.reordered
