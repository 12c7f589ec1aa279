"""``/metrics``: the monitors in the Prometheus text format (``prometheus-client``), read from the database on
each scrape, so every process of the service answers the same.

Gauges (labels ``monitor``, ``kind``; ``metric`` for a measure or signal, ``retriever`` for traffic):

* ``rankscope_monitor_value``, ``rankscope_monitor_lower``, ``rankscope_monitor_upper`` — the latest checked
  round's mean of each metric and its 95% betting interval; for traffic, the latest closed window's judged
  metrics and signals (``lower`` / ``upper`` only where there is an interval);
* ``rankscope_monitor_alert_firing`` — 1 while an alert episode of the rule (``rule``) is open, else 0;
* ``rankscope_monitor_last_round_timestamp_seconds`` — when the latest checked round was scheduled;
* ``rankscope_monitor_rounds_missed`` — scheduled times that passed without a round;
* ``rankscope_monitor_events`` — raw events stored now (after retention); counters
  ``rankscope_monitor_events_rejected_total`` (``reason``) — events refused since the monitor was created;
* ``rankscope_monitor_webhook_failed`` — deliveries given up.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rankscope.service.db import Database

__all__ = ["render_metrics", "CONTENT_TYPE"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _Collector:
    def __init__(self, db: Database) -> None:
        self.db = db

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
        from sqlalchemy import func, select

        from rankscope.monitor.alerts import Rule
        from rankscope.service.db import MonitorReject, WebhookDelivery
        from rankscope.service.store import monitoring as mstore

        base = ["monitor", "kind", "metric", "retriever"]
        value = GaugeMetricFamily("rankscope_monitor_value", "Latest mean of a metric (round or window) or a "
                                  "signal's value", labels=base)
        lower = GaugeMetricFamily("rankscope_monitor_lower", "Lower end of the latest interval", labels=base)
        upper = GaugeMetricFamily("rankscope_monitor_upper", "Upper end of the latest interval", labels=base)
        firing = GaugeMetricFamily("rankscope_monitor_alert_firing", "1 while an alert of the rule is open",
                                   labels=["monitor", "kind", "rule", "retriever"])
        last = GaugeMetricFamily("rankscope_monitor_last_round_timestamp_seconds",
                                 "Scheduled time of the latest checked round", labels=["monitor"])
        missed = GaugeMetricFamily("rankscope_monitor_rounds_missed", "Scheduled times without a round",
                                   labels=["monitor"])
        events = GaugeMetricFamily("rankscope_monitor_events", "Raw events stored", labels=["monitor"])
        rejected = CounterMetricFamily("rankscope_monitor_events_rejected", "Events refused, by reason",
                                       labels=["monitor", "reason"])
        failed = GaugeMetricFamily("rankscope_monitor_webhook_failed", "Webhook deliveries given up",
                                   labels=["monitor"])
        with self.db.read() as s:
            for m in mstore.list_monitors(s):
                open_rules = {(a.rule, a.retriever) for a in mstore.open_alerts(s, m.id)}
                if m.kind == "canary":
                    done = mstore.list_rounds(s, m.id, limit=1, status="done")
                    if done:
                        r = done[-1]
                        last.add_metric([m.name], r.scheduled_for)
                        for metric, iv in ((r.summary or {}).get("metrics") or {}).items():
                            _add(value, lower, upper, [m.name, m.kind, metric, ""], iv)
                        for name, v in ((r.summary or {}).get("signals") or {}).items():
                            if isinstance(v, (int, float)):
                                value.add_metric([m.name, m.kind, name, ""], float(v))
                    missed.add_metric([m.name], float((m.state or {}).get("missed", 0)))
                    versions = [""]
                else:
                    windows = [w for w in mstore.list_windows(s, m.id, limit=200) if w.closed]
                    latest: dict[str, Any] = {}
                    for w in windows:
                        latest[w.retriever] = w
                    for retriever, w in latest.items():
                        for name, v in (w.signals or {}).items():
                            if isinstance(v, (int, float)) and not isinstance(v, bool):
                                value.add_metric([m.name, m.kind, name, retriever], float(v))
                        for metric, iv in ((w.judged or {}).get("metrics") or {}).items():
                            _add(value, lower, upper, [m.name, m.kind, metric, retriever], iv)
                    events.add_metric([m.name], float(mstore.event_count(s, m.id)))
                    versions = sorted(latest) or [""]
                for rule in m.rules:
                    key = Rule.from_dict(rule).key
                    for retriever in versions:
                        firing.add_metric([m.name, m.kind, key, retriever], 1.0 if (key, retriever) in open_rules
                                          else 0.0)
                for reason, n in s.execute(select(MonitorReject.reason, func.sum(MonitorReject.count)).where(
                        MonitorReject.monitor_id == m.id).group_by(MonitorReject.reason)).all():
                    rejected.add_metric([m.name, reason], float(n))
                n_failed = s.execute(select(func.count()).select_from(WebhookDelivery).where(
                    WebhookDelivery.monitor_id == m.id, WebhookDelivery.status == "failed")).scalar_one()
                failed.add_metric([m.name], float(n_failed))
        yield from (value, lower, upper, firing, last, missed, events, rejected, failed)


def _add(value: Any, lower: Any, upper: Any, labels: list[str], iv: dict[str, Any]) -> None:
    if iv.get("mean") is None:
        return
    value.add_metric(labels, float(iv["mean"]))
    if iv.get("lower") is not None:
        lower.add_metric(labels, float(iv["lower"]))
        upper.add_metric(labels, float(iv["upper"]))


def render_metrics(db: Database) -> bytes:
    """The exposition text of every monitor."""
    from prometheus_client import CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Collector(db))  # type: ignore[arg-type]
    return bytes(generate_latest(registry))
