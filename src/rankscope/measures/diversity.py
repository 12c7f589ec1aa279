r"""Intent-aware and diversity measures (ndeval's), over subtopic judgments.

They read :class:`~rankscope.data.subtopics.SubtopicQrels` — which subtopics (intents) of a query each
document is relevant to, ndeval's ``topic subtopic docno judgment`` file — given as the qrels:
``evaluate(read_subtopic_qrels(path), run, ["alpha_nDCG@20"])``, or on the command line
``rankscope evaluate --qrels qrels.diversity -m alpha_nDCG@20`` (a qrels file is read as subtopic
judgments when a diversity measure is asked).  Asked with ordinary qrels, they are an error.

A document is relevant to a subtopic when its grade for it is >= ``rel`` (default the evaluation's
relevance level: ndeval's binary judgments); S is the number of subtopics of the query with at least
one relevant document.  Going down the ranking, the gain of the document at 0-based rank i is
g_i = Σ over its relevant subtopics j of (1 − α)^(c_ij), c_ij the documents above it relevant to j
(``alpha``, default 0.5: how much a second document on the same subtopic is worth).  The *ideal*
ranking is ndeval's greedy one (at each rank the document of largest gain, ties to the larger
document id).  With D(0) = 1 and D(i) = log 2 / log(i + 2):

* ``alpha_dcg@k`` (``alpha_DCG@k``, ndeval ``alpha-DCG@k``) = Σ_{i<k} g_i D(i) / Σ_{i<k} S (1 − α)^i D(i)
  ("ideal ideal" normalisation: every subtopic covered at every rank);
* ``alpha_ndcg@k`` (``alpha_nDCG@k``, ``alpha-nDCG@k``) = alpha_dcg@k of the run / that of the ideal ranking;
* ``err_ia@k`` (``ERR_IA@k``, ``ERR-IA@k``) and ``nerr_ia@k`` (``nERR_IA@k``): the same with the
  discount 1 / (i + 1) (ndeval's intent-aware ERR);
* ``nrbp`` (``NRBP``) = (1 − (1 − α) β) / S · Σ_i g_i β^i over the whole ranking (``beta``, default
  0.5: patience), and ``nnrbp`` (``nNRBP``) = nrbp of the run / nrbp of the ideal ranking;
* ``map_ia`` (``AP_IA``, ``MAP-IA``) = (1/S) Σ_j AP_j, AP_j the average precision for subtopic j alone
  (its relevant documents, over the whole ranking);
* ``p_ia@k`` (``P_IA@k``, ``P-IA@k``) = Σ_j rel_ret_j@k / (k · S);
* ``subtopic_recall@k`` (``StRecall@k``, ndeval ``strec@k``) = subtopics covered in the top k / S.

Every measure is 0 on a query with S = 0 (ndeval prints NaN for its nNRBP) and on a query without a
ranking.  The values are ndeval's to the last bit (its order of operations, C's ``log``) at every
cutoff it defines (k ≤ 20; a larger k goes on with the same formulas), with one exception: at k = 1
ndeval leaves alpha-DCG@1 and ERR-IA@1 undivided by their normaliser (an off-by-one in its code: they
can exceed 1); rankscope divides them like every other cutoff.  ``judged_only=True`` (ir_measures)
removes the documents without a subtopic judgment before ranking.  Ties are resolved before scoring
(score descending, doc id descending; ndeval reads the run's ranks, ``-traditional`` this order;
pyndeval breaks ties by doc id ascending).

>>> from rankscope import evaluate, Run
>>> from rankscope.data.subtopics import SubtopicQrels
>>> sq = SubtopicQrels.from_records([("q", "1", "a", 1), ("q", "2", "a", 1), ("q", "2", "b", 1), ("q", "3", "c", 1)])
>>> run = Run.from_ranked_lists({"q": ["b", "x", "a", "c"]})
>>> res = evaluate(sq, run, ["alpha_nDCG@3", "ERR_IA@3", "NRBP", "P_IA@3", "StRecall@3", "ndcg@3"]).mean()
>>> {k: round(v, 4) for k, v in res.items()}
{'alpha_nDCG@3': 0.6074, 'ERR_IA@3': 0.375, 'NRBP': 0.375, 'P_IA@3': 0.3333, 'StRecall@3': 0.6667, 'ndcg@3': 0.7039}
"""

