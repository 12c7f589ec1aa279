"""Evaluations (jobs): creation, the claim/lease queue, progress, per-query scores and live answers."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import ColumnElement, and_, delete, func, or_, select, update
from sqlalchemy.orm import Session

from rankscope.errors import InvalidParameterError, RankscopeError
from rankscope.i18n import _
from rankscope.service.db import Database, Job, JobRun, LiveResult, Query, QueryScore, Report, RunRecord, TestSet
from rankscope.service.db.models import utcnow
from rankscope.service.store.base import fetch, insert_rows
from rankscope.service.store.catalog import get_run, get_testset, load_qrels, load_run

__all__ = [
    "validate_metrics", "create_job", "get_job", "list_jobs", "job_progress", "job_runs", "per_query",
    "job_scores", "query_scores", "delete_job", "claim_job", "jobs_waiting", "renew_lease", "finish_job",
    "release_lease",
    "set_job_total",
    "save_scores", "save_means", "answered_queries", "live_results", "live_summary", "upsert_live_results",
    "add_live_errors", "live_run_rows", "job_has_runs", "attach_run", "first_live_error",
]


def validate_metrics(metrics: Iterable[str]) -> list[str]:
    """Check metric names (raising :class:`~rankscope.errors.UnknownMetricError` with close matches)."""
    from rankscope.measures import parse_metrics

    names = [str(m) for m in metrics]
    if not names:
        raise InvalidParameterError(_("metrics: give at least one metric"))
    parse_metrics(names)
    return names


def create_job(db: Database, kind: str, test_set_id: int, params: dict[str, Any], name: str,
               run_ids: list[int] | None = None) -> str:
    """Queue an evaluation; ``total`` counts run × query pairs (stored runs) or the judged queries (live)."""
    job_id = str(uuid.uuid4())
    with db.write() as s:
        ts = get_testset(s, test_set_id, "test_set_id")
        for rid in run_ids or []:
            rec = get_run(s, rid, "run_ids")
            if rec.test_set_id != test_set_id:
                raise InvalidParameterError(_("run_ids: run {run} belongs to test set {belongs}, not to test set "
                                              "{test_set}", run=rid, belongs=rec.test_set_id, test_set=test_set_id))
            if kind == "evaluate" and rec.n_judged == 0:
                _no_common_query(ts, rec)
        runs = list(dict.fromkeys(run_ids or []))
        if kind == "evaluate":
            total = len(runs) * ts.n_queries
        else:  # a live job asks for the judged queries of the test set
            judged = set(load_qrels(ts).queries)
            total = sum(1 for q in s.scalars(select(Query.query_id).where(Query.test_set_id == test_set_id))
                        if q in judged)
        s.add(Job(id=job_id, kind=kind, name=name, test_set_id=test_set_id, params=params, total=total))
        s.flush()
        for i, rid in enumerate(runs):
            s.add(JobRun(job_id=job_id, run_id=rid, position=i))
    return job_id


def _no_common_query(ts: TestSet, rec: RunRecord) -> None:
    """Raise the engine's error (both sides' ids and a hint) for a run that shares no query with the test set."""
    from rankscope.engine import Evaluator

    try:
        Evaluator(load_qrels(ts), ["P@1"]).evaluate(load_run(rec))
    except RankscopeError as exc:
        raise InvalidParameterError(_("run_ids: run {run}: {reason}", run=rec.id, reason=exc)) from None


def get_job(s: Session, job_id: str) -> Job:
    return fetch(s, Job, job_id, "evaluation", "path")


def list_jobs(s: Session, test_set_id: int | None = None, limit: int = 100) -> list[Job]:
    """Evaluations, newest first."""
    q = select(Job).order_by(Job.created_at.desc(), Job.id).limit(limit)
    if test_set_id is not None:
        q = q.where(Job.test_set_id == test_set_id)
    return list(s.scalars(q))


def job_progress(s: Session, job: Job) -> dict[str, int]:
    """``total`` / ``finished`` / ``failed``, counted from the stored per-query rows.

    For stored runs the counts are run × query pairs (``runs`` says how many runs); for a
    live job they are queries (answered / failed).
    """
    if job.kind == "live":
        rows = s.execute(
            select(LiveResult.error.is_(None), func.count()).where(LiveResult.job_id == job.id)
            .group_by(LiveResult.error.is_(None))
        ).all()
        ok = sum(n for good, n in rows if good)
        bad = sum(n for good, n in rows if not good)
        return {"total": job.total, "finished": ok, "failed": bad}
    n = s.execute(select(func.count()).select_from(QueryScore).where(QueryScore.job_id == job.id)).scalar_one()
    return {"total": job.total, "finished": int(n), "failed": 0}


def job_runs(s: Session, job_id: str) -> list[tuple[JobRun, RunRecord]]:
    return [(jr, rec) for jr, rec in s.execute(
        select(JobRun, RunRecord).join(RunRecord, RunRecord.id == JobRun.run_id)
        .where(JobRun.job_id == job_id).order_by(JobRun.position)
    ).all()]


def job_has_runs(s: Session, job_id: str) -> bool:
    return s.scalars(select(JobRun.run_id).where(JobRun.job_id == job_id).limit(1)).first() is not None


def attach_run(s: Session, job_id: str, run_id: int, position: int = 0) -> None:
    s.add(JobRun(job_id=job_id, run_id=run_id, position=position))


def per_query(s: Session, job_id: str, run_id: int | None = None, offset: int = 0,
              limit: int | None = None) -> list[QueryScore]:
    q = select(QueryScore).where(QueryScore.job_id == job_id)
    if run_id is not None:
        q = q.where(QueryScore.run_id == run_id)
    q = q.order_by(QueryScore.run_id, QueryScore.query_id).offset(offset)
    if limit is not None:
        q = q.limit(limit)
    return list(s.scalars(q))


def job_scores(s: Session, job_id: str) -> list[tuple[int, str, dict[str, Any], int | None]]:
    """Every stored per-query row of a job: ``(run_id, query_id, scores, first_rank)``, by run then query."""
    return [(r, q, sc, fr) for r, q, sc, fr in s.execute(
        select(QueryScore.run_id, QueryScore.query_id, QueryScore.scores, QueryScore.first_rank)
        .where(QueryScore.job_id == job_id).order_by(QueryScore.run_id, QueryScore.query_id)).all()]


def query_scores(s: Session, job_id: str, query_id: str) -> dict[int, dict[str, Any]]:
    """Every run's metric values of one query: ``{run_id: scores}``."""
    return {r.run_id: r.scores for r in s.scalars(
        select(QueryScore).where(QueryScore.job_id == job_id, QueryScore.query_id == query_id))}


