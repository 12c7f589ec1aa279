"""Live retriever evaluations: the runner of :func:`rankscope.evaluate_retriever`, stored per query.

The service does not have its own retry or concurrency loop: it hands an
:class:`~rankscope.retrieval.http.HttpRetriever` to the same runner a Python user
calls (``workers`` = the job's ``concurrency``, ``retries`` with backoff from 0.1 s,
the same hit checks); :class:`LiveResultsCache` receives each outcome (``on_result``) and
keeps every finished query in ``live_results`` (one row per ``(job, query)``,
written in small batches); on resume the runner skips the queries stored without
error, so a restarted job asks only for the others.  A failed query's error is the
status line or the transport error, never the body of the answer.

Each request has a total deadline (``--retriever-timeout``), each job a time budget
(``budget_seconds``: queries not asked by then are stored as failed, without a
call); the worker's lease is renewed by a heartbeat while requests are in flight.
At the end the answers become a stored run of the test set (named after the job) and
are scored like any other run.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

from rankscope.data import Run
from rankscope.errors import RankscopeError
from rankscope.i18n import _
from rankscope.retrieval.cache import QueryOutcome
from rankscope.service import store
from rankscope.service.db import Database, Job
from rankscope.service.settings import Settings

__all__ = ["LiveResultsCache", "JobStopped", "fetch_all", "finish_live_job"]

FLUSH_ROWS = 50
FLUSH_SECONDS = 0.25
NO_TEXT = "not asked: the test set has no text for this query"


class JobStopped(Exception):
    """The job's lease was lost or the server is stopping: the runner stops taking new queries."""


class LiveResultsCache:
    """Stores the runner's outcomes (``on_result``) in the ``live_results`` rows of one job; ``load`` resumes."""

    def __init__(self, db: Database, job_id: str, keep_going: Callable[[], bool],
                 on_answer: Callable[[], None] | None = None) -> None:
        self.db = db
        self.on_answer = on_answer
        self.job_id = job_id
        self.keep_going = keep_going
        self._rows: list[dict[str, Any]] = []
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def load(self) -> list[QueryOutcome]:
        """The queries answered without error (the runner asks the others)."""
        with self.db.read() as s:
            rows = store.answered_queries(s, self.job_id)
        return [QueryOutcome(q, [str(d) for d, __ in hits or []], [float(v) for __, v in hits or []],
                             (ms or 0.0) / 1000) for q, hits, ms in rows]

    def append(self, entry: QueryOutcome) -> None:
        if entry.error is not None and not self.keep_going():
            raise JobStopped  # a request abandoned as the job stopped: asked again when it resumes, not a failure
        row = {"job_id": self.job_id, "query_id": entry.query_id, "error": entry.error,
               "hits": None if entry.error else [[d, s] for d, s in zip(entry.ids, entry.scores)],
               "attempts": entry.attempts, "latency_ms": round(entry.latency * 1000, 3)}
        with self._lock:
            self._rows.append(row)
            due = len(self._rows) >= FLUSH_ROWS or time.monotonic() - self._last > FLUSH_SECONDS
        if self.on_answer is not None:
            self.on_answer()
        if due:
            self.flush()
        if not self.keep_going():
            raise JobStopped

    def flush(self) -> None:
        with self._lock:
            rows, self._rows = self._rows, []
            self._last = time.monotonic()
        store.upsert_live_results(self.db, rows)


def _deadline(job: Job, budget: float) -> float:
    """The job's budget as a :func:`time.monotonic` deadline (the budget runs from the job's first start)."""
    started = job.started_at.timestamp() if job.started_at is not None else time.time()
    return time.monotonic() + budget - max(0.0, time.time() - started)


def fetch_all(db: Database, settings: Settings, job: Job, keep_going: Callable[[], bool],
              on_answer: Callable[[], None] | None = None) -> bool:
    """Ask the retriever for every judged query not answered yet; False when the job was stopped midway
    (``on_answer`` is told of every query stored)."""
    from rankscope.data.testset import Query, TestSet
    from rankscope.retrieval.runner import evaluate_retriever
    from rankscope.service.retriever import ServiceRetriever

    p = job.params
    with db.read() as s:
        qrels = store.load_qrels(store.get_testset(s, job.test_set_id))
        queries = store.testset_queries(s, job.test_set_id)
    judged = set(qrels.queries)
    if p.get("query_ids"):  # a monitor's canary asks a fixed sample of the test set
        from rankscope.service.jobs.scoring import only_queries

        qrels = only_queries(qrels, set(p["query_ids"]))
        judged = set(qrels.queries)
    # judged queries without text cannot be asked: stored as failed once
    store.add_live_errors(db, job.id, {q: NO_TEXT for q, t in queries if q in judged and not t})
    asked = [Query(q, t) for q, t in queries if q in judged and t]
    if not asked:
        return True
    budget = float(p.get("budget_seconds") or settings.live_budget_seconds)
    http = ServiceRetriever(p["retriever_url"], timeout=settings.retriever_timeout,
                            max_connections=int(p.get("concurrency", 8)), deadline=_deadline(job, budget),
                            guard=settings.egress.check_resolved, name=job.name or "live",
                            max_answer_bytes=settings.max_answer_bytes)
    cache = LiveResultsCache(db, job.id, keep_going, on_answer)
    done = threading.Event()

    def watch() -> None:  # a job that stops (its turn is over, the server stops) abandons its requests in flight
        while not done.wait(0.2):
            if not keep_going():
                http.abort()
                return

    watcher = threading.Thread(target=watch, name=f"rankscope-live-watch-{job.id[:8]}", daemon=True)
    watcher.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # failures and unknown ids are stored per query and shown
            evaluate_retriever(http, TestSet(asked, qrels, name=f"test set {job.test_set_id}"),
                               list(p["metrics"]), k=int(p.get("k", 100)), workers=int(p.get("concurrency", 8)),
                               retries=int(p.get("retries", 2)), retry_wait=0.1, on_result=cache.append,
                               resume=cache.load(), progress=False,
                               name=job.name or "live", relevance="qrels",
                               relevance_level=int(p.get("relevance_level", 1)))
    except JobStopped:
        return False
    finally:
        done.set()
        watcher.join(5)
        cache.flush()
        http.close()
    return keep_going()


def finish_live_job(db: Database, job: Job) -> None:
    """Turn the stored answers into a stored run attached to the job (once)."""
    with db.write() as s:
        if store.job_has_runs(s, job.id):
            return
        rows = store.live_run_rows(s, job.id)
        if not rows:
            first = store.first_live_error(s, job.id)
            raise RankscopeError(_("the retriever answered no query; first error: {first}",
                                   first=first or _("none")))
        qs: list[str] = []
        ds: list[str] = []
        vs: list[float] = []
        for qid, hits in rows:
            for doc, score in hits or []:
                qs.append(qid)
                ds.append(doc)
                vs.append(score)
        run = Run.from_arrays(qs, ds, vs, job.name or f"live-{job.id[:8]}")
        rec = store.create_run(s, job.test_set_id, run, "live", source="live")
        store.attach_run(s, job.id, rec.id)
