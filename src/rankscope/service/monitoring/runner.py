"""The monitor workers: each tick, for every monitor whose lease they hold, they move it forward.

* **Canary**: a round whose live evaluation finished is checked (per-metric means with betting
  intervals, every rule, alert episodes opened or cleared, webhooks queued) in one transaction with the
  monitor's rule states; then, if no round is running, the schedule says what is due: the newest
  scheduled time gets a round (a normal live evaluation, run by the live workers), the times that passed
  without one are recorded as *missed* with the reason (``down``: the service was not running;
  ``overlap``: the previous round was still running).  A round exists once per scheduled time (a
  unique row), so a restart never runs one twice; its evaluation is a job with a lease, so a crash
  never loses one.
* **Traffic**: events not yet counted are aggregated into their windows and marked counted in the
  same transaction; a window whose time is over is closed: its signals (against the reference
  window), the overlap with other versions, a judged sample (within the day's budget) and the rule
  checks.
* **Webhooks** owed are sent (retried with backoff); **raw events** older than the retention are
  deleted once counted.

A monitor's lease is renewed every tick; a worker that dies leaves it to another after
``lease_seconds``, and what it did not commit is done again (the writes check the monitor's
``version``).
"""

from __future__ import annotations

import logging
import math
import os
import socket
import threading
import time
import uuid
from typing import Any

import numpy as np

from rankscope.monitor.alerts import SIGNALS, Check, Rule, RuleState, check_sequential, check_signal, metric_bounds
from rankscope.monitor.alerts import paired_differences as paired
from rankscope.monitor.events import Hit, RetrievalEvent
from rankscope.monitor.schedule import Schedule
from rankscope.monitor.windows import WindowStats, aggregate, normalise_query, version_overlap
from rankscope.service import store
from rankscope.service.db import Database, Monitor, MonitorEvent, MonitorWindow
from rankscope.service.settings import Settings
from rankscope.service.store import monitoring as mstore

__all__ = ["MonitorRunner", "tick", "round_label"]

log = logging.getLogger("rankscope.service.monitoring")
AGGREGATE_BATCH = 5000


class _Moved(Exception):
    """The monitor changed under us (another worker, or a newer version): roll back, look again next tick."""


def round_label(t: float) -> str:
    """A scheduled time as the dashboard and alerts show it (UTC, to the second)."""
    import datetime as dt

    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _rules(m: Monitor) -> list[Rule]:
    return [Rule.from_dict(r) for r in m.rules]


def _said(check: Check) -> dict[str, str]:
    from rankscope.choices import LANGS

    return {lang: check.text(lang) for lang in LANGS}


def _detail(m: Monitor, check: Check, retriever: str = "", link: str | None = None) -> dict[str, Any]:
    from rankscope.choices import LANGS

    return {"monitor": m.name, "monitor_id": m.id, "rule": check.rule.key,
            "rule_text": {lang: check.rule.describe(lang) for lang in LANGS}, "kind": check.rule.kind,
            "metric": check.rule.metric, "retriever": retriever, "label": check.label, "text": _said(check),
            "check": check.to_dict(), "monitor_page": f"/monitors/{m.id}", "report": link}


def _apply(s: Any, m: Monitor, checks: list[Check], retriever: str = "", link: str | None = None) -> None:
    for c in checks:
        if c.opened:
            mstore.open_alert(s, m, c.rule.key, c.label, _detail(m, c, retriever, link), retriever)
        elif c.cleared:
            mstore.clear_alert(s, m, c.rule.key, c.label, _detail(m, c, retriever, link), retriever)


def _interval(values: np.ndarray, metric: str, alpha: float = 0.05) -> dict[str, Any]:
    from rankscope.stats.betting import betting_interval

    if not values.size:
        return {"mean": None, "lower": None, "upper": None, "n": 0}
    lo, hi, _ = metric_bounds(metric)
    v = np.clip(values, lo, hi)
    low, high = betting_interval(v, bounds=(lo, hi), alpha=alpha)
    return {"mean": float(v.mean()), "lower": float(low), "upper": float(high), "n": int(v.size)}


