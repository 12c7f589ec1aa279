"""Storage of the evaluation service: SQLAlchemy 2.0 models and the :class:`Database` handle."""

from __future__ import annotations

from rankscope.service.db.models import (
    Base,
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
from rankscope.service.db.session import Database

__all__ = [
    "Base", "Database", "Document", "Job", "JobRun", "LiveResult", "Query", "QueryScore", "Report", "RunRecord",
    "TestSet",
]
