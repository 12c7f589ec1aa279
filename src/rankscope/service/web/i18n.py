"""The dashboard's choice of language (its texts are the catalog's: :mod:`rankscope.i18n`)."""

from __future__ import annotations

from rankscope.choices import LANGS  # declared once, with the library and the command line

__all__ = ["LANGS", "pick_lang"]


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
