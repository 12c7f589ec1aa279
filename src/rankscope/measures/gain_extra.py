r"""trec_eval's experimental gain measures: binG, G, ndcg_rel and Rndcg.

Gains as in :mod:`rankscope.measures.gain_based`: a judged document's gain is its
grade unless remapped by ``gains`` (trec_eval syntax ``1=3,2=9``); documents not
in the qrels or with a negative grade gain 0.  The *ideal* list of a query is
every judged document with positive gain, by gain descending (P documents);
IDCG(k) / DCG(k) are the (ideal / run) DCG over the first k ranks with discount
1/log2(rank + 1), rank 1-based.

* ``bing`` (trec_eval ``binG``): (1/R) · Σ over relevant retrieved d of
  1 / log2(2 + non-relevant documents ranked above d); binary relevance
  (grade >= ``rel``), 0 when no relevant document is retrieved.
* ``g`` (trec_eval ``G``): Σ over retrieved d with gain g_d ≠ 0 of
  g_d / log2(2 + cost(i) − gained(i)), where gained(i) is the run's gain summed
  up to d's rank i and cost(i) sums max(ideal gain at j, 1) for j ≤ i;
  divided by the total ideal gain (0 when it is 0).
* ``ndcg_rel`` (trec_eval ``ndcg_rel``): nDCG averaged over the P "relevant"
  (positive-gain) documents: a retrieved one at rank i contributes
  DCG(i)/IDCG(min(i, P)), a missing one DCG(end)/IDCG(P).
* ``rndcg`` (trec_eval ``Rndcg``): nDCG averaged over the ideal list's
  gain-level boundaries b (where the ideal gain changes, including the last
  positive position P): DCG(min(b, retrieved))/IDCG(b), plus a final point
  DCG(end)/IDCG(P) when more than P + 1 documents are retrieved.  0 when R = 0.

No cutoff.  Ties are resolved before scoring (score descending, doc id descending).

>>> from rankscope import evaluate, Qrels, Run
>>> qrels = Qrels.from_dict({"q": {"a": 2, "b": 1, "n": 0}})
>>> run = Run.from_ranked_lists({"q": ["b", "n", "a"]})
>>> res = evaluate(qrels, run, ["binG", "G", "ndcg_rel", "Rndcg"]).mean()
>>> {k: round(v, 4) for k, v in res.items()}
{'binG': 0.8155, 'G': 0.6309, 'ndcg_rel': 0.6301, 'Rndcg': 0.44}
"""

from __future__ import annotations

import numpy as np

from rankscope.i18n import N_
from rankscope.measures._trec_common import (
    ideal_gains,
    judged_rel,
    log2_int,
    row_gains,
    segmented_cumsum,
)
from rankscope.measures.base import Measure, MeasureSpec, TrecName
from rankscope.measures.counts import REL
from rankscope.measures.gain_based import GAINS
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register


def _bing(p: KernelInput, m: Measure) -> np.ndarray:
    level = m.param("rel")
    rel = judged_rel(p, level)
    # rank i (0-based) minus relevant at or above + 3 = 2 + non-relevant-or-unjudged above
    rel_so_far = p.cumsum_in_query(rel.astype(np.int64))
    term = 1.0 / log2_int(np.where(rel, 3 + p.rank - rel_so_far, 2))
    total = p.sum(term, rel)
    num_rel = p.num_rel(level).astype(np.float64)
    out = np.zeros(p.n)
    found = p.count(rel) > 0
    out[found] = total[found] / num_rel[found]
    return out


def _dcg_prefix(p: KernelInput, gains: str) -> tuple[np.ndarray, np.ndarray]:
    """Per row: gain and the run's DCG up to and including this row."""
    g = row_gains(p, gains)
    term = np.where(g != 0, g / log2_int(p.rank + 2), 0.0)
    return g, segmented_cumsum(term, p.offsets)