# --- canary ---------------------------------------------------------------------------------------------------
def _baseline(db: Database, m: Monitor, state: dict[str, Any]) -> tuple[dict[str, dict[str, Any]] | None, str]:
    """The baseline's per-query scores and what it is (the first round, a pinned round or a pinned run)."""
    b = m.params.get("baseline") or {"kind": "first"}
    with db.read() as s:
        if b["kind"] == "run":
            from rankscope.engine import Evaluator

            rec = store.get_run(s, int(b["id"]))
            qrels = store.load_qrels(store.get_testset(s, rec.test_set_id))
            res = Evaluator(qrels, m.params["metrics"]).evaluate(store.load_run(rec))
            per = res.per_query.to_dict()
            return per, f"run {b['id']}"
        job = state.get("baseline_job") if b["kind"] == "first" else None
        if b["kind"] == "round":
            r = s.get(mstore.MonitorRound, int(b["id"]))
            job = r.job_id if r is not None and r.status == "done" else None
        if job is None:
            return None, ""
        scores, _ = mstore.round_scores(s, job)
        return scores, f"round of job {job[:8]}"


def _canary_signals(db: Database, job_id: str, asked: int) -> dict[str, Any]:
    from rankscope.monitor.signals import latency_percentiles

    with db.read() as s:
        live = store.live_summary(s, job_id)
        rows = store.live_run_rows(s, job_id)
    empty = sum(1 for _, hits in rows if not hits)
    lat = latency_percentiles(live["latencies_ms"]) or {}
    n = max(asked, live["asked"])
    return {"asked": n, "answered": live["answered"], "error_rate": len(live["errors"]) / n if n else None,
            "empty_rate": empty / len(rows) if rows else None,
            **{f"latency_{k}": lat.get(k) for k in ("p50", "p95", "p99")}}


def _check_round(db: Database, m: Monitor, round_id: int, scheduled_for: float, job: Any) -> None:
    label = round_label(scheduled_for)
    state = dict(m.state)
    rule_states = dict(state.get("rules") or {})
    metrics = list(m.params["metrics"])
    summary: dict[str, Any] = {"job_id": job.id, "label": label, "metrics": {}, "checks": []}
    if job.status == "failed":
        summary["error"] = job.error
        status = "failed"
        scores: dict[str, dict[str, Any]] = {}
        errors: dict[str, str] = {}
    else:
        status = "done"
        with db.read() as s:
            scores, errors = mstore.round_scores(s, job.id)
    signals = _canary_signals(db, job.id, job.total)
    summary["signals"] = signals
    summary["failed_queries"] = len(errors)
    for metric in metrics:
        vals = np.array([v[metric] for v in scores.values() if v.get(metric) is not None], dtype=np.float64)
        summary["metrics"][metric] = _interval(vals, metric)
    baseline, base_name = (None, "")
    if status == "done":
        baseline, base_name = _baseline(db, m, state)
        if baseline is None and (m.params.get("baseline") or {"kind": "first"})["kind"] == "first":
            state["baseline_job"] = job.id
            summary["baseline"] = "this round (the first)"
        elif base_name:
            summary["baseline"] = base_name
    checks: list[Check] = []
    seed = int(m.params.get("seed", 0))
    for rule in _rules(m):
        st = RuleState.from_dict(rule_states.get(rule.key))
        if rule.kind == "signal":
            c = check_signal(rule, st, signals.get(rule.metric), label=label)
        elif status != "done":
            c = Check(rule, label, st.firing, False, False, None)
        elif rule.kind == "drop":
            if baseline is None or state.get("baseline_job") == job.id:
                c = Check(rule, label, st.firing, False, False, None)
            else:
                _, _, better = metric_bounds(rule.metric)
                cur = {q: v.get(rule.metric) for q, v in scores.items()}
                base = {q: v.get(rule.metric) for q, v in baseline.items()}
                ids, diffs, unpaired = paired(cur, base, better)
                c = check_sequential(rule, st, diffs, ids=ids, label=label, seed=seed)
                summary.setdefault("unpaired", {})[rule.metric] = unpaired
        else:
            ids = [q for q, v in scores.items() if v.get(rule.metric) is not None]
            c = check_sequential(rule, st, [scores[q][rule.metric] for q in ids], ids=ids, label=label, seed=seed)
        rule_states[rule.key] = st.to_dict()
        checks.append(c)
    summary["checks"] = [{**c.to_dict(), "text": _said(c)} for c in checks]
    state["rules"] = rule_states
    with db.write() as s:
        fresh = mstore.get_monitor(s, m.id)
        if fresh.version != m.version:
            raise _Moved
        mstore.finish_round(s, round_id, status, summary)
        _apply(s, fresh, checks, link=f"/evaluations/{job.id}")
        if not mstore.save_state(s, fresh, state):
            raise _Moved


