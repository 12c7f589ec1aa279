"""Calling a retriever for every query: batches, threads or one event loop; retries; failures.

* A retriever with ``search_batch`` gets ``batch_size`` queries a call (CPU-bound
  retrievers); a batch's time is shared by its queries (``batch`` latency).  A
  batch that fails is re-run query by query so one bad query does not sink it.
* An ``async`` retriever runs on **one** event loop (a process-wide loop in a
  daemon thread, so that the retriever's ``asyncio.Semaphore``, ``httpx.AsyncClient``
  and other loop-bound objects keep working across evaluations), at most
  ``workers`` queries at a time.
* Any other retriever is called from ``workers`` threads (``1``: one by one).

A call that raises an ``Exception`` is retried ``retries`` times (waiting
``retry_wait * 2**attempt`` seconds); a query that still fails is a
:class:`~rankscope.retrieval.evaluation.Failure` (type, message, traceback) and
scores as an empty ranking.  Programming errors — ``NameError``, ``TypeError``,
``AttributeError`` raised by the retriever, and
:class:`~rankscope.retrieval.protocol.RetrieverContractError` (``None`` or a
non-ranking returned) — are raised at once, not retried: every query would
fail the same way.  With ``on_bad_answer="count"`` a ``None`` or non-ranking
answer is instead retried and counted like a raised error (an HTTP wrapper that
returns ``None`` on a timeout).  ``KeyboardInterrupt`` is never caught.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Coroutine, Iterator, Sequence
from typing import Any

from rankscope.data.testset import Query
from rankscope.i18n import _
from rankscope.retrieval.cache import QueryOutcome, RunCache
from rankscope.retrieval.evaluation import Failure
from rankscope.retrieval.hits import Hit, RetrieverContractError, dedupe, normalise, ranking_scores

__all__ = ["PROGRAMMING_ERRORS", "Collector", "execute", "run_on_shared_loop"]

#: raised by a retriever, these mean a bug: raised at once instead of retried
PROGRAMMING_ERRORS: tuple[type[BaseException], ...] = (NameError, TypeError, AttributeError, RetrieverContractError)


def fatal_errors(on_bad_answer: str) -> tuple[type[BaseException], ...]:
    """The errors raised at once: :data:`PROGRAMMING_ERRORS`, without a bad answer when it is counted."""
    return PROGRAMMING_ERRORS if on_bad_answer == "fail" else (NameError, TypeError, AttributeError)


class Collector:
    """Turns each query's hits (or failure) into a :class:`QueryOutcome`; stores, reports, counts."""

    def __init__(self, *, k: int, keep_text: bool, docs_key: str | None, cache: RunCache | None,
                 on_result: Callable[[QueryOutcome], None] | None, advance: Callable[[], None],
                 keep_places: bool = False) -> None:
        self.k, self.keep_text, self.docs_key, self.keep_places = k, keep_text, docs_key, keep_places
        self.cache, self.on_result, self.advance = cache, on_result, advance
        self.done: dict[str, QueryOutcome] = {}
        self.failures: dict[str, Failure] = {}
        self.retried: dict[str, int] = {}
        self._lock = threading.Lock()

    def success(self, q: Query, raw: list[Hit], latency: float, attempts: int, batch: bool) -> None:
        hits, dropped = dedupe(raw, self.k)
        scores = ranking_scores(hits)
        given = [h.score for h in hits]
        replaced = scores != given and any(s == s for s in given)  # real scores given, not usable as ranks
        docs = None
        if self.docs_key is not None:
            docs = [None if h.metadata is None or h.metadata.get(self.docs_key) is None
                    else str(h.metadata[self.docs_key]) for h in hits]
        places = None
        if self.keep_places:  # where each chunk lies (span measures), from the hit's metadata
            from rankscope.data.chunking import hit_location

            places = [None if (loc := hit_location(h)) is None else list(loc) for h in hits]
        entry = QueryOutcome(q.id, [h.id for h in hits], scores, latency, None,
                             [h.text for h in hits] if self.keep_text else None, docs, places, duplicates=dropped,
                             batch=batch, attempts=attempts, scores_replaced=replaced,
                             ties_reordered=not replaced and _ties_reordered(hits, scores))
        self._record(entry)

    def failure(self, q: Query, exc: BaseException, tb: str, latency: float, attempts: int) -> None:
        entry = QueryOutcome(q.id, [], [], latency, f"{type(exc).__name__}: {exc}", attempts=attempts,
                             error_type=type(exc).__name__, traceback=tb)
        self._record(entry, Failure(q.id, q.text, type(exc).__name__, str(exc), tb, attempts))

    def _record(self, entry: QueryOutcome, failure: Failure | None = None) -> None:
        with self._lock:
            if entry.attempts > 1:
                self.retried[entry.query_id] = entry.attempts - 1
            if failure is None:
                self.done[entry.query_id] = entry
            else:
                self.failures[entry.query_id] = failure
            if self.cache is not None:
                self.cache.append(entry)
            if self.on_result is not None:
                self.on_result(entry)
            self.advance()


