"""Monitoring a live retrieval system: canary rounds, production traffic, alerts you can trust.

* :mod:`~rankscope.monitor.events` — production retrieval events (JSON Lines), checked, bad ones rejected with a
  reason;
* :mod:`~rankscope.monitor.otlp` — events from OpenTelemetry traces (OpenInference retriever spans);
* :mod:`~rankscope.monitor.windows` — time windows per retriever version and their label-free counts;
* :mod:`~rankscope.monitor.signals` — PSI, KS, rank-biased overlap, latency percentiles;
* :mod:`~rankscope.monitor.judged` — a sample judged by the cached LLM judge within a daily budget, scored by the
  engine, with intervals;
* :mod:`~rankscope.monitor.alerts` — alert rules (drop against a baseline, below a standard, a signal's limit)
  whose evidence is anytime-valid (the betting e-values of :mod:`rankscope.stats.betting`);
* :mod:`~rankscope.monitor.schedule` — every N seconds or cron, missed times said;
* :mod:`~rankscope.monitor.simulate` — a simulated canary stream (what the alerts are checked against).

The service (``rankscope serve``) runs monitors (schedules, ingest, ``/metrics``, pages); see ``docs/monitoring.md``.
Names are imported lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "RetrievalEvent": "rankscope.monitor.events",
    "Hit": "rankscope.monitor.events",
    "EventRejected": "rankscope.monitor.events",
    "Rejection": "rankscope.monitor.events",
    "parse_event": "rankscope.monitor.events",
    "parse_jsonl": "rankscope.monitor.events",
    "decode_otlp": "rankscope.monitor.otlp",
    "WindowStats": "rankscope.monitor.windows",
    "aggregate": "rankscope.monitor.windows",
    "version_overlap": "rankscope.monitor.windows",
    "psi": "rankscope.monitor.signals",
    "ks_test": "rankscope.monitor.signals",
    "rbo": "rankscope.monitor.signals",
    "latency_percentiles": "rankscope.monitor.signals",
    "sample_events": "rankscope.monitor.judged",
    "judge_events": "rankscope.monitor.judged",
    "JudgeBudget": "rankscope.monitor.judged",
    "Rule": "rankscope.monitor.alerts",
    "RuleState": "rankscope.monitor.alerts",
    "Check": "rankscope.monitor.alerts",
    "parse_rule": "rankscope.monitor.alerts",
    "rules_from_standard": "rankscope.monitor.alerts",
    "check_sequential": "rankscope.monitor.alerts",
    "check_signal": "rankscope.monitor.alerts",
    "paired_differences": "rankscope.monitor.alerts",
    "Schedule": "rankscope.monitor.schedule",
    "simulate_canary": "rankscope.monitor.simulate",
}

__all__ = [
    "Check",
    "EventRejected",
    "Hit",
    "JudgeBudget",
    "Rejection",
    "RetrievalEvent",
    "Rule",
    "RuleState",
    "Schedule",
    "WindowStats",
    "aggregate",
    "check_sequential",
    "check_signal",
    "decode_otlp",
    "judge_events",
    "ks_test",
    "latency_percentiles",
    "paired_differences",
    "parse_event",
    "parse_jsonl",
    "parse_rule",
    "psi",
    "rbo",
    "rules_from_standard",
    "sample_events",
    "simulate_canary",
    "version_overlap",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

if TYPE_CHECKING:
    from rankscope.monitor.alerts import (
        Check,
        Rule,
        RuleState,
        check_sequential,
        check_signal,
        paired_differences,
        parse_rule,
        rules_from_standard,
    )
    from rankscope.monitor.events import EventRejected, Hit, Rejection, RetrievalEvent, parse_event, parse_jsonl
    from rankscope.monitor.judged import JudgeBudget, judge_events, sample_events
    from rankscope.monitor.otlp import decode_otlp
    from rankscope.monitor.schedule import Schedule
    from rankscope.monitor.signals import ks_test, latency_percentiles, psi, rbo
    from rankscope.monitor.simulate import simulate_canary
    from rankscope.monitor.windows import WindowStats, aggregate, version_overlap
