r"""Recall-level measures: interpolated precision, 11-point average, precision at multiples of R.

Binary relevance (grade >= ``rel``); R = relevant documents in the qrels, r_k = the
1-based rank of the k-th relevant retrieved document, P(i) = precision at rank i.
These follow trec_eval **9.0.8** (the version pytrec_eval wraps).

* ``iprec_at_recall(recall=x)`` (trec_eval ``iprec_at_recall_0.10``, ir_measures
  ``IPrec@0.1``): interpolated precision max_{i >= r_c} P(i) at the recall level
  x, where the level becomes a count of relevant documents c = floor(x·R + 0.9)
  (trec_eval 9's rounding; 10.x uses round(x·R) and differs on some topics).
  0 when fewer than c relevant documents are retrieved; at c = 0 (x = 0) the
  value is the interpolated precision at the first relevant document.
* ``iprec_11pt`` (trec_eval ``11pt_avg``): the mean of ``iprec_at_recall`` over
  the levels 0.0, 0.1, ..., 1.0, or over ``levels`` (``iprec_11pt(levels=0.25,0.5)``,
  trec_eval ``11pt_avg..25,.5``).
* ``rprec_mult(mult=m)`` (trec_eval ``Rprec_mult_0.20``): precision at rank
  c = floor(m·R + 0.9); 0 when c = 0 (R = 0).  ``rprec_mult(mult=1)`` equals Rprec.

Documents past the last retrieved one count as non-relevant.  Queries with R = 0
score 0.  A query of the run left with no document (condensed lists,
``unjudged="condense"``, trec_eval ``-J``) has trec_eval's 0/0 precision: NaN
at every level with c = 0 (level 0; every level when R = 0), and so in
``iprec_11pt``; a query the run lacks scores 0 (trec_eval ``-c``).

>>> from rankscope import evaluate, Qrels, Run
>>> qrels = Qrels.from_dict({"q": {"a": 1, "b": 1}})
>>> run = Run.from_ranked_lists({"q": ["x", "a", "y", "b"]})
>>> evaluate(qrels, run, ["IPrec@0.5", "iprec_at_recall_1.00", "11pt_avg", "Rprec_mult_2.00"]).mean()
{'IPrec@0.5': 0.5, 'iprec_at_recall_1.00': 0.5, '11pt_avg': 0.5, 'Rprec_mult_2.00': 0.5}
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import N_, _
from rankscope.measures._trec_common import judged_rel, suffix_max
from rankscope.measures.base import TENTHS, Measure, MeasureSpec, Param, TrecName
from rankscope.measures.counts import REL
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register

DEFAULT_LEVELS = TENTHS
_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)  # trec_eval's default Rprec_mult values


def level_count(fraction: float, num_rel: np.ndarray) -> np.ndarray:
    """trec_eval 9's conversion of a fraction of R into a document count: floor(x·R + 0.9)."""
    return np.floor(fraction * num_rel.astype(np.float64) + 0.9).astype(np.int64)


def iprec_at_levels(p: KernelInput, levels: tuple[float, ...], rel: int | None = None) -> np.ndarray:
    """Interpolated precision of every query at each recall level: shape (n, len(levels))."""
    is_rel = judged_rel(p, rel)
    rows = np.flatnonzero(is_rel)
    q = p.qidx[rows]
    counts = np.bincount(q, minlength=p.n)
    offs = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    k = np.arange(len(rows)) - np.repeat(offs[:-1], counts) + 1  # k-th relevant retrieved
    prec = k / (p.rank[rows] + 1.0)
    best = suffix_max(prec, offs)  # max precision at or after the k-th relevant document
    num_rel = p.num_rel(rel)
    out = np.zeros((p.n, len(levels)))
    emptied = p.in_run & (p.num_ret == 0)  # in the run, nothing left (condensed lists, trec_eval -J)
    for j, x in enumerate(levels):
        c = level_count(x, num_rel)
        ok = (c <= counts) & (counts > 0)
        idx = offs[:-1] + np.maximum(c, 1) - 1
        out[ok, j] = best[idx[ok]]
        out[emptied & (c == 0), j] = np.nan  # trec_eval's 0/0 precision of an empty ranking
    return out


@lru_cache(maxsize=64)
def parse_levels(text: str) -> tuple[float, ...]:
    """Recall levels from ``'0.25,0.5'`` or ``'0.25;0.5'`` (empty: the 11 standard levels), sorted."""
    if not text.strip():
        return DEFAULT_LEVELS
    try:
        values = [float(v) for v in re.split(r"[,; ]", text) if v.strip()]
    except ValueError:
        raise InvalidParameterError(_("recall levels must be comma-separated numbers, got {text!r}",
                                      text=text)) from None
    if not values:
        raise InvalidParameterError(_("no recall level in {text!r}", text=text))
    return tuple(sorted(values))


def _iprec(p: KernelInput, m: Measure) -> np.ndarray:
    return iprec_at_levels(p, (float(m.param("recall")),), m.param("rel"))[:, 0]


def _iprec_11pt(p: KernelInput, m: Measure) -> np.ndarray:
    levels = parse_levels(m.param("levels"))
    vals = iprec_at_levels(p, levels, m.param("rel"))
    total = np.zeros(p.n)
    for j in range(len(levels) - 1, -1, -1):  # trec_eval adds the highest level first
        total = total + vals[:, j]
    return total / float(len(levels))


def _rprec_mult(p: KernelInput, m: Measure) -> np.ndarray:
    level = m.param("rel")
    cut = level_count(float(m.param("mult")), p.num_rel(level))
    hits = p.count(judged_rel(p, level) & (p.rank < cut[p.qidx]))
    out = np.zeros(p.n)
    ok = cut > 0
    out[ok] = hits[ok] / cut[ok].astype(np.float64)
    return out


_DOC = __doc__ or ""
for spec in (
    MeasureSpec("iprec_at_recall", N_("interpolated precision at a recall level (trec_eval 9 rounding)"), _iprec,
                params=(Param("recall", float, 0.0, "recall level in [0, 1]", minimum=0.0), REL),
                aliases=("iprec",), ir_measures="IPrec", at_param="recall",
                trec=(TrecName("iprec_at_recall", "values", ("recall",), default=TENTHS),), family="interpolated",
                doc=_DOC, judged_view=True),
    MeasureSpec("iprec_11pt", N_("interpolated precision averaged over recall levels 0, 0.1, ..., 1"), _iprec_11pt,
                params=(Param("levels", str, "", "comma-separated recall levels (default: the 11 points)",
                              validate=parse_levels), REL),
                aliases=("11pt_avg",), trec=(TrecName("11pt_avg", "text", ("levels",)),), family="interpolated",
                doc=_DOC, judged_view=True),
    MeasureSpec("rprec_mult", N_("precision at rank mult x R"), _rprec_mult,
                params=(Param("mult", float, 1.0, "multiple of R giving the rank", minimum=0.0), REL),
                at_param="mult",
                trec=(TrecName("Rprec_mult", "values", ("mult",), default=_MULTS),), family="interpolated", doc=_DOC,
                judged_view=True),
):
    register(spec)
