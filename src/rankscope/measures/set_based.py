r"""Order-unaware measures: what fraction of the top *k* (or of the whole ranking) is relevant.

Binary relevance: a document is relevant when its grade >= ``rel`` (default: the
evaluation's relevance level, 1).  Unjudged documents are non-relevant.
``rel_ret@k`` is the number of relevant documents among the first *k* ranks,
``R`` the number of relevant documents of the query in the qrels.

* ``precision@k`` (trec_eval ``P_k``, ir_measures ``P@k``) = rel_ret@k / k.  The
  denominator is *k* even when fewer than *k* documents were retrieved.
* ``recall@k`` (``recall_k``, ``R@k``) = rel_ret@k / R; 0 when R = 0.
* ``f1@k`` = 2·P·R / (P + R) of precision@k and recall@k; 0 when both are 0.
* ``success@k`` = ``hit_rate@k`` (``success_k``, ``Success@k``) = 1 if rel_ret@k > 0.
* ``hits@k`` (ranx ``hits@k``) = rel_ret@k, the number of relevant documents in the top k
  (every retrieved document without a cutoff); summed per query, averaged over queries.
* ``relative_precision@k`` (``relative_P_k``) = rel_ret@k / min(k, R); 0 when R = 0.
* ``r_precision`` (``Rprec``) = rel_ret@R / R: precision at rank R; 0 when R = 0.
* ``set_precision`` (``set_P``) = rel_ret / num_ret over the whole ranking.
* ``set_recall`` (``set_recall``) = rel_ret / R.
* ``set_relative_precision`` (``set_relative_P``) = rel_ret / min(num_ret, R).
* ``set_f`` (``set_F``, ir_measures ``SetF``) = (x+1)·P·R / (x·P + R) with set P and R,
  where x is the parameter ``beta`` (default 1) — trec_eval's formula, whose
  parameter weighs recall x times as much as precision: it is β² of the usual
  F_β, so ``set_F.4`` (``set_f(beta=4)``) is F₂ and ``set_F.0.25`` is F₀.₅.
  ``beta`` keeps the name ir_measures gives it (``SetF(beta=x)`` is ``set_F.x``).
* ``judged@k`` (``Judged@k``) = judged documents (grade >= 0) in the top k / min(k, retrieved),
  as ir_measures; ``judged`` without a cutoff divides by every retrieved document; 0 for a query
  with nothing retrieved.  Every evaluation reports judged@10 (``result.judged``).

``judged_only=True`` (ir_measures' parameter, on ``P``, ``R``, ``Success``, ``Rprec``, ``SetP``,
``SetR``, ``SetF``; also on ``map``, ``mrr`` and ``ndcg``) scores the ranking with its unjudged
documents removed first (Sakai's condensed list: the evaluation-wide ``unjudged="condense"``,
trec_eval ``-J``, for this measure alone).

Ties are resolved before any measure runs (score descending, doc id
descending), so a cutoff inside a group of tied scores keeps the documents with
the larger ids.  Queries missing from the run score 0 (policy ``missing="zero"``).

>>> from rankscope import evaluate, Qrels, Run
>>> qrels = Qrels.from_dict({"q": {"a": 1, "b": 1, "c": 0}})
>>> run = Run.from_ranked_lists({"q": ["a", "c", "x", "b"]})
>>> evaluate(qrels, run, ["P@2", "recall@2", "f1@2", "hit_rate@1", "Rprec"]).mean()
{'P@2': 0.5, 'recall@2': 0.5, 'f1@2': 0.5, 'hit_rate@1': 1.0, 'Rprec': 0.5}
"""

from __future__ import annotations

import numpy as np

from rankscope.i18n import N_
from rankscope.measures._kernel import rel_ret_at, safe_div
from rankscope.measures.base import STD_CUTS, Measure, MeasureSpec, Param, TrecName
from rankscope.measures.counts import JUDGED_ONLY, REL
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register


def _precision(p: KernelInput, m: Measure) -> np.ndarray:
    return rel_ret_at(p, m.cutoff, m.param("rel")) / float(m.cutoff or 1)


def _recall(p: KernelInput, m: Measure) -> np.ndarray:
    return safe_div(rel_ret_at(p, m.cutoff, m.param("rel")), p.num_rel(m.param("rel")))


def _f1(p: KernelInput, m: Measure) -> np.ndarray:
    prec = _precision(p, m)
    rec = _recall(p, m)
    return safe_div(2 * prec * rec, prec + rec)


def _success(p: KernelInput, m: Measure) -> np.ndarray:
    return (rel_ret_at(p, m.cutoff, m.param("rel")) > 0).astype(np.float64)


def _hits(p: KernelInput, m: Measure) -> np.ndarray:
    return rel_ret_at(p, m.cutoff, m.param("rel"))


def _relative_precision(p: KernelInput, m: Measure) -> np.ndarray:
    k = float(m.cutoff or 1)
    return safe_div(rel_ret_at(p, m.cutoff, m.param("rel")), np.minimum(k, p.num_rel(m.param("rel"))))


