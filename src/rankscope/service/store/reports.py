"""The report cache: one row per (evaluation, format, language, baseline), rendered once in the background."""

from __future__ import annotations

import time

from sqlalchemy import and_, or_, select, update
from sqlalchemy.orm import Session

from rankscope.service.db import Database, Report
from rankscope.service.db.models import utcnow

__all__ = ["request_report", "find_report", "claim_report", "save_report", "fail_report"]


def find_report(s: Session, job_id: str, fmt: str, lang: str, baseline: int) -> Report | None:
    return s.scalars(select(Report).where(Report.job_id == job_id, Report.format == fmt, Report.lang == lang,
                                          Report.baseline_run_id == baseline)).first()


def request_report(db: Database, job_id: str, fmt: str, lang: str, baseline: int) -> Report:
    """The cached report, or a ``pending`` row that a worker renders (created once, however often asked)."""
    with db.read() as s:
        found = find_report(s, job_id, fmt, lang, baseline)
    if found is not None:
        return found
    with db.write() as s:
        s.execute(db.insert(Report).on_conflict_do_nothing(), [{
            "job_id": job_id, "format": fmt, "lang": lang, "baseline_run_id": baseline, "status": "pending",
            "lease_until": 0.0, "created_at": utcnow()}])
    with db.read() as s:
        row = find_report(s, job_id, fmt, lang, baseline)
    assert row is not None
    return row


def claim_report(db: Database, lease_seconds: float) -> Report | None:
    """Take the oldest pending report (or one whose renderer died); None when there is none."""
    now = time.time()
    claimable = or_(Report.status == "pending", and_(Report.status == "rendering", Report.lease_until < now))
    with db.write() as s:
        for rid in list(s.scalars(select(Report.id).where(claimable).order_by(Report.id).limit(4))):
            res = s.execute(update(Report).where(Report.id == rid, claimable).values(
                status="rendering", lease_until=now + lease_seconds))
            if res.rowcount == 1:  # type: ignore[attr-defined]
                return s.get(Report, rid)
    return None


def save_report(db: Database, report_id: int, body: str) -> None:
    with db.write() as s:
        s.execute(update(Report).where(Report.id == report_id).values(
            status="done", body=body, error=None, rendered_at=utcnow(), lease_until=0.0))


def fail_report(db: Database, report_id: int, error: str) -> None:
    with db.write() as s:
        s.execute(update(Report).where(Report.id == report_id).values(
            status="failed", error=error[:2000], rendered_at=utcnow(), lease_until=0.0))
