"""Test sets (queries, documents, qrels) and runs: create, read, list, delete with their dependents."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from rankscope.data import Qrels, Run
from rankscope.service.db import (
    Database,
    Document,
    Job,
    JobRun,
    LiveResult,
    Query,
    QueryScore,
    Report,
    RunRecord,
    TestSet,
)
from rankscope.service.db.blobs import decode_qrels, decode_run, encode_table
from rankscope.service.store.base import fetch, insert_rows

__all__ = [
    "create_testset", "get_testset", "list_testsets", "testset_queries", "query_text", "documents", "delete_testset",
    "load_qrels", "create_run", "get_run", "list_runs", "runs_with_testsets", "delete_run", "load_run",
    "testset_dependents", "run_dependents", "testset_names",
]


def create_testset(db: Database, name: str, qrels: Qrels, queries: Iterable[tuple[str, str | None]],
                   documents: Iterable[tuple[str, str]], source_format: str, description: str = "",
                   documents_cut: int = 0) -> int:
    """Store a test set: its qrels (one blob), its queries in order (first text of a repeated id wins), documents
    (``documents_cut``: how many of their texts were cut at the stored length, shown with the test set)."""
    texts: dict[str, str | None] = {}
    for q, text in queries:
        texts.setdefault(q, text)
    docs = list(dict(documents).items())
    with db.write() as s:
        ts = TestSet(name=name, description=description, source_format=source_format, n_queries=len(texts),
                     n_judgments=len(qrels), n_documents=len(docs), n_documents_cut=documents_cut,
                     qrels=encode_table(qrels))
        s.add(ts)
        s.flush()
        insert_rows(db, s, Query, [{"test_set_id": ts.id, "position": i, "query_id": q, "text": t}
                                   for i, (q, t) in enumerate(texts.items())])
        insert_rows(db, s, Document, [{"test_set_id": ts.id, "doc_id": d, "text": t} for d, t in docs])
        return ts.id


def get_testset(s: Session, test_set_id: int, field: str = "path") -> TestSet:
    return fetch(s, TestSet, test_set_id, "test set", field)


def list_testsets(s: Session) -> list[TestSet]:
    return list(s.scalars(select(TestSet).order_by(TestSet.id)))


def testset_names(s: Session, ids: Iterable[int]) -> dict[int, str]:
    """``{test set id: name}`` of the given ids (those that exist)."""
    wanted = set(ids)
    if not wanted:
        return {}
    return {i: n for i, n in s.execute(select(TestSet.id, TestSet.name).where(TestSet.id.in_(wanted))).all()}


def testset_queries(s: Session, test_set_id: int, offset: int = 0,
                    limit: int | None = None) -> list[tuple[str, str | None]]:
    """``(query_id, text)`` of a test set in upload order."""
    q = select(Query.query_id, Query.text).where(Query.test_set_id == test_set_id).order_by(Query.position)
    q = q.offset(offset)
    if limit is not None:
        q = q.limit(limit)
    return [(qid, text) for qid, text in s.execute(q).all()]


def query_text(s: Session, test_set_id: int, query_id: str) -> str | None:
    return s.scalars(select(Query.text).where(Query.test_set_id == test_set_id, Query.query_id == query_id)).first()


def documents(s: Session, test_set_id: int, doc_ids: Iterable[str]) -> dict[str, str]:
    """Texts of the given documents of a test set (those it has)."""
    wanted = list(set(doc_ids))
    if not wanted:
        return {}
    return dict(s.execute(select(Document.doc_id, Document.text).where(
        Document.test_set_id == test_set_id, Document.doc_id.in_(wanted))).all())


def testset_dependents(s: Session, test_set_id: int) -> dict[str, int]:
    """What deleting a test set deletes with it: ``{"runs": n, "evaluations": n}``."""
    runs = s.execute(select(func.count()).select_from(RunRecord).where(RunRecord.test_set_id == test_set_id))
    jobs = s.execute(select(func.count()).select_from(Job).where(Job.test_set_id == test_set_id))
    return {"runs": int(runs.scalar_one()), "evaluations": int(jobs.scalar_one())}


def delete_testset(db: Database, test_set_id: int) -> None:
    """Delete a test set with its queries, documents, runs and evaluations (and their results)."""
    with db.write() as s:
        get_testset(s, test_set_id)
        # explicit child deletes: do not rely on the backend enforcing ON DELETE CASCADE
        job_ids = select(Job.id).where(Job.test_set_id == test_set_id)
        run_ids = select(RunRecord.id).where(RunRecord.test_set_id == test_set_id)
        s.execute(delete(Report).where(Report.job_id.in_(job_ids)))
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
    """Store ``run`` for a test set (counting its queries that have judgments there); the caller's session commits."""
    judged = set(load_qrels(get_testset(s, test_set_id, "test_set_id")).queries)
    rec = RunRecord(test_set_id=test_set_id, name=run.name, source=source, source_format=source_format,
                    n_queries=len(run.queries), n_rows=len(run), n_judged=sum(1 for q in run.queries if q in judged),
                    data=encode_table(run))
    s.add(rec)
    s.flush()
    return rec


def get_run(s: Session, run_id: int, field: str = "path") -> RunRecord:
    return fetch(s, RunRecord, run_id, "run", field)


def list_runs(s: Session, test_set_id: int | None = None) -> list[RunRecord]:
    q = select(RunRecord).order_by(RunRecord.id)
    if test_set_id is not None:
        q = q.where(RunRecord.test_set_id == test_set_id)
    return list(s.scalars(q))


def runs_with_testsets(s: Session) -> list[tuple[RunRecord, str]]:
    """Every run with the name of its test set."""
    return [(r, n) for r, n in s.execute(select(RunRecord, TestSet.name).join(
        TestSet, TestSet.id == RunRecord.test_set_id).order_by(RunRecord.id)).all()]


def run_dependents(s: Session, run_id: int) -> dict[str, int]:
    """What deleting a run changes: the evaluations that scored it lose its scores (``{"evaluations": n}``)."""
    n = s.execute(select(func.count()).select_from(JobRun).where(JobRun.run_id == run_id)).scalar_one()
    return {"evaluations": int(n)}


def delete_run(db: Database, run_id: int) -> None:
    """Delete a run and its scores; the reports of the evaluations that scored it are dropped (they change)."""
    with db.write() as s:
        get_run(s, run_id)
        s.execute(delete(Report).where(Report.job_id.in_(select(JobRun.job_id).where(JobRun.run_id == run_id))))
        s.execute(delete(QueryScore).where(QueryScore.run_id == run_id))
        s.execute(delete(JobRun).where(JobRun.run_id == run_id))
        s.execute(delete(RunRecord).where(RunRecord.id == run_id))


def load_run(rec: RunRecord) -> Run:
    return decode_run(rec.data, rec.name)

