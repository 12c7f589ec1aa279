"""``rankscope serve``: run the evaluation service (HTTP API + dashboard + background workers)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from rankscope.cli.app import app, fail, user_errors
from rankscope.cli.options import LangOption
from rankscope.i18n import _


@app.command("serve")
@user_errors
def serve_command(
    db: Annotated[Optional[str], typer.Option("--db", show_default="a SQLite file in the user data folder",
                                              help="SQLAlchemy URL of the database",
                                              envvar="RANKSCOPE_DB")] = None,
    host: Annotated[str, typer.Option("--host", help="address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="TCP port", min=1, max=65535)] = 8000,
    token: Annotated[Optional[str], typer.Option("--token", show_default="none: no token asked",
                                                 help="require this token (Bearer) on every endpoint "
                                                 "but health (better: RANKSCOPE_TOKEN or --token-file, which "
                                                 "other users cannot read in the process list)",
                                                 envvar="RANKSCOPE_TOKEN")] = None,
    token_file: Annotated[Optional[Path], typer.Option("--token-file", show_default="none",
                                                       help="read the token from this file's first line")] = None,
    workers: Annotated[int, typer.Option("--workers", help="background job threads", min=0, max=64)] = 2,
    max_upload_mb: Annotated[float, typer.Option("--max-upload-mb", help="larger request bodies get 413",
                                                 min=0.001)] = 64.0,
    lease_seconds: Annotated[float, typer.Option("--lease-seconds", help="a crashed worker's job is taken over "
                                                 "after this long", min=0.5)] = 15.0,
    max_data_mb: Annotated[float, typer.Option("--max-data-mb", help="most bytes one upload may hold once "
                                               "decompressed (gzip, zip members)", min=0.001)] = 256.0,
    max_rows: Annotated[int, typer.Option("--max-rows", help="most rows one upload may hold", min=1)] = 20_000_000,
    allow_retriever: Annotated[Optional[list[str]], typer.Option(
        "--allow-retriever", show_default="none",
        help="HOST:PORT that live evaluations may call (HOST alone: ports 80 and 443 only; HOST:* any port), "
             "repeatable",
        envvar="RANKSCOPE_ALLOW_RETRIEVER")] = None,
    allow_host: Annotated[Optional[list[str]], typer.Option(
        "--allow-host", show_default="none",
        help="another name this service is reached under (Host header), repeatable")] = None,
    live_workers: Annotated[int, typer.Option("--live-workers", help="threads for live retriever jobs (apart "
                                              "from --workers, which score)", min=0, max=64)] = 4,
    retriever_timeout: Annotated[float, typer.Option("--retriever-timeout", help="total seconds one retriever "
                                                     "request may take", min=0.1)] = 30.0,
    live_budget: Annotated[float, typer.Option("--live-budget", help="default time budget (seconds) of a live "
                                               "job; queries not asked by then fail", min=1.0)] = 6 * 3600.0,
    max_answer_mb: Annotated[float, typer.Option("--max-answer-mb", help="most bytes one retriever answer may "
                                                 "hold; a larger one is that query's failure", min=0.001)] = 16.0,
    allow_webhook: Annotated[Optional[list[str]], typer.Option(
        "--allow-webhook", show_default="none", help="HOST:PORT that monitors may send alert webhooks to (HOST alone: "
        "ports 80 and 443 only; HOST:* any port), repeatable", envvar="RANKSCOPE_ALLOW_WEBHOOK")] = None,
    judge_url: Annotated[Optional[str], typer.Option(
        "--judge-url", show_default="none: traffic is not judged",
        help="OpenAI-compatible endpoint (up to /v1) that judges sampled traffic")] = None,
    judge_model: Annotated[Optional[str], typer.Option(
        "--judge-model", show_default="none: needed with --judge-url", help="the judge's model name")] = None,
    judge_key_env: Annotated[Optional[str], typer.Option(
        "--judge-key-env", show_default="none: no key is sent",
        help="environment variable holding the judge's API key")] = None,
    judge_cache: Annotated[Optional[str], typer.Option(
        "--judge-cache", show_default="a file in the user cache folder",
        help="SQLite file of the judge's answer cache")] = None,
    event_retention_days: Annotated[float, typer.Option(
        "--event-retention-days", help="raw monitor events are deleted after this many days (their windows stay)",
        min=0.001)] = 30.0,
    monitor_workers: Annotated[int, typer.Option(
        "--monitor-workers", help="threads that run monitors' schedules, windows and webhooks", min=0,
        max=16)] = 1,
    lang: LangOption = None,
) -> None:
    """Serve the evaluation API (/api/v1, OpenAPI at /api/v1/openapi.json) and the web dashboard.

    Examples:

      rankscope serve

      rankscope serve --db postgresql+psycopg://rankscope@127.0.0.1/rankscope --port 8080 --token-file token.txt
    """
    from rankscope.errors import RankscopeError
    from rankscope.service.settings import Settings, check_token, default_db_url, is_loopback, read_token_file

    if token_file is not None:
        if token is not None:
            fail(_("give the token once: --token (or RANKSCOPE_TOKEN) or --token-file"))
        try:
            token = read_token_file(token_file)
        except RankscopeError as exc:
            fail(_("{said}", said=exc))
    if token is not None:
        try:
            check_token(token)
        except RankscopeError as exc:
            fail(_("--token: {reason}", reason=exc))
    if not is_loopback(host) and not token:
        fail(_("refusing to listen on {host} without a token: anyone who can reach it could read and delete your "
               "evaluations; pass --token TOKEN (or RANKSCOPE_TOKEN), or bind to 127.0.0.1", host=host))
    try:
        import uvicorn

        from rankscope.service.app import create_app
    except ImportError as exc:
        fail(_("the service needs the server extra: pip install 'rankscope[server]' ({exc})", exc=exc))
    entries = [e for item in allow_retriever or [] for e in item.split(",") if e.strip()]
    settings = Settings(db_url=db or default_db_url(), token=token, workers=workers,
                        max_upload_bytes=int(max_upload_mb * 1024 * 1024), lease_seconds=lease_seconds,
                        max_data_bytes=int(max_data_mb * 1024 * 1024), max_rows=max_rows, host=host, port=port,
                        allowed_hosts=tuple(allow_host or ()), allow_retrievers=tuple(entries),
                        live_workers=live_workers, retriever_timeout=retriever_timeout,
                        live_budget_seconds=live_budget, max_answer_bytes=int(max_answer_mb * 1024 * 1024),
                        allow_webhooks=tuple(e for item in allow_webhook or [] for e in item.split(",") if e.strip()),
                        judge_url=judge_url, judge_model=judge_model, judge_key_env=judge_key_env,
                        judge_cache=judge_cache, event_retention_days=event_retention_days,
                        monitor_workers=monitor_workers)
    application = create_app(settings)
    assert lang is not None  # settled by user_errors
    typer.echo(_("rankscope: serving on http://{host}:{port}/ (API at /api/v1, database {db})", host=host, port=port,
                 db=_safe(settings.db_url)).text(lang.value), err=True)
    uvicorn.run(application, host=host, port=port, log_level="warning")


def _safe(url: str) -> str:
    """The database URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
