"""Live retriever evaluations: ask a retriever over HTTP for every query, store each answer.

The service POSTs ``{"query": text, "k": k}`` to the retriever URL and expects
``[{"id": doc_id, "score": number}, ...]``.  At most ``concurrency`` requests are
in flight; a connection error, timeout, 429 or 5xx is retried ``retries`` times
with exponential backoff (0.1 s, 0.2 s, 0.4 s...); after that, or on any other
4xx or a malformed answer, the query's error is stored and the job goes on.
Answers are stored in small batches as they arrive; a restarted job skips the
queries already stored.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from rankscope.data import Run
from rankscope.errors import RankscopeError
from rankscope.service.db import Database, Job, JobRun, LiveResult, Query
from rankscope.service.store import create_run, insert_rows

__all__ = ["fetch_all", "finish_live_job", "parse_hits"]

RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}
FLUSH_ROWS = 50
FLUSH_SECONDS = 0.25


class BadAnswer(Exception):
    """The retriever answered, but not with a list of {id, score}."""


def parse_hits(payload: Any, k: int) -> list[list[Any]]:
    """Validate a retriever answer; return ``[[doc_id, score], ...]`` (at most ``k``).

    >>> parse_hits([{"id": "d1", "score": 2}, {"id": 7, "score": 0.5}], 10)
    [['d1', 2.0], ['7', 0.5]]
    """
    if not isinstance(payload, list):
        raise BadAnswer(f"expected a JSON list of {{id, score}}, got {type(payload).__name__}")
    hits: list[list[Any]] = []
    seen: set[str] = set()
    for i, h in enumerate(payload[:k]):
        if not isinstance(h, dict) or "id" not in h or "score" not in h:
            raise BadAnswer(f"item {i}: expected an object with 'id' and 'score'")
        score = h["score"]
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score):
            raise BadAnswer(f"item {i}: score must be a finite number, got {score!r}")
        doc = str(h["id"])
        if doc in seen:
            continue  # keep the first (best-placed) occurrence
        seen.add(doc)
        hits.append([doc, float(score)])
    return hits


async def _ask(client: Any, url: str, text: str, k: int, retries: int) -> tuple[list[list[Any]] | None, str | None,
                                                                            int, float]:
    import httpx

    t0 = time.perf_counter()
    error = "no attempt"
    attempt = 0
    for attempt in range(1, retries + 2):
        try:
            resp = await client.post(url, json={"query": text, "k": k})
        except httpx.TransportError as exc:  # connection refused/reset, timeouts
            error = f"{type(exc).__name__}: {exc}"[:500]
        else:
            if resp.status_code == 200:
                try:
                    hits = parse_hits(resp.json(), k)
                except (BadAnswer, ValueError) as exc:
                    return None, f"bad answer: {exc}"[:500], attempt, (time.perf_counter() - t0) * 1000
                return hits, None, attempt, (time.perf_counter() - t0) * 1000
            error = f"HTTP {resp.status_code}: {resp.text[:200]}"
            if resp.status_code not in RETRY_STATUS:
                break
        if attempt <= retries:
            await asyncio.sleep(min(0.1 * 2 ** (attempt - 1), 5.0))
    return None, error, attempt, (time.perf_counter() - t0) * 1000


def pending_queries(db: Database, job: Job) -> list[tuple[str, str | None]]:
    """Queries of the job's test set with no stored answer yet, in test set order."""
    with db.read() as s:
        done = set(s.scalars(select(LiveResult.query_id).where(LiveResult.job_id == job.id)))
        rows = s.execute(select(Query.query_id, Query.text).where(Query.test_set_id == job.test_set_id)
                         .order_by(Query.position)).all()
    return [(q, t) for q, t in rows if q not in done]


async def fetch_all(db: Database, job: Job, renew: Callable[[], bool], timeout: float) -> bool:
    """Ask the retriever for every pending query; False when the job was lost midway."""
    import httpx

    p = job.params
    url, k = p["retriever_url"], int(p.get("k", 100))
    concurrency, retries = int(p.get("concurrency", 8)), int(p.get("retries", 2))
    queue: asyncio.Queue[tuple[str, str | None]] = asyncio.Queue()
    for item in pending_queries(db, job):
        queue.put_nowait(item)
    buffer: list[dict[str, Any]] = []
    state = {"last": time.monotonic(), "lost": False}

    def flush() -> None:
        if buffer:
            rows = list(buffer)
            buffer.clear()
            with db.write() as s:
                insert_rows(db, s, LiveResult, rows)
        state["last"] = time.monotonic()
        if not renew():
            state["lost"] = True

    async def worker(client: Any) -> None:
        while not state["lost"]:
            try:
                qid, text = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            hits: list[list[Any]] | None
            err: str | None
            if not text:
                hits, err, attempts, ms = None, "the test set has no text for this query", 0, 0.0
            else:
                hits, err, attempts, ms = await _ask(client, url, text, k, retries)
            buffer.append({"job_id": job.id, "query_id": qid, "hits": hits, "error": err,
                           "attempts": attempts, "latency_ms": ms})
            if len(buffer) >= FLUSH_ROWS or time.monotonic() - state["last"] > FLUSH_SECONDS:
                flush()

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=timeout, limits=limits, trust_env=False) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    if not state["lost"]:
        flush()
    return not state["lost"]


def finish_live_job(db: Database, job: Job) -> None:
    """Turn the stored answers into a stored run attached to the job (once)."""
    with db.write() as s:
        if s.scalars(select(JobRun).where(JobRun.job_id == job.id)).first() is not None:
            return
        rows = s.execute(select(LiveResult.query_id, LiveResult.hits).where(
            LiveResult.job_id == job.id, LiveResult.error.is_(None))).all()
        if not rows:
            first = s.scalars(select(LiveResult.error).where(LiveResult.job_id == job.id).limit(1)).first()
            raise RankscopeError(f"the retriever answered no query; first error: {first or 'none'}")
        qs: list[str] = []
        ds: list[str] = []
        vs: list[float] = []
        for qid, hits in rows:
            for doc, score in hits or []:
                qs.append(qid)
                ds.append(doc)
                vs.append(score)
        run = Run.from_arrays(qs, ds, vs, job.name or f"live-{job.id[:8]}")
        rec = create_run(s, job.test_set_id, run, "live", source="live")
        s.add(JobRun(job_id=job.id, run_id=rec.id, position=0))
