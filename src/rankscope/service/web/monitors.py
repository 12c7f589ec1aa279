"""Dashboard pages of monitors: the list, a monitor's time series (interval bands, alert marks), its rounds or
windows, alerts and rejected events; a window's judged sample.  A canary's round links to its evaluation, whose
pages show every query."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi import Path as PathParam
from fastapi.responses import HTMLResponse

from rankscope.i18n import N_, _, gettext
from rankscope.service.api.deps import get_db
from rankscope.service.api.schemas import MAX_ID
from rankscope.service.db import Database, MonitorWindow
from rankscope.service.render import lang_of, render
from rankscope.service.store import NotFound
from rankscope.service.store import monitoring as mstore
from rankscope.service.web.monitor_charts import Series, svg_chart

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
MonitorId = Annotated[int, PathParam(ge=1, le=MAX_ID)]
#: the signals of a traffic window in words
SIGNAL_NAMES = {
    "events": N_("events"), "empty_rate": N_("empty result rate"), "short_rate": N_("short result rate"),
    "unknown_rate": N_("unknown id rate"), "psi": N_("score shift (PSI)"),
    "rbo": N_("overlap with the other version (RBO)"), "latency_p95": N_("latency p95 (ms)"),
    "mean_results": N_("results per event"), "latency_p50": N_("latency p50 (ms)"),
    "latency_p99": N_("latency p99 (ms)"), "latency_max": N_("latency max (ms)"),
    "ks_statistic": N_("KS statistic (top-1 scores)"), "ks_p_value": N_("KS p-value"),
}
SIGNAL_CHARTS = ("empty_rate", "unknown_rate", "psi", "rbo", "latency_p95")


def _rule_texts(m: Any, lang: str) -> list[str]:
    from rankscope.monitor.alerts import Rule

    return [Rule.from_dict(r).describe(lang) for r in m.rules]


def _alert_marks(alerts: list[Any], label_time: dict[str, float]) -> tuple[list[float], list[float]]:
    opened = [label_time[a.opened_label] for a in alerts if a.opened_label in label_time]
    cleared = [label_time[a.cleared_label] for a in alerts if a.cleared_label in label_time]
    return opened, cleared


def _canary(s: Any, m: Any, lang: str) -> dict[str, Any]:
    rounds = mstore.list_rounds(s, m.id, limit=500)
    done = [(r, r.summary) for r in rounds if r.status == "done" and r.summary]
    alerts = mstore.list_alerts(s, m.id)
    label_time = {(r.summary or {}).get("label", ""): r.scheduled_for for r in rounds}
    opened, cleared = _alert_marks(alerts, label_time)
    span = (done[0][0].scheduled_for, done[-1][0].scheduled_for) if done else None
    charts = []
    for metric in m.params.get("metrics", []):
        pts = [(r.scheduled_for, iv["mean"], iv["lower"], iv["upper"])
               for r, sm in done if (iv := sm["metrics"].get(metric)) and iv.get("mean") is not None]
        title = _("{metric}: mean per round with its {level} interval", metric=metric, level="95%").text(lang)
        charts.append(svg_chart([Series(metric, pts)], title=title, opened=opened, cleared=cleared,
                                y_range=(0.0, 1.0), x_range=span, chart_id=f"chart-{metric}"))
    lat = [(r.scheduled_for, v, None, None) for r, sm in done
           if (v := (sm.get("signals") or {}).get("latency_p95")) is not None]
    if lat:
        charts.append(svg_chart([Series("p95", lat)], title=gettext("latency p95 (ms)", lang), x_range=span,
                                chart_id="chart-latency"))
    from rankscope.service.monitoring.runner import round_label

    table = []
    for r in reversed(rounds[-200:]):
        summary = r.summary or {}
        table.append({"round": r, "label": summary.get("label") or round_label(r.scheduled_for),
                      "metrics": summary.get("metrics") or {},
                      "checks": [c for c in summary.get("checks") or [] if c.get("opened") or c.get("cleared")],
                      "reason": summary.get("reason"), "failed": summary.get("failed_queries"),
                      "baseline": summary.get("baseline"), "error": summary.get("error")})
    return {"charts": charts, "rounds": table, "metrics": m.params.get("metrics", []),
            "missed": int((m.state or {}).get("missed", 0))}


def _traffic(s: Any, m: Any, lang: str) -> dict[str, Any]:
    windows = mstore.list_windows(s, m.id, limit=1000)
    closed = [w for w in windows if w.closed]
    versions = sorted({w.retriever for w in windows})
    alerts = mstore.list_alerts(s, m.id)
    from rankscope.service.monitoring.runner import round_label

    label_time = {f"{round_label(w.start)} · {w.retriever}": w.start for w in closed}
    opened, cleared = _alert_marks(alerts, label_time)
    span = (closed[0].start, max(w.start for w in closed)) if closed else None
    charts = []
    judged_metrics = (m.params.get("judge") or {}).get("metrics") or (
        ["precision@5", "ndcg@10", "hit_rate@5"] if m.params.get("judge") else [])
    for metric in judged_metrics:
        series = [Series(v, [(w.start, iv["mean"], iv["lower"], iv["upper"]) for w in closed if w.retriever == v
                             and (iv := ((w.judged or {}).get("metrics") or {}).get(metric))
                             and iv.get("mean") is not None]) for v in versions]
        title = _("{metric} (judged sample): mean per window with its {level} interval", metric=metric,
                  level="95%").text(lang)
        charts.append(svg_chart(series, title=title, opened=opened, cleared=cleared,
                                y_range=(0.0, 1.0), x_range=span, chart_id=f"chart-{metric}"))
    for name in ("events", *SIGNAL_CHARTS):
        series = [Series(v, [(w.start, (w.signals or {}).get(name), None, None) for w in closed if w.retriever == v
                             and (w.signals or {}).get(name) is not None]) for v in versions]
        if any(x.points for x in series):
            charts.append(svg_chart(series, title=gettext(SIGNAL_NAMES[name], lang), opened=opened, cleared=cleared,
                                    x_range=span, chart_id=f"chart-{name}"))
    rows = []
    for w in reversed(windows[-300:]):
        from rankscope.monitor.windows import WindowStats

        sig = w.signals if w.closed else WindowStats.from_dict(w.stats).signals()
        sig = {**dict.fromkeys(("events", *SIGNAL_CHARTS)), **(sig or {})}  # an open window has no shift yet
        rows.append({"w": w, "label": round_label(w.start), "signals": sig,
                     "judged": (w.judged or {}).get("metrics") or {}, "judged_info": w.judged,
                     "checks": [c for c in w.checks or [] if c.get("opened") or c.get("cleared")]})
    return {"charts": charts, "windows": rows, "versions": versions, "judged_metrics": judged_metrics,
            "events": mstore.event_count(s, m.id)}


@router.get("/monitors")
def monitors_page(request: Request, db: Database = Depends(get_db)) -> HTMLResponse:
    from rankscope.service.api.monitors import monitor_status

    with db.read() as s:
        monitors = [monitor_status(s, m) for m in mstore.list_monitors(s)]
    return render(request, "monitors.html", "monitors", monitors=monitors)


@router.get("/monitors/{monitor_id}")
def monitor_page(request: Request, monitor_id: MonitorId, db: Database = Depends(get_db)) -> HTMLResponse:
    from rankscope.service.api.monitors import monitor_status
    lang = lang_of(request)
    with db.read() as s:
        m = mstore.get_monitor(s, monitor_id)
        status = monitor_status(s, m)
        view = _canary(s, m, lang) if m.kind == "canary" else _traffic(s, m, lang)
        alerts = mstore.list_alerts(s, m.id)
        rejects = mstore.rejects(s, m.id)
        testset = None
        if m.test_set_id is not None:
            from rankscope.service import store

            testset = store.get_testset(s, m.test_set_id).name
    return render(request, "monitor.html", "monitors", m=m, mon=status, view=view, alerts=alerts,
                  rejects=rejects, rules=_rule_texts(m, lang), testset=testset, refresh=30)


@router.get("/monitors/{monitor_id}/windows/{window_id}")
def window_page(request: Request, monitor_id: MonitorId, window_id: Annotated[int, PathParam(ge=1, le=MAX_ID)],
                db: Database = Depends(get_db)) -> HTMLResponse:
    from rankscope.service.monitoring.runner import round_label

    with db.read() as s:
        m = mstore.get_monitor(s, monitor_id)
        w = s.get(MonitorWindow, window_id)
        if w is None or w.monitor_id != m.id:
            raise NotFound.of("window", window_id)
        seconds = float(m.params.get("window_seconds", 3600))
        events = mstore.window_events(s, m.id, w.start, w.start + seconds, w.retriever, limit=200)
    judged = w.judged or {}
    lang = lang_of(request)
    names = {k: gettext(SIGNAL_NAMES[k], lang) if k in SIGNAL_NAMES else k for k in (w.signals or {})}
    ref = (w.signals or {}).get("reference")
    return render(request, "monitor_window.html", "monitors", m=m, w=w, label=round_label(w.start),
                  judged=judged, events=events, sampled=judged.get("events") or {}, names=names,
                  reference=round_label(ref) if ref is not None else None)