def delete_job(db: Database, job_id: str) -> None:
    with db.write() as s:
        get_job(s, job_id)
        s.execute(delete(Report).where(Report.job_id == job_id))
        s.execute(delete(QueryScore).where(QueryScore.job_id == job_id))
        s.execute(delete(LiveResult).where(LiveResult.job_id == job_id))
        s.execute(delete(JobRun).where(JobRun.job_id == job_id))
        s.execute(delete(Job).where(Job.id == job_id))


# --- the queue: claim, lease, finish --------------------------------------------------------------

def _claimable(now: float) -> ColumnElement[bool]:
    return or_(Job.status == "queued", and_(Job.status == "running", Job.lease_until < now))


def claim_job(db: Database, owner: str, lease_seconds: float,
              kinds: tuple[str, ...] = ("evaluate", "live")) -> str | None:
    """Take a queued job of ``kinds``, or a running one whose lease ran out; None when there is none.

    The job claimed the fewest times goes first (then the oldest): a live job that gave its turn back
    (:func:`release_lease` at the end of its time slice) waits behind the jobs that have not had one.
    The conditional UPDATE is atomic, so two workers never own the same job.
    """
    now = time.time()
    with db.write() as s:
        candidates = list(s.scalars(select(Job.id).where(_claimable(now), Job.kind.in_(kinds))
                                    .order_by(Job.claims, Job.created_at).limit(4)))
        for job_id in candidates:
            res = s.execute(update(Job).where(Job.id == job_id, _claimable(now)).values(
                status="running", lease_owner=owner, lease_until=now + lease_seconds, claims=Job.claims + 1))
            if res.rowcount == 1:  # type: ignore[attr-defined]
                s.execute(update(Job).where(Job.id == job_id, Job.started_at.is_(None)).values(started_at=utcnow()))
                return job_id
    return None


def jobs_waiting(db: Database, kinds: tuple[str, ...] = ("live",)) -> int:
    """How many jobs of ``kinds`` wait for a worker (queued, or given back)."""
    now = time.time()
    with db.read() as s:
        return int(s.execute(select(func.count()).select_from(Job).where(_claimable(now), Job.kind.in_(kinds)))
                   .scalar_one())


def renew_lease(db: Database, job_id: str, owner: str, lease_seconds: float) -> bool:
    """Extend our lease; False when the job is gone or no longer ours."""
    with db.write() as s:
        res = s.execute(update(Job).where(Job.id == job_id, Job.lease_owner == owner, Job.status == "running")
                        .values(lease_until=time.time() + lease_seconds))
        return bool(res.rowcount == 1)  # type: ignore[attr-defined]


