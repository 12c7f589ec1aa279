"""Tables of the evaluation service.

Qrels and runs are stored whole, as compressed Arrow IPC blobs (one read gives the
columnar object back); everything that is listed, counted or resumed is a row:
queries and documents of a test set, per-query scores, per-query live retriever
results.  Two unique constraints make results exactly-once under retries and
restarts: ``(job, run, query)`` on scores and ``(job, query)`` on live results.

People judging a pool in the dashboard: a :class:`JudgingTask` holds the (query,
document) pairs to judge (:class:`JudgingItem`, with an optional model pre-label), the
texts they need (:class:`JudgingQuery`, :class:`JudgingDoc`, copied in so that the task
stands alone) and one :class:`Judgment` per item and annotator (unique).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = ["Base", "TestSet", "Query", "Document", "RunRecord", "Job", "JobRun", "QueryScore", "LiveResult", "Report",
           "JudgingTask", "JudgingQuery", "JudgingDoc", "JudgingItem", "Judgment", "Annotator", "PrelabelView",
           "utcnow"]

# SQLite only auto-increments INTEGER PRIMARY KEY; PostgreSQL gets a BIGINT identity
BigId = BigInteger().with_variant(Integer(), "sqlite")
#: ids that users see and type (test sets, runs, judging tasks and items, annotators) are never given again
#: after a delete: SQLite's AUTOINCREMENT (without it SQLite reuses the highest id once its row is deleted, and a
#: stale link would name another object); PostgreSQL's sequences never reuse
NEVER_REUSED: tuple[dict[str, Any]] = ({"sqlite_autoincrement": True},)


class UTCDateTime(TypeDecorator[dt.datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite drops the zone: put it back)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value

    def process_result_value(self, value: dt.datetime | None, dialect: Any) -> dt.datetime | None:
        if value is not None and value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        return value


def utcnow() -> dt.datetime:
    """The current time, timezone-aware UTC."""
    return dt.datetime.now(dt.timezone.utc)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[Any]: JSON}


class TestSet(Base):
    """Queries (with text), relevance judgments and optionally document texts."""

    __tablename__ = "test_sets"
    __table_args__ = NEVER_REUSED
    __test__ = False  # not a pytest class

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text, default="")
    source_format: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    n_queries: Mapped[int] = mapped_column(Integer)
    n_judgments: Mapped[int] = mapped_column(Integer)
    n_documents: Mapped[int] = mapped_column(Integer, default=0)
    n_documents_cut: Mapped[int] = mapped_column(Integer, default=0, server_default="0")  # texts cut at MAX_DOC_CHARS
    qrels: Mapped[bytes] = mapped_column(LargeBinary)


class Query(Base):
    __tablename__ = "queries"
    __table_args__ = (UniqueConstraint("test_set_id", "query_id", name="uq_queries_set_query"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    test_set_id: Mapped[int] = mapped_column(ForeignKey("test_sets.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    query_id: Mapped[str] = mapped_column(String(512))
    text: Mapped[str | None] = mapped_column(Text, nullable=True)


class Document(Base):
    __tablename__ = "documents"
    __table_args__ = (UniqueConstraint("test_set_id", "doc_id", name="uq_documents_set_doc"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    test_set_id: Mapped[int] = mapped_column(ForeignKey("test_sets.id", ondelete="CASCADE"), index=True)
    doc_id: Mapped[str] = mapped_column(String(512))
    text: Mapped[str] = mapped_column(Text)


class RunRecord(Base):
    """A ranked result list for every query of one test set (uploaded, or produced by a live job)."""

    __tablename__ = "runs"
    __table_args__ = NEVER_REUSED

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    test_set_id: Mapped[int] = mapped_column(ForeignKey("test_sets.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(20), default="upload")
    source_format: Mapped[str] = mapped_column(String(20))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    n_queries: Mapped[int] = mapped_column(Integer)
    n_rows: Mapped[int] = mapped_column(Integer)
    n_judged: Mapped[int | None] = mapped_column(Integer, nullable=True)  # queries with judgments in the test set
    data: Mapped[bytes] = mapped_column(LargeBinary)


class Job(Base):
    """An evaluation: stored runs (``kind='evaluate'``) or a live retriever (``kind='live'``).

    ``status``: queued → running → done | failed.  A worker owns a running job while
    ``lease_until`` (epoch seconds) is in the future and renews it as it goes.
    """

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_status_lease", "status", "lease_until"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    kind: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20), default="queued")
    name: Mapped[str] = mapped_column(String(200), default="")
    test_set_id: Mapped[int] = mapped_column(ForeignKey("test_sets.id", ondelete="CASCADE"), index=True)
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    total: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: why a job failed on its input, said in each language of the message files (the dashboard's); ``error`` is
    #: the English the API gives
    error_said: Mapped[dict[str, str] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[float] = mapped_column(Float, default=0.0)
    claims: Mapped[int] = mapped_column(Integer, default=0)


class JobRun(Base):
    """One run scored by a job, with its means once done."""

    __tablename__ = "job_runs"

    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer)
    means: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    queries: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class QueryScore(Base):
    """Every metric value of one query of one run in one job."""

    __tablename__ = "query_scores"
    __table_args__ = (UniqueConstraint("job_id", "run_id", "query_id", name="uq_scores_job_run_query"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    query_id: Mapped[str] = mapped_column(String(512))
    scores: Mapped[dict[str, Any]] = mapped_column(JSON)
    first_rank: Mapped[int | None] = mapped_column(Integer, nullable=True)  # 0: no relevant document retrieved


class LiveResult(Base):
    """What the retriever answered for one query of a live job (or the error after retries)."""

    __tablename__ = "live_results"
    __table_args__ = (UniqueConstraint("job_id", "query_id", name="uq_live_job_query"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    query_id: Mapped[str] = mapped_column(String(512))
    hits: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=1)
    latency_ms: Mapped[float | None] = mapped_column(Float, nullable=True)


class Report(Base):
    """A report of a finished evaluation in one format and language, rendered once in the background.

    ``status``: pending → rendering → done | failed; a renderer holds a ``rendering`` row while
    ``lease_until`` (epoch seconds) is in the future.  ``baseline_run_id`` 0 means the default baseline.
    Rows are deleted when what they show changes (a run of the evaluation is deleted).
    """

    __tablename__ = "reports"
    __table_args__ = (UniqueConstraint("job_id", "format", "lang", "baseline_run_id", name="uq_reports_job_key"),
                      Index("ix_reports_status_lease", "status", "lease_until"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"))
    format: Mapped[str] = mapped_column(String(20))
    lang: Mapped[str] = mapped_column(String(8))
    baseline_run_id: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    body: Mapped[str | None] = mapped_column(Text, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    lease_until: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    rendered_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class JudgingTask(Base):
    """A pool of (query, document) pairs for people to judge, with the texts they need.

    ``info`` records where the pool, texts and pre-labels came from and what was counted on
    the way in (documents cut, pre-labels outside the pool, the order of the items).
    """

    __tablename__ = "judging_tasks"
    __table_args__ = NEVER_REUSED

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    n_items: Mapped[int] = mapped_column(Integer)
    n_queries: Mapped[int] = mapped_column(Integer)
    n_prelabels: Mapped[int] = mapped_column(Integer, default=0)
    info: Mapped[dict[str, Any]] = mapped_column(JSON)


class JudgingQuery(Base):
    __tablename__ = "judging_queries"
    __table_args__ = (UniqueConstraint("task_id", "query_id", name="uq_judging_queries_task_query"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("judging_tasks.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    query_id: Mapped[str] = mapped_column(String(512))
    text: Mapped[str] = mapped_column(Text)


class JudgingDoc(Base):
    """A document's text as shown to the annotators; ``length`` is the original length (``> len(text)``: cut)."""

    __tablename__ = "judging_docs"
    __table_args__ = (UniqueConstraint("task_id", "doc_id", name="uq_judging_docs_task_doc"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("judging_tasks.id", ondelete="CASCADE"), index=True)
    doc_id: Mapped[str] = mapped_column(String(512))
    text: Mapped[str] = mapped_column(Text)
    length: Mapped[int] = mapped_column(Integer)


class JudgingItem(Base):
    """One (query, document) pair to judge, at ``position`` in the order shown; ``prelabel*``: an earlier label
    (usually a model's, from ``rankscope judge``, with its receipt), shown to annotators only on request."""

    __tablename__ = "judging_items"
    __table_args__ = (UniqueConstraint("task_id", "query_id", "doc_id", name="uq_judging_items_task_pair"),
                      Index("ix_judging_items_task_position", "task_id", "position"), *NEVER_REUSED)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("judging_tasks.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    query_id: Mapped[str] = mapped_column(String(512))
    doc_id: Mapped[str] = mapped_column(String(512))
    best_rank: Mapped[int | None] = mapped_column(Integer, nullable=True)
    runs: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    prelabel: Mapped[int | None] = mapped_column(Integer, nullable=True)
    prelabel_source: Mapped[str | None] = mapped_column(String(10), nullable=True)
    prelabel_model: Mapped[str | None] = mapped_column(String(200), nullable=True)
    prelabel_prompt: Mapped[str | None] = mapped_column(String(200), nullable=True)
    prelabel_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    #: the pre-label's other provenance (:mod:`rankscope.labels.provenance`: raw reply, time, endpoint, prompt hash,
    #: tokens, cache hit, annotator, blind), its non-null columns only; given back in the export
    prelabel_receipt: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)


class Judgment(Base):
    """One annotator's judgment of one item: a grade, or ``grade`` null for a skip; ``prelabel_shown`` when the
    service had shown the annotator the item's pre-label before this judgment was saved (a :class:`PrelabelView`
    of the item by the annotator): the judgment is then not blind.  The service decides it, never the client."""

    __tablename__ = "judgments"
    __table_args__ = (UniqueConstraint("item_id", "annotator", name="uq_judgments_item_annotator"),
                      Index("ix_judgments_task_annotator", "task_id", "annotator"))

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("judging_tasks.id", ondelete="CASCADE"))
    item_id: Mapped[int] = mapped_column(ForeignKey("judging_items.id", ondelete="CASCADE"))
    annotator: Mapped[str] = mapped_column(String(100))
    grade: Mapped[int | None] = mapped_column(Integer, nullable=True)
    note: Mapped[str] = mapped_column(Text, default="")
    prelabel_shown: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class Annotator(Base):
    """Someone invited to judge one task: a name unique in the task and the SHA-256 of their invitation token
    (the token itself is shown once, in the invitation link, and never stored).  ``blind``: the service never
    shows them a pre-label."""

    __tablename__ = "judging_annotators"
    __table_args__ = (UniqueConstraint("task_id", "name", name="uq_judging_annotators_task_name"),
                      UniqueConstraint("token_hash", name="uq_judging_annotators_token"), *NEVER_REUSED)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("judging_tasks.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    token_hash: Mapped[str] = mapped_column(String(64))
    blind: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)


class PrelabelView(Base):
    """The service showed the pre-label of an item to someone: an annotator (by name) on the judging page or
    through the API, or an administrator through the API (``annotator`` null)."""

    __tablename__ = "prelabel_views"
    __table_args__ = (Index("ix_prelabel_views_item_annotator", "item_id", "annotator"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    task_id: Mapped[int] = mapped_column(ForeignKey("judging_tasks.id", ondelete="CASCADE"), index=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("judging_items.id", ondelete="CASCADE"))
    annotator: Mapped[str | None] = mapped_column(String(100), nullable=True)
    via: Mapped[str] = mapped_column(String(10))
    at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
