"""Monitors: create, list, the per-monitor lease, rounds, events, windows, alert episodes, webhook deliveries.

Every write that moves a monitor forward (a round checked, a batch of events aggregated) updates the monitor
row ``WHERE version = v`` in the same transaction as what it writes: a worker that lost its lease (or a copy
restarted after a crash) finds the version moved and writes nothing.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterable
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.orm import Session

from rankscope.service.db import (
    Database,
    Job,
    JudgeSpend,
    LiveResult,
    Monitor,
    MonitorAlert,
    MonitorEvent,
    MonitorReject,
    MonitorRound,
    MonitorWindow,
    Query,
    QueryScore,
    WebhookDelivery,
)
from rankscope.service.db.models import utcnow
from rankscope.service.store.base import fetch
from rankscope.service.store.catalog import get_testset, load_qrels

__all__ = [
    "create_monitor", "get_monitor", "list_monitors", "monitor_by_name", "delete_monitor", "claim_monitor",
    "release_monitor", "save_state", "insert_events", "count_rejects", "start_round", "add_missed_rounds",
    "running_rounds", "finish_round", "list_rounds", "round_scores", "pending_events", "mark_aggregated",
    "window_events",
    "upsert_windows", "open_windows", "closed_windows", "close_window", "list_windows", "open_alert", "clear_alert",
    "open_alerts", "list_alerts", "due_deliveries", "claim_delivery", "delivery_done", "rejects", "event_count",
    "delete_old_events", "spend_today", "add_spend", "day_of", "latest_events_by_query",
]


def day_of(t: float) -> str:
    """The UTC day of an epoch time, ``YYYY-MM-DD``."""
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%d")


def create_monitor(db: Database, *, name: str, kind: str, test_set_id: int | None, params: dict[str, Any],
                   rules: list[dict[str, Any]], webhook_url: str | None) -> int:
    with db.write() as s:
        if test_set_id is not None:
            get_testset(s, test_set_id, "test_set_id")
        m = Monitor(name=name, kind=kind, test_set_id=test_set_id, params=params, rules=rules, webhook_url=webhook_url,
                    state={"rules": {}, "last_scheduled": None, "missed": 0, "aggregated_to": 0}, version=0)
        s.add(m)
        s.flush()
        return int(m.id)


def get_monitor(s: Session, monitor_id: int) -> Monitor:
    return fetch(s, Monitor, monitor_id, "monitor", "path")


def monitor_by_name(s: Session, name: str) -> Monitor | None:
    return s.scalars(select(Monitor).where(Monitor.name == name)).first()


def list_monitors(s: Session) -> list[Monitor]:
    return list(s.scalars(select(Monitor).order_by(Monitor.id)))


def delete_monitor(db: Database, monitor_id: int) -> None:
    with db.write() as s:
        get_monitor(s, monitor_id)
        for table in (WebhookDelivery, MonitorAlert, MonitorWindow, MonitorEvent, MonitorReject, MonitorRound,
                      JudgeSpend):
            s.execute(delete(table).where(table.monitor_id == monitor_id))  # type: ignore[attr-defined]
        s.execute(delete(Monitor).where(Monitor.id == monitor_id))


# --- the lease ------------------------------------------------------------------------------------------------
def claim_monitor(db: Database, owner: str, lease_seconds: float) -> list[int]:
    """Take (or renew) the lease of every monitor whose lease ran out or is ours; the ids we now hold."""
    now = time.time()
    with db.write() as s:
        s.execute(update(Monitor).where(or_(Monitor.lease_until < now, Monitor.lease_owner == owner),
                                        Monitor.paused.is_(False))
                  .values(lease_owner=owner, lease_until=now + lease_seconds))
        return [int(i) for i in s.scalars(select(Monitor.id).where(Monitor.lease_owner == owner,
                                                                   Monitor.lease_until > now))]


def release_monitor(db: Database, owner: str) -> None:
    with db.write() as s:
        s.execute(update(Monitor).where(Monitor.lease_owner == owner).values(lease_until=0.0))


def save_state(s: Session, monitor: Monitor, state: dict[str, Any]) -> bool:
    """Write ``state`` if the monitor is still at the version read; False (nothing written) otherwise."""
    res = s.execute(update(Monitor).where(Monitor.id == monitor.id, Monitor.version == monitor.version)
                    .values(state=state, version=monitor.version + 1))
    return bool(res.rowcount == 1)  # type: ignore[attr-defined]


# --- events ---------------------------------------------------------------------------------------------------
def insert_events(s: Session, db: Database, rows: list[dict[str, Any]]) -> None:
    """Insert event rows (a repeated key is skipped: exactly once)."""
    for i in range(0, len(rows), 1000):
        s.execute(db.insert(MonitorEvent).on_conflict_do_nothing(index_elements=["monitor_id", "key"]),
                  rows[i:i + 1000])


def count_rejects(s: Session, db: Database, monitor_id: int, counts: dict[str, tuple[int, str]]) -> None:
    """Add rejected events to today's counters (``{reason: (n, example problem)}``)."""
    day = day_of(time.time())
    for reason, (n, example) in counts.items():
        stmt = db.insert(MonitorReject).values(monitor_id=monitor_id, day=day, reason=reason, count=n,
                                               example=example[:500])
        s.execute(stmt.on_conflict_do_update(index_elements=["monitor_id", "day", "reason"],
                                             set_={"count": MonitorReject.count + n, "example": example[:500]}))


