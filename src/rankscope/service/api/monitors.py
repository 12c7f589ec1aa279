"""``/api/v1/monitors``: canaries and traffic monitors, their rounds, windows, alerts and events; OTLP ingest.

Events: ``POST /api/v1/monitors/{id}/events`` (JSON Lines), ``POST /api/v1/monitors/{id}/v1/traces`` and
``POST /v1/traces`` (OTLP/HTTP, protobuf or JSON; the latter picks the monitor named by the resource attribute
``rankscope.monitor``, else ``service.name``).  An answer comes once the events are committed; bad events are
counted and named, never stored.
"""

from __future__ import annotations

import math
import zlib
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict, Field

from rankscope.errors import RankscopeError
from rankscope.i18n import _
from rankscope.service.api.deps import check_name, get_db
from rankscope.service.api.errors import FieldError
from rankscope.service.api.schemas import MAX_ID, PRINTABLE, URL_SCHEMA, VISIBLE_URL, ErrorBody
from rankscope.service.db import Database, Monitor
from rankscope.service.store import monitoring as mstore

__all__ = ["router", "otlp_router", "MonitorCreate", "monitor_status"]

router = APIRouter(prefix="/monitors", tags=["monitors"])
otlp_router = APIRouter(tags=["monitors"])
MonitorId = Annotated[int, PathParam(ge=1, le=MAX_ID)]
#: the most rejected events an answer lists one by one (all are counted)
LISTED = 20
#: bodies up to this size are parsed on the event loop (a thread hop costs more than parsing them)
SMALL_BODY = 32 * 1024


