"""``rankscope monitor list|status|ingest``: the monitors of a running ``rankscope serve``, over its HTTP API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from rankscope.cli.app import app, fail, user_errors
from rankscope.cli.messages import print_lines
from rankscope.cli.options import LangOption
from rankscope.i18n import N_, _, gettext, ngettext

__all__ = ["monitor_app"]

monitor_app = typer.Typer(help="The monitors of a running rankscope serve: list them, read one, send events.",
                          no_args_is_help=True)
app.add_typer(monitor_app, name="monitor")

ServerOption = Annotated[str, typer.Option("--server", envvar="RANKSCOPE_SERVER",
                                           help="address of the rankscope service")]
TokenOption = Annotated[Optional[str], typer.Option("--token", envvar="RANKSCOPE_TOKEN", show_default="none",
                                                    help="the service's token, when it runs with one")]
JsonOption = Annotated[bool, typer.Option("--json", help="print the service's JSON answer")]
DEFAULT_SERVER = "http://127.0.0.1:8000"
BATCH_LINES = 2000


def _client(server: str, token: str | None) -> Any:
    import httpx

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=server.rstrip("/"), headers=headers, timeout=120.0)


def _get(server: str, token: str | None, path: str) -> Any:
    import httpx

    try:
        with _client(server, token) as c:
            r = c.get(path)
    except httpx.HTTPError as exc:
        fail(_("cannot reach the service at {server} ({reason}); start it with `rankscope serve` or pass --server",
               server=server, reason=exc))
    _check(r)
    return r.json()


def _check(r: Any) -> None:
    if r.status_code < 400:
        return
    try:
        detail = r.json().get("detail")
    except ValueError:
        detail = r.text[:200]
    fail(_("the service answered {status}: {detail}", status=r.status_code, detail=detail))


def _find(server: str, token: str | None, monitor: str) -> dict[str, Any]:
    rows = _get(server, token, "/api/v1/monitors")
    for m in rows:
        if str(m["id"]) == monitor or m["name"] == monitor:
            return dict(m)
    import difflib

    names = [m["name"] for m in rows]
    close = difflib.get_close_matches(monitor, names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else f" (monitors: {', '.join(names) or 'none'})"
    fail(_("no monitor {name!r}{hint}", name=monitor, hint=hint))


#: a monitor's kind and status as the service says them, in words
_KINDS = {"canary": N_("canary"), "traffic": N_("traffic")}
_STATUSES = {"ok": N_("ok"), "alert": N_("ALERT"), "paused": N_("paused"), "no data": N_("no data yet")}


def _kind(m: dict[str, Any], lang: str) -> str:
    return gettext(_KINDS[m["kind"]], lang) if m["kind"] in _KINDS else str(m["kind"])


def _status(m: dict[str, Any], lang: str) -> str:
    return gettext(_STATUSES[m["status"]], lang) if m["status"] in _STATUSES else str(m["status"])


def _num(v: Any, fmt: str = ".4f") -> str:
    return format(v, fmt) if isinstance(v, (int, float)) else "–"


def _latest(m: dict[str, Any]) -> str:
    from rankscope.cli.app import command_lang

    lang = command_lang()
    latest = m.get("latest")
    if not latest:
        return gettext("no round or window checked yet", lang)
    if m["kind"] == "canary":
        metrics = ", ".join(f"{k} {_num(iv.get('mean'))}" for k, iv in (latest.get("metrics") or {}).items())
        return f"{latest.get('label')}: {metrics}"
    parts = []
    for version, w in latest.items():
        s = w.get("signals") or {}
        parts.append(_("{version}: {events} events, empty {empty}, p95 {p95} ms", version=version,
                       events=s.get("events", 0), empty=_num(s.get("empty_rate"), ".3f"),
                       p95=_num(s.get("latency_p95"), ".1f")).text(lang))
    return "; ".join(parts)


@monitor_app.command("list")
@user_errors
def list_command(server: ServerOption = DEFAULT_SERVER, token: TokenOption = None, as_json: JsonOption = False,
                 lang: LangOption = None) -> None:
    """List the monitors of the service with their state and latest round or window.

    Examples:

      rankscope monitor list

      rankscope monitor list --server http://127.0.0.1:8080 --json
    """
    rows = _get(server, token, "/api/v1/monitors")
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    lg = lang.value if lang is not None else "en"
    if not rows:
        typer.echo(gettext("No monitor: create one with POST /api/v1/monitors (docs/monitoring.md).", lg))
        return
    print_lines([_("{id}  {name}  [{kind}]  {status}  open alerts: {alerts}  latest: {latest}", id=m["id"],
                   name=m["name"], kind=_kind(m, lg), status=_status(m, lg), alerts=len(m["alerts"]),
                   latest=_latest(m)).text(lg) for m in rows], lg)


@monitor_app.command("status")
@user_errors
def status_command(monitor: Annotated[str, typer.Argument(help="the monitor's name or id")],
                   server: ServerOption = DEFAULT_SERVER, token: TokenOption = None, as_json: JsonOption = False,
                   lang: LangOption = None) -> None:
    """Say one monitor's state: its open alerts with their evidence, the latest round or windows, missed rounds and
    rejected events.  Exit code 1 while an alert is open.

    Examples:

      rankscope monitor status search-canary

      rankscope monitor status 3 --json
    """
    m = _find(server, token, monitor)
    if as_json:
        typer.echo(json.dumps(m, ensure_ascii=False, indent=2))
    else:
        lg = lang.value if lang is not None else "en"
        lines = [_("{name} ({kind}): {status}", name=m["name"], kind=_kind(m, lg), status=_status(m, lg)).text(lg),
                 _("latest: {latest}", latest=_latest(m)).text(lg)]
        for a in m["alerts"]:
            alerts = _get(server, token, f"/api/v1/monitors/{m['id']}/alerts")
            detail: dict[str, Any] = next((x["detail"] for x in alerts if x["id"] == a["id"]), {})
            text = (detail.get("text") or {}).get(lg) or a.get("text") or ""
            lines.append(_("alert since {opened}: {rule}\n  {text}", rule=(detail.get("rule_text") or {}).get(lg,
                                                                                                              a["rule"]),
                           opened=a["opened"], text=text).text(lg))
        if m.get("missed"):
            lines.append(ngettext("{n} scheduled round was missed (see the monitor's page for when and why)",
                                  "{n} scheduled rounds were missed (see the monitor's page for when and why)",
                                  m["missed"]).text(lg))
        lines += [ngettext("{n} event rejected: {reason}", "{n} events rejected: {reason}", n, reason=reason).text(lg)
                  for reason, n in (m.get("rejected") or {}).items()]
        print_lines(lines, lg)  # wrapped to the terminal, never inside a number or a name
    if m["alerts"]:
        raise typer.Exit(1)


@monitor_app.command("ingest")
@user_errors
def ingest_command(file: Annotated[Path, typer.Argument(help="events, one JSON object a line ('-': stdin)")],
                   monitor: Annotated[str, typer.Option("--monitor", "-m", help="the traffic monitor's name or id")],
                   server: ServerOption = DEFAULT_SERVER, token: TokenOption = None, as_json: JsonOption = False,
                   lang: LangOption = None) -> None:
    """Send production events to a traffic monitor, in batches; bad lines are counted and named, never stored.
    The events are JSON Lines: {"time", "query", "results": [{"id", "score", "text"}], "latency_ms", "retriever"}.

    Examples:

      rankscope monitor ingest events.jsonl --monitor prod-search

      rankscope monitor ingest events.jsonl -m 3 --server http://127.0.0.1:8080 --json
    """
    import sys


    m = _find(server, token, monitor)
    if m["kind"] != "traffic":
        fail(_("monitor {name!r} is a canary: events go to a traffic monitor", name=m["name"]))
    if str(file) != "-" and not file.is_file():
        fail(_("no such file: {path}", path=str(file)))
    stream = sys.stdin if str(file) == "-" else file.open(encoding="utf-8", errors="replace")
    accepted = rejected = 0
    problems: list[dict[str, Any]] = []
    try:
        with _client(server, token) as c:
            batch: list[str] = []
            first = 1
            for n, line in enumerate(stream, 1):
                batch.append(line.rstrip("\n"))
                if len(batch) >= BATCH_LINES:
                    a, r, p = _send(c, m["id"], batch, first)
                    accepted, rejected, problems = accepted + a, rejected + r, problems + p
                    batch, first = [], n + 1
            if batch:
                a, r, p = _send(c, m["id"], batch, first)
                accepted, rejected, problems = accepted + a, rejected + r, problems + p
    finally:
        if stream is not sys.stdin:
            stream.close()
    if as_json:
        typer.echo(json.dumps({"accepted": accepted, "rejected": rejected, "problems": problems[:100]},
                              ensure_ascii=False, indent=2))
    else:
        lg = lang.value if lang is not None else "en"
        lines = [ngettext("{n} event stored in {name}, {rejected} rejected",
                          "{n} events stored in {name}, {rejected} rejected", accepted, rejected=rejected,
                          name=m["name"]).text(lg),
                 *(f"  {file}:{problem['where']}: {problem['problem']}" for problem in problems[:20])]
        if len(problems) > 20:
            lines.append(ngettext("  ... and {n} more rejected line", "  ... and {n} more rejected lines",
                                  len(problems) - 20).text(lg))
        print_lines(lines, lg)
    if rejected and not accepted:
        raise typer.Exit(2)


def _send(client: Any, monitor_id: int, lines: list[str], first: int) -> tuple[int, int, list[dict[str, Any]]]:
    import httpx

    try:
        r = client.post(f"/api/v1/monitors/{monitor_id}/events", content="\n".join(lines).encode("utf-8"),
                        headers={"content-type": "application/x-ndjson"})
    except httpx.HTTPError as exc:
        fail(_("sending events failed ({reason}); what was sent before is stored, and sending again stores each "
               "event once", reason=exc))
    if r.status_code not in (200, 422):
        _check(r)
    body = r.json()
    problems = []
    for p in body.get("problems", []):  # "line N" of the batch -> the file's line
        where = p["where"]
        if where.startswith("line ") and where[5:].isdigit():
            where = str(first + int(where[5:]) - 1)
        problems.append({**p, "where": where})
    return int(body["accepted"]), int(body["rejected"]), problems