def finish_job(db: Database, job_id: str, owner: str, status: str, error: str | None = None,
               said: dict[str, str] | None = None) -> None:
    """End a job we hold: ``error`` (English, the API's) and ``said`` (the same in each language) say why it failed."""
    with db.write() as s:
        s.execute(update(Job).where(Job.id == job_id, Job.lease_owner == owner).values(
            status=status, error=error, error_said=said, finished_at=utcnow(), lease_until=0.0))


def release_lease(db: Database, job_id: str, owner: str) -> None:
    """Give a running job back (on shutdown) so that the next worker takes it at once."""
    with db.write() as s:
        s.execute(update(Job).where(Job.id == job_id, Job.lease_owner == owner, Job.status == "running")
                  .values(lease_until=0.0))


# --- scores -----------------------------------------------------------------------------------------

def set_job_total(db: Database, job_id: str, total: int) -> None:
    with db.write() as s:
        s.execute(update(Job).where(Job.id == job_id).values(total=total))


def save_scores(db: Database, rows: list[dict[str, Any]]) -> None:
    """Store per-query rows ``{job_id, run_id, query_id, scores, first_rank}`` (exactly once)."""
    with db.write() as s:
        insert_rows(db, s, QueryScore, rows)


def save_means(db: Database, job_id: str, run_id: int, means: dict[str, float | None], queries: dict[str, int]) -> None:
    with db.write() as s:
        s.execute(update(JobRun).where(JobRun.job_id == job_id, JobRun.run_id == run_id).values(
            means=means, queries=queries))


# --- live answers -------------------------------------------------------------------------------------

def answered_queries(s: Session, job_id: str) -> list[tuple[str, list[Any] | None, float | None]]:
    """``(query_id, hits, latency_ms)`` of the queries answered without error."""
    return [(q, h, ms) for q, h, ms in s.execute(select(LiveResult.query_id, LiveResult.hits, LiveResult.latency_ms)
                                                 .where(LiveResult.job_id == job_id, LiveResult.error.is_(None)))]


def live_results(s: Session, job_id: str, errors_only: bool = False, offset: int = 0,
                 limit: int | None = None) -> list[LiveResult]:
    q = select(LiveResult).where(LiveResult.job_id == job_id)
    if errors_only:
        q = q.where(LiveResult.error.is_not(None))
    q = q.order_by(LiveResult.id).offset(offset)
    if limit is not None:
        q = q.limit(limit)
    return list(s.scalars(q))


def live_summary(s: Session, job_id: str) -> dict[str, Any]:
    """Errors (``{query: message}``) and the latencies (ms) of the answered queries of a live job."""
    rows = s.execute(select(LiveResult.query_id, LiveResult.error, LiveResult.latency_ms)
                     .where(LiveResult.job_id == job_id)).all()
    return {"asked": len(rows), "answered": sum(1 for _q, e, _ms in rows if e is None),
            "errors": {q: e for q, e, __ in rows if e is not None},
            "latencies_ms": [ms for __, e, ms in rows if e is None and ms is not None]}


def upsert_live_results(db: Database, rows: list[dict[str, Any]]) -> None:
    """Insert answers; a new answer replaces a stored *error* of the same query (a retry after resume),
    never a stored answer: one row per ``(job, query)`` however often a query is asked."""
    if not rows:
        return
    with db.write() as s:
        stmt = db.insert(LiveResult)
        stmt = stmt.on_conflict_do_update(
            index_elements=[LiveResult.job_id, LiveResult.query_id],
            set_={"hits": stmt.excluded.hits, "error": stmt.excluded.error, "latency_ms": stmt.excluded.latency_ms,
                  "attempts": LiveResult.attempts + stmt.excluded.attempts},
            where=LiveResult.error.is_not(None))
        s.execute(stmt, rows)


def add_live_errors(db: Database, job_id: str, errors: dict[str, str]) -> None:
    """Store queries that were not asked (no text, ...) as failed, once."""
    rows = [{"job_id": job_id, "query_id": q, "hits": None, "error": e, "attempts": 0, "latency_ms": None}
            for q, e in errors.items()]
    with db.write() as s:
        insert_rows(db, s, LiveResult, rows)


def live_run_rows(s: Session, job_id: str) -> list[tuple[str, list[Any] | None]]:
    return [(q, h) for q, h in s.execute(select(LiveResult.query_id, LiveResult.hits).where(
        LiveResult.job_id == job_id, LiveResult.error.is_(None))).all()]


def first_live_error(s: Session, job_id: str) -> str | None:
    return s.scalars(select(LiveResult.error).where(LiveResult.job_id == job_id,
                                                    LiveResult.error.is_not(None)).limit(1)).first()