class MonitorCreate(BaseModel):
    """A canary (a test set asked of a live retriever on a schedule) or a traffic monitor (events in windows)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200, pattern=PRINTABLE)
    kind: Literal["canary", "traffic"]
    test_set_id: int | None = Field(None, ge=1, le=MAX_ID, description="canary: the test set asked; traffic: the "
                                    "test set whose documents are the known ids (the unknown-id rate)")
    retriever_url: str | None = Field(None, max_length=2000, pattern=VISIBLE_URL, json_schema_extra=URL_SCHEMA,
                                      description="canary: the allow-listed retriever")
    metrics: list[str] = Field(default_factory=lambda: ["ndcg@10", "recall@5", "mrr"], min_length=1, max_length=20)
    k: int = Field(10, ge=1, le=10_000)
    concurrency: int = Field(4, ge=1, le=64)
    retries: int = Field(2, ge=0, le=10)
    budget_seconds: float | None = Field(None, gt=0, le=7 * 86400)
    schedule: dict[str, Any] | None = Field(None, description='canary: {"every_seconds": N} or '
                                                              '{"cron": "*/15 * * * *"}')
    sample: int | None = Field(None, ge=1, le=1_000_000, description="canary: ask a fixed random sample of this many "
                                                                     "queries (seeded) instead of all")
    seed: int = Field(0, ge=0, le=2**31 - 1)
    baseline: dict[str, Any] | None = Field(None, description='{"kind": "first"} (default), {"kind": "round", "id": '
                                                              'N} or {"kind": "run", "id": N}')
    rules: list[str | dict[str, Any]] = Field(default_factory=list, max_length=50,
                                              description="'drop ndcg@10 0.02', 'production:good', 'ndcg@10 >= 0.5', "
                                                          "'empty_rate <= 0.05', or the rule as an object")
    alpha: float = Field(0.05, gt=0, lt=1)
    webhook_url: str | None = Field(None, max_length=2000, pattern=VISIBLE_URL, json_schema_extra=URL_SCHEMA)
    window_seconds: float = Field(3600.0, ge=1, le=31 * 86400)
    reference: Literal["first", "previous"] = "first"
    short_below: int = Field(3, ge=1, le=1000)
    judge: dict[str, Any] | None = Field(None, description='traffic: {"metrics": [...], "sample": {"rate": 0.01} or '
                                                           '{"per_window": 50}, "budget": {"calls": N, "tokens": N, '
                                                           '"money": X, "price_in": X, "price_out": X}}')


def _rules(body: MonitorCreate) -> list[dict[str, Any]]:
    from rankscope.monitor.alerts import Rule, parse_rule

    out: list[dict[str, Any]] = []
    for i, r in enumerate(body.rules):
        try:
            rules = parse_rule(r, alpha=body.alpha) if isinstance(r, str) else [Rule.from_dict(r)]
        except (RankscopeError, TypeError) as exc:
            raise FieldError(f"rules[{i}]", exc) from None
        for rule in rules:
            if body.kind == "traffic" and rule.kind == "drop":
                raise FieldError(f"rules[{i}]", _("a drop against a baseline needs the same queries every round: "
                                                  "use it on a canary (traffic is watched with below and signal "
                                                  "rules)"))
            if rule.to_dict() not in out:
                out.append(rule.to_dict())
    return out


def _params(body: MonitorCreate, request: Request, db: Database) -> tuple[dict[str, Any], str | None]:
    from rankscope.monitor.alerts import metric_bounds
    from rankscope.monitor.schedule import Schedule
    from rankscope.service import store

    settings = request.app.state.settings
    for i, m in enumerate(body.metrics):
        try:
            metric_bounds(m)
        except RankscopeError as exc:
            raise FieldError(f"metrics[{i}]", exc) from None
    params: dict[str, Any] = {"metrics": list(body.metrics), "seed": body.seed}
    if body.kind == "canary":
        if body.test_set_id is None:
            raise FieldError("test_set_id", _("a canary needs the test set it asks"))
        if not body.retriever_url:
            raise FieldError("retriever_url", _("a canary needs the retriever it asks"))
        try:
            url = settings.egress.check(body.retriever_url)
        except RankscopeError as exc:
            raise FieldError.of_address("retriever_url", exc) from None
        try:
            sched = Schedule.from_dict(body.schedule or {})
        except (RankscopeError, TypeError) as exc:
            raise FieldError("schedule", exc) from None
        params.update(retriever_url=url, k=body.k, concurrency=body.concurrency, retries=body.retries,
                      budget_seconds=body.budget_seconds or settings.live_budget_seconds,
                      schedule=sched.to_dict(), baseline=body.baseline or {"kind": "first"})
        b = params["baseline"]
        if b.get("kind") not in ("first", "round", "run") or (b["kind"] != "first" and not isinstance(b.get("id"),
                                                                                                       int)):
            raise FieldError("baseline", _('expected {"kind": "first"}, {"kind": "round", "id": N} or {"kind": '
                                           '"run", "id": N}'))
        with db.read() as s:
            ts = store.get_testset(s, body.test_set_id, "test_set_id")
            if b["kind"] == "run" and store.get_run(s, b["id"], "baseline").test_set_id != ts.id:
                raise FieldError("baseline", _("run {run} is not a run of test set {test_set}", run=b["id"],
                                               test_set=ts.id))
            if body.sample is not None:
                import numpy as np

                judged = set(store.load_qrels(ts).queries)
                ids = sorted(q for q, t in store.testset_queries(s, ts.id) if q in judged and t)
                rng = np.random.default_rng(body.seed)
                chosen = rng.choice(len(ids), size=min(body.sample, len(ids)), replace=False) if ids else ()
                params["query_ids"] = sorted(ids[int(i)] for i in chosen)
    else:
        if body.retriever_url or body.schedule:
            raise FieldError("kind", _("a traffic monitor watches the events sent to it: it has no retriever or "
                                       "schedule"))
        if body.test_set_id is not None:  # its documents are the known ids (the unknown-id rate)
            from rankscope.service import store

            with db.read() as s:
                store.get_testset(s, body.test_set_id, "test_set_id")
        params.update(window_seconds=body.window_seconds, reference=body.reference, short_below=body.short_below)
        if body.judge is not None:
            params["judge"] = _judge(body.judge, settings)
    webhook = None
    if body.webhook_url:
        from rankscope.service.monitoring.webhooks import check_webhook

        try:
            webhook = check_webhook(settings, body.webhook_url)
        except RankscopeError as exc:
            raise FieldError.of_address("webhook_url", exc) from None
    return params, webhook


def _judge(j: dict[str, Any], settings: Any) -> dict[str, Any]:
    from rankscope.monitor.alerts import metric_bounds
    from rankscope.monitor.judged import JudgeBudget, sample_events

    if not settings.judge_url or not settings.judge_model:
        raise FieldError("judge", _("this service has no judge: start it with --judge-url URL --judge-model NAME"))
    extra = sorted(set(j) - {"metrics", "sample", "budget", "lang", "concurrency"})
    if extra:
        raise FieldError("judge", _("unknown field {name!r} (known: budget, concurrency, lang, metrics, sample)",
                                    name=extra[0]))
    try:
        for m in j.get("metrics") or []:
            metric_bounds(m)
        sample = j.get("sample") or {"per_window": 50}
        sample_events([], rate=sample.get("rate"), per_window=sample.get("per_window"))
        JudgeBudget.from_dict(j.get("budget"))
    except (RankscopeError, TypeError, AttributeError) as exc:
        raise FieldError("judge", exc) from None
    return {**j, "sample": sample}


def _finite(x: Any) -> Any:
    return x if not isinstance(x, float) or math.isfinite(x) else None


def monitor_status(s: Any, m: Monitor) -> dict[str, Any]:
    """What ``rankscope monitor status`` and the list show: state, open alerts, the latest round or window."""
    alerts = mstore.open_alerts(s, m.id)
    out: dict[str, Any] = {
        "id": m.id, "name": m.name, "kind": m.kind, "paused": m.paused, "created_at": m.created_at,
        "test_set_id": m.test_set_id, "rules": m.rules, "params": m.params, "webhook_url": m.webhook_url,
        "status": "paused" if m.paused else ("alert" if alerts else "ok"),
        "alerts": [{"id": a.id, "rule": a.rule, "retriever": a.retriever, "opened": a.opened_label,
                    "opened_at": a.opened_at, "text": (a.detail.get("text") or {}).get("en")} for a in alerts],
        "missed": int((m.state or {}).get("missed", 0)),
        "rejected": {r: int(n) for r, n in _reject_totals(s, m.id).items()},
    }
    if m.kind == "canary":
        rounds = mstore.list_rounds(s, m.id, limit=1, status="done")
        last = rounds[-1] if rounds else None
        out["latest"] = None if last is None else {"round": last.id, "label": (last.summary or {}).get("label"),
                                                   "metrics": (last.summary or {}).get("metrics"),
                                                   "job_id": last.job_id}
        running = mstore.running_rounds(s, m.id)
        out["running"] = [r.job_id for r, __ in running]
        if not last and out["status"] == "ok":
            out["status"] = "no data"
    else:
        windows = [w for w in mstore.list_windows(s, m.id, limit=50) if w.closed]
        latest: dict[str, Any] = {}
        for w in windows:
            latest[w.retriever] = {"window": w.id, "start": w.start, "signals": w.signals,
                                   "judged": (w.judged or {}).get("metrics")}
        out["latest"] = latest or None
        out["events"] = mstore.event_count(s, m.id)
        if m.params.get("judge"):  # the day's judging: what it may spend and what it spent (planned tokens and cost)
            calls, tokens, money = mstore.spend_today(s, m.id)
            out["judge"] = {"budget": m.params["judge"].get("budget") or {},
                            "spent_today": {"calls": calls, "tokens": tokens, "money": money}}
        if not latest and out["status"] == "ok":
            out["status"] = "no data"
    return _finite_all(out)


def _finite_all(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _finite_all(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_finite_all(v) for v in obj]
    return _finite(obj)


def _reject_totals(s: Any, monitor_id: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in mstore.rejects(s, monitor_id):
        out[r.reason] = out.get(r.reason, 0) + r.count
    return out


@router.post("", status_code=201, summary="Create a monitor",
             responses={403: {"model": ErrorBody, "description": "the retriever's or webhook's address is not on "
                                                                 "this service's allow-list, or is the service's own"},
                        409: {"model": ErrorBody, "description": "a monitor of that name exists already"}})
def create_monitor(body: MonitorCreate, request: Request, db: Database = Depends(get_db)) -> dict[str, Any]:
    name = check_name(body.name, "name", "monitor")
    with db.read() as s:
        if mstore.monitor_by_name(s, name) is not None:
            raise FieldError("name", _("a monitor named {name!r} exists already", name=name),  # the request is fine,
                             status=409)  # the state is not: 409 Conflict
    params, webhook = _params(body, request, db)
    rules = _rules(body)
    monitor_id = mstore.create_monitor(db, name=name, kind=body.kind, test_set_id=body.test_set_id, params=params,
                                       rules=rules, webhook_url=webhook)
    with db.read() as s:
        return monitor_status(s, mstore.get_monitor(s, monitor_id))


@router.get("", summary="List monitors with their state")
def list_monitors(db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    with db.read() as s:
        return [monitor_status(s, m) for m in mstore.list_monitors(s)]


@router.get("/{monitor_id}", summary="A monitor's state: open alerts, the latest round or windows")
def read_monitor(monitor_id: MonitorId, db: Database = Depends(get_db)) -> dict[str, Any]:
    with db.read() as s:
        return monitor_status(s, mstore.get_monitor(s, monitor_id))


@router.delete("/{monitor_id}", status_code=204, summary="Delete a monitor with its rounds, events and alerts")
def delete_monitor(monitor_id: MonitorId, db: Database = Depends(get_db)) -> Response:
    mstore.delete_monitor(db, monitor_id)
    return Response(status_code=204)


@router.get("/{monitor_id}/rounds", summary="A canary's rounds (done, running, failed, missed), oldest first")
def read_rounds(monitor_id: MonitorId, db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    with db.read() as s:
        mstore.get_monitor(s, monitor_id)
        return [_finite_all({"id": r.id, "scheduled_for": r.scheduled_for, "status": r.status, "job_id": r.job_id,
                             "summary": r.summary, "finished_at": r.finished_at})
                for r in mstore.list_rounds(s, monitor_id)]


@router.get("/{monitor_id}/windows", summary="A traffic monitor's windows per retriever version, oldest first")
def read_windows(monitor_id: MonitorId, db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    from rankscope.monitor.windows import WindowStats

    with db.read() as s:
        mstore.get_monitor(s, monitor_id)
        rows = mstore.list_windows(s, monitor_id)
        return [_finite_all({"id": w.id, "start": w.start, "retriever": w.retriever, "closed": w.closed,
                             "signals": w.signals if w.closed else WindowStats.from_dict(w.stats).signals(),
                             "judged": w.judged, "checks": w.checks}) for w in rows]


@router.get("/{monitor_id}/alerts", summary="Alert episodes, newest first")
def read_alerts(monitor_id: MonitorId, db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    with db.read() as s:
        mstore.get_monitor(s, monitor_id)
        return [_finite_all({"id": a.id, "rule": a.rule, "retriever": a.retriever, "opened": a.opened_label,
                             "opened_at": a.opened_at, "cleared": a.cleared_label, "cleared_at": a.cleared_at,
                             "detail": a.detail}) for a in mstore.list_alerts(s, monitor_id)]


@router.get("/{monitor_id}/rejections", summary="Events refused, per day and reason, with the last problem")
def read_rejections(monitor_id: MonitorId, db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    with db.read() as s:
        mstore.get_monitor(s, monitor_id)
        return [{"day": r.day, "reason": r.reason, "count": r.count, "example": r.example}
                for r in mstore.rejects(s, monitor_id)]


_KINDS: dict[tuple[int, int], tuple[float, Monitor]] = {}
#: how long a looked-up monitor is trusted by the ingest endpoints (a burst of events asks the database once)
KIND_SECONDS = 5.0


def _cached_monitor(db: Database, monitor_id: int) -> Monitor | None:
    import time

    hit = _KINDS.get((id(db), monitor_id))
    return hit[1] if hit is not None and time.monotonic() - hit[0] < KIND_SECONDS else None


def _traffic_monitor(db: Database, monitor_id: int) -> Monitor:
    import time

    key = (id(db), monitor_id)
    hit = _cached_monitor(db, monitor_id)
    if hit is not None:
        return hit
    with db.read() as s:
        m = mstore.get_monitor(s, monitor_id)
        s.expunge(m)
    if m.kind != "traffic":
        raise FieldError("monitor_id", _("monitor {id} is a canary: events go to a traffic monitor", id=m.id))
    if len(_KINDS) > 10_000:
        _KINDS.clear()
    _KINDS[key] = (time.monotonic(), m)
    return m


async def _store(request: Request, monitor: Monitor, events: list[Any], rejected: list[Any]) -> int:
    import asyncio

    writer = request.app.state.event_writer
    fut = writer.submit(monitor.id, events, rejected)
    return int(await asyncio.wait_for(asyncio.wrap_future(fut), timeout=60))


@router.post("/{monitor_id}/events", summary="Send production events (JSON Lines: one event per line)")
async def post_events(monitor_id: MonitorId, request: Request) -> Response:
    from fastapi.responses import JSONResponse
    from starlette.concurrency import run_in_threadpool

    from rankscope.monitor.events import parse_jsonl

    db: Database = request.app.state.db
    monitor = _cached_monitor(db, monitor_id)
    if monitor is None:
        monitor = await run_in_threadpool(_traffic_monitor, db, monitor_id)
    body = await request.body()
    if len(body) <= SMALL_BODY:  # a few events: parsed here, without a hop to a thread
        events, rejected = parse_jsonl(body)
    else:
        events, rejected = await run_in_threadpool(parse_jsonl, body)
    stored = await _store(request, monitor, events, rejected)
    out = {"accepted": stored, "rejected": len(rejected),
           "problems": [r.to_dict() for r in rejected[:LISTED]]}
    return JSONResponse(out, status_code=422 if rejected and not events else 200)


async def _otlp(request: Request, monitor: Monitor | None) -> Response:
    from starlette.concurrency import run_in_threadpool

    from rankscope.monitor.events import EventRejected
    from rankscope.monitor.otlp import decode_otlp

    ctype = request.headers.get("content-type", "application/x-protobuf")
    body = await request.body()
    if request.headers.get("content-encoding", "").lower() == "gzip":
        limit = int(request.app.state.settings.max_data_bytes)
        try:
            body = await run_in_threadpool(_gunzip, body, limit)
        except (OSError, EOFError, zlib.error) as exc:
            return _otlp_answer(ctype, 400, rejected=0, message=f"not gzip ({exc})")
        except _TooLarge:
            return _otlp_answer(ctype, 413, rejected=0, message=f"the decompressed body is over the limit of {limit} "
                                "bytes (raise it with `rankscope serve --max-data-mb`)")
    try:
        decoded = await run_in_threadpool(decode_otlp, body, ctype)
    except EventRejected as exc:
        if monitor is not None:
            from rankscope.monitor.events import Rejection

            await _store(request, monitor, [], [Rejection("body", exc.reason, str(exc))])
        return _otlp_answer(ctype, 400, rejected=0, message=str(exc))
    if monitor is None:
        name = decoded.service
        with request.app.state.db.read() as s:
            monitor = mstore.monitor_by_name(s, name) if name else None
        if monitor is None or monitor.kind != "traffic":
            return _otlp_answer(ctype, 404, rejected=len(decoded.events) + len(decoded.rejected),
                                message=f"no traffic monitor named {name!r}: set the resource attribute "
                                        "rankscope.monitor (or service.name) to a monitor's name, or send to "
                                        "/api/v1/monitors/ID/v1/traces")
    await _store(request, monitor, decoded.events, decoded.rejected)
    message = "; ".join(f"{r.where}: {r.message}" for r in decoded.rejected[:5])
    return _otlp_answer(ctype, 200, rejected=len(decoded.rejected), message=message)


class _TooLarge(Exception):
    pass


def _gunzip(body: bytes, limit: int) -> bytes:
    """A gzip body decompressed, at most ``limit`` bytes of it (a small bomb must not fill the memory)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = d.decompress(body, limit + 1)
    if len(out) > limit or d.unconsumed_tail:
        raise _TooLarge
    if not d.eof:
        raise EOFError("the gzip stream is cut short")
    return out


