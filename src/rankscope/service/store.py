"""Data access of the service: every read and write the API, the web pages and the jobs share."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any, TypeVar

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from rankscope.data import Qrels, Run
from rankscope.errors import InvalidParameterError
from rankscope.service.db import Database, Document, Job, JobRun, LiveResult, Query, QueryScore, RunRecord, TestSet
from rankscope.service.db.blobs import decode_qrels, decode_run, encode_table

M = TypeVar("M")

__all__ = [
    "NotFound", "create_testset", "get_testset", "delete_testset", "create_run", "get_run", "load_run",
    "load_qrels", "create_job", "get_job", "job_progress", "job_runs", "insert_rows", "validate_metrics",
]

CHUNK = 2000


class NotFound(LookupError):
    """A referenced object does not exist; ``what`` names it (``"test set 3"``)."""

    def __init__(self, what: str, field: str = "path") -> None:
        self.what = what
        self.field = field
        super().__init__(f"{what} not found")


def insert_rows(db: Database, session: Session, table: Any, rows: list[dict[str, Any]]) -> None:
    """Insert rows in chunks, skipping rows that hit a unique constraint (exactly-once writes)."""
    for i in range(0, len(rows), CHUNK):
        session.execute(db.insert(table).on_conflict_do_nothing(), rows[i:i + CHUNK])


def create_testset(db: Database, name: str, qrels: Qrels, queries: Iterable[tuple[str, str | None]],
                   documents: Iterable[tuple[str, str]], source_format: str, description: str = "") -> int:
    """Store a test set: its qrels (one blob), its queries in order (first text of a repeated id wins), documents."""
    texts: dict[str, str | None] = {}
    for q, text in queries:
        texts.setdefault(q, text)
    docs = list(dict(documents).items())
    with db.write() as s:
        ts = TestSet(name=name, description=description, source_format=source_format, n_queries=len(texts),
                     n_judgments=len(qrels), n_documents=len(docs), qrels=encode_table(qrels))
        s.add(ts)
        s.flush()
        insert_rows(db, s, Query, [{"test_set_id": ts.id, "position": i, "query_id": q, "text": t}
                                   for i, (q, t) in enumerate(texts.items())])
        insert_rows(db, s, Document, [{"test_set_id": ts.id, "doc_id": d, "text": t} for d, t in docs])
        return ts.id


def _fetch(s: Session, model: type[M], key: Any, what: str, field: str) -> M:
    """The row of ``model`` with primary key ``key``, or :class:`NotFound` naming ``what`` and the request field."""
    row = s.get(model, key)
    if row is None:
        raise NotFound(f"{what} {key}", field)
    return row


def get_testset(s: Session, test_set_id: int, field: str = "path") -> TestSet:
    return _fetch(s, TestSet, test_set_id, "test set", field)


def list_testsets(s: Session) -> list[TestSet]:
    return list(s.scalars(select(TestSet).order_by(TestSet.id)))


def testset_queries(s: Session, test_set_id: int, offset: int = 0,
                    limit: int | None = None) -> list[tuple[str, str | None]]:
    """``(query_id, text)`` of a test set in upload order."""
    q = select(Query.query_id, Query.text).where(Query.test_set_id == test_set_id).order_by(Query.position)
    q = q.offset(offset)
    if limit is not None:
        q = q.limit(limit)
    return [(qid, text) for qid, text in s.execute(q).all()]


def delete_testset(db: Database, test_set_id: int) -> None:
    with db.write() as s:
        get_testset(s, test_set_id)
        # explicit child deletes: do not rely on the backend enforcing ON DELETE CASCADE
        job_ids = select(Job.id).where(Job.test_set_id == test_set_id)
        run_ids = select(RunRecord.id).where(RunRecord.test_set_id == test_set_id)
        s.execute(delete(QueryScore).where(QueryScore.job_id.in_(job_ids)))
        s.execute(delete(LiveResult).where(LiveResult.job_id.in_(job_ids)))
        s.execute(delete(JobRun).where(JobRun.job_id.in_(job_ids)))
        s.execute(delete(Job).where(Job.test_set_id == test_set_id))
        s.execute(delete(QueryScore).where(QueryScore.run_id.in_(run_ids)))
        s.execute(delete(JobRun).where(JobRun.run_id.in_(run_ids)))
        s.execute(delete(RunRecord).where(RunRecord.test_set_id == test_set_id))
        s.execute(delete(Query).where(Query.test_set_id == test_set_id))
        s.execute(delete(Document).where(Document.test_set_id == test_set_id))
        s.execute(delete(TestSet).where(TestSet.id == test_set_id))


def load_qrels(ts: TestSet) -> Qrels:
    return decode_qrels(ts.qrels)


def create_run(s: Session, test_set_id: int, run: Run, source_format: str, source: str = "upload") -> RunRecord:
    """Store ``run`` for a test set; the caller's session commits."""
    rec = RunRecord(test_set_id=test_set_id, name=run.name, source=source, source_format=source_format,
                    n_queries=len(run.queries), n_rows=len(run), data=encode_table(run))
    s.add(rec)
    s.flush()
    return rec


