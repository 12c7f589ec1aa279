r"""Graded, discounted measures: DCG and nDCG.

Gains come from the raw grades (not from the binary relevance level), as in
trec_eval: by default the gain of a document is its grade when positive and 0
otherwise (unjudged documents gain 0).  The discount of 1-based rank i is
1 / log2(i + 1).

* ``dcg@k`` = Σ_{i ≤ k} gain_i / log2(i + 1).
* ``ndcg`` (trec_eval ``ndcg``, no cutoff) and ``ndcg@k`` (``ndcg_cut_k``,
  ir_measures ``nDCG@k``) = DCG / IDCG, where IDCG is the DCG of the *ideal*
  ranking: **all** judged documents of the query sorted by gain, cut at the same
  k.  0 when the query has no document with positive gain.  ``gains`` remaps
  grades to gains in trec_eval's syntax (``ndcg(gains=1=3,2=9)``, trec_eval
  ``ndcg.1=3,2=9``); unlisted grades keep their own value.
* ``ndcg(dcg=exp-log2)@k`` (ir_measures ``nDCG(dcg='exp-log2')@k``, ranx ``ndcg_burges@k``,
  gdeval's nDCG) = ``ndcg_exp@k``: the same with exponential gain 2^grade − 1 (Burges et al.),
  the convention of many RAG and learning-to-rank libraries; ``dcg=log2`` (the default) is
  trec_eval's linear gain.  With ``gains`` the remapped grade is exponentiated.
  ``dcg(dcg=exp-log2)@k`` is ranx's ``dcg_burges@k``.
* ``judged_only=True`` (ir_measures): unjudged documents are removed before ranking.
* ``ndcg_ret_ideal@k`` — **inflated, non-standard**: the ideal ranking is built
  only from the *retrieved* documents (the whole ranking sorted by gain, then cut
  at k, as some RAG tutorials do), so relevant documents
  the system never retrieved do not lower the score; a ranking that finds one
  relevant document out of ten at rank 1 scores 1.0.  Offered only to reproduce
  old numbers (see docs/metric-variants.md).

Ties are resolved before scoring (score descending, doc id descending).

>>> from rankscope import evaluate, Qrels, Run
>>> qrels = Qrels.from_dict({"q": {"a": 2, "b": 1, "c": 1}})
>>> run = Run.from_ranked_lists({"q": ["b", "x", "a"]})
>>> res = evaluate(qrels, run, ["ndcg@3", "ndcg_ret_ideal@3", "dcg@3"]).mean()
>>> {k: round(v, 4) for k, v in res.items()}
{'ndcg@3': 0.6388, 'ndcg_ret_ideal@3': 0.7602, 'dcg@3': 2.0}
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import N_, _
from rankscope.measures._kernel import safe_div
from rankscope.measures.base import STD_CUTS, Measure, MeasureSpec, Param, TrecName
from rankscope.measures.counts import JUDGED_ONLY
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register


@lru_cache(maxsize=64)
def parse_gains(text: str) -> tuple[tuple[int, float], ...]:
    """Parse trec_eval's gain map ``'1=3,2=9'`` into sorted (grade, gain) pairs."""
    out: dict[int, float] = {}
    for part in filter(None, (x.strip() for x in text.split(","))):
        try:
            g, v = part.split("=")
            out[int(float(g))] = float(v)
        except ValueError:
            raise InvalidParameterError(_("gain map {text!r}: expected grade=gain pairs such as '1=3,2=9', got "
                                          "{part!r}", text=text, part=part)) from None
    return tuple(sorted(out.items()))


GAINS = Param("gains", str, "", "grade=gain pairs remapping grades to gains, trec_eval syntax '1=3,2=9'",
              validate=parse_gains)


def gain_of(grades: np.ndarray, gains: str = "", exponential: bool = False) -> np.ndarray:
    """Gain of each grade: the grade itself (0 if not positive), remapped by ``gains``; 2^that − 1 when
    ``exponential``."""
    g = grades.astype(np.float64)
    out = np.where(g > 0, g, 0.0)
    for grade, gain in parse_gains(gains):
        out = np.where(grades == grade, gain, out)
    if exponential:
        return np.where(out > 0, np.exp2(out) - 1.0, 0.0)
    return out


DCG_FORMS = ("log2", "exp-log2")


def _dcg_form(value: str) -> None:
    if value not in DCG_FORMS:
        raise InvalidParameterError(_("parameter 'dcg' must be 'log2' (gain = grade) or 'exp-log2' (gain = 2^grade "
                                      "- 1), got {value!r}", value=value))


