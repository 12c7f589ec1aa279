"""Plain-language explanation of metric values, computed from the per-query data.

In the style of a RAG tutorial's "detailed analysis", but every figure comes from the
per-query values: the share of queries with a hit, how many queries found all
relevant documents, and for MRR the observed median and quartiles of the rank
of the first relevant document (not ``1/MRR``, which is a harmonic mean and
hides the spread).  For reciprocal rank the rank of query *i* is exactly
``1 / RR_i`` (RR is ``1/r`` or 0).  Each sentence ends with the metric's rating
band and advice of docs/interpretation.md when the metric has one.

>>> import numpy as np
>>> print(explain("recall@5", np.array([1.0, 0.5, 1.0, 5 / 6])))
Recall@5 = 0.833: on average 83.3% of the relevant documents are in the top 5; for 2 of 4 queries all of them are. \
Rating: good (recall is good).
>>> print(explain("mrr", np.array([1.0, 1.0, 0.5, 1.0, 0.0]), band=False))
MRR = 0.700: the first relevant document is typically at rank 1 (median rank 1; at rank 1 for 3 of 5 queries); \
1 of 5 queries have no relevant document in the ranking.
>>> print(explain("P@5", np.array([0.4, 0.0]), lang="zh", band=False))
Precision@5 = 0.200：前 5 个结果中平均有 20.0% 是相关文档（5 个中平均 1.0 个）；\
2 个查询中有 1 个在前 5 个结果中没有相关文档。
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rankscope.i18n import N_, _, gettext, pgettext
from rankscope.interpret.analysis import ranks_from_reciprocal, summarize_first_ranks
from rankscope.interpret.bands import rate
from rankscope.interpret.i18n import check_lang
from rankscope.measures import Measure, parse_metric

if TYPE_CHECKING:
    from rankscope.engine import EvaluationResult

__all__ = ["explain", "explain_result", "display_name"]

_DISPLAY = {"precision": "Precision", "recall": "Recall", "mrr": "MRR", "ndcg": "NDCG", "success": "Hit Rate",
            "map": "MAP", "f1": "F1", "r_precision": "R-Precision"}


#: what a span measure's value says (English, said through the catalog)
SPAN_SENTENCES: dict[str, str] = {
    "span_recall": N_("{label} = {value}: on average {pct} of the judged text is in {top}; for {complete} of {n} "
                      "queries all of it is."),
    "span_precision": N_("{label} = {value}: on average {pct} of the text of {top} is judged relevant (text repeated "
                         "by overlapping chunks counts each time)."),
    "span_iou": N_("{label} = {value}: the judged text and the text of {top} overlap by {pct} of their union on "
                   "average."),
    "span_precision_omega": N_("{label} = {value}: even a perfect retriever on this chunking sends on average {pct} "
                               "relevant text in the least context that holds all reachable judged text — the rest "
                               "is the chunking's waste, not the retriever's."),
    "span_iou_omega": N_("{label} = {value}: the IoU a perfect retriever reaches on this chunking, on average {pct}."),
    "context_size": N_("{label} = {value}: {top} hold {size} {units} on average — the context the model has to read."),
}


def display_name(label: str, measure: Measure | None = None) -> str:
    """A reader-friendly name of a metric label: ``recall@5`` → ``Recall@5``; others unchanged.

    >>> display_name("recall@5"), display_name("hit_rate@3"), display_name("P(rel=2)@5")
    ('Recall@5', 'Hit Rate@3', 'P(rel=2)@5')
    """
    m = measure or parse_metric(label)
    if m.params or m.name not in _DISPLAY:
        return label
    return _DISPLAY[m.name] + (f"@{m.cutoff}" if m.cutoff is not None else "")


def _pct(x: float, lang: str) -> str:
    return f"{100 * x:.1f}%"


def _mrr_sentence(name: str, value: str, rr: np.ndarray, cutoff: int | None, lang: str) -> str:
    summary = summarize_first_ranks(ranks_from_reciprocal(rr))
    where = _("in the top {k}", k=cutoff).text(lang) if cutoff else gettext("in the ranking", lang)
    if summary.found == 0:
        return _("{label} = {value}: no query has a relevant document {where}.", label=name, value=value,
                 where=where).text(lang)
    typical = f"{summary.q1}" if summary.q1 == summary.q3 else f"{summary.q1}–{summary.q3}"
    if summary.not_found > summary.found:
        found = _("retrieved in the top {k}", k=cutoff).text(lang) if cutoff else pgettext("found in",
                                                                                           "retrieved").text(lang)
        return _("{label} = {value}: for {nf} of {n} queries no relevant document is {where_found}; where one is, "
                 "the first is typically at rank {typical} (median rank {median}; at rank 1 for {at1} queries).",
                 label=name, value=value, nf=summary.not_found, n=summary.n, where=where, where_found=found,
                 typical=typical, median=summary.median, at1=summary.at_rank_1).text(lang)
    missing = ""
    if summary.not_found:
        missing = _("; {nf} of {n} queries have no relevant document {where}", nf=summary.not_found, n=summary.n,
                    where=where).text(lang)
    return _("{label} = {value}: the first relevant document is typically at rank {typical} (median rank {median}; "
             "at rank 1 for {at1} of {n} queries){missing}.", label=name, value=value, typical=typical,
             median=summary.median, at1=summary.at_rank_1, n=summary.n, missing=missing).text(lang)


def explain(
    label: str,
    per_query: np.ndarray,
    lang: str = "en",
    *,
    measure: Measure | None = None,
    band: bool = True,
    ceiling: float | None = None,
) -> str:
    """One or two sentences explaining the mean of ``per_query`` values of metric ``label``.

    ``ceiling`` (the mean a perfect ranking reaches on these queries, when below 1)
    makes the rating compare the mean with it rather than with 1.
    """
    check_lang(lang)
    m = measure or parse_metric(label)
    values = np.asarray(per_query, dtype=np.float64)
    n = len(values)
    mean = float(values.mean()) if n else 0.0
    name = display_name(label, m)
    value = f"{mean:.3f}"
    k = m.cutoff
    if m.name == "precision" and k and not m.params:
        text = _("{label} = {value}: on average {pct} of the top {k} documents are relevant ({hits} of {k}); "
                 "{none} of {n} queries have none in the top {k}.", label=name, value=value, pct=_pct(mean, lang), k=k,
                 hits=f"{mean * k:.1f}", none=int((values <= 0).sum()), n=n).text(lang)
    elif m.name == "recall" and not m.params:
        said = {"label": name, "value": value, "pct": _pct(mean, lang), "k": k, "n": n,
                "complete": int((np.round(values, 10) >= 1).sum())}
        text = (_("{label} = {value}: on average {pct} of the relevant documents are in the top {k}; for {complete} "
                  "of {n} queries all of them are.", **said) if k else
                _("{label} = {value}: on average {pct} of the relevant documents are retrieved; for {complete} of {n} "
                  "queries all of them are.", **said)).text(lang)
    elif m.name == "mrr" and not m.params:
        text = _mrr_sentence(name, value, values, k, lang)
    elif m.name == "ndcg" and not m.params:
        said = {"label": name, "value": value, "pct": _pct(mean, lang), "k": k}
        text = (_("{label} = {value}: taking rank and relevance grade into account, the top {k} reach on average "
                  "{pct} of the gain of an ideal ranking.", **said) if k else
                _("{label} = {value}: taking rank and relevance grade into account, the ranking reaches on average "
                  "{pct} of the gain of an ideal ranking.", **said)).text(lang)
    elif m.name == "success" and k and not m.params:
        text = _("{label} = {value}: {pct} of queries ({hits} of {n}) have at least one relevant document in the "
                 "top {k}.", label=name, value=value, pct=_pct(mean, lang), hits=int((values > 0).sum()), n=n,
                 k=k).text(lang)
    elif m.name == "map" and not m.params:
        text = _("{label} = {value}: precision averaged over the ranks of every relevant document (those never "
                 "retrieved count as 0), then over queries; {zero} of {n} queries score 0.", label=name, value=value,
                 zero=int((values <= 0).sum()), n=n).text(lang)
    elif m.spec.family == "span" and m.name in SPAN_SENTENCES:
        top = _("the top {k} chunks", k=k).text(lang) if k else gettext("the retrieved chunks", lang)
        unit = m.param("unit")
        units = gettext("characters", lang) if unit == "chars" else _("tokens ({unit})", unit=unit).text(lang)
        text = _(SPAN_SENTENCES[m.name], label=name, value=value, pct=_pct(mean, lang), top=top,
                 complete=int((np.round(values, 10) >= 1).sum()), n=n, size=f"{mean:.0f}", units=units).text(lang)
    else:
        text = _("{label} = {value}: {summary}.", label=name, value=value,
                 summary=m.spec.summary_in(lang).rstrip(".。")).text(lang)
    if band and n:
        capped = ceiling if ceiling is not None and 0 < ceiling < 1 - 1e-9 else None
        rating = rate(m, min(mean / capped, 1.0) if capped else mean, lang)
        if rating is not None:
            sep = "" if lang == "zh" else " "
            if capped:
                text += sep + _("Rating against the {ceiling} a perfect ranking reaches on these qrels ({pct} of "
                                "it): {level} ({advice}).", ceiling=f"{capped:.3f}", pct=_pct(mean / capped, lang),
                                level=rating.level_name, advice=rating.advice).text(lang)
            else:
                text += sep + _("Rating: {level} ({advice}).", level=rating.level_name, advice=rating.advice).text(lang)
    return text


def explain_result(result: EvaluationResult, lang: str = "en", *, band: bool = True) -> dict[str, str]:
    """Explanations of every metric of an :class:`~rankscope.engine.EvaluationResult`, by label."""
    return {
        label: explain(label, result.per_query.values[:, j], lang, measure=m, band=band)
        for j, (label, m) in enumerate(zip(result.labels, result.measures))
    }
