r"""Measures for incomplete judgments: bpref, gm_bpref and infAP (trec_eval definitions).

Three kinds of retrieved documents are told apart: judged relevant (grade >=
``rel``), judged non-relevant (0 <= grade < ``rel``), and documents without a
judgment — either absent from the qrels (*not pooled*) or pooled with a negative
grade (*pooled but unjudged*, the sampling convention of infAP).  R is the
number of judged relevant documents of the query, N the number of judged
non-relevant ones (both from the qrels).

* ``bpref`` (Buckley & Voorhees 2004) = (1/R) · Σ over retrieved relevant d of
  (1 − min(n_d, R) / min(N, R)), where n_d is the number of judged non-relevant
  documents ranked above d; a term is 1 when n_d = 0.  Unjudged documents are
  skipped entirely.  0 when R = 0.
* ``gm_bpref``: per query bpref, aggregated with the geometric mean
  exp(mean(log(max(bpref, 1e-5)))) (trec_eval prints it only as a summary).
* ``infap`` (trec_eval ``infAP``, Yilmaz & Aslam 2006): for the relevant
  document at 0-based rank j (j > 0) with r relevant, n judged non-relevant and
  u pooled-unjudged documents above it, the expected precision is
  1/(j+1) + j/(j+1) · ((r+n+u)/j) · ((r+ε)/(r+n+2ε)), ε = 1e-5; a relevant document
  at rank 0 counts 1.  infAP = Σ / R; 0 when R = 0.  With complete judgments and
  no unjudged documents it equals AP up to ε.

No cutoff.  Ties are resolved before scoring (score descending, doc id descending).

>>> from rankscope import evaluate, Qrels, Run
>>> qrels = Qrels.from_dict({"q": {"a": 1, "b": 1, "n1": 0, "n2": 0}})
>>> run = Run.from_ranked_lists({"q": ["n1", "a", "x", "b"]})
>>> {k: round(v, 4) for k, v in evaluate(qrels, run, ["bpref", "infAP", "map"]).mean().items()}
{'bpref': 0.5, 'infAP': 0.5, 'map': 0.5}
"""

from __future__ import annotations

import numpy as np

from rankscope.i18n import N_
from rankscope.measures._kernel import safe_div
from rankscope.measures._trec_common import judged_nonrel, judged_rel, num_judged_nonrel, pool_unjudged
from rankscope.measures.base import Measure, MeasureSpec, TrecName
from rankscope.measures.counts import REL
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register

INFAP_EPSILON = 0.00001


def _above(p: KernelInput, mask: np.ndarray) -> np.ndarray:
    """Per row: how many rows of the same query ranked above it satisfy ``mask``."""
    m = mask.astype(np.int64)
    return p.cumsum_in_query(m) - m


def _bpref(p: KernelInput, m: Measure) -> np.ndarray:
    level = m.param("rel")
    rel = judged_rel(p, level)
    num_rel = p.num_rel(level)
    nonrel_above = _above(p, judged_nonrel(p, level))
    r = num_rel[p.qidx]
    den = np.minimum(num_judged_nonrel(p, level)[p.qidx], r).astype(np.float64)
    frac = safe_div(np.minimum(nonrel_above, r).astype(np.float64), den)
    term = np.where(nonrel_above > 0, 1.0 - frac, 1.0)
    return safe_div(p.sum(term, rel), num_rel)


def _infap(p: KernelInput, m: Measure) -> np.ndarray:
    level = m.param("rel")
    rel = judged_rel(p, level)
    r = _above(p, rel).astype(np.float64)  # relevant above (rel_so_far - 1)
    n = _above(p, judged_nonrel(p, level)).astype(np.float64)
    u = _above(p, pool_unjudged(p)).astype(np.float64)
    fj = p.rank.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((r + n + u) / fj) * (
            (r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)
        )
    term = np.where(p.rank == 0, 1.0, term)
    return safe_div(p.sum(term, rel), p.num_rel(level))


_DOC = __doc__ or ""
for spec in (
    MeasureSpec("bpref", N_("binary preference: relevant ranked above judged non-relevant"), _bpref, params=(REL,),
                ir_measures="Bpref", trec=(TrecName("bpref"),), family="incomplete", doc=_DOC, judged_view=True),
    MeasureSpec("gm_bpref", N_("geometric mean of bpref over queries"), _bpref, params=(REL,),
                trec=(TrecName("gm_bpref"),),
                aggregate="gmean", family="incomplete", doc=_DOC, judged_view=True),
    MeasureSpec("infap", N_("inferred average precision (sampled judgments)"), _infap, params=(REL,),
                ir_measures="infAP", trec=(TrecName("infAP"),), family="incomplete", doc=_DOC, judged_view=True),
):
    register(spec)
