"""The dashboard's pages rendered in the reader's language: the Jinja environment, :func:`render` and the error
page, which the API's error handlers and the service's guards answer a dashboard request with too (so they live
below the page routes that import the API)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse

from rankscope.choices import LANGS  # declared once, with the library and the command line
from rankscope.i18n import install_gettext

__all__ = ["TEMPLATES", "LANG_COOKIE", "pick_lang", "lang_of", "render", "error_page"]

TEMPLATES = Path(__file__).parent / "web" / "templates"
LANG_COOKIE = "rankscope_lang"


def pick_lang(query: str | None, cookie: str | None, accept: str | None) -> str:
    """``?lang=`` first, then the cookie, then the browser's Accept-Language.

    >>> pick_lang(None, None, "zh-CN,zh;q=0.9"), pick_lang("en", "zh", None)
    ('zh', 'en')
    """
    for cand in (query, cookie):
        if cand in LANGS:
            return str(cand)
    if accept and accept.lower().lstrip().startswith("zh"):
        return "zh"
    return "en"


@cache
def _env(lang: str) -> Any:
    """The dashboard's Jinja environment in ``lang`` (its messages said through the catalog)."""
    import jinja2

    return install_gettext(jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True), lang)


def lang_of(request: Request) -> str:
    return pick_lang(request.query_params.get("lang"), request.cookies.get(LANG_COOKIE),
                     request.headers.get("accept-language"))


def render(request: Request, template: str, section: str = "", status: int = 200, **ctx: Any) -> HTMLResponse:
    qlang = request.query_params.get("lang")
    lang = lang_of(request)

    ctx.setdefault("error", None)
    ctx.setdefault("refresh", None)
    # the same page in the other language: the page's own parameters kept (a drill-down's query id)
    other = [(k, v) for k, v in request.query_params.multi_items() if k != "lang"]
    ctx.setdefault("lang_switch", "?" + urlencode([*other, ("lang", "en" if lang == "zh" else "zh")]))
    html = _env(lang).get_template(template).render(lang=lang, section=section, **ctx)
    resp = HTMLResponse(html, status_code=status)
    if qlang in LANGS:
        resp.set_cookie(LANG_COOKIE, str(qlang), max_age=365 * 86400, samesite="lax")
    return resp


def error_page(request: Request, status: int, problem: str) -> HTMLResponse:
    """The dashboard's answer to a bad id or parameter (404 / 422): a page, not JSON; ``problem`` is said in the
    page's language (:func:`lang_of`)."""
    return render(request, "error.html", status=status, error=problem)