def _canary(db: Database, settings: Settings, m: Monitor) -> None:
    with db.read() as s:
        running = mstore.running_rounds(s, m.id)
    for r, job in running:
        if job is None:  # the evaluation was deleted: the round failed
            with db.write() as s:
                mstore.finish_round(s, r.id, "failed", {"error": "its evaluation was deleted"})
            continue
        if job.status in ("done", "failed"):
            _check_round(db, m, r.id, r.scheduled_for, job)
            with db.read() as s:
                m = mstore.get_monitor(s, m.id)
    with db.read() as s:
        busy = bool(mstore.running_rounds(s, m.id))
    sched = Schedule.from_dict(m.params["schedule"])
    state = dict(m.state)
    now = time.time()
    due = sched.due(state.get("last_scheduled"), now)
    key = (id(db), m.id)
    prev = _LAST_LOOK.get(key)  # when this worker last looked at the monitor, and whether a round was running then
    _LAST_LOOK[key] = (now, busy)
    if due.run is None:
        return
    times = [*due.missed, due.run] if busy else list(due.missed)

    def reason(t: float) -> str:
        """``down`` when no worker looked at the monitor at that time (this worker had not, since it started or took
        the monitor over; or it was behind), ``overlap`` when the previous round was still running."""
        if prev is None or t < prev[0]:
            return "down"
        return "overlap" if prev[1] or busy else "down"

    with db.write() as s:
        fresh = mstore.get_monitor(s, m.id)
        if fresh.version != m.version:
            raise _Moved
        for why in ("down", "overlap"):
            mstore.add_missed_rounds(s, m.id, [t for t in times if reason(t) == why], why)
        state["missed"] = int(state.get("missed", 0)) + due.n_missed + (1 if busy else 0)
        if not busy:  # never two rounds at once: while one runs, the times due are missed, said as such
            mstore.start_round(s, fresh, due.run, f"{m.name} · {round_label(due.run)}")
        state["last_scheduled"] = due.run
        if not mstore.save_state(s, fresh, state):
            raise _Moved


#: per (database, monitor): when this process's workers last looked at its schedule and whether a round was running
_LAST_LOOK: dict[tuple[int, int], tuple[float, bool]] = {}


# --- traffic --------------------------------------------------------------------------------------------------
def _event(row: MonitorEvent) -> RetrievalEvent:
    return RetrievalEvent(row.time, row.query, tuple(Hit(str(h[0]), h[1], h[2]) for h in row.results),
                          row.latency_ms, row.retriever, None, row.source, stored_key=row.key)