def rejects(s: Session, monitor_id: int) -> list[MonitorReject]:
    return list(s.scalars(select(MonitorReject).where(MonitorReject.monitor_id == monitor_id)
                          .order_by(MonitorReject.day.desc(), MonitorReject.reason)))


def event_count(s: Session, monitor_id: int) -> int:
    return int(s.execute(select(func.count()).select_from(MonitorEvent)
                         .where(MonitorEvent.monitor_id == monitor_id)).scalar_one())


def pending_events(s: Session, monitor_id: int, limit: int) -> list[MonitorEvent]:
    """Events not yet counted in their window, oldest first."""
    return list(s.scalars(select(MonitorEvent).where(MonitorEvent.monitor_id == monitor_id,
                                                     MonitorEvent.aggregated.is_(False))
                          .order_by(MonitorEvent.id).limit(limit)))


def mark_aggregated(s: Session, ids: list[int]) -> None:
    for i in range(0, len(ids), 1000):
        s.execute(update(MonitorEvent).where(MonitorEvent.id.in_(ids[i:i + 1000])).values(aggregated=True))


def window_events(s: Session, monitor_id: int, start: float, end: float, retriever: str | None = None,
                  limit: int | None = None) -> list[MonitorEvent]:
    q = select(MonitorEvent).where(MonitorEvent.monitor_id == monitor_id, MonitorEvent.time >= start,
                                   MonitorEvent.time < end)
    if retriever is not None:
        q = q.where(MonitorEvent.retriever == retriever)
    q = q.order_by(MonitorEvent.id)
    if limit is not None:
        q = q.limit(limit)
    return list(s.scalars(q))


def latest_events_by_query(s: Session, monitor_id: int, retriever: str, before: float, since: float,
                           limit: int = 20000) -> list[MonitorEvent]:
    """The events of one retriever version between two times, newest first (for the overlap between versions)."""
    return list(s.scalars(select(MonitorEvent).where(
        MonitorEvent.monitor_id == monitor_id, MonitorEvent.retriever == retriever, MonitorEvent.time < before,
        MonitorEvent.time >= since).order_by(MonitorEvent.time.desc()).limit(limit)))


def delete_old_events(db: Database, monitor_id: int, before: float) -> int:
    """Delete raw events received before ``before`` that were counted in their window (the aggregates stay)."""
    with db.write() as s:
        res = s.execute(delete(MonitorEvent).where(MonitorEvent.monitor_id == monitor_id,
                                                   MonitorEvent.received_at < before,
                                                   MonitorEvent.aggregated.is_(True)))
        return int(res.rowcount or 0)  # type: ignore[attr-defined]


# --- windows --------------------------------------------------------------------------------------------------
def upsert_windows(s: Session, rows: Iterable[tuple[float, str, dict[str, Any]]], monitor_id: int,
                   merge: Any) -> None:
    """Merge window aggregates ``(start, retriever, stats)`` into the stored ones (``merge(old, new) -> stats``)."""
    for start, retriever, stats in rows:
        row = s.scalars(select(MonitorWindow).where(MonitorWindow.monitor_id == monitor_id,
                                                    MonitorWindow.start == start,
                                                    MonitorWindow.retriever == retriever)).first()
        if row is None:
            s.add(MonitorWindow(monitor_id=monitor_id, start=start, retriever=retriever, stats=stats, closed=False))
        else:
            row.stats = merge(row.stats, stats)
            row.closed = False if row.closed and row.signals is None else row.closed
    s.flush()


def open_windows(s: Session, monitor_id: int, before: float) -> list[MonitorWindow]:
    """Windows not closed yet whose start is before ``before`` (their time is over)."""
    return list(s.scalars(select(MonitorWindow).where(MonitorWindow.monitor_id == monitor_id,
                                                      MonitorWindow.closed.is_(False), MonitorWindow.start < before)
                          .order_by(MonitorWindow.start, MonitorWindow.retriever)))


