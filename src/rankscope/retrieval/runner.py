"""Run a retriever over a test set and score it: :func:`evaluate_retriever`.

Execution (:mod:`rankscope.retrieval.execute`)
    Queries go to ``search_batch`` in batches of ``batch_size`` when the
    retriever has it (CPU-bound retrievers: BM25, a local embedding model),
    ``async`` retrievers run on one event loop, at most ``workers`` at a
    time, any other retriever is called from ``workers`` threads (I/O-bound
    retrievers: a vector database, an HTTP service) from the first queries that
    wait, and from the calling thread while it answers without waiting (see
    :func:`rankscope.retrieval.execute._on_threads`).  ``workers=1`` runs them
    one by one.
Options
    How the retriever is run and scored is one
    :class:`~rankscope.retrieval.options.RetrieverOptions` value (``options=``), or
    its fields as keywords; :func:`rankscope.compare` takes the same value and
    keywords to run several retrievers alike.
Failures
    A call that raises an ``Exception`` is retried ``retries`` times (waiting
    ``retry_wait * 2**attempt`` seconds); a query that still fails is kept in
    ``failures`` (type, message, traceback) and scored as an empty ranking —
    the other queries are never lost, and a warning says how many failed.
    ``NameError``, ``TypeError``, ``AttributeError`` and a ``None`` return
    are bugs: raised at once, not retried — unless ``on_bad_answer="count"``,
    which retries a ``None`` (or non-ranking) answer and then counts the query
    as failed (HTTP wrappers return ``None`` on a timeout).
    ``KeyboardInterrupt`` is not caught.
Resume
    With ``cache=path`` every finished query is appended to a JSONL file
    as soon as it finishes (flushed at least every 0.2 s); a later call of the *same* evaluation
    (retriever identity and declared settings, ``cache_key``, ``k``, test set
    ids and texts: the cache header) skips the queries already there; another
    evaluation's cache is refused unless ``overwrite_cache=True`` (see
    :mod:`rankscope.retrieval.cache`).  The header cannot tell two indexes of
    one class apart, so ``cache_check`` cached queries (a seeded sample, 3 by
    default) are asked again first: an answer that differs refuses the cache.
    ``ev.from_cache`` counts the answers taken from the cache (every output says
    it), ``ev.cache_checked`` those asked again.
    A job that stores outcomes itself passes ``on_result`` (called with each
    :class:`~rankscope.retrieval.cache.QueryOutcome` as it finishes) and
    ``resume`` (the outcomes stored before).
Warnings
    Whatever changes what is measured — the relevance source, queries not
    scored, failures, empty rankings, fewer hits than ``k``, repeated ids,
    levels not judged, scores replaced or tie orders changed, unknown ids,
    unknown keys of the test set file — is a
    :class:`~rankscope.retrieval.evaluation.Notice` in ``ev.warnings``, shown
    by ``repr(ev)``, ``ev.summary()`` and ``ev.to_dict()``, and issued as a
    :class:`~rankscope.retrieval.evaluation.RetrieverWarning`.
Scoring
    Only the queries that can be scored are run: those with judgments, or with
    reference answers when relevance comes from answers.  Each ranking is cut
    at ``k`` after dropping repeated ids; the run keeps the retriever's scores
    (see :func:`~rankscope.retrieval.protocol.ranking_scores`).  Metrics are
    computed by the ordinary engine (trec_eval semantics, queries without a
    ranking score 0) at two levels, ``"retrieved"`` and ``"document"``
    (chunks folded with ``chunk_to_doc``, :mod:`rankscope.retrieval.chunks`;
    the same ranking without it).
Spans
    With span measures (``span_recall@5`` ...) the test set's span judgments
    score the retrieved chunks (relevance ``"spans"``); where each chunk lies
    comes from ``chunking=`` or, without it, from the hits themselves
    (LlamaIndex ``start_char_idx``, LangChain ``start_index``, see
    :func:`rankscope.data.chunking.hit_location`; kept in the cache), so no
    separate chunk table is needed.

>>> from rankscope.data.testset import TestSet
>>> ts = TestSet.from_annotations(["capital of France", "largest planet"], [["d1"], ["d4"]])
>>> def search(query, k):
...     return ["d1", "d2"] if "France" in query else ["d3", "d4"]
>>> ev = evaluate_retriever(search, ts, ["mrr", "recall@2"], k=2, progress=False)
>>> ev.mean()["document"], ev.errors
({'mrr': 0.75, 'recall@2': 1.0}, {})
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal, TypedDict

from typing_extensions import Unpack

from rankscope.choices import default_metrics
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.data.testset import Query, TestSet
from rankscope.errors import EmptyInputError, InvalidParameterError
from rankscope.i18n import _
from rankscope.measures.base import Measure
from rankscope.retrieval.cache import QueryOutcome, RunCache, check_sample, same_answer, testset_fingerprint
from rankscope.retrieval.chunks import ChunkToDoc, fold_chunks, map_chunk_ids
from rankscope.retrieval.evaluation import RetrieverEvaluation, RetrieverWarning, UnknownIdsWarning
from rankscope.retrieval.execute import Collector, execute
from rankscope.retrieval.notices import notices
from rankscope.retrieval.options import RetrieverOptions, default_k, resolve_options
from rankscope.retrieval.protocol import as_retriever, retriever_identity, retriever_settings
from rankscope.retrieval.unknown import UnknownIds, unknown_ids

__all__ = ["evaluate_retriever", "RetrieverEvaluation", "RetrieverOptions", "RetrieverWarning", "UnknownIdsWarning",
           "default_metrics"]

Relevance = Literal["auto", "qrels", "answers", "spans"]


def _check_metrics(metrics: Any, k: int) -> tuple[Any, list[str]]:
    """Parse the metrics up front (a typo fails before 10,000 retriever calls): ``(metrics, cutoffs above k)``.

    Returns the metrics as given (a list), so that results keep the caller's labels.
    """
    from rankscope.measures.parse import parse_metrics

    if not isinstance(metrics, str):
        metrics = list(metrics)
    pairs = parse_metrics(metrics)
    if not pairs:
        raise InvalidParameterError(_("no metric given"))
    return metrics, [label for label, m in pairs if m.cutoff is not None and m.cutoff > k]


def _resolve_testset(testset: Any) -> TestSet:
    if isinstance(testset, TestSet):
        return testset
    if isinstance(testset, (str, Path)):
        return TestSet.from_file(testset)
    raise InvalidParameterError(_("testset must be a TestSet or a path, got {type}", type=type(testset).__name__))


def _build_run(queries: Iterable[Query], done: dict[str, QueryOutcome], name: str) -> Run:
    qs: list[str] = []
    ds: list[str] = []
    ss: list[float] = []
    for q in queries:
        entry = done.get(q.id)
        if entry is None:
            continue
        qs.extend([q.id] * len(entry.ids))
        ds.extend(entry.ids)
        ss.extend(entry.scores)
    return Run(qs, ds, ss, name)


class RunOptionValues(TypedDict, total=False):
    """The keywords of :class:`~rankscope.retrieval.options.RetrieverOptions` that :func:`rankscope.compare` does not
    take for itself (it takes ``relevance_level``, ``chunking`` and ``rule`` for runs too)."""

    k: int | None
    workers: int
    retries: int
    retry_wait: float
    batch_size: int
    cache: str | Path | None
    overwrite_cache: bool
    cache_key: str | None
    cache_check: int
    chunk_to_doc: ChunkToDoc | None
    relevance: Relevance
    progress: bool | None
    on_bad_answer: Literal["fail", "count"]


class OptionValues(RunOptionValues, total=False):
    """The keywords of :class:`~rankscope.retrieval.options.RetrieverOptions` (each overrides ``options``)."""

    relevance_level: int
    chunking: Any
    rule: str


def evaluate_retriever(
    retriever: Any,
    testset: TestSet | str | Path,
    metrics: Iterable[str | Measure] | str | None = None,
    *,
    options: RetrieverOptions | None = None,
    name: str | None = None,
    on_result: Callable[[QueryOutcome], None] | None = None,
    resume: Iterable[QueryOutcome] | None = None,
    stop_when: Any = None,
    **option_values: Unpack[OptionValues],
) -> RetrieverEvaluation:
    """Run ``retriever`` on every scorable query of ``testset`` and score the rankings.

    Parameters
    ----------
    retriever : anything :func:`~rankscope.retrieval.protocol.as_retriever` accepts
    testset : a :class:`~rankscope.data.testset.TestSet` or a path (JSON, JSONL, BEIR folder)
    metrics : metric names (default :func:`default_metrics` of ``k``)
    options : a :class:`~rankscope.retrieval.options.RetrieverOptions` value (the same one
        :func:`rankscope.compare` takes); each keyword below overrides it
    k, workers, retries, retry_wait, batch_size, cache, overwrite_cache, cache_key, cache_check, chunk_to_doc,
        relevance, relevance_level, progress, chunking, rule, on_bad_answer : the fields of
        :class:`~rankscope.retrieval.options.RetrieverOptions` (``k`` hits kept per query; ``cache`` a JSONL
        resume file, checked by asking ``cache_check`` cached queries again; ``on_bad_answer="count"`` counts a
        ``None`` answer as a failed query ...)
    name : the run's name (default: the retriever's ``name`` or class name)
    on_result : called with each finished :class:`~rankscope.retrieval.cache.QueryOutcome` (success or
        failure), one at a time, as soon as it finishes
    resume : outcomes stored earlier (e.g. those ``on_result`` received): their queries are not run again
    stop_when : a :class:`rankscope.stats.betting.StopWhen`: run the queries in a random order, a round at a time,
        and stop once the anytime-valid interval of the metric (or of its difference to a baseline) is narrow
        enough or excludes a value; only the queries run are scored, and ``ev.stopped`` says how many calls were
        saved and what the interval guarantees (:mod:`rankscope.retrieval.stopping`)
    """
    opts = resolve_options(options, option_values, "evaluate_retriever")
    ts = _resolve_testset(testset)
    k = opts.k if opts.k is not None else default_k(metrics)
    chunk_to_doc, relevance = opts.chunk_to_doc, opts.relevance
    mode: str = relevance
    if mode == "auto" and _wants_spans(default_metrics(k) if metrics is None else metrics):
        mode = "spans"
    if mode == "spans":
        if ts.spans is None:
            raise EmptyInputError(_("test set {name!r} has no span judgments (items with 'evidence'); build them "
                                    "with SpanQrels.from_answers / from_squad and pass TestSet(..., spans=)",
                                    name=ts.name))
        if chunk_to_doc is not None:
            raise InvalidParameterError(_("span judgments score the retrieved chunks directly; drop chunk_to_doc"))
    if mode == "auto":
        mode = "answers" if len(ts.qrels) == 0 and ts.has_answers else "qrels"
    if mode == "qrels" and len(ts.qrels) == 0:
        raise EmptyInputError(_("test set {name!r} has no relevance judgments; use relevance='answers'", name=ts.name)
                              if ts.has_answers else _("test set {name!r} has no relevance judgments", name=ts.name))
    if mode == "answers" and not ts.has_answers:
        raise EmptyInputError(_("test set {name!r} has no reference answers to match", name=ts.name))
    metric_list, deep = _check_metrics(default_metrics(k) if metrics is None else metrics, k)  # before any call
    docs_key = None
    if isinstance(chunk_to_doc, str) and chunk_to_doc.startswith("metadata:"):
        docs_key = chunk_to_doc.split(":", 1)[1]

    r = as_retriever(retriever)
    run_name = name or str(getattr(r, "name", None) or type(r).__name__)
    judged = set(ts.spans.queries if mode == "spans" and ts.spans is not None else ts.qrels.queries)
    scorable = [q for q in ts.queries if (q.answers if mode == "answers" else q.id in judged)]
    keep_places = mode == "spans" and opts.chunking is None
    keep_text = mode == "answers" or (chunk_to_doc is not None and ts.has_answers)

    store = None
    if opts.cache is not None:
        store = RunCache(opts.cache, overwrite=opts.overwrite_cache, k=k, retriever=run_name,
                         identity=retriever_identity(r), settings=retriever_settings(r), cache_key=opts.cache_key,
                         testset=ts.name, testset_fingerprint=testset_fingerprint((q.id, q.text) for q in ts.queries),
                         texts=keep_text, docs_key=docs_key, places=keep_places)
    wanted = {q.id for q in scorable}
    done = {qid: e for qid, e in (store.load() if store is not None else {}).items() if qid in wanted}
    if opts.overwrite_cache and store is not None:
        store.open()
    show = sys.stderr.isatty() if opts.progress is None else bool(opts.progress)
    run_opts = {"k": k, "workers": opts.workers, "retries": opts.retries, "retry_wait": opts.retry_wait,
                "batch_size": opts.batch_size, "name": run_name, "on_bad_answer": opts.on_bad_answer}
    checked = {}
    if done and opts.cache_check:
        assert store is not None
        checked = _check_cache(r, store, done, scorable, opts.cache_check, run_opts,
                               dict(keep_text=keep_text, docs_key=docs_key, keep_places=keep_places))
    cached = {qid: e for qid, e in done.items() if qid not in checked}
    for entry in resume or ():
        if entry.error is None and entry.query_id in wanted:
            cached[entry.query_id] = entry
    todo = [q for q in scorable if q.id not in cached and q.id not in checked]
    done = {**cached, **checked}  # answered already: from the cache (some asked again) or a stored outcome
    stopped = None
    try:
        from rankscope._progress import progress_bar
        from rankscope.choices import resolve_lang

        with progress_bar(_("retrieving ({name})", name=run_name).text(resolve_lang()), len(todo), show) as bar:
            collector = Collector(k=k, keep_text=keep_text, docs_key=docs_key, cache=store, on_result=on_result,
                                  advance=bar.advance, keep_places=keep_places)

            def run_some(queries: list[Query]) -> None:
                execute(r, [q for q in queries if q.id not in done], collector, **run_opts)  # type: ignore[arg-type]

            if stop_when is None:
                run_some(todo)
            else:  # rounds in a random order until the rule holds (logic: retrieval.stopping, stats.betting)
                from rankscope.retrieval.stopping import check_rule, run_until

                stop_rule = check_rule(stop_when, scorable)

                def values(queries: list[Query]) -> list[float]:
                    """The rule's metric on ``queries`` (already run), as the final scoring computes it."""
                    got = {**done, **collector.done}
                    part = _build_run(queries, got, run_name)
                    metric = [stop_rule.metric]
                    ev_part = (_score_spans(ts, queries, got, part, metric, k=k, chunking=opts.chunking, rule=opts.rule,
                                            relevance_level=opts.relevance_level) if mode == "spans" else
                               _score(ts, queries, got, part, metric, k=k, mode=mode, chunk_to_doc=chunk_to_doc,
                                      docs_key=docs_key, relevance_level=opts.relevance_level)).primary
                    scores = dict(zip(ev_part.per_query.query_ids.tolist(), ev_part.per_query[metric[0]].tolist()))
                    return [scores.get(q.id, 0.0) for q in queries]

                scorable, stopped = run_until(stop_rule, scorable, run_some, values)
    finally:
        if store is not None:
            store.close()
    finished = {**cached, **checked, **collector.done}
    run = _build_run(scorable, finished, run_name)
    if mode == "spans":
        ev = _score_spans(ts, scorable, finished, run, metric_list, k=k, chunking=opts.chunking, rule=opts.rule,
                          relevance_level=opts.relevance_level)
    else:
        ev = _score(ts, scorable, finished, run, metric_list, k=k, mode=mode, chunk_to_doc=chunk_to_doc,
                    docs_key=docs_key, relevance_level=opts.relevance_level)
    ev.failures = {q.id: collector.failures[q.id] for q in scorable if q.id in collector.failures}
    ev.errors = {qid: f"{f.error_type}: {f.message}" for qid, f in ev.failures.items()}
    ev.retries, ev.from_cache, ev.cache_checked = collector.retried, len(cached), len(checked)
    ev.options = opts.replace(k=k)
    if stop_when is not None:
        ev.stopped = stopped
    ev.warnings = notices(ts, scorable, finished, ev, relevance=relevance, k=k, deep=deep,
                          retriever_kind=_kind_of(r))
    for notice in ev.warnings:
        warnings.warn(notice.warning(), stacklevel=2)
    return ev


