"""Run a retriever over a test set and score it: :func:`evaluate_retriever`.

Execution
    Queries go to ``search_batch`` in batches of ``batch_size`` when the
    retriever has it (CPU-bound retrievers: BM25, a local embedding model),
    otherwise to ``search`` from ``workers`` threads (I/O-bound retrievers: a
    vector database, an HTTP service).  ``workers=1`` runs them one by one.
Failures
    A call that raises an ``Exception`` is retried ``retries`` times (waiting
    ``retry_wait * 2**attempt`` seconds); a query that still fails is recorded
    in ``errors`` and scored as an empty ranking — the other queries are never
    lost.  A failing batch is re-run query by query so that one bad query does
    not sink its batch.  ``KeyboardInterrupt`` is not caught.
Resume
    With ``cache=path`` every finished query is appended (and flushed) to a
    JSONL file as soon as it finishes; a later call with the same cache skips
    the queries already there (see :mod:`rankscope.retrieval.cache`).
Scoring
    Only the queries that can be scored are run: those with judgments, or with
    reference answers when relevance comes from answers.  Each ranking is cut
    at ``k``; the run keeps the retriever's order (see
    :func:`~rankscope.retrieval.protocol.ranking_scores`).  Metrics are
    computed by the ordinary engine (trec_eval semantics, queries without a
    ranking score 0).  With ``chunk_to_doc`` the chunks are also folded into
    documents (:mod:`rankscope.retrieval.chunks`) and scored at document level.
Spans
    With span measures (``span_recall@5`` ...) the test set's span judgments
    score the retrieved chunks; where each chunk lies comes from ``chunking=``
    or, without it, from the hits themselves (LlamaIndex ``start_char_idx``,
    LangChain ``start_index``, see :func:`rankscope.data.chunking.hit_location`),
    so no separate chunk table is needed.

>>> from rankscope.data.testset import TestSet
>>> ts = TestSet.from_annotations(["capital of France", "largest planet"], [["d1"], ["d4"]])
>>> def search(query, k):
...     return ["d1", "d2"] if "France" in query else ["d3", "d4"]
>>> ev = evaluate_retriever(search, ts, ["mrr", "recall@2"], k=2, progress=False)
>>> ev.result.mean(), ev.errors
({'mrr': 0.75, 'recall@2': 1.0}, {})
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.data.testset import Query, TestSet
from rankscope.errors import EmptyInputError, InvalidParameterError
from rankscope.measures.base import Measure
from rankscope.retrieval.cache import CachedQuery, RunCache
from rankscope.retrieval.chunks import ChunkToDoc, fold_chunks, map_chunk_ids
from rankscope.retrieval.evaluation import RetrieverEvaluation
from rankscope.retrieval.protocol import Hit, as_retriever, ranking_scores
from rankscope.retrieval.unknown import UnknownIds, unknown_ids

__all__ = ["evaluate_retriever", "RetrieverEvaluation", "UnknownIdsWarning", "default_metrics"]

Relevance = Literal["auto", "qrels", "answers", "spans"]


class UnknownIdsWarning(UserWarning):
    """Many retrieved ids occur in neither the judgments nor the corpus (likely an id mismatch)."""


def default_metrics(k: int) -> list[str]:
    """The metrics used when none are given: nDCG, recall, precision, hit rate at ``k``, MRR, MAP.

    >>> default_metrics(5)
    ['ndcg@5', 'recall@5', 'precision@5', 'hit_rate@5', 'mrr', 'map']
    """
    return [f"ndcg@{k}", f"recall@{k}", f"precision@{k}", f"hit_rate@{k}", "mrr", "map"]


def _positive_int(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InvalidParameterError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


class _Collector:
    """Gathers outcomes, writes them to the cache, advances the progress bar."""

    def __init__(self, cache: RunCache | None, keep_text: bool, docs_key: str | None, advance: Callable[[], None],
                 keep_places: bool = False):
        self.cache = cache
        self.keep_text = keep_text
        self.docs_key = docs_key
        self.keep_places = keep_places
        self.advance = advance
        self.done: dict[str, CachedQuery] = {}
        self.latencies: dict[str, float] = {}
        self.errors: dict[str, str] = {}
        self.retried: dict[str, int] = {}

    def add(self, qid: str, hits: list[Hit] | None, latency: float, error: str | None, attempts: int) -> None:
        if attempts > 1:
            self.retried[qid] = attempts - 1
        if hits is None:
            entry = CachedQuery(qid, [], [], latency, error or "failed")
            self.errors[qid] = entry.error or "failed"
        else:
            docs = None
            if self.docs_key is not None:
                docs = [None if h.metadata is None or h.metadata.get(self.docs_key) is None
                        else str(h.metadata[self.docs_key]) for h in hits]
            places = None
            if self.keep_places:
                from rankscope.data.chunking import hit_location

                places = [None if (loc := hit_location(h)) is None else list(loc) for h in hits]
            entry = CachedQuery(qid, [h.id for h in hits], ranking_scores(hits), latency, None,
                                [h.text for h in hits] if self.keep_text else None, docs, places)
            self.done[qid] = entry
            self.latencies[qid] = latency
        if self.cache is not None:
            self.cache.append(entry)
        self.advance()


def _call(fn: Callable[[], list[Hit]], retries: int, wait: float) -> tuple[list[Hit] | None, float, str | None, int]:
    """Call ``fn`` up to ``1 + retries`` times: ``(hits or None, latency, error, attempts)``."""
    error = None
    latency = 0.0
    for attempt in range(retries + 1):
        if attempt and wait > 0:
            time.sleep(wait * 2 ** (attempt - 1))
        t0 = time.perf_counter()
        try:
            hits = fn()
        except Exception as exc:  # the retriever's own failure: record and go on
            latency = time.perf_counter() - t0
            error = f"{type(exc).__name__}: {exc}"
            continue
        return hits, time.perf_counter() - t0, None, attempt + 1
    return None, latency, error, retries + 1


def _batches(items: Sequence[Query], size: int) -> Iterator[Sequence[Query]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


@contextmanager
def _progress_bar(total: int, enabled: bool, label: str) -> Iterator[Callable[[], None]]:
    if not enabled or total == 0:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)


def _execute(retriever: Any, todo: list[Query], collector: _Collector, *, k: int, workers: int, retries: int,
             retry_wait: float, batch_size: int) -> None:
    def one(q: Query) -> tuple[str, list[Hit] | None, float, str | None, int]:
        return (q.id, *_call(lambda: retriever.search(q.text, k), retries, retry_wait))

    if getattr(retriever, "batched", False):
        for batch in _batches(todo, batch_size):
            t0 = time.perf_counter()
            try:
                results = retriever.search_batch([q.text for q in batch], k)
            except Exception:
                for q in batch:  # isolate the failing query
                    collector.add(*one(q))
                continue
            share = (time.perf_counter() - t0) / len(batch)
            for q, hits in zip(batch, results):
                collector.add(q.id, hits, share, None, 1)
        return
    if workers == 1:
        for q in todo:
            collector.add(*one(q))
        return
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rankscope-retriever")
    try:
        futures = [pool.submit(one, q) for q in todo]
        for fut in as_completed(futures):
            collector.add(*fut.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _check_metrics(metrics: Any, k: int) -> Any:
    """Parse the metrics up front (a typo fails before 10,000 retriever calls); warn about cutoffs above ``k``.

    Returns the metrics as given (a list), so that results keep the caller's labels.
    """
    from rankscope.measures.parse import parse_metrics

    if not isinstance(metrics, str):
        metrics = list(metrics)
    pairs = parse_metrics(metrics)
    if not pairs:
        raise InvalidParameterError("no metric given")
    deep = [label for label, m in pairs if m.cutoff is not None and m.cutoff > k]
    if deep:
        warnings.warn(f"{', '.join(deep)}: cutoff above k={k}; each ranking holds at most {k} hits",
                      UserWarning, stacklevel=3)
    return metrics


def _resolve_testset(testset: Any) -> TestSet:
    if isinstance(testset, TestSet):
        return testset
    if isinstance(testset, (str, Path)):
        return TestSet.from_file(testset)
    raise InvalidParameterError(f"testset must be a TestSet or a path, got {type(testset).__name__}")


def _build_run(queries: Iterable[Query], done: dict[str, CachedQuery], name: str) -> Run:
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


def evaluate_retriever(
    retriever: Any,
    testset: TestSet | str | Path,
    metrics: Iterable[str | Measure] | str | None = None,
    *,
    k: int = 10,
    workers: int = 4,
    retries: int = 2,
    cache: str | Path | None = None,
    progress: bool | None = None,
    chunk_to_doc: ChunkToDoc | None = None,
    name: str | None = None,
    batch_size: int = 64,
    retry_wait: float = 0.0,
    relevance: Relevance = "auto",
    relevance_level: int = 1,
    chunking: Any = None,
    rule: str = "any",
) -> RetrieverEvaluation:
    """Run ``retriever`` on every scorable query of ``testset`` and score the rankings.

    Parameters
    ----------
    retriever : anything :func:`~rankscope.retrieval.protocol.as_retriever` accepts
    testset : a :class:`~rankscope.data.testset.TestSet` or a path (JSON, JSONL, BEIR folder)
    metrics : metric names (default :func:`default_metrics` of ``k``)
    k : hits asked for and kept per query
    workers : threads for retrievers without ``search_batch``
    retries : extra attempts for a failing call; ``retry_wait`` seconds before the first retry, doubling
    cache : JSONL file to append finished queries to and resume from
    progress : show a progress bar (default: when stderr is a terminal)
    chunk_to_doc : fold chunk hits into documents: pattern ``"{doc_id}#{chunk}"``, dict, function, or
        ``"metadata:KEY"`` (the document id is ``hit.metadata[KEY]``)
    name : the run's name (default: the retriever's ``name`` or class name)
    batch_size : queries per ``search_batch`` call
    relevance : ``"qrels"``, ``"answers"`` (a chunk containing a reference answer is relevant),
        ``"spans"`` (the test set's span judgments; chosen by ``"auto"`` when a span measure is
        asked for) or ``"auto"`` (answers when the test set has no judgments but has answers)
    relevance_level : minimum grade counted as relevant by binary metrics
    chunking, rule : with span judgments: where the retrieved chunks lie (default: read from the
        hits' metadata) and how chunk qrels are derived for the ordinary metrics
        (see :func:`rankscope.evaluate`)
    """
    ts = _resolve_testset(testset)
    k = _positive_int(k, "k")
    workers = _positive_int(workers, "workers")
    retries = _positive_int(retries, "retries", minimum=0)
    batch_size = _positive_int(batch_size, "batch_size")
    if relevance not in ("auto", "qrels", "answers", "spans"):
        raise InvalidParameterError(f"relevance must be 'auto', 'qrels', 'answers' or 'spans', got {relevance!r}")
    metric_list = _check_metrics(default_metrics(k) if metrics is None else metrics, k)  # before any call
    mode = relevance
    if mode == "auto" and _wants_spans(metric_list):
        mode = "spans"
    if mode == "auto":
        mode = "answers" if len(ts.qrels) == 0 and ts.has_answers else "qrels"
    if mode == "spans" and ts.spans is None:
        raise EmptyInputError(f"test set {ts.name!r} has no span judgments (items with 'evidence'); build them "
                              "with SpanQrels.from_answers / from_squad and pass TestSet(..., spans=)")
    if mode == "spans" and chunk_to_doc is not None:
        raise InvalidParameterError("span judgments score the retrieved chunks directly; drop chunk_to_doc")
    if mode == "qrels" and len(ts.qrels) == 0:
        raise EmptyInputError(f"test set {ts.name!r} has no relevance judgments"
                              + ("; use relevance='answers'" if ts.has_answers else ""))
    if mode == "answers" and not ts.has_answers:
        raise EmptyInputError(f"test set {ts.name!r} has no reference answers to match")
    if isinstance(retry_wait, bool) or not isinstance(retry_wait, (int, float)) or retry_wait < 0:
        raise InvalidParameterError(f"retry_wait must be a number of seconds >= 0, got {retry_wait!r}")
    docs_key = None
    if isinstance(chunk_to_doc, str) and chunk_to_doc.startswith("metadata:"):
        docs_key = chunk_to_doc.split(":", 1)[1]

    r = as_retriever(retriever)
    run_name = name or str(getattr(r, "name", None) or type(r).__name__)
    judged = set(ts.spans.queries if mode == "spans" and ts.spans is not None else ts.qrels.queries)
    scorable = [q for q in ts.queries if (q.answers if mode == "answers" else q.id in judged)]

    store = RunCache(cache, k=k, retriever=run_name, testset=ts.name) if cache is not None else None
    done = store.load() if store is not None else {}
    wanted = {q.id for q in scorable}
    done = {qid: e for qid, e in done.items() if qid in wanted}
    todo = [q for q in scorable if q.id not in done]
    show = sys.stderr.isatty() if progress is None else bool(progress)
    try:
        with _progress_bar(len(todo), show, f"retrieving ({run_name})") as advance:
            keep_text = mode == "answers" or (chunk_to_doc is not None and ts.has_answers)
            collector = _Collector(store, keep_text=keep_text, docs_key=docs_key, advance=advance,
                                   keep_places=mode == "spans" and chunking is None)
            _execute(r, todo, collector, k=k, workers=workers, retries=retries, retry_wait=retry_wait,
                     batch_size=batch_size)
    finally:
        if store is not None:
            store.close()
    if todo and len(collector.errors) == len(todo):
        first = next(iter(collector.errors.items()))
        warnings.warn(f"every query failed ({len(todo)}); first: {first[0]}: {first[1]}", RuntimeWarning,
                      stacklevel=2)
    finished = {**done, **collector.done}
    latencies = {q.id: (finished[q.id].latency) for q in scorable if q.id in finished}
    run = _build_run(scorable, finished, run_name)
    if mode == "spans":
        from rankscope.engine.evaluator import Evaluator

        where = chunking if chunking is not None else _chunking_of_hits(finished, ts)
        result = Evaluator(ts.spans, metric_list, relevance_level=relevance_level, chunking=where,
                           rule=rule).evaluate(run)
        return RetrieverEvaluation(result=result, run=run, latencies=latencies, errors=collector.errors,
                                   relevance="spans", k=k, from_cache=len(done), retries=collector.retried,
                                   chunk_relevance="spans", unknown_ids=UnknownIds(against="spans"))
    return _score(ts, scorable, finished, run, metric_list, k=k, mode=mode, chunk_to_doc=chunk_to_doc,
                  docs_key=docs_key, relevance_level=relevance_level, latencies=latencies,
                  errors=collector.errors, retried=collector.retried, from_cache=len(done))


def _score(ts: TestSet, scorable: list[Query], finished: dict[str, CachedQuery], run: Run, metrics: Any, *,
           k: int, mode: str, chunk_to_doc: ChunkToDoc | None, docs_key: str | None, relevance_level: int,
           latencies: dict[str, float], errors: dict[str, str], retried: dict[str, int],
           from_cache: int) -> RetrieverEvaluation:
    from rankscope.engine.evaluator import Evaluator

    metric_list = metrics
    mapping: ChunkToDoc | None = chunk_to_doc
    if docs_key is not None:
        mapping = {cid: doc for e in finished.values() for cid, doc in zip(e.ids, e.docs or []) if doc is not None}

    doc_run = fold_chunks(run, mapping, name=run.name) if mapping is not None else None
    answers = {q.id: q.answers for q in scorable if q.answers}
    retrieved = {qid: list(zip(e.ids, e.texts or [None] * len(e.ids))) for qid, e in finished.items()}
    chunk_relevance: str | None = mode
    if mode == "answers":
        from rankscope.retrieval.answers import answer_qrels

        chunk_qrels = _cover(answer_qrels(answers, retrieved, ts.corpus if mapping is None else None), answers)
        doc_qrels = chunk_qrels
        if mapping is not None:
            doc_qrels = _cover(answer_qrels(answers, _map_retrieved(retrieved, mapping), ts.corpus), answers)
    else:
        chunk_qrels = doc_qrels = ts.qrels
        if mapping is not None and not _any_judged(run, ts.qrels):
            # document judgments, chunk hits: chunk level only from answers, if the queries have any
            if answers:
                from rankscope.retrieval.answers import answer_qrels

                chunk_qrels = _cover(answer_qrels(answers, retrieved), answers)
                chunk_relevance = "answers"
            else:
                chunk_relevance = None

    result = Evaluator(chunk_qrels, metric_list, relevance_level=relevance_level).evaluate(run)
    doc_result = None
    if doc_run is not None:
        doc_result = Evaluator(doc_qrels, metric_list, relevance_level=relevance_level).evaluate(doc_run)

    corpus_ids = list(ts.corpus) if ts.corpus is not None else None
    if mode == "answers" and corpus_ids is None:
        unknown = UnknownIds(against="answers")
    else:
        unknown = unknown_ids(doc_run if doc_run is not None else run, ts.qrels, corpus_ids)
        if unknown.suspicious:
            warnings.warn(unknown.message(), UnknownIdsWarning, stacklevel=3)
    return RetrieverEvaluation(
        result=result, run=run, latencies=latencies, errors=errors, doc_result=doc_result, unknown_ids=unknown,
        doc_run=doc_run, relevance=mode, k=k, from_cache=from_cache, retries=retried,
        chunk_relevance=chunk_relevance if mapping is not None else mode,
    )


def _wants_spans(metrics: Any) -> bool:
    """Whether a span measure is among ``metrics``."""
    from rankscope.measures.parse import parse_metrics

    return any(m.spec.family == "span" for _, m in parse_metrics(metrics))


def _chunking_of_hits(finished: dict[str, CachedQuery], ts: TestSet) -> Any:
    """Where the retrieved chunks lie, from the places the hits carried (ids without a place are left out:
    the span measures then name them)."""
    from rankscope.data.chunking import Chunking

    ids = [cid for e in finished.values() for cid in e.ids]
    places = [p for e in finished.values() for p in (e.places or [None] * len(e.ids))]
    return Chunking.from_places(ids, places, corpus=ts.corpus, name="retrieved hits")


def _map_retrieved(retrieved: dict[str, list[tuple[str, str | None]]],
                   mapping: ChunkToDoc) -> dict[str, list[tuple[str, str | None]]]:
    import pyarrow as pa

    ids = sorted({cid for hits in retrieved.values() for cid, _ in hits})
    docs, _ = map_chunk_ids(pa.array(ids, type=pa.string()), mapping)
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