def closed_windows(s: Session, monitor_id: int, retriever: str | None = None, limit: int = 1) -> list[MonitorWindow]:
    q = select(MonitorWindow).where(MonitorWindow.monitor_id == monitor_id, MonitorWindow.closed.is_(True))
    if retriever is not None:
        q = q.where(MonitorWindow.retriever == retriever)
    return list(s.scalars(q.order_by(MonitorWindow.start).limit(limit)))


def close_window(s: Session, window_id: int, signals: dict[str, Any], judged: dict[str, Any] | None,
                 checks: list[Any]) -> None:
    s.execute(update(MonitorWindow).where(MonitorWindow.id == window_id).values(
        closed=True, signals=signals, judged=judged, checks=checks))


def list_windows(s: Session, monitor_id: int, limit: int = 500) -> list[MonitorWindow]:
    rows = list(s.scalars(select(MonitorWindow).where(MonitorWindow.monitor_id == monitor_id)
                          .order_by(MonitorWindow.start.desc(), MonitorWindow.retriever).limit(limit)))
    return rows[::-1]


# --- canary rounds --------------------------------------------------------------------------------------------
def start_round(s: Session, monitor: Monitor, scheduled_for: float, name: str) -> tuple[int, str] | None:
    """Create the round of ``scheduled_for`` and its live evaluation (queued for the live workers) in the caller's
    transaction; None when that round exists already (it is never run twice)."""
    exists = s.scalars(select(MonitorRound.id).where(MonitorRound.monitor_id == monitor.id,
                                                     MonitorRound.scheduled_for == scheduled_for)).first()
    if exists is not None:
        return None
    p = monitor.params
    ts = get_testset(s, int(monitor.test_set_id or 0), "test_set_id")
    judged = set(load_qrels(ts).queries)
    wanted = set(p.get("query_ids") or []) or None
    total = sum(1 for q in s.scalars(select(Query.query_id).where(Query.test_set_id == ts.id))
                if q in judged and (wanted is None or q in wanted))
    job_id = str(uuid.uuid4())
    params = {k: p[k] for k in ("metrics", "relevance_level", "missing", "depth", "score_precision", "unjudged",
                                "retriever_url", "k", "concurrency", "retries", "budget_seconds", "query_ids")
              if k in p}
    s.add(Job(id=job_id, kind="live", name=name, test_set_id=ts.id, params=params, total=total))
    s.flush()
    r = MonitorRound(monitor_id=monitor.id, scheduled_for=scheduled_for, status="running", job_id=job_id)
    s.add(r)
    s.flush()
    return int(r.id), job_id


def add_missed_rounds(s: Session, monitor_id: int, times: list[float], reason: str) -> None:
    """Record scheduled times that passed without a round, with the reason (``down``: the service was not running
    or was behind; ``overlap``: the previous round was still running)."""
    for t in times:
        exists = s.scalars(select(MonitorRound.id).where(MonitorRound.monitor_id == monitor_id,
                                                         MonitorRound.scheduled_for == t)).first()
        if exists is None:
            s.add(MonitorRound(monitor_id=monitor_id, scheduled_for=t, status="missed", summary={"reason": reason},
                               finished_at=utcnow()))


def running_rounds(s: Session, monitor_id: int) -> list[tuple[MonitorRound, Job | None]]:
    return [(r, j) for r, j in s.execute(
        select(MonitorRound, Job).outerjoin(Job, Job.id == MonitorRound.job_id)
        .where(MonitorRound.monitor_id == monitor_id, MonitorRound.status == "running")
        .order_by(MonitorRound.scheduled_for)).all()]


def finish_round(s: Session, round_id: int, status: str, summary: dict[str, Any]) -> None:
    s.execute(update(MonitorRound).where(MonitorRound.id == round_id, MonitorRound.status == "running").values(
        status=status, summary=summary, finished_at=utcnow()))


def list_rounds(s: Session, monitor_id: int, limit: int = 500, status: str | None = None) -> list[MonitorRound]:
    q = select(MonitorRound).where(MonitorRound.monitor_id == monitor_id)
    if status is not None:
        q = q.where(MonitorRound.status == status)
    rows = list(s.scalars(q.order_by(MonitorRound.scheduled_for.desc()).limit(limit)))
    return rows[::-1]


