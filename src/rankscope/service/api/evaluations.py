"""``/api/v1/evaluations``: create jobs (stored runs or a live retriever), follow them, read results."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi import Path as PathParam
from fastapi import Query as QueryParam
from sqlalchemy.orm import Session

from rankscope.errors import RankscopeError
from rankscope.service import store
from rankscope.service.api.deps import get_db, get_pool
from rankscope.service.api.errors import FieldError
from rankscope.service.api.schemas import (
    MAX_ID,
    EvaluationCreate,
    EvaluationOut,
    LiveEvaluationCreate,
    LiveResultOut,
    QueryScoreOut,
    QueryScorePage,
)
from rankscope.service.db import Database, Job
from rankscope.service.jobs import WorkerPool

router = APIRouter(prefix="/evaluations", tags=["evaluations"])
JobId = Annotated[str, PathParam(min_length=1, max_length=36, pattern=r"^[0-9a-f-]+$")]


def _policies(body: EvaluationCreate | LiveEvaluationCreate) -> dict[str, Any]:
    try:
        metrics = store.validate_metrics(body.metrics)
    except RankscopeError as exc:
        raise FieldError("metrics", exc) from None
    return {"metrics": metrics, "relevance_level": body.relevance_level, "missing": body.missing,
            "depth": body.depth, "score_precision": body.score_precision, "unjudged": body.unjudged}


def job_out(s: Session, job: Job) -> dict[str, Any]:
    """The API view of an evaluation (also what the dashboard lists)."""
    pairs = store.job_runs(s, job.id)
    runs = [run_out(job, rec.id, rec.name, jr.means, jr.queries) for jr, rec in pairs]
    progress = store.job_progress(s, job)
    progress["runs"] = len(pairs) if job.kind == "evaluate" else 1
    return {
        "id": job.id, "kind": job.kind, "name": job.name, "status": job.status, "test_set_id": job.test_set_id,
        "created_at": job.created_at, "started_at": job.started_at, "finished_at": job.finished_at,
        "error": job.error, "progress": progress, "params": job.params, "runs": runs,
    }


def run_out(job: Job, run_id: int, name: str, means: dict[str, Any] | None,
            stored: dict[str, Any] | None) -> dict[str, Any]:
    """One run of an evaluation: its means, query counts, judged@10 and warnings (stored with the counts)."""
    from rankscope.engine.coverage import coverage_warnings
    from rankscope.engine.judged import JudgedAtK
    from rankscope.engine.prepare import PolicyCounts

    counts = {k: int(v) for k, v in (stored or {}).items() if k != "judged"} if stored is not None else None
    judged = (stored or {}).get("judged")
    warnings = []
    if counts is not None and means is not None:
        known = {k: v for k, v in counts.items() if k in PolicyCounts.__dataclass_fields__}
        p = job.params
        warnings = [w.to_dict() for w in coverage_warnings(
            {name: PolicyCounts(**{"evaluated": 0, "missing_from_run": 0, "not_in_qrels": 0, **known})},
            missing=str(p.get("missing", "zero")), relevance_level=int(p.get("relevance_level", 1)),
            compared=int(counts.get("evaluated", 0)),
            judged={name: None if judged is None else JudgedAtK.from_dict(judged)},
            unjudged=str(p.get("unjudged", "keep")))]
    return {"run_id": run_id, "name": name, "means": means, "queries": counts, "judged": judged,
            "warnings": warnings}


def evaluation_out(db: Database, job_id: str) -> dict[str, Any]:
    with db.read() as s:
        return job_out(s, store.get_job(s, job_id))


@router.post("", status_code=202, response_model=EvaluationOut, summary="Score stored runs (background job)")
def create_evaluation(body: EvaluationCreate, db: Database = Depends(get_db),
                      pool: WorkerPool = Depends(get_pool)) -> dict[str, Any]:
    params = _policies(body)
    try:
        job_id = store.create_job(db, "evaluate", body.test_set_id, params, body.name, run_ids=body.run_ids)
    except RankscopeError as exc:
        raise FieldError("run_ids", exc) from None
    pool.wake()
    return evaluation_out(db, job_id)


@router.api_route("/live", methods=["GET", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"], include_in_schema=False)
def live_other_methods() -> None:
    """``/evaluations/live`` takes POST only: 405 (not the evaluation of id ``live``)."""
    from starlette.exceptions import HTTPException

    raise HTTPException(405)


@router.post("/live", status_code=202, response_model=EvaluationOut,
             summary="Evaluate a live retriever over HTTP (background job, resumable)",
             responses={403: {"description": "the retriever's address is not on this service's allow-list, or is "
                                             "the service's own"}})
def create_live_evaluation(body: LiveEvaluationCreate, request: Request, db: Database = Depends(get_db),
                           pool: WorkerPool = Depends(get_pool)) -> dict[str, Any]:
    params = _policies(body)
    settings = request.app.state.settings
    try:
        url = settings.egress.check(body.retriever_url)
    except RankscopeError as exc:
        raise FieldError.of_address("retriever_url", exc) from None
    params.update(retriever_url=url, k=body.k, concurrency=body.concurrency, retries=body.retries,
                  budget_seconds=body.budget_seconds or settings.live_budget_seconds)
    job_id = store.create_job(db, "live", body.test_set_id, params, body.name or "live")
    pool.wake()
    return evaluation_out(db, job_id)


@router.get("", response_model=list[EvaluationOut], summary="List evaluations, newest first")
def list_evaluations(test_set_id: Annotated[int | None, QueryParam(ge=1, le=MAX_ID)] = None,
                     limit: Annotated[int, QueryParam(ge=1, le=1000)] = 100,
                     db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    with db.read() as s:
        return [job_out(s, job) for job in store.list_jobs(s, test_set_id, limit)]


@router.get("/{job_id}", response_model=EvaluationOut, summary="Status, progress and means of an evaluation")
def read_evaluation(job_id: JobId, db: Database = Depends(get_db)) -> dict[str, Any]:
    return evaluation_out(db, job_id)


@router.get("/{job_id}/queries", response_model=QueryScorePage, summary="Per-query scores")
def read_per_query(job_id: JobId, run_id: Annotated[int | None, QueryParam(ge=1, le=MAX_ID)] = None,
                   offset: Annotated[int, QueryParam(ge=0, le=MAX_ID)] = 0,
                   limit: Annotated[int, QueryParam(ge=1, le=100_000)] = 1000,
                   db: Database = Depends(get_db)) -> dict[str, Any]:
    with db.read() as s:
        store.get_job(s, job_id)
        rows = store.per_query(s, job_id, run_id, offset, limit)
        items = [QueryScoreOut(run_id=r.run_id, query_id=r.query_id, scores=r.scores, first_rank=r.first_rank)
                 for r in rows]
    return {"offset": offset, "limit": limit, "items": items}


@router.get("/{job_id}/live-results", response_model=list[LiveResultOut],
            summary="What the retriever answered per query (live evaluations)")
def read_live_results(job_id: JobId, errors_only: bool = False,
                      offset: Annotated[int, QueryParam(ge=0, le=MAX_ID)] = 0,
                      limit: Annotated[int, QueryParam(ge=1, le=100_000)] = 1000,
                      db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    with db.read() as s:
        store.get_job(s, job_id)
        rows = store.live_results(s, job_id, errors_only, offset, limit)
        return [{"query_id": r.query_id, "hits": r.hits, "error": r.error, "attempts": r.attempts,
                 "latency_ms": r.latency_ms} for r in rows]


@router.delete("/{job_id}", status_code=204, summary="Delete an evaluation and its results")
def remove_evaluation(job_id: JobId, db: Database = Depends(get_db)) -> Response:
    store.delete_job(db, job_id)
    return Response(status_code=204)
