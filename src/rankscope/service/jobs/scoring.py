"""Scoring the runs of a job and storing per-query values and means (idempotent)."""

from __future__ import annotations

import math
from collections.abc import Callable

from sqlalchemy import update

from rankscope.engine import Evaluator
from rankscope.service.db import Database, Job, JobRun, QueryScore
from rankscope.service.store import get_testset, insert_rows, job_runs, load_qrels, load_run

__all__ = ["make_evaluator", "score_job_runs"]


def make_evaluator(db: Database, job: Job) -> Evaluator:
    p = job.params
    with db.read() as s:
        qrels = load_qrels(get_testset(s, job.test_set_id))
    return Evaluator(qrels, p["metrics"], relevance_level=p.get("relevance_level", 1),
                     missing=p.get("missing", "zero"), depth=p.get("depth"))


def _clean(v: float) -> float | None:
    return v if math.isfinite(v) else None


def score_job_runs(db: Database, job: Job, keep_going: Callable[[], bool]) -> None:
    """Evaluate every run of ``job`` that has no means yet, storing per-query rows then means.

    ``keep_going()`` is called between chunks; it returns False when the job was lost
    (deleted or taken over) or the server is stopping, and scoring stops.
    """
    with db.read() as s:
        todo = [(jr.run_id, rec) for jr, rec in job_runs(s, job.id) if jr.means is None]
    if not todo:
        return
    ev = make_evaluator(db, job)
    results = [(run_id, ev.evaluate(load_run(rec))) for run_id, rec in todo]
    if job.kind == "evaluate":
        with db.read() as s:
            done = sum(int((jr.queries or {}).get("evaluated", 0)) for jr, _ in job_runs(s, job.id)
                       if jr.means is not None)
        with db.write() as s:
            s.execute(update(Job).where(Job.id == job.id).values(
                total=done + sum(len(r.per_query) for _, r in results)))
    for run_id, res in results:
        ids = [str(q) for q in res.per_query.query_ids]
        vals = res.per_query.values.tolist()
        labels = list(res.labels)
        rows = [{"job_id": job.id, "run_id": run_id, "query_id": q,
                 "scores": {m: _clean(v) for m, v in zip(labels, row)}} for q, row in zip(ids, vals)]
        step = 5000
        for i in range(0, len(rows), step):
            if not keep_going():
                return
            with db.write() as s:
                insert_rows(db, s, QueryScore, rows[i:i + step])
        q = res.queries
        with db.write() as s:
            s.execute(update(JobRun).where(JobRun.job_id == job.id, JobRun.run_id == run_id).values(
                means={k: _clean(v) for k, v in res.mean().items()},
                queries={"evaluated": q.evaluated, "missing_from_run": q.missing_from_run,
                         "not_in_qrels": q.not_in_qrels},
            ))
