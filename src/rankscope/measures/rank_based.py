r"""Order-aware binary measures: reciprocal rank and average precision.

Binary relevance as in :mod:`rankscope.measures.set_based` (grade >= ``rel``).
Ranks are 1-based below; R is the number of relevant documents in the qrels.

* ``mrr`` (trec_eval ``recip_rank``, ir_measures ``RR``) = 1 / rank of the first
  relevant document; 0 when none is retrieved.  ``mrr@k`` only looks at the top k
  (0 when the first relevant document is below k).  The mean over queries is MRR.
* ``map`` (``map``, ``AP``) = (1/R) · Σ over relevant retrieved d of
  precision@rank(d); 0 when R = 0.  ``map@k`` (``map_cut_k``) sums only over the
  top k but still divides by R (trec_eval's ``map_cut``).
* ``gm_map`` (``gm_map``): the per-query value is AP; the aggregate is the
  geometric mean exp(mean(log(max(AP, 1e-5)))) as in trec_eval.
* ``set_map`` (``set_map``) = set precision × set recall.
* ``ap_rel_ret`` — **not standard AP**: Σ precision@rank(d) divided by the number
  of relevant documents *retrieved* (in the top k with a cutoff) instead of R,
  as older RAG write-ups define AP.  It ignores relevant documents the system never
  found, so it is never lower than ``map`` and rewards retrieving fewer
  documents; use it only to reproduce numbers computed that way (see
  docs/metric-variants.md).
* ``first_rel_rank`` — the 1-based rank of the first relevant document (within
  the top k with a cutoff); **0 when none is retrieved**.  Lower is better; its
  aggregate is the median over the queries where one was found (0 if none was).
  Comparisons keep it per query (``result.diagnostics``), which is what reports
  read for their first-relevant-rank distribution.

>>> from rankscope import evaluate, Qrels, Run
>>> qrels = Qrels.from_dict({"q": {"a": 1, "b": 1, "c": 1}})
>>> run = Run.from_ranked_lists({"q": ["x", "a", "y", "b"]})
>>> res = evaluate(qrels, run, ["mrr", "mrr@1", "map", "ap_rel_ret", "first_rel_rank"]).mean()
>>> {k: round(v, 4) for k, v in res.items()}
{'mrr': 0.5, 'mrr@1': 0.0, 'map': 0.3333, 'ap_rel_ret': 0.5, 'first_rel_rank': 2.0}
"""

from __future__ import annotations

import numpy as np

from rankscope.i18n import N_
from rankscope.measures._kernel import rel_ret_at, safe_div
from rankscope.measures.base import STD_CUTS, Measure, MeasureSpec, TrecName
from rankscope.measures.counts import JUDGED_ONLY, REL
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register


def _reciprocal_rank(p: KernelInput, m: Measure) -> np.ndarray:
    rel = p.is_rel(m.param("rel"))
    if m.cutoff is not None:
        rel = rel & (p.rank < m.cutoff)
    first = p.first_row(rel)
    return safe_div((first >= 0).astype(np.float64), first + 1.0)


def _first_rel_rank(p: KernelInput, m: Measure) -> np.ndarray:
    rel = p.is_rel(m.param("rel"))
    if m.cutoff is not None:
        rel = rel & (p.rank < m.cutoff)
    first = p.first_row(rel)
    return np.where(first >= 0, first + 1, 0).astype(np.float64)


def _precision_sum(p: KernelInput, m: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Per query: Σ precision at each relevant rank (within the cutoff), and their count."""
    level = m.param("rel")
    rel = p.is_rel(level)
    if m.cutoff is not None:
        rel = rel & (p.rank < m.cutoff)
    rows = np.flatnonzero(rel)  # only relevant rows: rows are grouped by query, so q is sorted
    q = p.qidx[rows]
    # relevant documents at or above a relevant row = its position among its query's relevant rows + 1
    hits = np.arange(1, len(rows) + 1) - np.searchsorted(q, q, side="left")
    prec = hits / (p.rank[rows] + 1.0)
    return np.bincount(q, weights=prec, minlength=p.n), np.bincount(q, minlength=p.n).astype(np.float64)


def _average_precision(p: KernelInput, m: Measure) -> np.ndarray:
    total, _ = _precision_sum(p, m)
    return safe_div(total, p.num_rel(m.param("rel")))


def _ap_rel_ret(p: KernelInput, m: Measure) -> np.ndarray:
    total, found = _precision_sum(p, m)
    return safe_div(total, found)


def _set_map(p: KernelInput, m: Measure) -> np.ndarray:
    # trec_eval's operation order: (rel_ret * rel_ret) / (ret * R), so the printed digits match
    rel_ret = rel_ret_at(p, None, m.param("rel"))
    return safe_div(rel_ret * rel_ret, p.num_ret.astype(np.float64) * p.num_rel(m.param("rel")))


_DOC = __doc__ or ""
for spec in (
    MeasureSpec("mrr", N_("reciprocal rank of the first relevant document"), _reciprocal_rank, cutoff="optional",
                params=(REL, JUDGED_ONLY), aliases=("rr", "reciprocal_rank"), ir_measures="RR",
                trec=(TrecName("recip_rank"),), family="rank", doc=_DOC, judged_view=True),
    MeasureSpec("map", N_("average precision (divided by all relevant documents)"), _average_precision,
                cutoff="optional", params=(REL, JUDGED_ONLY), aliases=("ap", "average_precision"), ir_measures="AP",
                trec=(TrecName("map"), TrecName("map_cut", "cutoffs", default=STD_CUTS)), family="rank", doc=_DOC,
                judged_view=True),
    MeasureSpec("gm_map", N_("geometric mean of average precision over queries"), _average_precision,
                params=(REL,), trec=(TrecName("gm_map"),), aggregate="gmean", family="rank", doc=_DOC,
                judged_view=True),
    MeasureSpec("set_map", N_("set precision x set recall"), _set_map, params=(REL, JUDGED_ONLY), aliases=("setap",),
                trec=(TrecName("set_map"),),
                family="rank", doc=_DOC, judged_view=True),
    MeasureSpec("first_rel_rank", N_("rank of the first relevant document (0: none retrieved)"), _first_rel_rank,
                cutoff="optional", params=(REL,), aliases=("first_relevant_rank",), bounds=None,
                higher_is_better=False, aggregate="median_found", family="rank", doc=_DOC, judged_view=True),
    MeasureSpec("ap_rel_ret", N_("NON-STANDARD AP divided by relevant documents retrieved (older RAG write-ups)"),
                _ap_rel_ret,
                cutoff="optional", params=(REL,), family="variant", doc=_DOC, judged_view=True),
):
    register(spec)