def get_run(s: Session, run_id: int, field: str = "path") -> RunRecord:
    return _fetch(s, RunRecord, run_id, "run", field)


def delete_run(db: Database, run_id: int) -> None:
    with db.write() as s:
        get_run(s, run_id)
        s.execute(delete(QueryScore).where(QueryScore.run_id == run_id))
        s.execute(delete(JobRun).where(JobRun.run_id == run_id))
        s.execute(delete(RunRecord).where(RunRecord.id == run_id))


def list_runs(s: Session, test_set_id: int | None = None) -> list[RunRecord]:
    q = select(RunRecord).order_by(RunRecord.id)
    if test_set_id is not None:
        q = q.where(RunRecord.test_set_id == test_set_id)
    return list(s.scalars(q))


def load_run(rec: RunRecord) -> Run:
    return decode_run(rec.data, rec.name)


def validate_metrics(metrics: Iterable[str]) -> list[str]:
    """Check metric names (raising :class:`~rankscope.errors.UnknownMetricError` with close matches)."""
    from rankscope.measures import parse_metrics

    names = [str(m) for m in metrics]
    if not names:
        raise InvalidParameterError("metrics: give at least one metric")
    parse_metrics(names)
    return names


def create_job(db: Database, kind: str, test_set_id: int, params: dict[str, Any], name: str,
               run_ids: list[int] | None = None) -> str:
    job_id = str(uuid.uuid4())
    with db.write() as s:
        ts = get_testset(s, test_set_id, "test_set_id")
        for rid in run_ids or []:
            rec = get_run(s, rid, "run_ids")
            if rec.test_set_id != test_set_id:
                raise InvalidParameterError(
                    f"run_ids: run {rid} belongs to test set {rec.test_set_id}, not to test set {test_set_id}")
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


def get_job(s: Session, job_id: str) -> Job:
    return _fetch(s, Job, job_id, "evaluation", "path")


def job_progress(s: Session, job: Job) -> dict[str, int]:
    """``total`` / ``finished`` / ``failed`` queries, counted from the stored per-query rows."""
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


def per_query(s: Session, job_id: str, run_id: int | None = None, offset: int = 0,
              limit: int | None = None) -> list[QueryScore]:
    q = select(QueryScore).where(QueryScore.job_id == job_id)
    if run_id is not None:
        q = q.where(QueryScore.run_id == run_id)
    q = q.order_by(QueryScore.run_id, QueryScore.query_id).offset(offset)
    if limit is not None:
        q = q.limit(limit)
    return list(s.scalars(q))


def delete_job(db: Database, job_id: str) -> None:
    with db.write() as s:
        get_job(s, job_id)
        s.execute(delete(QueryScore).where(QueryScore.job_id == job_id))
        s.execute(delete(LiveResult).where(LiveResult.job_id == job_id))
        s.execute(delete(JobRun).where(JobRun.job_id == job_id))
        s.execute(delete(Job).where(Job.id == job_id))