def _r_precision(p: KernelInput, m: Measure) -> np.ndarray:
    num_rel = p.num_rel(m.param("rel"))
    hits = p.count(p.is_rel(m.param("rel")) & (p.rank < num_rel[p.qidx]))
    return safe_div(hits, num_rel)


def _set_precision(p: KernelInput, m: Measure) -> np.ndarray:
    return safe_div(rel_ret_at(p, None, m.param("rel")), p.num_ret)


def _set_recall(p: KernelInput, m: Measure) -> np.ndarray:
    return safe_div(rel_ret_at(p, None, m.param("rel")), p.num_rel(m.param("rel")))


def _set_relative_precision(p: KernelInput, m: Measure) -> np.ndarray:
    rel = m.param("rel")
    return safe_div(rel_ret_at(p, None, rel), np.minimum(p.num_ret, p.num_rel(rel)))


def _set_f(p: KernelInput, m: Measure) -> np.ndarray:
    x = float(m.param("beta"))  # trec_eval's parameter: beta squared
    prec = _set_precision(p, m)
    rec = _set_recall(p, m)
    return safe_div((x + 1.0) * prec * rec, x * prec + rec)


def _judged(p: KernelInput, m: Measure) -> np.ndarray:
    judged, top = p.judged_in_top(m.cutoff)
    return safe_div(judged, top)


_DOC = __doc__ or ""
_CUTS = {name: (TrecName(name, "cutoffs", default=STD_CUTS),) for name in ("P", "recall", "relative_P")}
_X = "trec_eval's x: recall weighs x times precision (x = beta² of F_beta)"
_RJ = (REL, JUDGED_ONLY)
for spec in (
    MeasureSpec("precision", N_("fraction of the top k that is relevant"), _precision, cutoff="required",
                params=_RJ, aliases=("p",), ir_measures="P", trec=_CUTS["P"], family="set", doc=_DOC,
                judged_view=True),
    MeasureSpec("recall", N_("fraction of the relevant documents found in the top k"), _recall, cutoff="required",
                params=_RJ, aliases=("r",), ir_measures="R", trec=_CUTS["recall"], family="set", doc=_DOC,
                judged_view=True),
    MeasureSpec("f1", N_("harmonic mean of precision@k and recall@k"), _f1, cutoff="required",
                params=(REL,), aliases=("f",), family="set", doc=_DOC, judged_view=True),
    MeasureSpec("success", N_("1 if any relevant document is in the top k (hit rate)"), _success, cutoff="required",
                params=_RJ, aliases=("hit_rate", "hitrate", "hit"), ir_measures="Success",
                trec=(TrecName("success", "cutoffs", default=(1, 5, 10)),), family="set", doc=_DOC,
                judged_view=True),
    MeasureSpec("hits", N_("number of relevant documents in the top k"), _hits, cutoff="optional", params=(REL,),
                bounds=None, family="set", doc=_DOC, judged_view=True),
    MeasureSpec("relative_precision", N_("precision@k relative to the best possible: rel_ret@k / min(k, R)"),
                _relative_precision, cutoff="required", params=(REL,), trec=_CUTS["relative_P"], family="set",
                doc=_DOC, judged_view=True),
    MeasureSpec("r_precision", N_("precision at rank R (R = number of relevant documents)"), _r_precision,
                params=_RJ, aliases=("rprecision", "r-precision"), ir_measures="Rprec", trec=(TrecName("Rprec"),),
                family="set", doc=_DOC, judged_view=True),
    MeasureSpec("set_precision", N_("relevant retrieved / retrieved, whole ranking"), _set_precision, params=_RJ,
                ir_measures="SetP", trec=(TrecName("set_P"),), family="set", doc=_DOC, judged_view=True),
    MeasureSpec("set_recall", N_("relevant retrieved / relevant, whole ranking"), _set_recall, params=_RJ,
                ir_measures="SetR", trec=(TrecName("set_recall"),), family="set", doc=_DOC, judged_view=True),
    MeasureSpec("set_relative_precision", N_("relevant retrieved / min(retrieved, relevant)"),
                _set_relative_precision, params=(REL,), aliases=("setrelp",), trec=(TrecName("set_relative_P"),),
                family="set", doc=_DOC, judged_view=True),
    MeasureSpec("set_f", N_("F-measure of set precision and set recall (trec_eval's parameter x)"), _set_f,
                params=(REL, Param("beta", float, 1.0, _X, minimum=0.0), JUDGED_ONLY), ir_measures="SetF",
                trec=(TrecName("set_F", "list", ("beta",)),), family="set", doc=_DOC, judged_view=True),
    MeasureSpec("judged", N_("fraction of the top k that has a relevance judgment"), _judged, cutoff="optional",
                ir_measures="Judged", family="set", doc=_DOC, judged_view=True),
):
    register(spec)
