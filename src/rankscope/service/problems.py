"""What the service says is wrong with a request: :class:`FieldError` (a user error tied to one request field), the
request validator's complaints said in the reader's language, and the JSON body of a 4xx answer.

Values only (no route, no page): the API's error handlers (:mod:`rankscope.service.api.errors`), the guards and the
judging identity raise and say them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rankscope.i18n import N_, Message, _

__all__ = ["FieldError", "Invalid", "said", "field_problem", "validation_text", "error_body", "VALIDATION",
           "HTTP_PAGES"]


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
