"""The app factory: :func:`create_app` builds the FastAPI application from :class:`Settings`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI

from rankscope.service.settings import Settings

__all__ = ["create_app"]

API_PREFIX = "/api/v1"


def create_app(settings: Settings | None = None) -> FastAPI:
    """Open the database, migrate it to the newest schema, and assemble API, dashboard and workers.

    Background workers start with the application (its lifespan) and stop with it.
    """
    from fastapi.staticfiles import StaticFiles

    import rankscope
    from rankscope.service.api import api_router
    from rankscope.service.api.errors import install_error_handlers
    from rankscope.service.db import Database
    from rankscope.service.guards import BodyLimit, FailureThrottle, HostCheck, SameOrigin, SecurityHeaders, TokenAuth
    from rankscope.service.jobs import WorkerPool
    from rankscope.service.migrations import upgrade
    from rankscope.service.web import web_router

    settings = settings or Settings()
    # load the metric registry now: its lazy first load is not thread-safe, and requests run in threads
    from rankscope.measures import all_specs

    all_specs()
    db = Database(settings.db_url)
    if settings.migrate:
        upgrade(db)
    pool = WorkerPool(db, settings)
    from rankscope.service.monitoring.ingest import EventWriter
    from rankscope.service.monitoring.runner import MonitorRunner

    writer, monitors = EventWriter(db), MonitorRunner(db, settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        pool.start()
        monitors.start()
        try:
            yield
        finally:
            monitors.stop()
            writer.stop()
            pool.stop()

    app = FastAPI(
        title="rankscope evaluation service",
        version=getattr(rankscope, "__version__", "0"),
        description="Stored, per-query, resumable evaluations of retrieval for RAG.",
        lifespan=lifespan,
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.db = db
    app.state.pool = pool
    app.state.event_writer = writer
    install_error_handlers(app)
    app.include_router(api_router, prefix=API_PREFIX)
    from rankscope.service.api.monitors import otlp_router

    app.include_router(otlp_router)  # /v1/traces (OTLP/HTTP's standard path) and /metrics (Prometheus)
    app.include_router(web_router)
    _docs(app)
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "web" / "static"), name="static")
    app.add_middleware(BodyLimit, max_bytes=settings.max_upload_bytes)
    _error_responses(app)
    # wrong tokens per client address: the API and the login page count together
    app.state.throttle = FailureThrottle(attempts=settings.token_attempts)
    if settings.token:
        app.add_middleware(TokenAuth, token=settings.token, throttle=app.state.throttle)  # before reading a body
    app.add_middleware(SameOrigin)
    app.add_middleware(HostCheck, bind=settings.host, extra=settings.allowed_hosts)
    app.add_middleware(SecurityHeaders)  # outermost: on every answer, the refusals too
    return app


def _docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI for the API, its files served by this service (no CDN)."""
    from importlib import resources

    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles

    # the Swagger UI files that the fastapi-offline package ships (no CDN)
    app.mount("/static/swagger", StaticFiles(directory=str(resources.files("fastapi_offline") / "static")),
              name="swagger")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        import base64
        import hashlib
        import re

        from rankscope.service.guards import CSP

        page = get_swagger_ui_html(openapi_url=f"{API_PREFIX}/openapi.json", title="rankscope API",
                                   swagger_js_url="/static/swagger/swagger-ui-bundle.js",
                                   swagger_css_url="/static/swagger/swagger-ui.css", swagger_favicon_url="data:,")
        # the page's one inline script (it starts Swagger UI) is allowed by its hash, no other
        inline = re.findall(rb"<script>(.*?)</script>", bytes(page.body), re.S)
        hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s).digest()).decode()}'" for s in inline)
        page.headers["content-security-policy"] = CSP.replace("script-src 'self'", f"script-src 'self' {hashes}")
        return page