def _kind_of(r: Any) -> str:
    """What kind of retriever ``r`` is, for advice that depends on it: ``"langchain"``, ``"llamaindex"``,
    ``"bm25"`` (rankscope's BM25 baseline) or ``"other"``."""
    from rankscope.retrieval.bm25 import BM25Retriever

    inner = getattr(r, "obj", None) or getattr(r, "fn", None) or r
    module = type(inner).__module__ or ""
    if module.startswith("langchain"):
        return "langchain"
    if module.startswith("llama_index"):
        return "llamaindex"
    return "bm25" if isinstance(inner, BM25Retriever) else "other"


def _check_cache(r: Any, store: RunCache, done: dict[str, QueryOutcome], scorable: list[Query], n: int,
                 run_opts: dict[str, Any], keep: dict[str, Any]) -> dict[str, QueryOutcome]:
    """Ask ``n`` cached queries (a seeded sample) again: the fresh outcomes when they give the cached answers;
    an error naming the first that does not, or saying that none could be asked."""
    from rankscope.errors import Items

    sample = set(check_sample(done, n))
    queries = [q for q in scorable if q.id in sample]
    collector = Collector(k=run_opts["k"], cache=None, on_result=None, advance=lambda: None, **keep)
    execute(r, queries, collector, **run_opts)
    for q in queries:
        fresh = collector.done.get(q.id)
        if fresh is not None and not same_answer(done[q.id], fresh):
            then, now = Items(tuple(done[q.id].ids[:3])), Items(tuple(fresh.ids[:3]))
            raise InvalidParameterError(_("cache {path} holds answers this retriever does not give: asked again, "
                                          "query {query!r} returns {now} ..., the cache holds {then} ... (another "
                                          "index or configuration of the same retriever?); pass "
                                          "overwrite_cache=True (CLI: --overwrite-cache) to start it afresh, "
                                          "another cache file, or cache_key= naming the index", path=str(store.path),
                                          query=q.id, now=now, then=then))
    if not collector.done:
        first = next(iter(collector.failures.values()), None)
        error = f"{first.error_type}: {first.message}" if first is not None else "-"
        raise InvalidParameterError(_("cache {path} could not be checked: none of the {n} cached queries asked "
                                      "again was answered (first: {error}); pass cache_check=0 (CLI: --cache-check "
                                      "0) to use it unchecked", path=str(store.path), n=len(queries), error=error))
    return dict(collector.done)


