"""Languages and message lookup for the interpretation and the reports.

Texts live in ``messages/en.json`` and ``messages/zh.json`` (same keys); a
message is a :meth:`str.format` template filled with keyword arguments.

>>> message("best", "en"), message("best", "zh")
('best', '最佳')
>>> message("n_queries", "en", n=3)
'3 queries'
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from rankscope.choices import LANGS  # declared once, with the CLI and service choices
from rankscope.errors import InvalidParameterError

__all__ = ["LANGS", "check_lang", "message", "load_data", "pick"]



def check_lang(lang: str) -> str:
    """Return ``lang`` if it is a supported language code, else raise InvalidParameterError."""
    if lang not in LANGS:
        raise InvalidParameterError(f"lang must be one of {', '.join(LANGS)}, got {lang!r}")
    return lang


@cache
def load_data(name: str) -> Any:
    """Parse a JSON data file of this package (``bands.json``, ``messages/en.json``, ...)."""
    path = resources.files("rankscope.interpret").joinpath(*name.split("/"))
    return json.loads(path.read_text(encoding="utf-8"))


def pick(texts: dict[str, str], lang: str) -> str:
    """The ``lang`` entry of a ``{"en": ..., "zh": ...}`` dict."""
    return texts[check_lang(lang)]


def message(key: str, lang: str = "en", **values: Any) -> str:
    """The message ``key`` in ``lang``, formatted with ``values``."""
    table = load_data(f"messages/{check_lang(lang)}.json")
    try:
        template = table[key]
    except KeyError:
        raise KeyError(f"no message {key!r} in messages/{lang}.json") from None
    return str(template).format(**values) if values else str(template)