def _ties_reordered(hits: Sequence[Hit], scores: Sequence[float]) -> bool:
    """True when a group of equal scores is listed in another order than doc id descending."""
    if len(set(scores)) == len(scores):  # no tie
        return False
    for __, group in itertools.groupby(zip(scores, (h.id for h in hits)), key=lambda p: p[0]):
        ids = [i for __, i in group]
        if len(ids) > 1 and ids != sorted(ids, reverse=True):
            return True
    return False


def _fatal(exc: BaseException, name: str, q: Query) -> BaseException:
    """The exception to raise for a programming error: a contract error names retriever and query."""
    if isinstance(exc, RetrieverContractError):
        return RetrieverContractError(_("{error} (query {query_id!r}: {query!r}; retriever {name!r})", error=exc,
                                        query_id=q.id, query=q.text[:80], name=name))
    if hasattr(exc, "add_note"):
        exc.add_note(f"rankscope: raised by retriever {name!r} on query {q.id!r}; NameError, TypeError and "
                     "AttributeError are bugs in the retriever and are not retried")
    return exc


def retryable(exc: BaseException) -> bool:
    """False when the exception says a retry would give the same answer (``exc.retryable = False``)."""
    return getattr(exc, "retryable", True) is not False


class _Attempts:
    """The retry loop shared by the sync and async paths."""

    def __init__(self, retries: int, wait: float) -> None:
        self.retries, self.wait = retries, wait

    def pauses(self) -> Iterator[tuple[int, float]]:
        for attempt in range(self.retries + 1):
            yield attempt, (self.wait * 2 ** (attempt - 1) if attempt and self.wait > 0 else 0.0)


def _one(r: Any, q: Query, k: int, attempts: _Attempts, collector: Collector, name: str,
         fatal_types: tuple[type[BaseException], ...] = PROGRAMMING_ERRORS) -> None:
    fetch = getattr(r, "search_raw", None) or r.search
    exc: BaseException | None = None
    tb, latency = "", 0.0
    for attempt, pause in attempts.pauses():
        if pause:
            time.sleep(pause)
        t0 = time.perf_counter()
        try:
            hits = fetch(q.text, k)
            if getattr(r, "search_raw", None) is None:
                hits = normalise(hits, name)
        except fatal_types as err:
            fatal = _fatal(err, name, q)
            if fatal is err:
                raise
            raise fatal from None
        except Exception as err:  # the retriever's own failure: record, retry
            latency = time.perf_counter() - t0
            exc, tb = err, traceback.format_exc()
            if not retryable(err):
                collector.failure(q, err, tb, latency, attempt + 1)
                return
            continue
        collector.success(q, hits, time.perf_counter() - t0, attempt + 1, batch=False)
        return
    assert exc is not None
    collector.failure(q, exc, tb, latency, attempts.retries + 1)


