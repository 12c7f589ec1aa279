"""Error responses: every 4xx body names the field and the problem.

Shape: ``{"detail": "<summary>", "errors": [{"field": "metrics", "problem": "...",
"suggestions": [...]}]}`` (``suggestions`` only for unknown metric names).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from rankscope.errors import RankscopeError, UnknownMetricError
from rankscope.service.ingest import UploadError
from rankscope.service.store import NotFound
from rankscope.service.uploads import LimitExceeded

__all__ = ["FieldError", "install_error_handlers", "error_body"]


class FieldError(Exception):
    """A user error tied to one request field."""

    def __init__(self, field: str, error: Exception | str, status: int = 422) -> None:
        self.field = field
        self.error = error
        self.status = status
        super().__init__(str(error))


def error_body(field: str | None, problem: str, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"field": field, "problem": problem, **extra}
    summary = f"{field}: {problem}" if field else problem
    return {"detail": summary, "errors": [item]}


def _respond(request: Request, body: dict[str, Any], status: int, headers: dict[str, str] | None = None) -> Response:
    """JSON for the API; for a dashboard page the same problem as an HTML page."""
    if request.url.path.startswith("/api/") or status in (401, 405):
        return JSONResponse(body, status_code=status, headers=headers)
    from rankscope.service.web.pages import error_page

    return error_page(request, status, str(body["detail"]))


def _field_error(request: Request, field: str, exc: Exception | str, status: int) -> Response:
    extra: dict[str, Any] = {}
    if isinstance(exc, UnknownMetricError):
        extra["suggestions"] = exc.suggestions
    return _respond(request, error_body(field, str(exc), **extra), status)


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
        return _respond(req, {"detail": summary, "errors": errors}, 422)

    @app.exception_handler(FieldError)
    async def _field(req: Request, exc: FieldError) -> Response:
        return _field_error(req, exc.field, exc.error, exc.status)

    @app.exception_handler(UploadError)
    async def _upload(req: Request, exc: UploadError) -> Response:
        return _field_error(req, exc.field, exc, 422)

    @app.exception_handler(LimitExceeded)
    async def _too_large(req: Request, exc: LimitExceeded) -> Response:
        return _field_error(req, exc.field, exc, 413)

    @app.exception_handler(NotFound)
    async def _not_found(req: Request, exc: NotFound) -> Response:
        return _respond(req, error_body(exc.field, str(exc)), 404 if exc.field == "path" else 422)

    @app.exception_handler(RankscopeError)
    async def _rankscope(req: Request, exc: RankscopeError) -> Response:
        field = "metrics" if isinstance(exc, UnknownMetricError) else None
        return _field_error(req, field or "body", exc, 422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(req: Request, exc: StarletteHTTPException) -> Response:
        field = getattr(exc, "field", None)
        return _respond(req, error_body(field, str(exc.detail)), exc.status_code, getattr(exc, "headers", None))