def _merge(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    return WindowStats.from_dict(old).merge(WindowStats.from_dict(new)).to_dict()


_KNOWN: dict[tuple[int, int], tuple[float, frozenset[str]]] = {}
KNOWN_SECONDS = 600.0


def _known_ids(db: Database, m: Monitor) -> frozenset[str] | None:
    """The document ids of the monitor's corpus (a test set's documents and judged documents; None: no corpus), read
    again every ten minutes."""
    if m.test_set_id is None:
        return None
    key = (id(db), m.id)
    hit = _KNOWN.get(key)
    if hit is not None and time.monotonic() - hit[0] < KNOWN_SECONDS:
        return hit[1]
    from sqlalchemy import select

    from rankscope.service.db import Document

    with db.read() as s:
        ids = set(s.scalars(select(Document.doc_id).where(Document.test_set_id == m.test_set_id)))
        ids |= {str(d) for d in store.load_qrels(store.get_testset(s, m.test_set_id)).to_arrow()["doc_id"].to_pylist()}
    _KNOWN[key] = (time.monotonic(), frozenset(ids))
    return _KNOWN[key][1]


def _aggregate(db: Database, m: Monitor) -> Monitor:
    seconds = float(m.params.get("window_seconds", 3600))
    short = int(m.params.get("short_below", 3))
    known = _known_ids(db, m)
    while True:
        with db.read() as s:
            rows = mstore.pending_events(s, m.id, AGGREGATE_BATCH)
        if not rows:
            return m
        agg = aggregate([_event(r) for r in rows], seconds, known_ids=known, short_below=short)
        with db.write() as s:
            fresh = mstore.get_monitor(s, m.id)
            if fresh.version != m.version:
                raise _Moved
            mstore.upsert_windows(s, [(k[0], k[1], w.to_dict()) for k, w in agg.items()], m.id, _merge)
            mstore.mark_aggregated(s, [r.id for r in rows])
            state = dict(fresh.state)
            state["aggregated"] = int(state.get("aggregated", 0)) + len(rows)
            if not mstore.save_state(s, fresh, state):
                raise _Moved
        with db.read() as s:
            m = mstore.get_monitor(s, m.id)


def _reference(s: Any, m: Monitor, w: MonitorWindow) -> WindowStats | None:
    mode = m.params.get("reference", "first")
    q = s.query(MonitorWindow).filter(MonitorWindow.monitor_id == m.id, MonitorWindow.retriever == w.retriever,
                                      MonitorWindow.closed.is_(True), MonitorWindow.start < w.start)
    row = (q.order_by(MonitorWindow.start.desc()) if mode == "previous" else q.order_by(MonitorWindow.start)).first()
    if row is None:  # a new version's first window: against the latest window of the version before it
        row = s.query(MonitorWindow).filter(MonitorWindow.monitor_id == m.id, MonitorWindow.closed.is_(True),
                                            MonitorWindow.retriever != w.retriever, MonitorWindow.start <= w.start
                                            ).order_by(MonitorWindow.start.desc()).first()
    return WindowStats.from_dict(row.stats) if row is not None else None


def _overlap(db: Database, m: Monitor, w: MonitorWindow, events: list[RetrievalEvent]) -> dict[str, Any] | None:
    """RBO of this version's answers against another version's for the same queries: a shadow answering in the same
    window, else the version seen last before this one (its latest answer per query in the week before)."""
    seconds = float(m.params.get("window_seconds", 3600))
    depth = int(m.params.get("rbo_depth", 10))
    with db.read() as s:
        others = [r for r in s.query(MonitorWindow.retriever).filter(
            MonitorWindow.monitor_id == m.id, MonitorWindow.start == w.start,
            MonitorWindow.retriever != w.retriever).distinct()]
        other = others[0][0] if others else None
        if other is None:
            first = s.query(MonitorWindow.start).filter(MonitorWindow.monitor_id == m.id,
                                                        MonitorWindow.retriever == w.retriever
                                                        ).order_by(MonitorWindow.start).first()
            prev = s.query(MonitorWindow.retriever).filter(
                MonitorWindow.monitor_id == m.id, MonitorWindow.retriever != w.retriever,
                MonitorWindow.start < (first[0] if first else w.start)).order_by(MonitorWindow.start.desc()).first()
            other = prev[0] if prev else None
        if other is None:
            return None
        ref_rows = mstore.latest_events_by_query(s, m.id, other, before=w.start + seconds,
                                                 since=w.start - 7 * 86400)
    reference: dict[str, list[str]] = {}
    for r in ref_rows:  # newest first: the first seen per query is its latest answer
        reference.setdefault(normalise_query(r.query), [str(h[0]) for h in r.results])
    out = version_overlap(events, reference, depth=depth)
    return {"vs": other, **out}


def _judge_window(db: Database, settings: Settings, m: Monitor, events: list[RetrievalEvent]) -> dict[str, Any] | None:
    from rankscope.labels import Endpoint, JudgeSettings
    from rankscope.monitor.judged import JudgeBudget, Spent, judge_events, sample_events

    j = m.params.get("judge")
    if not j or not settings.judge_url or not settings.judge_model:
        return None
    sample = j.get("sample") or {"per_window": 50}
    chosen = sample_events(events, rate=sample.get("rate"), per_window=sample.get("per_window"),
                           seed=int(m.params.get("seed", 0)))
    budget = JudgeBudget.from_dict(j.get("budget"))
    with db.read() as s:
        calls, tokens, money = mstore.spend_today(s, m.id)
    spent = Spent(calls, tokens, money)
    before = Spent(calls, tokens, money)
    js = JudgeSettings(Endpoint(settings.judge_url, api_key_env=settings.judge_key_env), settings.judge_model,
                       lang=j.get("lang", "en"))
    cache = settings.judge_cache or os.path.join(os.path.expanduser("~"), ".cache", "rankscope-monitor-judge.sqlite3")
    os.makedirs(os.path.dirname(os.path.abspath(cache)), exist_ok=True)
    out = judge_events(chosen, js, metrics=j.get("metrics") or ["precision@5", "ndcg@10", "hit_rate@5"],
                       cache=cache, budget=budget, spent=spent, concurrency=int(j.get("concurrency", 4)))
    with db.write() as s:
        mstore.add_spend(s, db, m.id, spent.calls - before.calls, spent.tokens - before.tokens,
                         spent.money - before.money)
    data = out.to_dict()
    data["per_event"] = out.per_event
    data["events"] = {e.key: e.query for e in chosen[:500]}
    return data


def _versus(db: Database, m: Monitor, w: MonitorWindow, judged: dict[str, Any]) -> dict[str, Any] | None:
    """This version's judged means against another version's on its own judged sample: the same window's (a shadow),
    else the latest judged window of another version before it; the difference with an interval holding when both
    intervals do (:func:`rankscope.monitor.judged.version_difference`)."""
    from rankscope.monitor.judged import version_difference

    with db.read() as s:
        rows = s.query(MonitorWindow).filter(MonitorWindow.monitor_id == m.id, MonitorWindow.retriever != w.retriever,
                                             MonitorWindow.closed.is_(True), MonitorWindow.start <= w.start,
                                             MonitorWindow.judged.is_not(None)
                                             ).order_by(MonitorWindow.start.desc()).limit(20).all()
    other = next((r for r in rows if (r.judged or {}).get("scored")), None)
    if other is None:
        return None
    mine = judged.get("metrics") or {}
    theirs = (other.judged or {}).get("metrics") or {}
    diffs = {k: version_difference(mine[k], theirs[k]) for k in mine if k in theirs}
    return {"version": other.retriever, "window": other.id, "start": other.start,
            "difference": {k: v for k, v in diffs.items() if v is not None}}


def _close(db: Database, settings: Settings, m: Monitor, w: MonitorWindow) -> None:
    seconds = float(m.params.get("window_seconds", 3600))
    label = f"{round_label(w.start)} · {w.retriever}"
    with db.read() as s:
        ref = _reference(s, m, w)
        rows = mstore.window_events(s, m.id, w.start, w.start + seconds, w.retriever, limit=50_000)
    stats = WindowStats.from_dict(w.stats)
    signals = stats.signals(ref)
    signals["reference"] = None if ref is None else ref.start
    signals["reference_version"] = None if ref is None else ref.retriever
    events = [_event(r) for r in rows]
    overlap = _overlap(db, m, w, events) if events else None
    signals["rbo"] = overlap["rbo"] if overlap else None
    signals["rbo_vs"] = overlap
    judged = _judge_window(db, settings, m, events) if events else None
    if judged is not None:
        judged["vs"] = _versus(db, m, w, judged)
    state = dict(m.state)
    rule_states = dict(state.get("rules") or {})
    checks: list[Check] = []
    for rule in _rules(m):
        key = f"{w.retriever}|{rule.key}"
        st = RuleState.from_dict(rule_states.get(key))
        if rule.kind == "signal":
            c = check_signal(rule, st, signals.get(rule.metric), label=label)
        elif rule.kind == "below" and judged:
            per = judged["per_event"]
            ids = [k for k, v in per.items() if rule.metric in v]
            vals = [per[k][rule.metric] for k in ids]
            c = check_sequential(rule, st, vals, ids=[judged["events"].get(k, k) for k in ids], label=label,
                                 seed=int(m.params.get("seed", 0))) if vals else Check(rule, label, st.firing,
                                                                                      False, False, None)
        else:
            c = Check(rule, label, st.firing, False, False, None)
        rule_states[key] = st.to_dict()
        checks.append(c)
    state["rules"] = rule_states
    if judged is not None:
        judged.pop("per_event", None)
    with db.write() as s:
        fresh = mstore.get_monitor(s, m.id)
        if fresh.version != m.version:
            raise _Moved
        mstore.close_window(s, w.id, _clean(signals), judged, [{**c.to_dict(), "text": _said(c)} for c in checks])
        _apply(s, fresh, checks, w.retriever, link=f"/monitors/{m.id}/windows/{w.id}")
        if not mstore.save_state(s, fresh, state):
            raise _Moved


def _clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def _traffic(db: Database, settings: Settings, m: Monitor) -> None:
    m = _aggregate(db, m)
    seconds = float(m.params.get("window_seconds", 3600))
    grace = float(m.params.get("grace_seconds", min(60.0, 0.1 * seconds)))
    now = time.time()
    with db.read() as s:
        due = mstore.open_windows(s, m.id, before=now - seconds - grace)
    for w in due:
        _close(db, settings, m, w)
        with db.read() as s:
            m = mstore.get_monitor(s, m.id)


def tick(db: Database, settings: Settings, monitor_id: int) -> None:
    """Move one monitor forward (see the module docstring)."""
    with db.read() as s:
        m = s.get(Monitor, monitor_id)
    if m is None or m.paused:
        return
    try:
        if m.kind == "canary":
            _canary(db, settings, m)
        else:
            _traffic(db, settings, m)
    except _Moved:
        return
    mstore.delete_old_events(db, m.id, time.time() - settings.event_retention_days * 86400)


class MonitorRunner:
    """Threads that run :func:`tick` for the monitors they lease, and send the webhooks owed."""

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db, self.settings = db, settings
        self.base = f"{socket.gethostname()[:30]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for i in range(self.settings.monitor_workers if self.settings.workers else 0):
            t = threading.Thread(target=self._loop, args=(f"{self.base}-monitor{i}",), name=f"rankscope-monitor-{i}",
                                 daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout)
        self._threads.clear()

    def _loop(self, owner: str) -> None:
        from rankscope.service.monitoring.webhooks import deliver_due

        lease = max(self.settings.lease_seconds, 3 * self.settings.monitor_poll_seconds)
        while not self._stop.is_set():
            try:
                for monitor_id in mstore.claim_monitor(self.db, owner, lease):
                    if self._stop.is_set():
                        break
                    try:
                        tick(self.db, self.settings, monitor_id)
                    except Exception:  # a bug or a database failure: keep the other monitors going
                        log.exception("monitor %s: tick failed", monitor_id)
                deliver_due(self.db, self.settings)
            except Exception:
                log.exception("the monitor worker's loop failed")
            self._stop.wait(self.settings.monitor_poll_seconds)
        try:
            mstore.release_monitor(self.db, owner)
        except Exception:
            log.exception("releasing the monitors failed")


def is_signal(name: str) -> bool:
    return name in SIGNALS