# -- scoring ----------------------------------------------------------------------------------
def _score(ts: TestSet, scorable: list[Query], finished: dict[str, QueryOutcome], run: Run, metrics: Any, *,
           k: int, mode: str, chunk_to_doc: ChunkToDoc | None, docs_key: str | None,
           relevance_level: int) -> RetrieverEvaluation:
    from rankscope.engine.evaluator import Evaluator

    mapping: ChunkToDoc | None = chunk_to_doc
    if docs_key is not None:
        mapping = {cid: doc for e in finished.values() for cid, doc in zip(e.ids, e.docs or []) if doc is not None}
    answers = {q.id: q.answers for q in scorable if q.answers}

    def retrieved() -> dict[str, list[tuple[str, str | None]]]:  # (id, text) of every hit: for answer matching
        return {qid: list(zip(e.ids, e.texts or [None] * len(e.ids))) for qid, e in finished.items()}
    all_ids = [q.id for q in scorable]

    if mode == "answers":
        chunk_qrels, chunk_cov = _answer_level(answers, retrieved(), ts.corpus if mapping is None else None)
        chunk_by: str | None = "answers"
    elif mapping is None or _any_judged(run, ts.qrels):
        chunk_qrels, chunk_cov, chunk_by = ts.qrels, all_ids, "qrels"
    elif answers:  # document judgments, chunk hits: the chunk level only from answers
        chunk_qrels, chunk_cov = _answer_level(answers, retrieved(), None)
        chunk_by = "answers"
    else:
        chunk_qrels, chunk_cov, chunk_by = Qrels([], [], []), [], None
    if not chunk_cov:
        chunk_by = None

    doc_run = fold_chunks(run, mapping, name=run.name) if mapping is not None else run
    if mapping is None:
        doc_qrels, doc_cov, doc_by = chunk_qrels, chunk_cov, chunk_by
    elif mode == "answers":
        doc_qrels, doc_cov = _answer_level(answers, _map_retrieved(retrieved(), mapping), ts.corpus)
        doc_by = "answers" if doc_cov else None
    else:
        doc_qrels, doc_cov, doc_by = ts.qrels, all_ids, "qrels"

    def evaluate(qrels: Qrels, covered: list[str], r: Run) -> Any:
        if not covered:  # not judged: a placeholder result (zeros) that levels() leaves out
            qrels = _cover(Qrels([], [], []), all_ids)
        # a retriever that returned nothing for every query retrieved nothing: scored 0, said in the notices
        return Evaluator(qrels, metrics, relevance_level=relevance_level).evaluate(r, allow_empty=True)

    result = evaluate(chunk_qrels, chunk_cov, run)
    doc_result = result if mapping is None else evaluate(doc_qrels, doc_cov, doc_run)

    corpus_ids = list(ts.corpus) if ts.corpus is not None else None
    if mode == "answers" and corpus_ids is None:
        unknown = UnknownIds(against="answers")
    else:
        unknown = unknown_ids(doc_run, ts.qrels, corpus_ids)
    batched = any(e.batch for e in finished.values())
    return RetrieverEvaluation(
        result=result, run=run, latencies={q.id: finished[q.id].latency for q in scorable if q.id in finished},
        errors={}, doc_result=doc_result, unknown_ids=unknown, doc_run=doc_run, relevance=mode, k=k,
        judged_by={"retrieved": chunk_by, "document": doc_by},
        coverage={"retrieved": len(chunk_cov), "document": len(doc_cov)},
        latency_kind="batch average" if batched else "per query",
        duplicates={qid: e.duplicates for qid, e in finished.items() if e.duplicates},
        empty=sum(1 for q in scorable if q.id in finished and not finished[q.id].ids), queries=len(scorable),
    )


