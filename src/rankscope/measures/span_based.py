r"""Span measures: how much of the judged *text* the retrieved chunks hold, and at what context cost.

They need span judgments (:class:`~rankscope.data.spans.SpanQrels`: character ranges of
documents, with grades) and a chunking (:class:`~rankscope.data.chunking.Chunking`:
where each chunk lies), so they compare different chunkings of one corpus fairly
(Smith & Troynikov, "Evaluating Chunking Strategies for Retrieval", Chroma 2024):
``evaluate(span_qrels, run, ["span_recall@5", "ndcg@10"], chunking=chunking)``.

For the top *k* retrieved chunks c_1..c_k of a query (all retrieved chunks without a
cutoff), with R the union of its judged ranges of grade >= ``rel`` and C the union of
the retrieved chunks' ranges (a range is a document + character positions):

* ``span_recall@k`` = \|R ∩ C\| / \|R\|;
* ``span_precision@k`` = \|R ∩ C\| / Σ_i \|c_i\| — text that overlapping chunks share is
  counted each time it is retrieved (redundant context costs the reader);
* ``span_iou@k`` = \|R ∩ C\| / (\|R\| + Σ_i \|c_i\| − \|R ∩ C\|);
* ``span_precision_omega`` (Chroma's precision Ω) = \|R ∩ U\| / cost, U the union of all
  chunks of the chunking and cost the least total length of a set of chunks that holds
  R ∩ U: the best precision any retriever can reach at the best recall this chunking
  allows — it separates "the chunking wastes context" from "the retriever ranks badly";
* ``span_iou_omega`` = \|R ∩ U\| / (\|R\| + cost − \|R ∩ U\|), the IoU of that ideal retrieval;
* ``context_size@k`` = Σ_i \|c_i\|: the context sent to the model (lower is better).

Ties: chunks are ranked like every run (score descending, id descending); the cutoff
counts chunks.  A query with no judged range of grade >= ``rel`` (\|R\| = 0) scores 0 on
every measure except ``context_size``; so does a query without retrieved chunks.
Chunks of other documents hold no judged text; ranges judged in several spans count
once; spans of grade < ``rel`` are not in R.

Parameters: ``rel`` (minimum grade in R; default the evaluation's relevance level);
``weight`` — ``binary`` (default) or ``graded``: a judged character weighs g / g_max
(g the highest grade of the spans covering it, g_max the query's highest grade) in
\|R\| and \|R ∩ C\|, retrieved text weighs 1; ``unit`` — ``chars`` (default) or a
tokenizer (``words``, ``jieba``, ``hf:NAME``, ``tiktoken:ENCODING``, see
:mod:`rankscope.data.units`): lengths counted in tokens, a character range becoming
the tokens that overlap it (needs the chunking's corpus).

The ordinary measures in the same evaluation score the chunk qrels derived with the
chunk rule (default: a chunk is relevant when it shares at least one character with a
judged span; see :mod:`rankscope.data.span_rules`); the result states the rule, the
chunking and how many spans no single chunk holds (``result.spans``).
Computed with numpy interval arithmetic (one sort per measure), never a loop per chunk.

>>> from rankscope import Run, evaluate
>>> from rankscope.data.chunking import Chunking
>>> from rankscope.data.spans import SpanQrels
>>> chunking = Chunking.from_records([{"chunk_id": f"d#{i}", "doc_id": "d", "start": 10 * i, "end": 10 * i + 10}
...                                   for i in range(4)])
>>> spans = SpanQrels.from_records([{"query_id": "q", "doc_id": "d", "start": 5, "end": 15}])
>>> run = Run.from_ranked_lists({"q": ["d#1", "d#3", "d#0"]})
>>> res = evaluate(spans, run, ["span_recall@1", "span_precision@3", "span_iou@3", "span_precision_omega",
...                             "context_size@2", "ndcg@3"], chunking=chunking)
>>> for label, value in res.mean().items():
...     print(f"{label} = {value:.4f}")
span_recall@1 = 0.5000
span_precision@3 = 0.3333
span_iou@3 = 0.3333
span_precision_omega = 0.5000
context_size@2 = 20.0000
ndcg@3 = 0.9197
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import N_, _
from rankscope.measures._spans import SpanArrays, omega_counts, ratio, span_counts
from rankscope.measures.base import Measure, MeasureSpec, Param
from rankscope.measures.counts import REL
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register

__all__: list[str] = []


@dataclass(frozen=True)
class _Weight(Param):
    """``binary`` or ``graded``."""

    def coerce(self, metric: str, value: Any) -> Any:
        text = str(value).strip().lower()
        if text not in ("binary", "graded"):
            raise InvalidParameterError(_("parameter 'weight' of metric {metric!r} must be 'binary' or 'graded', "
                                          "got {value!r}", metric=metric, value=value))
        return text


@dataclass(frozen=True)
class _Unit(Param):
    """``chars`` or a tokenizer name."""

    def coerce(self, metric: str, value: Any) -> Any:
        from rankscope.data.units import check_unit

        try:
            return check_unit(str(value).strip())
        except InvalidParameterError as exc:
            raise InvalidParameterError(_("parameter 'unit' of metric {metric!r}: {reason}", metric=metric,
                                          reason=exc)) from None


WEIGHT = _Weight("weight", str, "binary",
                 "binary, or graded: a judged character weighs its grade / the query's top grade")
UNIT = _Unit("unit", str, "chars", "chars, or a tokenizer: words, jieba, hf:NAME, tiktoken:ENCODING")


def _arrays(p: KernelInput, m: Measure) -> SpanArrays:
    if p.spans is None:
        raise InvalidParameterError(_("{metric} needs span judgments and a chunking: evaluate(span_qrels, run, "
                                      "metrics, chunking=chunking)", metric=str(m)))
    return p.spans.arrays(m.param("unit"))


def _counts(p: KernelInput, m: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return span_counts(_arrays(p, m), m.cutoff, p.level(m.param("rel")), m.param("weight") == "graded")


def _recall(p: KernelInput, m: Measure) -> np.ndarray:
    inter, relevant, __ = _counts(p, m)
    return ratio(inter, relevant)


def _precision(p: KernelInput, m: Measure) -> np.ndarray:
    inter, relevant, retrieved = _counts(p, m)
    return np.where(relevant > 0, ratio(inter, retrieved), 0.0)


def _iou(p: KernelInput, m: Measure) -> np.ndarray:
    inter, relevant, retrieved = _counts(p, m)
    return np.where(relevant > 0, ratio(inter, relevant + retrieved - inter), 0.0)


def _omega(p: KernelInput, m: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return omega_counts(_arrays(p, m), p.level(m.param("rel")), m.param("weight") == "graded")


def _precision_omega(p: KernelInput, m: Measure) -> np.ndarray:
    reach, __, cost = _omega(p, m)
    return ratio(reach, cost)


def _iou_omega(p: KernelInput, m: Measure) -> np.ndarray:
    reach, relevant, cost = _omega(p, m)
    return np.where(relevant > 0, ratio(reach, relevant + cost - reach), 0.0)


def _context_size(p: KernelInput, m: Measure) -> np.ndarray:
    a = _arrays(p, m)
    top = a.row_rank < m.cutoff if m.cutoff is not None else np.ones(len(a.row_rank), dtype=bool)
    return np.bincount(a.row_q[top], weights=(a.row_end[top] - a.row_start[top]).astype(np.float64),
                       minlength=a.n)[:a.n]


_DOC = __doc__ or ""
_PARAMS = (REL, WEIGHT, UNIT)

for _spec in (
    MeasureSpec("span_recall", N_("share of the judged text held by the top k chunks"), _recall, cutoff="optional",
                params=_PARAMS, family="span", doc=_DOC),
    MeasureSpec("span_precision", N_("share of the top k chunks' text that is judged relevant (repeats counted)"),
                _precision, cutoff="optional", params=_PARAMS, family="span", doc=_DOC),
    MeasureSpec("span_iou", N_("intersection over union of judged text and the top k chunks' text"), _iou,
                cutoff="optional", params=_PARAMS, family="span", doc=_DOC),
    MeasureSpec("span_precision_omega", N_("best span precision reachable at full recall with this chunking"),
                _precision_omega, params=_PARAMS, family="span", doc=_DOC, aliases=("precision_omega",)),
    MeasureSpec("span_iou_omega", N_("span IoU of the ideal retrieval with this chunking"), _iou_omega,
                params=_PARAMS, family="span", doc=_DOC, aliases=("iou_omega",)),
    MeasureSpec("context_size", N_("length of the top k chunks: the context sent to the model"), _context_size,
                cutoff="optional", params=(UNIT,), bounds=None, higher_is_better=False, family="span", doc=_DOC),
):
    register(_spec)
