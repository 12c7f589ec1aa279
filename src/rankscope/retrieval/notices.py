"""The warnings of a retriever evaluation: one :class:`~rankscope.retrieval.evaluation.Notice` per thing that
changed what is measured (failed or empty queries, unscored queries, fewer hits than k, unjudged levels, ...).

Each notice keeps its English sentence and is keyed (message ``warning.retriever.<key>`` with its values), so the
command line says it in the reader's language (:meth:`Notice.text`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope.errors import Message
from rankscope.i18n import N_, NC_, Saying, _, ngettext, pgettext
from rankscope.retrieval.evaluation import Notice

if TYPE_CHECKING:
    from rankscope.data.testset import Query, TestSet
    from rankscope.retrieval.cache import QueryOutcome
    from rankscope.retrieval.evaluation import RetrieverEvaluation

__all__ = ["notices"]


def _share(n: int, total: int) -> str:
    return f"{n} of {total} queries ({n / total:.0%})" if total else f"{n} queries"


def _pct(n: int, total: int) -> str:
    return f"{n / total:.0%}" if total else "-"


#: what a query may lack, and the two levels of an evaluation, said in a warning
_WHAT = {"answers": N_("reference answers"), "spans": N_("span judgments"), "qrels": N_("relevance judgments")}
_LEVEL = {"retrieved": NC_("level", "retrieved"), "document": NC_("level", "document")}


#: answer matching judged part of the queries: (some have no answer, some hits carry no text) -> the message
_PARTLY = {
    (False, False): lambda **v: _("{level} level: answer matching judged {judged} of {total} queries; the others are "
                                  "not judged ()", **v),
    (True, False): lambda **v: _("{level} level: answer matching judged {judged} of {total} queries; the others are "
                                 "not judged ({no_answer} have no reference answer)", **v),
    (False, True): lambda **v: _("{level} level: answer matching judged {judged} of {total} queries; the others are "
                                 "not judged (the hits of {no_text} carry no text)", **v),
    (True, True): lambda **v: _("{level} level: answer matching judged {judged} of {total} queries; the others are "
                                "not judged ({no_answer} have no reference answer, the hits of {no_text} carry no "
                                "text)", **v),
}


def _level(level: str) -> Message:
    return pgettext("level", _LEVEL[level])


def _note(code: str, message: Saying) -> Notice:
    """A notice of ``code`` that says ``message``."""
    return Notice(code, message)


#: why a retriever returns fewer than k hits, by the kind of retriever
_FEWER_WHY = {
    "langchain": N_("its own top-k: LangChain's search_kwargs['k']"),
    "llamaindex": N_("its own top-k: LlamaIndex's similarity_top_k"),
    "bm25": N_("BM25 returns only the documents that share a word with the query"),
    "other": N_("its own top-k, or a filter"),
}


def notices(ts: TestSet, scorable: list[Query], finished: dict[str, QueryOutcome], ev: RetrieverEvaluation, *,
             relevance: str, k: int, deep: list[str], retriever_kind: str = "other") -> list[Notice]:
    import numpy as np

    out = [_note("testset", issue) for issue in ts.issues]
    n = len(scorable)
    if ev.relevance == "answers" and relevance == "auto":
        out.append(_note("relevance",
                         _('the test set has no relevance judgments: relevance comes from answer matching (a '
                           'retrieved text that contains a reference answer is relevant)')))
    elif ev.relevance == "qrels" and ev.judged_by["retrieved"] == "answers":
        out.append(_note("relevance",
                         _('the judgments name documents, the hits are chunks: the retrieved level is judged by '
                           'answer matching, the document level by the judgments')))
    if n < len(ts):
        source = ev.relevance if ev.relevance in ("answers", "spans") else "qrels"
        out.append(_note("unscored",
                         _('{n} of {total} queries are scored; {left} have no {what} and were not run', n=n,
                           total=len(ts), left=len(ts) - n, what=_(_WHAT[source]))))
    if ev.failures:
        first = "; ".join(f"{qid}: {f.error_type}: {f.message}" for qid, f in list(ev.failures.items())[:3])
        attempts = max(f.attempts for f in ev.failures.values())
        tries = ngettext("{n} attempt", "{n} attempts", attempts)
        out.append(_note("failed",
                         _("{n} of {total} queries ({pct}) failed after {attempts} and score as empty rankings; first: "
                           "{first}", n=len(ev.failures), total=n, pct=_pct(len(ev.failures), n), attempts=tries,
                           first=first)))
    ok = [finished[q.id] for q in scorable if q.id in finished]
    if ok and ev.empty * 2 > len(ok):
        out.append(_note("empty",
                         _('{n} of {total} queries ({pct}) returned no hit', n=ev.empty, total=len(ok),
                           pct=_pct(ev.empty, len(ok)))))
    limit = min(k, len(ts.corpus)) if ts.corpus else k
    short = [len(e.ids) for e in ok if 0 < len(e.ids) < limit]
    if ok and len(short) * 2 > len(ok):
        median = int(np.median(short))
        kind = retriever_kind if retriever_kind in _FEWER_WHY else "other"
        out.append(_note("fewer_hits",
                         _("the retriever returned fewer than k={k} hits for {n} of {total} queries ({pct}) (median "
                           "{median}): metrics @{k} see only those ({why})", k=k, n=len(short), total=len(ok),
                           pct=_pct(len(short), len(ok)), median=median, why=_(_FEWER_WHY[kind]))))
    if ev.duplicates:
        dropped = sum(ev.duplicates.values())
        out.append(_note("duplicates",
                         ngettext("the retriever returned repeated ids in {n} query ({dropped} duplicates dropped, "
                                  "the first occurrence kept)",
                                  "the retriever returned repeated ids in {n} queries ({dropped} duplicates dropped, "
                                  "the first occurrence kept)",
                                  len(ev.duplicates), dropped=dropped)))
    for level in ("retrieved", "document"):
        if level == "document" and ev.doc_run is ev.run:
            break
        said = _level(level)
        if ev.judged_by[level] is None:
            out.append(_note("not_judged", _("{level} level not judged: the judgments name documents and the hits are "
                                             "chunks (see the document level)", level=said) if ev.relevance == "qrels"
                             else _("{level} level not judged: answer matching needs the hits' text (or a corpus); "
                                    "they have none", level=said)))
        elif ev.judged_by[level] == "answers" and ev.coverage[level] < n:
            no_answer = sum(1 for q in scorable if not q.answers)
            no_text = n - no_answer - ev.coverage[level]
            values = {"level": said, "judged": ev.coverage[level], "total": n, "no_answer": no_answer,
                      "no_text": no_text}
            out.append(_note("not_judged", _PARTLY[bool(no_answer), no_text > 0](**values)))
    replaced = sum(e.scores_replaced for e in ok)
    if replaced:
        out.append(_note("scores_replaced",
                         ngettext("{n} query returned scores that do not decrease down the list (distances?): ranked "
                                  "by list order, scores replaced by n, ..., 1",
                                  "{n} queries returned scores that do not decrease down the list (distances?): "
                                  "ranked by list order, scores replaced by n, ..., 1",
                                  replaced)))
    ties = sum(e.ties_reordered for e in ok)
    if ties:
        out.append(_note("ties",
                         ngettext("scores tie in {n} query whose list order is not doc id descending: tied hits are "
                                  "ranked by doc id descending, as trec_eval ranks them",
                                  "scores tie in {n} queries whose list order is not doc id descending: tied hits "
                                  "are ranked by doc id descending, as trec_eval ranks them",
                                  ties)))
    if deep:
        out.append(_note("cutoff",
                         _('{metrics}: cutoff above k={k}; each ranking holds at most {k} hits',
                           metrics=", ".join(deep), k=k)))
    if ev.unknown_ids.suspicious:
        u = ev.unknown_ids
        values = {"pct": f"{u.fraction:.0%}", "n": u.unknown, "total": u.retrieved,
                  "examples": ", ".join(repr(e) for e in u.examples[:3])}
        out.append(_note("unknown_ids", _("{pct} of retrieved ids ({n} of {total}) are unknown (not in the corpus) — "
                                          "are chunk ids mapped to document ids? e.g. {examples}", **values)
                         if u.against == "corpus" else
                         _("{pct} of retrieved ids ({n} of {total}) are unknown (in no qrels) — are chunk ids mapped "
                           "to document ids? e.g. {examples}", **values)))
    if ev.from_cache:
        out.append(_note("from_cache", _("{n} of {total} answers come from the cache file, not from the retriever now "
                                         "({checked} cached queries asked again gave the same answers)",
                                         n=ev.from_cache, total=n, checked=ev.cache_checked)))
    return out + _judged_notices(ev)


def _judged_notices(ev: RetrieverEvaluation) -> list[Notice]:
    """Levels judged by the test set's judgments: no retrieved id judged (with the likely cause and an example),
    or a top k mostly unjudged (see :mod:`rankscope.engine.judged`)."""
    from rankscope.engine.coverage import judged_warnings

    out = []
    for level, res in (("retrieved", ev.result), ("document", ev.doc_result)):
        if level == "document" and ev.doc_run is ev.run:
            break
        if ev.judged_by[level] != "qrels" or res is None or res.judged is None:
            continue
        ids, shares = judged_warnings({ev.run.name: res.judged})
        if ev.doc_run is ev.run:  # one level: naming it says nothing
            out += [_note(w.kind, w) for w in ids + shares]
        else:
            out += [_note(w.kind, _('{level} level: {warning}', level=_level(level), warning=w)) for w in ids + shares]
    return out
