"""Storage of the evaluation service: SQLAlchemy 2.0 models and the :class:`Database` handle."""

from __future__ import annotations

from rankscope.service.db.models import (
    Annotator,
    Base,
    Document,
    Job,
    JobRun,
    JudgingDoc,
    JudgingItem,
    JudgingQuery,
    JudgingTask,
    Judgment,
    LiveResult,
    PrelabelView,
    Query,
    QueryScore,
    Report,
    RunRecord,
    TestSet,
)
from rankscope.service.db.session import Database

__all__ = [
    "Annotator", "Base", "Database", "Document", "Job", "JobRun", "JudgingDoc", "JudgingItem", "JudgingQuery",
    "JudgingTask",
    "Judgment", "LiveResult", "PrelabelView", "Query", "QueryScore", "Report", "RunRecord",
    "TestSet",
]
