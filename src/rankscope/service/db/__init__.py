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
from rankscope.service.db.monitoring import (
    JudgeSpend,
    Monitor,
    MonitorAlert,
    MonitorEvent,
    MonitorReject,
    MonitorRound,
    MonitorWindow,
    WebhookDelivery,
)
from rankscope.service.db.session import Database

__all__ = [
    "Annotator", "Base", "Database", "Document", "Job", "JobRun", "JudgingDoc", "JudgingItem", "JudgingQuery",
    "JudgingTask", "Judgment", "LiveResult", "PrelabelView", "Query", "QueryScore", "Report", "RunRecord",
    "TestSet", "Monitor", "MonitorRound", "MonitorEvent", "MonitorWindow", "MonitorAlert", "MonitorReject",
    "WebhookDelivery", "JudgeSpend",
]