DCG_FORM = Param("dcg", str, "log2", "gain of a grade g: 'log2' = g (trec_eval), 'exp-log2' = 2^g - 1 (Burges)",
                 validate=_dcg_form)


def _discount(rank: np.ndarray) -> np.ndarray:
    return 1.0 / np.log2(rank + 2.0)


def dcg(p: KernelInput, k: int | None, gains: str = "", exponential: bool = False) -> np.ndarray:
    """Per-query DCG of the run's ranking, cut at ``k``."""
    # unjudged rows gain nothing even when the gain map gives grade 0 a gain (trec_eval);
    # only judged rows are touched (a few percent of a long run)
    rows = np.flatnonzero(p.judged if k is None else p.judged & (p.rank < k))
    w = gain_of(p.grade[rows], gains, exponential) * _discount(p.rank[rows])
    return np.bincount(p.qidx[rows], weights=w, minlength=p.n)


def ideal_dcg(p: KernelInput, k: int | None, gains: str = "", exponential: bool = False) -> np.ndarray:
    """Per-query DCG of the ideal ranking (all judged documents by gain), cut at ``k`` (computed once per
    qrels when the input keeps an ``ideal_memo``: it depends on the qrels alone)."""
    return p.ideal_memoized(("ideal_dcg", k, gains, exponential), lambda: _ideal_dcg(p, k, gains, exponential))


def _ideal_dcg(p: KernelInput, k: int | None, gains: str, exponential: bool) -> np.ndarray:
    # trec_eval's ideal ranking holds the judged (grade >= 0) documents of positive gain only
    gain = np.where(p.ideal_grade >= 0, np.maximum(gain_of(p.ideal_grade, gains, exponential), 0.0), 0.0)
    if gains:  # remapped gains may reorder the ideal ranking
        qi = p.ideal_qidx()
        gain = gain[np.lexsort((-gain, qi))]
    rank = p.ideal_rank()
    w = gain * _discount(rank)
    return p.ideal_sum(w, None if k is None else rank < k)


def _ndcg(p: KernelInput, m: Measure) -> np.ndarray:
    gains, exponential = m.param("gains"), m.param("dcg") == "exp-log2"
    return safe_div(dcg(p, m.cutoff, gains, exponential), ideal_dcg(p, m.cutoff, gains, exponential))


def _ndcg_exp(p: KernelInput, m: Measure) -> np.ndarray:
    return safe_div(dcg(p, m.cutoff, exponential=True), ideal_dcg(p, m.cutoff, exponential=True))


def _dcg(p: KernelInput, m: Measure) -> np.ndarray:
    return dcg(p, m.cutoff, m.param("gains"), m.param("dcg") == "exp-log2")


def _ndcg_ret_ideal(p: KernelInput, m: Measure) -> np.ndarray:
    gains = m.param("gains")
    # as some RAG tutorials build it: the ideal is the whole retrieved list sorted by gain, then cut at k
    gain = gain_of(p.grade, gains)
    qi = p.qidx
    order = np.lexsort((-gain, qi))
    g_sorted, q_sorted = gain[order], qi[order]
    counts = np.bincount(q_sorted, minlength=p.n)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(len(q_sorted)) - np.repeat(starts, counts)
    w = g_sorted * _discount(rank)
    if m.cutoff is not None:
        w = np.where(rank < m.cutoff, w, 0.0)
    ideal = np.bincount(q_sorted, weights=w, minlength=p.n)
    return safe_div(dcg(p, m.cutoff, gains), ideal)


_DOC = __doc__ or ""
for spec in (
    MeasureSpec("ndcg", N_("normalised discounted cumulative gain (trec_eval gains = grades)"), _ndcg,
                cutoff="optional", params=(GAINS, DCG_FORM, JUDGED_ONLY), ir_measures="nDCG",
                trec=(TrecName("ndcg", "text", ("gains",)), TrecName("ndcg_cut", "cutoffs", default=STD_CUTS)),
                family="gain", doc=_DOC, judged_view=True),
    MeasureSpec("ndcg_exp", N_("nDCG with exponential gain 2^grade - 1"), _ndcg_exp, cutoff="optional",
                aliases=("ndcg_burges",), family="gain", doc=_DOC, judged_view=True),
    MeasureSpec("dcg", N_("discounted cumulative gain (not normalised)"), _dcg, cutoff="optional",
                params=(GAINS, DCG_FORM),
                bounds=None, family="gain", doc=_DOC, judged_view=True),
    MeasureSpec("ndcg_ret_ideal", N_("INFLATED nDCG whose ideal uses retrieved documents only (some RAG tutorials)"),
                _ndcg_ret_ideal, cutoff="optional", params=(GAINS,), family="variant", doc=_DOC),
):
    register(spec)