def _error_responses(app: FastAPI) -> None:
    """Publish the real error answers in the OpenAPI document: every operation's 4xx use ``ErrorBody``.

    400 (``Host``), 401 (token, with ``--token``), 403 (``Origin``), 404 (an id that names nothing), 405,
    413 (body or
    upload over a limit) and 422 (request fields) all carry ``{"detail", "errors": [{"field", "problem"}]}``.
    """
    from fastapi.openapi.utils import get_openapi

    from rankscope.service.api.schemas import ErrorBody

    described = {400: "the Host header does not name this service",
                 401: "missing or wrong token (only when the service runs with --token)",
                 403: "a state-changing request from a page of another origin",
                 404: "an id (in the path, a query parameter or the body) names nothing that exists",
                 405: "the path does not take this method (Allow lists those it takes)",
                 429: "too many wrong tokens from this address (with --token): try again after Retry-After",
                 413: "the body or the decompressed upload is over a limit",
                 422: "a request field is invalid (the errors name it)"}
    unsafe = {"post", "put", "patch", "delete"}

    def openapi() -> dict[str, object]:
        if app.openapi_schema:
            return app.openapi_schema
        spec = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
        schemas = spec.setdefault("components", {}).setdefault("schemas", {})
        body_schema = ErrorBody.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, sub in body_schema.pop("$defs", {}).items():
            schemas[name] = sub
        schemas["ErrorBody"] = body_schema
        for name in ("HTTPValidationError", "ValidationError"):
            schemas.pop(name, None)
        _describe(schemas)
        ref = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
        for path, ops in spec.get("paths", {}).items():
            for method, op in ops.items():
                responses = op.setdefault("responses", {})
                codes = [400] if path.endswith("/health") else [400, 401, 404, 422, 429]
                if method in unsafe:
                    codes += [403, 413]
                for code in codes:
                    entry = responses.setdefault(str(code), {"description": described[code]})
                    entry["content"] = ref
                for code, entry in responses.items():
                    if code.startswith(("4", "5")) and "content" in entry:
                        entry["content"] = ref
        app.openapi_schema = spec
        return spec

    app.openapi = openapi  # type: ignore[method-assign]


def _is_file(prop: dict[str, object]) -> bool:
    return prop.get("format") == "binary" or prop.get("contentMediaType") == "application/octet-stream"


def _describe(schemas: dict[str, dict[str, object]]) -> None:
    """Say in the schema what the service checks: an optional part of a form is absent or holds a value (never a
    "null"); a file is not empty; a judging task's texts come from a test set or from files; a metric name is one
    of the registry's (with a cutoff where it takes one), a monitored one has known bounds."""
    from rankscope.service.api.schemas import metric_name_pattern

    for name, sub in schemas.items():
        props = sub.get("properties")
        if not isinstance(props, dict):
            continue
        for key, prop in props.items():
            options = prop.get("anyOf", [])
            if name.startswith("Body_") and len(options) == 2 and {"type": "null"} in options:
                # a form has no null: an optional part is absent, or holds a value (a file, a number, text)
                prop.pop("anyOf")
                prop.update(next(a for a in options if a != {"type": "null"}))
            if _is_file(prop):
                prop["minLength"] = 1
            if key == "metrics" and prop.get("type") == "array" and isinstance(prop.get("items"), dict):
                prop["items"]["pattern"] = metric_name_pattern(bounded=name == "MonitorCreate")
        if name == "MonitorCreate":  # a canary asks a retriever over a test set; a traffic monitor is sent events
            sub["anyOf"] = [
                {"properties": {"kind": {"const": "canary"}, "test_set_id": {"type": "integer"},
                                "retriever_url": {"type": "string"}},
                 "required": ["test_set_id", "retriever_url"]},
                {"properties": {"kind": {"const": "traffic"},
                                "retriever_url": {"type": "null"},
                                "schedule": {"anyOf": [{"type": "null"}, {"type": "object", "maxProperties": 0}]}}},
            ]
        if name.startswith("Body_upload_task"):  # texts from a test set or from files, not both; provenance goes
            sub["anyOf"] = [{"required": ["test_set_id"], "not": {"anyOf": [{"required": ["queries"]},  # with labels
                                                                             {"required": ["corpus"]}]}},
                            {"required": ["queries"], "not": {"required": ["test_set_id"]}}]
            sub["dependentRequired"] = {"provenance": ["labels"]}
