r"""Measures of a reader going down the ranking: hits, RBP, ERR, Compat and Accuracy.

Ranks i are 1-based below; r_i is 1 when the document at rank i is relevant (grade >= ``rel``,
default the evaluation's relevance level) and 0 otherwise; unjudged documents are non-relevant.

* ``rbp`` (Moffat & Zobel 2008; ir_measures ``RBP(p=…, rel=…)``, ranx ``rbp.P``) =
  (1 − p) · Σ_i g_i · p^(i−1), the rank-biased precision of a reader who goes on to the next
  document with probability ``p`` (default 0.8).  ``gain=binary`` (default): g_i = r_i;
  ``gain=grade``: g_i is the grade of a relevant document (0 otherwise), what ranx computes
  (ranx ``rbp.95`` parses to ``rbp(p=0.95,gain=grade)``).  With a cutoff only the top k count
  (no residual).  ir_measures computes ``RBP(rel=…)`` with cwl_eval, which renormalises the
  weights over 1,000 ranks: identical to this one unless p^1000 is not negligible (p ≥ 0.97:
  a relative difference of p^1000, 4·10⁻⁵ at p = 0.99); ir_measures' ``RBP`` without ``rel``
  (graded, from trectools) is ``rbp(gain=grade)`` only when the grades are the gains.
* ``err`` (Chapelle et al. 2009; ir_measures ``ERR@k``, computed by gdeval) =
  Σ_i R_i / i · Π_{j<i} (1 − R_j) with R_i = (2^g_i − 1) / 2^m, g_i the grade (0 when not
  positive or unjudged) and m = ``max_grade`` (gdeval's 4).  A grade above ``max_grade`` is an
  error (gdeval refuses it too).  The whole ranking without a cutoff.  gdeval prints 5 decimals.
* ``compat`` (Clarke, Vtyurina & Smucker 2021; ir_measures ``Compat(p=…)``) = RBO(run, ideal)
  / RBO(ideal, ideal) with persistence ``p`` (default 0.95): RBO(A, B) = Σ_{d<D} p^d ·
  \|A_{d+1} ∩ B_{d+1}\| / (d + 1) / Σ_{d<D} p^d over depths to D = max(retrieved, R), where
  A_n are the first n documents and the ideal ranking holds the R documents of positive grade,
  by grade descending, documents of one grade in the run's order (those not retrieved last).
  ``normalize=False`` keeps the plain RBO.  A document is relevant when its grade is positive
  (ir_measures' rule; ``rel`` does not apply).  0 when R = 0.  ir_measures orders a retrieved
  document of negative score after the unretrieved ones of its grade (it gives those score 0);
  rankscope keeps the run's order.
* ``accuracy`` (ir_measures ``Accuracy@k``) = the probability that a relevant document of the
  top k is ranked above a non-relevant one of the top k: 1 − Σ_{relevant d} n_d / (N · n),
  with n relevant and N non-relevant documents in the top k and n_d the non-relevant ones above
  d.  1 when the top k holds no non-relevant document; 0 when it holds no relevant one
  (ir_measures leaves such a query out of its mean: compare means on queries where one was
  found).

Ties are resolved before scoring (score descending, doc id descending); ir_measures' Compat
and Accuracy order tied documents by id ascending, gdeval and ranx as trec_eval does.

>>> from rankscope import evaluate, Qrels, Run
>>> qrels = Qrels.from_dict({"q": {"a": 2, "b": 1, "c": 0, "d": 3}})
>>> run = Run.from_dict({"q": {"a": 5.0, "x": 4.0, "b": 3.0, "d": 2.0}})
>>> res = evaluate(qrels, run, ["RBP(rel=1)", "rbp.8", "ERR@10", "Compat(p=0.8)", "Accuracy@10", "hits@3"]).mean()
>>> {k: round(v, 4) for k, v in res.items()}
{'RBP(rel=1)': 0.4304, 'rbp.8': 0.8352, 'ERR@10': 0.2877, 'Compat(p=0.8)': 0.4287, 'Accuracy@10': 0.3333, 'hits@3': 2.0}
"""