from __future__ import annotations

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import N_, _
from rankscope.measures._subtopics import SubtopicInput, discount, repeated_products
from rankscope.measures._trec_common import segmented_cumsum
from rankscope.measures.base import Measure, MeasureSpec, Param
from rankscope.measures.counts import JUDGED_ONLY, REL
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register

__all__: list[str] = []


def _subtopics(p: KernelInput, m: Measure) -> SubtopicInput:
    si = p.subtopics
    if not isinstance(si, SubtopicInput):
        raise InvalidParameterError(_("{label} needs subtopic judgments (query subtopic doc grade, as ndeval reads "
                                      "them): evaluate(read_subtopic_qrels(path), run, metrics), or --qrels with "
                                      "that file on the command line", label=str(m)))
    return si


def _run_gains(p: KernelInput, si: SubtopicInput, alpha: float, level: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ranking's relevant (document, subtopic) pairs and the gain of each ranked document.

    Returns ``(query, rank, gain)`` per ranked document with a relevant subtopic, in (query, rank)
    order, and ``(query, subtopic, rank)`` per relevant pair in (query, subtopic, rank) order.
    """
    keep = si.relevant(level) & (si.row >= 0)
    q, s = si.query[keep], si.subtopic[keep]
    rank = p.rank[si.row[keep]].astype(np.int64)
    by_subtopic = np.lexsort((rank, s, q))
    qs, ss, rs = q[by_subtopic], s[by_subtopic], rank[by_subtopic]
    seen = np.zeros(len(qs), dtype=np.int64)  # relevant documents above, for the same subtopic
    if len(qs):
        new = np.ones(len(qs), dtype=bool)
        new[1:] = (qs[1:] != qs[:-1]) | (ss[1:] != ss[:-1])
        seen = np.arange(len(qs)) - np.maximum.accumulate(np.where(new, np.arange(len(qs)), 0))
    pair_gain = np.empty(len(qs))
    pair_gain[by_subtopic] = repeated_products(1.0 - alpha, int(seen.max(initial=0)) + 1)[seen]
    by_rank = np.lexsort((s, rank, q))  # per document, its subtopics in order (ndeval sums them so)
    q2, r2, g2 = q[by_rank], rank[by_rank], pair_gain[by_rank]
    if len(q2) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0), qs, ss, rs
    start = np.ones(len(q2), dtype=bool)
    start[1:] = (q2[1:] != q2[:-1]) | (r2[1:] != r2[:-1])
    offsets = np.append(np.flatnonzero(start), len(q2))
    total = segmented_cumsum(g2, offsets)[offsets[1:] - 1]
    return q2[offsets[:-1]], r2[offsets[:-1]], total, qs, ss, rs


def _ideal_ideal(covered: np.ndarray, alpha: float, k: int, err: bool) -> np.ndarray:
    """Σ_{i<k} S (1 − α)^i D(i), summed as ndeval does (its "ideal ideal" normaliser)."""
    disc = discount(k)
    gain = covered.copy()
    total = np.zeros_like(covered)
    for i in range(k):
        total = (gain / float(i + 1) if err else gain * disc[i]) + total
        gain = gain * (1.0 - alpha)
    return total


def _cascade(p: KernelInput, m: Measure, err: bool, normalised: bool) -> np.ndarray:
    si = _subtopics(p, m)
    alpha, level, k = float(m.param("alpha")), p.level(m.param("rel")), int(m.cutoff or 0)
    covered = si.covered(level)
    q, rank, gain = _run_gains(p, si, alpha, level)[:3]
    top = rank < k
    term = gain[top] / (rank[top] + 1.0) if err else gain[top] * discount(k)[rank[top]]
    run: np.ndarray = np.bincount(q[top], weights=term, minlength=p.n).astype(np.float64)
    ideal_ideal = _ideal_ideal(covered, alpha, k, err)
    ok = covered > 0
    out = np.zeros(p.n)
    if not normalised:
        out[ok] = run[ok] / ideal_ideal[ok]
        return out
    best = si.ideal(alpha, level)[:, :k]
    width = best.shape[1]
    terms = best / np.arange(1.0, width + 1.0) if err else best * discount(max(width, 1))[:width]
    ideal: np.ndarray = np.cumsum(terms, axis=1)[:, -1] if width else np.zeros(p.n)
    if k > 1:  # ndeval divides both by the ideal ideal from the second rank on, then one by the other
        run, ideal = run / np.where(ok, ideal_ideal, 1.0), ideal / np.where(ok, ideal_ideal, 1.0)
    found = ok & (run != 0)
    out[found] = run[found] / ideal[found]
    return out


def _alpha_dcg(p: KernelInput, m: Measure) -> np.ndarray:
    return _cascade(p, m, err=False, normalised=False)


def _alpha_ndcg(p: KernelInput, m: Measure) -> np.ndarray:
    return _cascade(p, m, err=False, normalised=True)


def _err_ia(p: KernelInput, m: Measure) -> np.ndarray:
    return _cascade(p, m, err=True, normalised=False)


def _nerr_ia(p: KernelInput, m: Measure) -> np.ndarray:
    return _cascade(p, m, err=True, normalised=True)


def _nrbp_values(p: KernelInput, m: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray, SubtopicInput]:
    si = _subtopics(p, m)
    alpha, beta, level = float(m.param("alpha")), float(m.param("beta")), p.level(m.param("rel"))
    covered = si.covered(level)
    q, rank, gain = _run_gains(p, si, alpha, level)[:3]
    decay = repeated_products(beta, int(rank.max(initial=0)) + 1)
    run = np.bincount(q, weights=gain * decay[rank], minlength=p.n)
    factor = np.zeros(p.n)
    ok = covered > 0
    factor[ok] = (1.0 - (1.0 - alpha) * beta) / covered[ok]
    best = si.ideal(alpha, level)
    ideal = np.cumsum(best * repeated_products(beta, best.shape[1]), axis=1)[:, -1] if best.shape[1] else run * 0
    return run * factor, ideal * factor, ok, si


def _nrbp(p: KernelInput, m: Measure) -> np.ndarray:
    return _nrbp_values(p, m)[0]


def _nnrbp(p: KernelInput, m: Measure) -> np.ndarray:
    run, ideal, ok, __ = _nrbp_values(p, m)
    out = np.zeros(p.n)
    found = ok & (ideal != 0)
    out[found] = run[found] / ideal[found]
    return out


def _map_ia(p: KernelInput, m: Measure) -> np.ndarray:
    si = _subtopics(p, m)
    level = p.level(m.param("rel"))
    covered = si.covered(level)
    __, __, __, q, s, rank = _run_gains(p, si, 0.5, level)
    width = int(si.subtopic.max(initial=0)) + 1
    pq, ps, n_rel = si.relevant_per_subtopic(level)
    group = np.searchsorted(pq * width + ps, q * width + s)  # (query, subtopic) of each ranked relevant pair
    found = np.ones(len(q), dtype=bool)
    if len(q):
        found[1:] = group[1:] != group[:-1]
    hits = np.arange(len(q)) - np.maximum.accumulate(np.where(found, np.arange(len(q)), 0)) + 1
    total = np.bincount(group, weights=hits / (rank + 1.0), minlength=len(pq))
    ap = np.bincount(pq, weights=total / n_rel, minlength=p.n)
    out = np.zeros(p.n)
    ok = covered > 0
    out[ok] = ap[ok] / covered[ok]
    return out


def _p_ia(p: KernelInput, m: Measure) -> np.ndarray:
    si = _subtopics(p, m)
    level, k = p.level(m.param("rel")), int(m.cutoff or 0)
    covered = si.covered(level)
    q, rank = _run_gains(p, si, 0.5, level)[3::2]
    count = np.bincount(q[rank < k], minlength=p.n).astype(np.float64)
    out = np.zeros(p.n)
    ok = covered > 0
    out[ok] = count[ok] / (k * covered[ok])
    return out


def _subtopic_recall(p: KernelInput, m: Measure) -> np.ndarray:
    si = _subtopics(p, m)
    level, k = p.level(m.param("rel")), int(m.cutoff or 0)
    covered = si.covered(level)
    __, __, __, q, s, rank = _run_gains(p, si, 0.5, level)
    top = rank < k
    width = int(si.subtopic.max(initial=0)) + 1
    pairs = np.unique(q[top] * width + s[top])
    count = np.bincount(pairs // width, minlength=p.n).astype(np.float64)
    out = np.zeros(p.n)
    ok = covered > 0
    out[ok] = count[ok] / covered[ok]
    return out


_ALPHA = Param("alpha", float, 0.5, "redundancy intolerance: a subtopic's gain shrinks by (1 - alpha) each time "
                                    "it is covered", minimum=0.0)
_BETA = Param("beta", float, 0.5, "patience: the probability of going on to the next document", minimum=0.0)
_DOC = __doc__ or ""
for spec in (
    MeasureSpec("alpha_dcg", N_("alpha-DCG: novelty-discounted gain over the subtopics, ideal-ideal normalised"),
                _alpha_dcg, cutoff="required", params=(_ALPHA, REL, JUDGED_ONLY),
                ir_measures="alpha_DCG", family="diversity", doc=_DOC, judged_view=True),
    MeasureSpec("alpha_ndcg", N_("alpha-nDCG: alpha-DCG over that of the greedy ideal ranking"), _alpha_ndcg,
                cutoff="required", params=(_ALPHA, REL, JUDGED_ONLY), ir_measures="alpha_nDCG",
                family="diversity", doc=_DOC, judged_view=True),
    MeasureSpec("err_ia", N_("intent-aware expected reciprocal rank, ideal-ideal normalised"), _err_ia,
                cutoff="required", params=(_ALPHA, REL, JUDGED_ONLY), ir_measures="ERR_IA", family="diversity",
                doc=_DOC, judged_view=True),
    MeasureSpec("nerr_ia", N_("intent-aware ERR over that of the greedy ideal ranking"), _nerr_ia, cutoff="required",
                params=(_ALPHA, REL, JUDGED_ONLY), ir_measures="nERR_IA", family="diversity", doc=_DOC,
                judged_view=True),
    MeasureSpec("nrbp", N_("novelty- and rank-biased precision"), _nrbp, params=(_ALPHA, _BETA, REL),
                ir_measures="NRBP", family="diversity", doc=_DOC, judged_view=True),
    MeasureSpec("nnrbp", N_("NRBP over that of the greedy ideal ranking"), _nnrbp, params=(_ALPHA, _BETA, REL),
                ir_measures="nNRBP", family="diversity", doc=_DOC, judged_view=True),
    MeasureSpec("map_ia", N_("intent-aware average precision: mean over the subtopics"), _map_ia,
                params=(REL, JUDGED_ONLY), aliases=("ap_ia",), ir_measures="AP_IA", family="diversity", doc=_DOC,
                judged_view=True),
    MeasureSpec("p_ia", N_("intent-aware precision@k: mean over the subtopics"), _p_ia, cutoff="required",
                params=(REL, JUDGED_ONLY), ir_measures="P_IA", family="diversity", doc=_DOC, judged_view=True),
    MeasureSpec("subtopic_recall", N_("fraction of the subtopics covered in the top k"), _subtopic_recall,
                cutoff="required", params=(REL,), aliases=("strec", "st_recall"), ir_measures="StRecall",
                family="diversity", doc=_DOC, judged_view=True),
):
    register(spec)
