"""Monitors in the service: event ingest (group commits), the monitor workers (canary schedules, window
aggregation, judging, alerts, webhooks, retention) and the Prometheus exposition.  The statistics, signals and
rules are the library's (:mod:`rankscope.monitor`)."""