from __future__ import annotations

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import N_, _
from rankscope.measures._kernel import safe_div
from rankscope.measures._trec_common import segmented_cumprod
from rankscope.measures.base import Measure, MeasureSpec, Param
from rankscope.measures.counts import REL
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register

__all__: list[str] = []


def _at_most_one(name: str):  # type: ignore[no-untyped-def]
    def check(value: float) -> None:
        if value > 1.0:
            raise InvalidParameterError(_("parameter {name!r} is a probability: it must be <= 1, got {value!r}",
                                          name=name, value=value))
    return check


def _gain_kind(value: str) -> None:
    if value not in ("binary", "grade"):
        raise InvalidParameterError(_("parameter 'gain' of metric 'rbp' must be 'binary' or 'grade', got {value!r}",
                                      value=value))


PERSISTENCE = Param("p", float, 0.8, "persistence: the probability of going on to the next document", minimum=0.0,
                    validate=_at_most_one("p"))


def _rbp(p: KernelInput, m: Measure) -> np.ndarray:
    persistence = float(m.param("p"))
    rel = p.is_rel(m.param("rel"))
    if m.cutoff is not None:
        rel = rel & (p.rank < m.cutoff)
    rows = np.flatnonzero(rel)
    gain = p.grade[rows].astype(np.float64) if m.param("gain") == "grade" else np.ones(len(rows))
    total = np.bincount(p.qidx[rows], weights=gain * np.power(persistence, p.rank[rows].astype(np.float64)),
                        minlength=p.n)
    return (1.0 - persistence) * total


def _err(p: KernelInput, m: Measure) -> np.ndarray:
    top = int(m.param("max_grade"))
    if len(p.ideal_grade) and int(p.ideal_grade.max()) > top:
        worst = int(p.ideal_grade.max())
        raise InvalidParameterError(_("ERR: the qrels hold grade {grade}, above max_grade={max_grade}; write "
                                      "err(max_grade={grade})", grade=worst, max_grade=top))
    keep = p.judged & (p.grade > 0)
    if m.cutoff is not None:
        keep &= p.rank < m.cutoff
    rows = np.flatnonzero(keep)
    q = p.qidx[rows]
    stop = (np.exp2(p.grade[rows].astype(np.float64)) - 1.0) / 2.0**top
    offsets = np.concatenate(([0], np.cumsum(np.bincount(q, minlength=p.n)))).astype(np.int64)
    through = segmented_cumprod(1.0 - stop, offsets)  # Π (1 - R_j) up to and including each row
    before = np.concatenate(([1.0], through[:-1])) if len(rows) else through
    before[offsets[:-1][np.diff(offsets) > 0]] = 1.0  # a query's first relevant row: nothing above
    term = stop * before / (p.rank[rows] + 1.0)
    return np.bincount(q, weights=term, minlength=p.n)


