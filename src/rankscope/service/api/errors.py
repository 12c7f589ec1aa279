"""Error responses: every 4xx body names the field and the problem.

Shape: ``{"detail": "<summary>", "errors": [{"field": "metrics", "problem": "...",
"suggestions": [...]}]}`` (``suggestions`` only for unknown metric names).

The JSON API answers in English whatever the client's language (clients match on these texts; the field names
are what a program reads).  A dashboard page says the same problem in the page's language
(:func:`rankscope.service.web.pages.lang_of`): the service's errors hold a :class:`~rankscope.i18n.Message`
(rankscope's own errors, :class:`FieldError`, :class:`~rankscope.service.uploads.LimitExceeded`,
:class:`~rankscope.service.store.NotFound`), and the request validator's usual complaints are said from their type
(:data:`VALIDATION`, :func:`validation_text`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from rankscope.errors import RankscopeError, UnknownMetricError
from rankscope.i18n import Message, gettext
from rankscope.service.ingest import UploadError
from rankscope.service.problems import (
    HTTP_PAGES,
    VALIDATION,
    FieldError,
    Invalid,
    error_body,
    field_problem,
    said,
    validation_text,
)
from rankscope.service.store import NotFound
from rankscope.service.uploads import LimitExceeded

__all__ = ["FieldError", "install_error_handlers", "error_body", "said", "field_problem", "validation_text",
           "VALIDATION", "HTTP_PAGES", "Invalid"]


def _respond(request: Request, body: dict[str, Any], status: int, headers: dict[str, str] | None = None,
             page: Callable[[str], str] | None = None) -> Response:
    """JSON for the API (in English); for a dashboard page the same problem as an HTML page, said in the page's
    language by ``page(lang)`` (the English ``detail`` without it)."""
    if request.url.path.startswith("/api/") or status in (401, 405):
        return JSONResponse(body, status_code=status, headers=headers)
    from rankscope.service.render import error_page, lang_of

    return error_page(request, status, page(lang_of(request)) if page is not None else str(body["detail"]))


def _field_error(request: Request, field: str, exc: Exception | Invalid | Message | str, status: int,
                 speaker: Exception | None = None) -> Response:
    """``exc`` as the answer naming ``field``; a page says it as ``speaker`` (the keyed error that carries it, when
    ``exc`` is only its English sentence) says itself."""
    extra: dict[str, Any] = {}
    if isinstance(exc, UnknownMetricError):
        extra["suggestions"] = exc.suggestions
    return _respond(request, error_body(field, str(exc), **extra), status,
                    page=lambda lang: field_problem(field, said(speaker or exc, lang), lang))


def _allowed(request: Request) -> list[str]:
    """Every method some route accepts at the request's path (a 405's ``Allow``: all of them, not one route's)."""
    from starlette.routing import Match

    methods: set[str] = set()
    for route in request.app.router.routes:
        match, __ = route.matches(request.scope)
        if match != Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


def _loc(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header", "cookie", "form"):
        parts = parts[1:]
    out = ""
    for p in parts:
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out or "body"


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _validation(req: Request, exc: RequestValidationError) -> Response:
        errors = [{"field": _loc(tuple(e.get("loc", ()))), "problem": str(e.get("msg", "invalid"))}
                  for e in exc.errors()]
        summary = "; ".join(f"{e['field']}: {e['problem']}" for e in errors[:5])

        def page(lang: str) -> str:
            problems = [field_problem(_loc(tuple(e.get("loc", ()))), validation_text(e, lang), lang)
                        for e in exc.errors()[:5]]
            return ("；" if lang == "zh" else "; ").join(problems)

        return _respond(req, {"detail": summary, "errors": errors}, 422, page=page)

    @app.exception_handler(FieldError)
    async def _field(req: Request, exc: FieldError) -> Response:
        return _field_error(req, exc.field, exc.error, exc.status, speaker=exc)

    @app.exception_handler(UploadError)
    async def _upload(req: Request, exc: UploadError) -> Response:
        return _field_error(req, exc.field, exc, 422)

    @app.exception_handler(LimitExceeded)
    async def _too_large(req: Request, exc: LimitExceeded) -> Response:
        return _field_error(req, exc.field, exc, 413)

    @app.exception_handler(NotFound)
    async def _not_found(req: Request, exc: NotFound) -> Response:
        return _respond(req, error_body(exc.field, str(exc)), 404,  # in the path, a query or the body alike
                        page=lambda lang: field_problem(exc.field, exc.text(lang), lang))

    @app.exception_handler(RankscopeError)
    async def _rankscope(req: Request, exc: RankscopeError) -> Response:
        field = "metrics" if isinstance(exc, UnknownMetricError) else None
        return _field_error(req, field or "body", exc, 422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(req: Request, exc: StarletteHTTPException) -> Response:
        field = getattr(exc, "field", None)

        def page(lang: str) -> str:  # Starlette's own answer (404 Not Found: no such page) in the page's language
            said = HTTP_PAGES[exc.status_code]
            return gettext(said, lang) if exc.detail == said else field_problem(field, str(exc.detail), lang)

        headers = dict(getattr(exc, "headers", None) or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(_allowed(req))
        return _respond(req, error_body(field, str(exc.detail)), exc.status_code, headers or None,
                        page=page if exc.status_code in HTTP_PAGES else None)
