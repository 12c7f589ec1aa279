"""The join and ranking of a small run, in Python: what :func:`~rankscope.engine.prepare.prepare` builds, for a
run of a few hundred rows.

A numpy or Arrow call costs a microsecond or more whatever the size of its arrays, and the
general path makes a few hundred of them: for one query of ten documents (a live retriever's
answer, a notebook cell, one candidate of a tuning grid) that is most of the time.  Here the
rows are read once into Python lists and each evaluated query's rows are

* ranked by ``(score, doc id)`` descending — the scores compared as float32 when the policy says
  so (Python compares the strings by code point, which is the byte order of their UTF-8 form:
  trec_eval's ``strcmp``), with the float32 reorderings counted as :class:`~rankscope.engine.ranking.Ranking`
  counts them;
* joined with the qrels of their query through a dict of that query's judged documents, built
  once per query and kept by the :class:`~rankscope.engine.prepare.QrelsIndex`.

The result is the same :class:`~rankscope.engine.prepared.Prepared` (same arrays, same dtypes, same
counts) as the general path's; the kernels, judged@k and every policy then run unchanged.
``tests/test_prepare_paths.py`` checks the two paths against each other on random runs.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from rankscope.engine.judged import TopCounts
from rankscope.engine.prepared import Prepared
from rankscope.engine.ranking import Ranking, ranking_scores
from rankscope.measures.kernel_input import KernelInput, count_relevant

if TYPE_CHECKING:
    from rankscope.data import Run
    from rankscope.engine.policies import Policies
    from rankscope.engine.prepare import QrelsIndex

__all__ = ["SMALL_ROWS", "prepare_small"]

SMALL_ROWS = 512
"""Runs of at most this many rows are prepared here (beyond it numpy's per-call cost is the smaller one)."""


def prepare_small(
    index: QrelsIndex, run: Run, pol: Policies, judged_k: int, run2q: np.ndarray, run_has: np.ndarray,
    eval_mask: np.ndarray, code_to_eval: np.ndarray, n_eval: int,
) -> tuple[Prepared, int]:
    """:func:`~rankscope.engine.prepare.prepare` from the point where the evaluated queries are known: the
    prepared run and the number of float32 reorderings."""
    depth = pol.depth
    cte = code_to_eval.tolist()
    rows_of: dict[int, list[int]] = {}  # evaluated query -> its rows (only the queries the run has)
    starts = run.block_starts
    if starts is not None:  # each query one block of rows
        bounds = [*starts.tolist(), len(run)]
        codes = run.qcode[starts].tolist()
        for b, c in enumerate(codes):
            e = cte[c]
            if e >= 0:
                rows_of[e] = list(range(bounds[b], bounds[b + 1]))
    else:
        for i, c in enumerate(run.qcode.tolist()):
            e = cte[c]
            if e >= 0:
                rows = rows_of.get(e)
                if rows is None:
                    rows_of[e] = [i]
                else:
                    rows.append(i)
    full = run.scores
    score = ranking_scores(full, pol.score_precision)
    rounded = score is not full
    s = score.tolist()
    s64 = full.tolist() if rounded else s
    docs = run.doc_column().to_pylist()
    qrels_of = np.flatnonzero(eval_mask)  # evaluated query -> qrels query index
    order: list[int] = []
    m_rows: list[int] = []
    m_qrow: list[int] = []
    m_rank: list[int] = []
    m_q: list[int] = []
    num_ret = np.zeros(n_eval, dtype=np.int64)
    reordered = 0
    matched = 0
    for e in sorted(rows_of):
        rows = rows_of[e]
        rows.sort(key=lambda i: (s[i], docs[i]), reverse=True)
        order.extend(rows)
        num_ret[e] = len(rows)
        if rounded:
            for a, b in pairwise(rows):
                if s[a] == s[b] and s64[b] > s64[a]:  # a full score rises inside a float32 tie group
                    reordered += 1
                    break
        judged_docs = index.query_docs(int(qrels_of[e]))
        if not judged_docs:
            continue
        for r, i in enumerate(rows):
            j = judged_docs.get(docs[i])
            if j is not None:
                matched += 1
                if depth is None or r < depth:
                    m_rows.append(i)
                    m_qrow.append(j)
                    m_rank.append(r)
                    m_q.append(e)
    ranking = Ranking.from_order(run, code_to_eval, n_eval, np.array(order, dtype=np.int64), num_ret, reordered)
    nr = ranking.num_ret if depth is None else np.minimum(ranking.num_ret, depth)
    qrow = np.array(m_qrow, dtype=np.int64)
    grade = index.qrels.grades[qrow]
    qidx = np.array(m_q, dtype=np.int32)
    counts = np.bincount(qidx, minlength=n_eval)
    offsets = np.zeros(n_eval + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    ideal_grade, ideal_offsets, ideal_query = index.ideal_of(eval_mask, n_eval)
    every = n_eval == len(index.query_ids)  # every qrels query evaluated: the index's own counts
    idx = np.int32 if len(run) < 2**31 else np.int64
    data = KernelInput(
        offsets=offsets,
        qidx=qidx,
        rank=np.array(m_rank, dtype=idx),
        grade=grade,
        judged=grade >= 0,
        num_ret=nr,
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
        model_top = data.count(index.model[qrow] & data.judged & (data.rank < judged_k))
    prepared = Prepared(
        data, index.query_ids[eval_mask], run=run, ranking=ranking, depth=depth,
        source_rows=np.array(m_rows, dtype=np.int64),
        top_counts=TopCounts(judged_k, top, judged_top, model_top, matched, judgeable, index.relevant_only),
    )
    return prepared, reordered