def _compat(p: KernelInput, m: Measure) -> np.ndarray:
    persistence = float(m.param("p"))
    ideal_pos = p.ideal_grade > 0
    n_rel = np.bincount(p.ideal_query[ideal_pos], minlength=p.n).astype(np.int64)
    depth = np.maximum(p.num_ret.astype(np.int64), n_rel)
    top = int(depth.max()) if p.n else 0
    weight = np.power(persistence, np.arange(top, dtype=np.float64))
    g_table = np.concatenate(([0.0], np.cumsum(weight / np.arange(1.0, top + 1.0))))  # Σ_{d<n} p^d / (d+1)
    p_table = np.concatenate(([0.0], np.cumsum(weight)))  # Σ_{d<n} p^d
    rows = np.flatnonzero(p.judged & (p.grade > 0))
    q, grade, rank = p.qidx[rows], p.grade[rows].astype(np.int64), p.rank[rows].astype(np.int64)
    # place in the ideal ranking: relevant documents of higher grade, then those of this grade ranked above
    lo = int(min(p.ideal_grade.min(), 0)) if len(p.ideal_grade) else 0
    hi = int(p.ideal_grade.max()) if len(p.ideal_grade) else 0
    span = hi - lo + 2
    ideal_key = p.ideal_query.astype(np.int64) * span + (hi - p.ideal_grade.astype(np.int64))
    higher = np.searchsorted(ideal_key, q * span + (hi - grade), side="left") - p.ideal_offsets[:-1][q]
    order = np.lexsort((rank, -grade, q))
    same = np.empty(len(rows), dtype=np.int64)
    if len(rows):
        qs, gs = q[order], grade[order]
        start = np.ones(len(rows), dtype=bool)
        start[1:] = (qs[1:] != qs[:-1]) | (gs[1:] != gs[:-1])
        first = np.maximum.accumulate(np.where(start, np.arange(len(rows)), 0))
        same[order] = np.arange(len(rows)) - first
    both = np.maximum(rank, higher + same)  # the first depth (0-based) at which both prefixes hold it
    found = np.bincount(q, weights=g_table[depth[q]] - g_table[both], minlength=p.n)
    if m.param("normalize"):
        best = p_table[n_rel] + n_rel * (g_table[depth] - g_table[n_rel])
    else:
        best = p_table[depth]
    return safe_div(found, best)


def _accuracy(p: KernelInput, m: Measure) -> np.ndarray:
    rel = p.is_rel(m.param("rel"))
    if m.cutoff is not None:
        rel = rel & (p.rank < m.cutoff)
    rows = np.flatnonzero(rel)
    q = p.qidx[rows]
    n_found = np.bincount(q, minlength=p.n).astype(np.float64)
    # relevant documents above a relevant row = its place among its query's relevant rows
    above = np.arange(len(rows)) - np.searchsorted(q, q, side="left")
    nonrel_above = np.bincount(q, weights=(p.rank[rows] - above).astype(np.float64), minlength=p.n)
    shown = p.num_ret if m.cutoff is None else np.minimum(p.num_ret, m.cutoff)
    n_nonrel = shown.astype(np.float64) - n_found
    out = np.where(n_found > 0, 1.0, 0.0)
    both = (n_found > 0) & (n_nonrel > 0)
    out[both] = 1.0 - nonrel_above[both] / (n_nonrel[both] * n_found[both])
    return out


_DOC = __doc__ or ""
for spec in (
    MeasureSpec("rbp", N_("rank-biased precision: gain discounted by a persistence p per rank"), _rbp,
                cutoff="optional",
                params=(PERSISTENCE, REL, Param("gain", str, "binary", "'binary' (r_i) or 'grade' (ranx: the grade of "
                                                 "a relevant document)", validate=_gain_kind)),
                ir_measures="RBP", bounds=None, family="browsing", doc=_DOC, judged_view=True),
    MeasureSpec("err", N_("expected reciprocal rank of a cascade reader (gdeval)"), _err, cutoff="optional",
                params=(Param("max_grade", int, 4, "the grade of a perfect document (R = 1): gdeval's 4", minimum=1),),
                ir_measures="ERR", family="browsing", doc=_DOC, judged_view=True),
    MeasureSpec("compat", N_("compatibility: rank-biased overlap with the ideal ranking"), _compat,
                params=(Param("p", float, 0.95, "persistence of the rank-biased overlap", minimum=0.0,
                              validate=_at_most_one("p")),
                        Param("normalize", bool, True, "divide by the ideal ranking's own overlap")),
                ir_measures="Compat", family="browsing", doc=_DOC, judged_view=True),
    MeasureSpec("accuracy", N_("probability that a relevant document is ranked above a non-relevant one"), _accuracy,
                cutoff="optional", params=(REL,), ir_measures="Accuracy", family="browsing", doc=_DOC,
                judged_view=True),
):
    register(spec)