def _ideal_prefix(p: KernelInput, gains: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ideal gains, their running IDCG and the per-query offsets."""
    ig, ioff = ideal_gains(p, gains)
    pos = np.arange(len(ig)) - np.repeat(ioff[:-1], np.diff(ioff))
    return ig, segmented_cumsum(ig / log2_int(pos + 2), ioff), ioff


def _at(cum: np.ndarray, offsets: np.ndarray, k: np.ndarray, seg: np.ndarray | None = None) -> np.ndarray:
    """Running value after the first ``k`` items of segment ``seg`` (default: every segment); 0 when k = 0."""
    start = offsets[:-1] if seg is None else offsets[seg]
    idx = start + k - 1
    return np.where(k > 0, cum[np.maximum(idx, 0)] if len(cum) else 0.0, 0.0)


def _g(p: KernelInput, m: Measure) -> np.ndarray:
    gains = m.param("gains")
    g = row_gains(p, gains)
    ig, ioff = ideal_gains(p, gains)
    n_ideal = np.diff(ioff)
    # ideal gain at each row's rank (0 past the ideal list), cost = max(that, 1)
    within = p.rank < n_ideal[p.qidx]
    ideal_at = np.zeros(len(g))
    ideal_at[within] = ig[ioff[:-1][p.qidx[within]] + p.rank[within]]
    cost = np.where(ideal_at >= 1.0, ideal_at, 1.0)
    sum_cost = segmented_cumsum(cost, p.offsets)
    sum_gain = segmented_cumsum(g, p.offsets)
    arg = 2 + sum_cost - sum_gain
    integral = bool(np.all(arg[g != 0] == np.round(arg[g != 0])))
    logs = log2_int(np.where(g != 0, arg, 1).astype(np.int64)) if integral else np.log2(np.where(g != 0, arg, 2.0))
    term = np.where(g != 0, g / np.where(g != 0, logs, 1.0), 0.0)
    total = p.sum(term)
    ideal_total = np.bincount(np.repeat(np.arange(p.n), n_ideal), weights=ig, minlength=p.n)
    out = np.zeros(p.n)
    ok = ideal_total > 0
    out[ok] = total[ok] / ideal_total[ok]
    return out


def _ndcg_rel(p: KernelInput, m: Measure) -> np.ndarray:
    gains = m.param("gains")
    g, dcg = _dcg_prefix(p, gains)
    _, idcg, ioff = _ideal_prefix(p, gains)
    n_ideal = np.diff(ioff)
    pos = g > 0
    k = np.minimum(p.rank + 1, n_ideal[p.qidx])
    ideal_here = idcg[np.maximum(ioff[:-1][p.qidx] + k - 1, 0)] if len(idcg) else np.zeros(len(g))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = dcg / ideal_here
    total = p.sum(np.where(pos, ratio, 0.0), pos)
    found = p.count(pos)
    dcg_end = _at(dcg, p.offsets, p.num_ret)
    idcg_all = _at(idcg, ioff, n_ideal)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = total + (n_ideal - found).astype(np.float64) * dcg_end / idcg_all
    out = np.zeros(p.n)
    ok = total > 0
    out[ok] = total[ok] / n_ideal[ok].astype(np.float64)
    return out


def _rndcg(p: KernelInput, m: Measure) -> np.ndarray:
    gains = m.param("gains")
    _, dcg = _dcg_prefix(p, gains)
    ig, idcg, ioff = _ideal_prefix(p, gains)
    n_ideal = np.diff(ioff)
    qi = np.repeat(np.arange(p.n), n_ideal)
    pos = np.arange(len(ig)) - np.repeat(ioff[:-1], n_ideal)
    # boundary b (1 <= b <= P) wherever the ideal gain at b differs from b-1; P itself always
    nxt = np.append(ig[1:], 0.0)
    last = pos == n_ideal[qi] - 1
    change = last | (nxt != ig)
    b = pos[change] + 1  # number of ideal positions before the boundary
    bq = qi[change]
    ret = p.num_ret
    dcg_b = _at(dcg, p.offsets, np.minimum(b, ret[bq]), bq)
    ratio = dcg_b / idcg[np.flatnonzero(change)]
    total = np.bincount(bq, weights=ratio, minlength=p.n)
    count = np.bincount(bq, minlength=p.n).astype(np.float64)
    final = ret > n_ideal + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        extra = _at(dcg, p.offsets, ret) / _at(idcg, ioff, n_ideal)
    total = np.where(final & (n_ideal > 0), total + extra, total)
    count = np.where(final & (n_ideal > 0), count + 1, count)
    out = np.zeros(p.n)
    ok = (count > 0) & (p.num_rel(m.param("rel")) > 0)
    out[ok] = total[ok] / count[ok]
    return out


_DOC = __doc__ or ""
for spec in (
    MeasureSpec("bing", N_("binary G: relevant documents discounted by non-relevant ones above"), _bing,
                params=(REL,), trec=(TrecName("binG"),), family="gain", doc=_DOC, judged_view=True),
    MeasureSpec("g", N_("trec_eval's normalised gain G"), _g, params=(GAINS,),
                trec=(TrecName("G", "text", ("gains",)),),
                family="gain", doc=_DOC),
    MeasureSpec("ndcg_rel", N_("nDCG averaged over the relevant documents"), _ndcg_rel, params=(GAINS,),
                trec=(TrecName("ndcg_rel", "text", ("gains",)),), family="gain", doc=_DOC),
    MeasureSpec("rndcg", N_("nDCG averaged at the ideal ranking's gain-level boundaries"), _rndcg,
                params=(GAINS, REL), trec=(TrecName("Rndcg", "text", ("gains",)),), family="gain", doc=_DOC),
):
    register(spec)
