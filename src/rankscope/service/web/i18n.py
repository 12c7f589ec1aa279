"""Dashboard texts in English and Chinese (``i18n/<lang>.json``) and the choice of language."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from rankscope.choices import LANGS  # declared once, with the library and the command line

__all__ = ["LANGS", "messages", "translate", "pick_lang"]

HERE = Path(__file__).parent / "i18n"


@cache
def messages(lang: str) -> dict[str, str]:
    data: dict[str, str] = json.loads((HERE / f"{lang}.json").read_text(encoding="utf-8"))
    return data


def translate(lang: str, key: str, **values: object) -> str:
    """The text of ``key`` in ``lang`` (falling back to English, then to the key).

    >>> translate("zh", "nav.runs"), translate("en", "eval.progress_live", finished=1, total=2, failed=0)
    ('结果', '1 of 2 queries answered, 0 failed')
    """
    text = messages(lang).get(key) or messages("en").get(key) or key
    return text.format(**values) if values else text


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
