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
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from rankscope.errors import RankscopeError, UnknownMetricError
from rankscope.i18n import N_, Message, _, gettext
from rankscope.service.ingest import UploadError
from rankscope.service.store import NotFound
from rankscope.service.uploads import LimitExceeded

__all__ = ["FieldError", "install_error_handlers", "error_body", "said", "field_problem", "validation_text"]


class FieldError(Exception):
    """A user error tied to one request field: ``error`` is rankscope's error, a validator's complaint
    (:class:`Invalid`) or a :class:`~rankscope.i18n.Message`, said in the reader's language as it says itself (a plain
    ``str`` is English only)."""

    def __init__(self, field: str, error: Exception | Invalid | Message | str, status: int = 422) -> None:
        self.field = field
        self.error = error
        self.status = status
        super().__init__(str(error))

    def text(self, lang: str = "en") -> str:
        return said(self.error, lang)

    @classmethod
    def of_address(cls, field: str, error: Exception) -> FieldError:
        """A refused outgoing address: 403 when the URL is valid but this service may not call it (its allow-list,
        its own address: the service's configuration forbids it), 422 when the URL itself is wrong."""
        from rankscope.service.egress import ForbiddenURLError

        return cls(field, error, status=403 if isinstance(error, ForbiddenURLError) else 422)


@dataclass(frozen=True)
class Invalid:
    """The request validator's complaint about one value (a pydantic error), said in the reader's language
    (:func:`validation_text`); ``str()`` is its English message."""

    error: dict[str, Any]

    def text(self, lang: str = "en") -> str:
        return validation_text(self.error, lang).removeprefix("Value error, ")

    def __str__(self) -> str:
        return self.text("en")


#: pydantic's complaints, by their type, as the English of its message (said through the catalog)
VALIDATION: dict[str, str] = {
    "missing": N_("Field required"),
    "int_parsing": N_("Input should be a valid integer, unable to parse string as an integer"),
    "float_parsing": N_("Input should be a valid number, unable to parse string as a number"),
    "bool_parsing": N_("Input should be a valid boolean, unable to interpret input"),
    "greater_than_equal": N_("Input should be greater than or equal to {ge}"),
    "less_than_equal": N_("Input should be less than or equal to {le}"),
    "greater_than": N_("Input should be greater than {gt}"),
    "less_than": N_("Input should be less than {lt}"),
    "string_too_long": N_("String should have at most {max_length} characters"),
    "string_too_short": N_("String should have at least {min_length} characters"),
    "string_pattern_mismatch": N_("String should match pattern '{pattern}'"),
    "literal_error": N_("Input should be {expected}"),
    "enum": N_("Input should be {expected}"),
}
#: Starlette's own answers a page says in the reader's language
HTTP_PAGES: dict[int, str] = {404: N_("Not Found")}


def said(exc: BaseException | Invalid | Message | str, lang: str = "en") -> str:
    """What ``exc`` says in ``lang`` (its translation when it can say itself), else its English message."""
    text = getattr(exc, "text", None)
    return str(text(lang)) if callable(text) else str(exc)


def field_problem(field: str | None, problem: str, lang: str = "en") -> str:
    """``field: problem`` (``field：problem`` in Chinese), or the problem alone when no field is named."""
    return _("{field}: {problem}", field=field, problem=problem).text(lang) if field else problem


def validation_text(error: dict[str, Any], lang: str = "en") -> str:
    """The request validator's (pydantic's) complaint about one field in ``lang``: its own English ``msg``, or the
    English of :data:`VALIDATION` filled with its context and said in ``lang``; a ``ValueError`` of rankscope's
    validators says itself.

    >>> e = {"type": "greater_than_equal", "msg": "Input should be greater than or equal to 1", "ctx": {"ge": 1}}
    >>> validation_text(e, "en"), validation_text(e, "zh")
    ('Input should be greater than or equal to 1', '应大于或等于 1')
    """
    msg = str(error.get("msg", "invalid"))
    ctx = dict(error.get("ctx") or {})
    kind = str(error.get("type", ""))
    if lang == "en":
        return msg
    if kind == "value_error" and callable(getattr(ctx.get("error"), "text", None)):
        return said(ctx["error"], lang)
    if kind not in VALIDATION:
        return msg
    if kind == "literal_error":  # "'a', 'b' or 'c'": listed in the reader's language
        ctx["expected"] = "、".join(p.strip() for p in str(ctx.get("expected", "")).replace(" or ", ", ").split(","))
    try:
        return _(VALIDATION[kind], **ctx).text(lang)
    except (KeyError, IndexError, ValueError):  # a context this version of pydantic names otherwise
        return msg


def error_body(field: str | None, problem: str, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"field": field, "problem": problem, **extra}
    summary = f"{field}: {problem}" if field else problem
    return {"detail": summary, "errors": [item]}


def _respond(request: Request, body: dict[str, Any], status: int, headers: dict[str, str] | None = None,
             page: Callable[[str], str] | None = None) -> Response:
    """JSON for the API (in English); for a dashboard page the same problem as an HTML page, said in the page's
    language by ``page(lang)`` (the English ``detail`` without it)."""
    if request.url.path.startswith("/api/") or status in (401, 405):
        return JSONResponse(body, status_code=status, headers=headers)
    from rankscope.service.web.render import error_page, lang_of

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
