"""Tables of monitors: canary rounds, production events, windows, alert episodes, webhook deliveries.

Exactly-once by unique constraints, as the jobs are: a canary round per ``(monitor, scheduled
time)``, an event per ``(monitor, key)`` (a client's retry is stored once), a window aggregate per
``(monitor, start, retriever)``, a webhook delivery per ``(alert, kind)`` (one alert per episode and
one recovery).  A monitor row holds its rules' state (:class:`rankscope.monitor.RuleState`) and a
``version`` that every update checks, so that two workers (or a worker restarted after a crash)
never apply the same round or batch of events twice.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from rankscope.service.db.models import NEVER_REUSED, Base, BigId, UTCDateTime, utcnow

__all__ = ["Monitor", "MonitorRound", "MonitorEvent", "MonitorWindow", "MonitorAlert", "MonitorReject",
           "WebhookDelivery", "JudgeSpend"]


class Monitor(Base):
    """A canary (``kind='canary'``: a test set against a live retriever on a schedule) or a traffic monitor
    (``kind='traffic'``: production events in windows).  ``lease_*``: the worker that runs its schedule and
    aggregation now."""

    __tablename__ = "monitors"
    __table_args__ = NEVER_REUSED  # a deleted monitor's id never names another one

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    kind: Mapped[str] = mapped_column(String(20))
    test_set_id: Mapped[int | None] = mapped_column(ForeignKey("test_sets.id", ondelete="CASCADE"), nullable=True)
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    rules: Mapped[list[Any]] = mapped_column(JSON)
    webhook_url: Mapped[str | None] = mapped_column(Text, nullable=True)
    state: Mapped[dict[str, Any]] = mapped_column(JSON)
    version: Mapped[int] = mapped_column(Integer, default=0)
    paused: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    lease_owner: Mapped[str | None] = mapped_column(String(64), nullable=True)
    lease_until: Mapped[float] = mapped_column(Float, default=0.0)


class MonitorRound(Base):
    """One scheduled time of a canary: ``running`` (its live evaluation ``job_id`` queued or running), ``done``
    (checked: ``summary``), ``failed``, or ``missed`` (the time passed without a round: ``summary.reason``)."""

    __tablename__ = "monitor_rounds"
    __table_args__ = (UniqueConstraint("monitor_id", "scheduled_for", name="uq_monitor_rounds_time"),
                      Index("ix_monitor_rounds_monitor_status", "monitor_id", "status"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    monitor_id: Mapped[int] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"))
    scheduled_for: Mapped[float] = mapped_column(Float)
    status: Mapped[str] = mapped_column(String(20))
    job_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    summary: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class MonitorEvent(Base):
    """A production retrieval event as received (kept ``event_retention_days``; the windows' aggregates stay)."""

    __tablename__ = "monitor_events"
    __table_args__ = (UniqueConstraint("monitor_id", "key", name="uq_monitor_events_key"),
                      Index("ix_monitor_events_monitor_time", "monitor_id", "time"),
                      Index("ix_monitor_events_pending", "monitor_id", "aggregated", "id"))

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    monitor_id: Mapped[int] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(40))
    time: Mapped[float] = mapped_column(Float)
    received_at: Mapped[float] = mapped_column(Float)
    retriever: Mapped[str] = mapped_column(String(200))
    query: Mapped[str] = mapped_column(Text)
    results: Mapped[list[Any]] = mapped_column(JSON)
    latency_ms: Mapped[float | None] = mapped_column(Float, nullable=True)
    source: Mapped[str] = mapped_column(String(10))
    #: counted in its window's aggregate (marked in the same transaction: never counted twice, never skipped)
    aggregated: Mapped[bool] = mapped_column(Boolean, default=False)


class MonitorWindow(Base):
    """The aggregate of one window of one retriever version (``stats``: a WindowStats), and once closed its
    signals, judged metrics and rule checks."""

    __tablename__ = "monitor_windows"
    __table_args__ = (UniqueConstraint("monitor_id", "start", "retriever", name="uq_monitor_windows_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    monitor_id: Mapped[int] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"))
    start: Mapped[float] = mapped_column(Float)
    retriever: Mapped[str] = mapped_column(String(200))
    stats: Mapped[dict[str, Any]] = mapped_column(JSON)
    closed: Mapped[bool] = mapped_column(Boolean, default=False)
    signals: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    judged: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    checks: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)


class MonitorAlert(Base):
    """One alert episode of one rule: opened at a round or window (``opened_label``), cleared later (or not yet)."""

    __tablename__ = "monitor_alerts"
    __table_args__ = (Index("ix_monitor_alerts_monitor", "monitor_id", "cleared_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    monitor_id: Mapped[int] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"))
    rule: Mapped[str] = mapped_column(String(200))
    retriever: Mapped[str] = mapped_column(String(200), default="")
    opened_at: Mapped[dt.datetime] = mapped_column(UTCDateTime(), default=utcnow)
    opened_label: Mapped[str] = mapped_column(String(100))
    cleared_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)
    cleared_label: Mapped[str | None] = mapped_column(String(100), nullable=True)
    detail: Mapped[dict[str, Any]] = mapped_column(JSON)


class MonitorReject(Base):
    """How many events a monitor rejected per UTC day and reason, with the last example's problem."""

    __tablename__ = "monitor_rejects"
    __table_args__ = (UniqueConstraint("monitor_id", "day", "reason", name="uq_monitor_rejects_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    monitor_id: Mapped[int] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"))
    day: Mapped[str] = mapped_column(String(10))
    reason: Mapped[str] = mapped_column(String(40))
    count: Mapped[int] = mapped_column(Integer, default=0)
    example: Mapped[str] = mapped_column(Text, default="")


class WebhookDelivery(Base):
    """A JSON POST owed to the monitor's webhook: ``pending`` (next try at ``next_at``), ``sent`` or ``failed``."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (UniqueConstraint("alert_id", "kind", name="uq_webhook_alert_kind"),
                      Index("ix_webhook_status_next", "status", "next_at"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    monitor_id: Mapped[int] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"))
    alert_id: Mapped[int] = mapped_column(ForeignKey("monitor_alerts.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(20), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_at: Mapped[float] = mapped_column(Float, default=0.0)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    sent_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime(), nullable=True)


class JudgeSpend(Base):
    """What a monitor's judging spent on one UTC day (the daily budget is checked against it)."""

    __tablename__ = "judge_spend"
    __table_args__ = (UniqueConstraint("monitor_id", "day", name="uq_judge_spend_day"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    monitor_id: Mapped[int] = mapped_column(ForeignKey("monitors.id", ondelete="CASCADE"))
    day: Mapped[str] = mapped_column(String(10))
    calls: Mapped[int] = mapped_column(Integer, default=0)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    money: Mapped[float] = mapped_column(Float, default=0.0)