def round_scores(s: Session, job_id: str) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The per-query scores of a round's evaluation (``{query: {metric: value}}``) and its failed queries
    (``{query: error}``)."""
    scores = {q: sc for q, sc in s.execute(select(QueryScore.query_id, QueryScore.scores)
                                           .where(QueryScore.job_id == job_id)).all()}
    errors = {q: str(e) for q, e in s.execute(select(LiveResult.query_id, LiveResult.error).where(
        LiveResult.job_id == job_id, LiveResult.error.is_not(None))).all()}
    return scores, errors


# --- alerts and webhooks --------------------------------------------------------------------------------------
def open_alert(s: Session, monitor: Monitor, rule: str, label: str, detail: dict[str, Any], retriever: str = ""
               ) -> None:
    a = MonitorAlert(monitor_id=monitor.id, rule=rule, retriever=retriever, opened_label=label, detail=detail)
    s.add(a)
    s.flush()
    if monitor.webhook_url:
        s.add(WebhookDelivery(monitor_id=monitor.id, alert_id=a.id, kind="alert", status="pending", next_at=0.0,
                              payload={**detail, "status": "firing", "alert_id": a.id}))


def clear_alert(s: Session, monitor: Monitor, rule: str, label: str, detail: dict[str, Any], retriever: str = ""
                ) -> None:
    a = s.scalars(select(MonitorAlert).where(MonitorAlert.monitor_id == monitor.id, MonitorAlert.rule == rule,
                                             MonitorAlert.retriever == retriever, MonitorAlert.cleared_at.is_(None))
                  .order_by(MonitorAlert.id.desc())).first()
    if a is None:
        return
    a.cleared_at, a.cleared_label = utcnow(), label
    if monitor.webhook_url:
        s.add(WebhookDelivery(monitor_id=monitor.id, alert_id=a.id, kind="recovery", status="pending", next_at=0.0,
                              payload={**detail, "status": "resolved", "alert_id": a.id, "opened": a.opened_label}))


def open_alerts(s: Session, monitor_id: int | None = None) -> list[MonitorAlert]:
    q = select(MonitorAlert).where(MonitorAlert.cleared_at.is_(None))
    if monitor_id is not None:
        q = q.where(MonitorAlert.monitor_id == monitor_id)
    return list(s.scalars(q.order_by(MonitorAlert.id)))


def list_alerts(s: Session, monitor_id: int, limit: int = 200) -> list[MonitorAlert]:
    return list(s.scalars(select(MonitorAlert).where(MonitorAlert.monitor_id == monitor_id)
                          .order_by(MonitorAlert.id.desc()).limit(limit)))


def due_deliveries(s: Session, now: float, limit: int = 20) -> list[WebhookDelivery]:
    return list(s.scalars(select(WebhookDelivery).where(WebhookDelivery.status == "pending",
                                                        WebhookDelivery.next_at <= now)
                          .order_by(WebhookDelivery.id).limit(limit)))


def claim_delivery(db: Database, delivery_id: int, now: float, hold: float) -> bool:
    """Hold a pending delivery for ``hold`` seconds (its ``next_at`` moves), so that one worker sends it."""
    with db.write() as s:
        res = s.execute(update(WebhookDelivery).where(and_(WebhookDelivery.id == delivery_id,
                                                           WebhookDelivery.status == "pending",
                                                           WebhookDelivery.next_at <= now))
                        .values(next_at=now + hold))
        return bool(res.rowcount == 1)  # type: ignore[attr-defined]


def delivery_done(db: Database, delivery_id: int, *, ok: bool, error: str | None, next_at: float | None) -> None:
    """Record a try: sent; or failed with the next try at ``next_at`` (None: given up)."""
    with db.write() as s:
        values: dict[str, Any] = {"attempts": WebhookDelivery.attempts + 1, "last_error": error}
        if ok:
            values.update(status="sent", sent_at=utcnow())
        elif next_at is None:
            values.update(status="failed")
        else:
            values.update(next_at=next_at)
        s.execute(update(WebhookDelivery).where(WebhookDelivery.id == delivery_id).values(**values))


# --- the judge's daily spend ----------------------------------------------------------------------------------
def spend_today(s: Session, monitor_id: int) -> tuple[int, int, float]:
    row = s.scalars(select(JudgeSpend).where(JudgeSpend.monitor_id == monitor_id,
                                             JudgeSpend.day == day_of(time.time()))).first()
    return (0, 0, 0.0) if row is None else (row.calls, row.tokens, row.money)


def add_spend(s: Session, db: Database, monitor_id: int, calls: int, tokens: int, money: float) -> None:
    stmt = db.insert(JudgeSpend).values(monitor_id=monitor_id, day=day_of(time.time()), calls=calls, tokens=tokens,
                                        money=money)
    s.execute(stmt.on_conflict_do_update(index_elements=["monitor_id", "day"], set_={
        "calls": JudgeSpend.calls + calls, "tokens": JudgeSpend.tokens + tokens, "money": JudgeSpend.money + money}))