def _batches(items: Sequence[Query], size: int) -> Iterator[Sequence[Query]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def execute(r: Any, todo: list[Query], collector: Collector, *, k: int, workers: int, retries: int,
            retry_wait: float, batch_size: int, name: str, on_bad_answer: str = "fail") -> None:
    """Run every query of ``todo`` through ``r`` (see the module documentation)."""
    attempts = _Attempts(retries, retry_wait)
    fatal_types = fatal_errors(on_bad_answer)
    if getattr(r, "is_async", False):
        run_on_shared_loop(_run_async(r, todo, collector, k=k, workers=workers, attempts=attempts, name=name,
                                      fatal_types=fatal_types))
        return
    if getattr(r, "batched", False) and batch_size > 1:
        fetch = getattr(r, "search_batch_raw", None) or r.search_batch
        for batch in _batches(todo, batch_size):
            t0 = time.perf_counter()
            try:
                results = fetch([q.text for q in batch], k)
                if getattr(r, "search_batch_raw", None) is None:
                    results = [normalise(hits, name) for hits in results]
            except fatal_types as err:
                fatal = _fatal(err, name, batch[0])
                if fatal is err:
                    raise
                raise fatal from None
            except Exception:
                for q in batch:  # isolate the failing query
                    _one(r, q, k, attempts, collector, name, fatal_types)
                continue
            share = (time.perf_counter() - t0) / len(batch)
            for q, hits in zip(batch, results):
                collector.success(q, hits, share, 1, batch=len(batch) > 1)
        return
    if workers == 1:
        for q in todo:
            _one(r, q, k, attempts, collector, name, fatal_types)
        return
    _on_threads(todo, lambda q: _one(r, q, k, attempts, collector, name, fatal_types), workers)


WAIT_FOR_THREADS = 5e-4
"""Seconds: while a retriever waits less than this per query (moving average of its time not spent running
Python on the calling thread), :func:`_on_threads` calls it from the calling thread."""
_WAITS_SEEN = 7  # the median of this many last waits decides (one pre-emption by another process is no wait)
_LONG_WAIT = 2e-2  # one wait this long sends the rest to the threads at once (a network call)


def _on_threads(todo: list[Query], call: Callable[[Query], None], workers: int) -> None:
    """``call(q)`` for every query, on ``workers`` threads that take the next query when they are free.

    One thread per worker for the whole list, not a future per query: a fast retriever (a cached or
    in-memory index) answers in microseconds, and a future, its lock and its wake-up cost more.  An
    exception (a programming error; the retriever's own failures are recorded by ``call``) stops the
    queries not started yet and is raised here once the started ones finish; so does an interruption.

    Threads pay only when a retriever waits (a network, a disk): one that computes its answer on the
    calling thread (an in-memory index, a cache) would make them take turns holding the interpreter
    lock.  Queries are called from this thread while the median of their last few waits (wall time
    less the thread's CPU time) stays under :data:`WAIT_FOR_THREADS`; the rest go to the threads from
    then on (at once after one wait of 20 ms: a retriever that waits on a network does so from its
    first query).
    """
    start, wall, cpu = 0, time.perf_counter, time.thread_time
    waits: deque[float] = deque(maxlen=_WAITS_SEEN)
    for q in todo:
        t0, c0 = wall(), cpu()
        call(q)
        start += 1
        waited = (wall() - t0) - (cpu() - c0)
        waits.append(waited)
        if waited >= _LONG_WAIT or (len(waits) >= 3 and sorted(waits)[len(waits) // 2] >= WAIT_FOR_THREADS):
            break
    if start == len(todo):
        return
    queue = iter(todo[start:])
    lock = threading.Lock()
    stop = threading.Event()
    raised: list[BaseException] = []

    def work() -> None:
        while not stop.is_set():
            with lock:
                q = next(queue, None)
            if q is None:
                return
            try:
                call(q)
            except BaseException as exc:
                stop.set()
                raised.append(exc)
                return

    threads = [threading.Thread(target=work, name=f"rankscope-retriever-{i}", daemon=True)
               for i in range(min(workers, len(todo) - start))]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except BaseException:  # interrupted: the started queries finish, no other starts
        stop.set()
        for t in threads:
            t.join()
        raise
    if raised:
        raise raised[0]


async def _run_async(r: Any, todo: list[Query], collector: Collector, *, k: int, workers: int,
                     attempts: _Attempts, name: str,
                     fatal_types: tuple[type[BaseException], ...] = PROGRAMMING_ERRORS) -> None:
    gate = asyncio.Semaphore(workers)
    stopped: list[BaseException] = []  # a programming error stops the queries not started yet

    async def one(q: Query) -> None:
        async with gate:
            if stopped:
                return
            exc: BaseException | None = None
            tb, latency = "", 0.0
            for attempt, pause in attempts.pauses():
                if pause:
                    await asyncio.sleep(pause)
                t0 = time.perf_counter()
                try:
                    if hasattr(r, "asearch_raw"):
                        hits = await r.asearch_raw(q.text, k)
                    else:
                        out = r.search(q.text, k)
                        hits = normalise(await out if inspect.isawaitable(out) else out, name)
                except fatal_types as err:
                    stopped.append(err)
                    fatal = _fatal(err, name, q)
                    if fatal is err:
                        raise
                    raise fatal from None
                except Exception as err:
                    latency = time.perf_counter() - t0
                    exc, tb = err, traceback.format_exc()
                    if not retryable(err):
                        collector.failure(q, err, tb, latency, attempt + 1)
                        return
                    continue
                collector.success(q, hits, time.perf_counter() - t0, attempt + 1, batch=False)
                return
            assert exc is not None
            collector.failure(q, exc, tb, latency, attempts.retries + 1)

    tasks = [asyncio.ensure_future(one(q)) for q in todo]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


_LOOP: asyncio.AbstractEventLoop | None = None
_LOOP_LOCK = threading.Lock()


def _shared_loop() -> asyncio.AbstractEventLoop:
    global _LOOP
    with _LOOP_LOCK:
        if _LOOP is None or _LOOP.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="rankscope-async", daemon=True).start()
            _LOOP = loop
        return _LOOP


def run_on_shared_loop(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` on rankscope's process-wide event loop and wait for it (works inside a running loop)."""
    future = asyncio.run_coroutine_threadsafe(coro, _shared_loop())
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise
