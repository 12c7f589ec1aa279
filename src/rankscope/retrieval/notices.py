"""The warnings of a retriever evaluation: one :class:`~rankscope.retrieval.evaluation.Notice` per thing that
changed what is measured (failed or empty queries, unscored queries, fewer hits than k, unjudged levels, ...).

Each notice keeps its English sentence and is keyed (message ``warning.retriever.<key>`` with its values), so the
command line says it in the reader's language (:meth:`Notice.text`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankscope.errors import Said
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


def _said(key: str) -> Said:
    """A word of a warning (``warning.<key>``: a level's name, what a query lacks)."""
    return Said(f"warning.{key}")


def _note(code: str, english: str, key: str | None = None, /, **values: Any) -> Notice:
    """A notice whose sentence is ``english``, keyed ``warning.retriever.<key>`` (default: the code)."""
    return Notice(code, english, f"retriever.{key or code}", tuple(values.items()))


#: why a retriever returns fewer than k hits, by the kind of retriever (``warning.retriever.fewer_why.<kind>``)
_FEWER_WHY = {
    "langchain": "its own top-k: LangChain's search_kwargs['k']",
    "llamaindex": "its own top-k: LlamaIndex's similarity_top_k",
    "bm25": "BM25 returns only the documents that share a word with the query",
    "other": "its own top-k, or a filter",
}


def notices(ts: TestSet, scorable: list[Query], finished: dict[str, QueryOutcome], ev: RetrieverEvaluation, *,
             relevance: str, k: int, deep: list[str], retriever_kind: str = "other") -> list[Notice]:
    import numpy as np

    out = [_note("testset", str(issue), None, issue=issue) for issue in ts.issues]
    n = len(scorable)
    if ev.relevance == "answers" and relevance == "auto":
        out.append(_note("relevance", "the test set has no relevance judgments: relevance comes from answer "
                                      "matching (a retrieved text that contains a reference answer is relevant)",
                         "relevance_answers"))
    elif ev.relevance == "qrels" and ev.judged_by["retrieved"] == "answers":
        out.append(_note("relevance", "the judgments name documents, the hits are chunks: the retrieved level is "
                                      "judged by answer matching, the document level by the judgments",
                         "relevance_chunks"))
    if n < len(ts):
        what = {"answers": "reference answers", "spans": "span judgments"}.get(ev.relevance, "relevance judgments")
        source = ev.relevance if ev.relevance in ("answers", "spans") else "qrels"
        out.append(_note("unscored", f"{n} of {len(ts)} queries are scored; {len(ts) - n} have no {what} "
                                     "and were not run", None, n=n, total=len(ts), left=len(ts) - n,
                         what=_said(f"retriever.what_{source}")))
    if ev.failures:
        first = "; ".join(f"{qid}: {f.error_type}: {f.message}" for qid, f in list(ev.failures.items())[:3])
        attempts = max(f.attempts for f in ev.failures.values())
        tries = Said.counted("retriever.n_attempts", attempts)
        out.append(_note("failed", f"{_share(len(ev.failures), n)} failed after {tries} and score "
                                   f"as empty rankings; first: {first}", None, n=len(ev.failures), total=n,
                         pct=_pct(len(ev.failures), n), attempts=tries, first=first))
    ok = [finished[q.id] for q in scorable if q.id in finished]
    if ok and ev.empty * 2 > len(ok):
        out.append(_note("empty", f"{_share(ev.empty, len(ok))} returned no hit", None, n=ev.empty, total=len(ok),
                         pct=_pct(ev.empty, len(ok))))
    limit = min(k, len(ts.corpus)) if ts.corpus else k
    short = [len(e.ids) for e in ok if 0 < len(e.ids) < limit]
    if ok and len(short) * 2 > len(ok):
        median = int(np.median(short))
        kind = retriever_kind if retriever_kind in _FEWER_WHY else "other"
        out.append(_note("fewer_hits", f"the retriever returned fewer than k={k} hits for "
                                       f"{_share(len(short), len(ok))} (median {median}): metrics @{k} see only "
                                       f"those ({_FEWER_WHY[kind]})", None,
                         k=k, n=len(short), total=len(ok), pct=_pct(len(short), len(ok)), median=median,
                         why=_said(f"retriever.fewer_why.{kind}")))
    if ev.duplicates:
        dropped = sum(ev.duplicates.values())
        out.append(_note("duplicates", f"the retriever returned repeated ids in {len(ev.duplicates)} queries "
                                       f"({dropped} duplicates dropped, the first occurrence kept)", None,
                         n=len(ev.duplicates), dropped=dropped))
    for level in ("retrieved", "document"):
        if level == "document" and ev.doc_run is ev.run:
            break
        said = _said(f"retriever.level_{level}")
        if ev.judged_by[level] is None:
            why = ("the judgments name documents and the hits are chunks (see the document level)"
                   if ev.relevance == "qrels" else "answer matching needs the hits' text (or a corpus); they have "
                   "none")
            out.append(_note("not_judged", f"{level} level not judged: {why}",
                             "not_judged_chunks" if ev.relevance == "qrels" else "not_judged_no_text", level=said))
        elif ev.judged_by[level] == "answers" and ev.coverage[level] < n:
            no_answer = sum(1 for q in scorable if not q.answers)
            no_text = n - no_answer - ev.coverage[level]
            reasons = [f"{no_answer} have no reference answer"] if no_answer else []
            if no_text > 0:
                reasons.append(f"the hits of {no_text} carry no text")
            key = "partly_judged" + ("_no_answer" if no_answer else "") + ("_no_text" if no_text > 0 else "")
            out.append(_note("not_judged", f"{level} level: answer matching judged {ev.coverage[level]} of {n} "
                                           f"queries; the others are not judged ({', '.join(reasons)})", key,
                             level=said, judged=ev.coverage[level], total=n, no_answer=no_answer, no_text=no_text))
    replaced = sum(e.scores_replaced for e in ok)
    if replaced:
        out.append(_note("scores_replaced", f"{replaced} queries returned scores that do not decrease down the "
                                            "list (distances?): ranked by list order, scores replaced by n, ..., 1",
                         None, n=replaced))
    ties = sum(e.ties_reordered for e in ok)
    if ties:
        out.append(_note("ties", f"scores tie in {ties} queries whose list order is not doc id descending: tied "
                                 "hits are ranked by doc id descending, as trec_eval ranks them", None, n=ties))
    if deep:
        out.append(_note("cutoff", f"{', '.join(deep)}: cutoff above k={k}; each ranking holds at most {k} hits",
                         None, metrics=", ".join(deep), k=k))
    if ev.unknown_ids.suspicious:
        u = ev.unknown_ids
        out.append(_note("unknown_ids", u.message(), "unknown_ids_" + ("corpus" if u.against == "corpus" else "qrels"),
                         pct=f"{u.fraction:.0%}", n=u.unknown, total=u.retrieved,
                         examples=", ".join(repr(e) for e in u.examples[:3])))
    if ev.from_cache:
        out.append(_note("from_cache", f"{ev.from_cache} of {n} answers come from the cache file, not from the "
                                       f"retriever now ({ev.cache_checked} cached queries asked again gave the same "
                                       "answers)", None, n=ev.from_cache, total=n, checked=ev.cache_checked))
    return out + _judged_notices(ev)


def _judged_notices(ev: RetrieverEvaluation) -> list[Notice]:
    """Levels judged by the test set's judgments: no retrieved id judged (with the likely cause and an example),
    or a top k mostly unjudged (see :mod:`rankscope.engine.judged`)."""
    from rankscope.interpret.coverage import judged_warnings

    out = []
    for level, res in (("retrieved", ev.result), ("document", ev.doc_result)):
        if level == "document" and ev.doc_run is ev.run:
            break
        if ev.judged_by[level] != "qrels" or res is None or res.judged is None:
            continue
        ids, shares = judged_warnings({ev.run.name: res.judged})
        if ev.doc_run is ev.run:  # one level: naming it says nothing
            out += [_note(w.kind, w.text(), "judged", warning=w) for w in ids + shares]
        else:
            out += [_note(w.kind, f"{level} level: {w.text()}", "level_warning",
                          level=_said(f"retriever.level_{level}"), warning=w) for w in ids + shares]
    return out