def _otlp_answer(ctype: str, status: int, *, rejected: int, message: str) -> Response:
    """The OTLP/HTTP answer: an ExportTraceServiceResponse (partial success when spans were rejected), in the
    request's encoding; an error status carries a google.rpc.Status."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    json_out = "json" in ctype.lower()
    if status == 200:
        msg: Any = ExportTraceServiceResponse()
        if rejected:
            msg.partial_success.rejected_spans = rejected
            msg.partial_success.error_message = message[:1000]
    else:
        from google.rpc.status_pb2 import Status

        msg = Status(code={400: 3, 404: 5, 413: 8}.get(status, 2), message=message[:1000])
    if json_out:
        return Response(json_format.MessageToJson(msg), status_code=status, media_type="application/json")
    return Response(msg.SerializeToString(), status_code=status, media_type="application/x-protobuf")


# the OTLP and Prometheus endpoints speak their protocols (protobuf answers, the exposition format), documented in
# docs/monitoring.md rather than in the JSON API's schema
@router.post("/{monitor_id}/v1/traces", include_in_schema=False)
async def post_traces(monitor_id: MonitorId, request: Request) -> Response:
    """OTLP/HTTP trace export (protobuf or JSON) for this monitor."""
    from starlette.concurrency import run_in_threadpool

    monitor = await run_in_threadpool(_traffic_monitor, request.app.state.db, monitor_id)
    return await _otlp(request, monitor)


@otlp_router.post("/v1/traces", include_in_schema=False)
async def post_traces_by_name(request: Request) -> Response:
    """OTLP/HTTP trace export: the monitor named by the resource attribute rankscope.monitor, else service.name."""
    return await _otlp(request, None)


@otlp_router.get("/metrics", include_in_schema=False)
def metrics(db: Database = Depends(get_db)) -> Response:
    """The Prometheus exposition of every monitor."""
    from rankscope.service.monitoring.metrics import CONTENT_TYPE, render_metrics

    return Response(render_metrics(db), media_type=CONTENT_TYPE)
