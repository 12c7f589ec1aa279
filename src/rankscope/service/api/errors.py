"""Error responses: every 4xx body names the field and the problem.

Shape: ``{"detail": "<summary>", "errors": [{"field": "metrics", "problem": "...",
"suggestions": [...]}]}`` (``suggestions`` only for unknown metric names).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
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


def _field_error(field: str, exc: Exception | str, status: int) -> JSONResponse:
    extra: dict[str, Any] = {}
    if isinstance(exc, UnknownMetricError):
        extra["suggestions"] = exc.suggestions
    return JSONResponse(error_body(field, str(exc), **extra), status_code=status)


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
    async def _validation(_req: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"field": _loc(tuple(e.get("loc", ()))), "problem": str(e.get("msg", "invalid"))}
                  for e in exc.errors()]
        summary = "; ".join(f"{e['field']}: {e['problem']}" for e in errors[:5])
        return JSONResponse({"detail": summary, "errors": errors}, status_code=422)

    @app.exception_handler(FieldError)
    async def _field(_req: Request, exc: FieldError) -> JSONResponse:
        return _field_error(exc.field, exc.error, exc.status)

    @app.exception_handler(UploadError)
    async def _upload(_req: Request, exc: UploadError) -> JSONResponse:
        return _field_error(exc.field, exc, 422)

    @app.exception_handler(LimitExceeded)
    async def _too_large(_req: Request, exc: LimitExceeded) -> JSONResponse:
        return _field_error(exc.field, exc, 413)

    @app.exception_handler(NotFound)
    async def _not_found(_req: Request, exc: NotFound) -> JSONResponse:
        return JSONResponse(error_body(exc.field, str(exc)), status_code=404 if exc.field == "path" else 422)

    @app.exception_handler(RankscopeError)
    async def _rankscope(_req: Request, exc: RankscopeError) -> JSONResponse:
        field = "metrics" if isinstance(exc, UnknownMetricError) else None
        return _field_error(field or "body", exc, 422)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_req: Request, exc: StarletteHTTPException) -> JSONResponse:
        field = getattr(exc, "field", None)
        return JSONResponse(error_body(field, str(exc.detail)), status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))