def _wants_spans(metrics: Any) -> bool:
    """Whether a span measure is among ``metrics``."""
    from rankscope.measures.parse import parse_metrics

    return any(m.spec.family == "span" for __, m in parse_metrics(metrics))


def _score_spans(ts: TestSet, scorable: list[Query], finished: dict[str, QueryOutcome], run: Run, metrics: Any, *,
                 k: int, chunking: Any, rule: str, relevance_level: int) -> RetrieverEvaluation:
    """Score the chunks on the test set's span judgments (the same ranking at both levels)."""
    from rankscope.data.chunking import Chunking
    from rankscope.engine.evaluator import Evaluator

    if chunking is None:  # where the chunks lie, from the places the hits carried (ids without one are named)
        ids = [cid for e in finished.values() for cid in e.ids]
        places = [p for e in finished.values() for p in (e.places or [None] * len(e.ids))]
        chunking = Chunking.from_places(ids, places, corpus=ts.corpus, name="retrieved hits")
    result = Evaluator(ts.spans, metrics, relevance_level=relevance_level, chunking=chunking,
                       rule=rule).evaluate(run, allow_empty=True)
    batched = any(e.batch for e in finished.values())
    return RetrieverEvaluation(
        result=result, run=run, latencies={q.id: finished[q.id].latency for q in scorable if q.id in finished},
        errors={}, doc_result=result, unknown_ids=UnknownIds(against="spans"), doc_run=run, relevance="spans", k=k,
        judged_by={"retrieved": "spans", "document": "spans"},
        coverage={"retrieved": len(scorable), "document": len(scorable)},
        latency_kind="batch average" if batched else "per query",
        duplicates={qid: e.duplicates for qid, e in finished.items() if e.duplicates},
        empty=sum(1 for q in scorable if q.id in finished and not finished[q.id].ids), queries=len(scorable),
    )


def _answer_level(answers: dict[str, tuple[str, ...]], retrieved: dict[str, list[tuple[str, str | None]]],
                  corpus: dict[str, str] | None) -> tuple[Qrels, list[str]]:
    """Judgments from answer containment, and the queries they cover.

    A query is covered when it has no hit (an empty ranking or a failure: it scores 0) or when at
    least one of its hits has a text (its own or the corpus's); a query whose hits carry no text
    cannot be judged and is left out — never scored 0.
    """
    from rankscope.retrieval.answers import answer_qrels

    covered = [qid for qid in answers
               if not retrieved.get(qid)
               or any(t is not None or (corpus is not None and d in corpus) for d, t in retrieved[qid])]
    keep = set(covered)
    qrels = answer_qrels({q: a for q, a in answers.items() if q in keep},
                         {q: h for q, h in retrieved.items() if q in keep}, corpus)
    return _cover(qrels, covered), covered


def _map_retrieved(retrieved: dict[str, list[tuple[str, str | None]]],
                   mapping: ChunkToDoc) -> dict[str, list[tuple[str, str | None]]]:
    import pyarrow as pa

    ids = sorted({cid for hits in retrieved.values() for cid, __ in hits})
    docs, __ = map_chunk_ids(pa.array(ids, type=pa.string()), mapping)
    to_doc = dict(zip(ids, docs.to_pylist()))
    return {qid: [(to_doc[cid], text) for cid, text in hits] for qid, hits in retrieved.items()}


def _any_judged(run: Run, qrels: Qrels) -> bool:
    """True when at least one retrieved id occurs in the qrels."""
    import pyarrow.compute as pc

    if not len(run) or not len(qrels):
        return False
    return bool(pc.any(pc.is_in(run.doc_ids, value_set=qrels.doc_ids)).as_py())


NO_HIT = "\x00rankscope:no-hit"  # a judged non-relevant id no retriever returns


def _cover(qrels: Qrels, query_ids: Iterable[str]) -> Qrels:
    """Give every query in ``query_ids`` a judgment, so that a query with no hit (or a failed call)
    is scored 0 instead of silently leaving the average: queries absent from the answer-derived
    judgments get one non-relevant placeholder judgment (``NO_HIT``)."""
    import numpy as np

    missing = sorted(set(query_ids) - set(qrels.queries))
    if not missing:
        return qrels
    return Qrels(
        np.concatenate([qrels.query_column(), np.asarray(missing, dtype=object)]),
        qrels.doc_column().to_pylist() + [NO_HIT] * len(missing),
        np.concatenate([qrels.grades, np.zeros(len(missing), dtype=np.int64)]),
    )
