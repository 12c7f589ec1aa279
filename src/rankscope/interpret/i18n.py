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

__all__ = ["LANGS", "check_lang", "message", "load_data", "pick", "setting_text", "paren", "colon"]



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


def message(key: str, lang: str = "en", /, **values: Any) -> str:
    """The message ``key`` in ``lang``, formatted with ``values``."""
    table = load_data(f"messages/{check_lang(lang)}.json")
    try:
        template = table[key]
    except KeyError:
        raise KeyError(f"no message {key!r} in messages/{lang}.json") from None
    return str(template).format(**values) if values else str(template)


def setting_text(setting: str, value: object, lang: str = "en") -> str:
    """How a report states a setting's value: message ``<setting>.<value>`` (``test.t``, ``correction.holm``,
    ``policy.missing.zero``), whose Chinese text holds the term of :data:`rankscope.choices.TERMS` (``{term}``).

    >>> setting_text("test", "t", "en"), setting_text("test", "t", "zh")
    ('paired t test', '配对 t 检验（t）')
    >>> setting_text("policy.missing", "zero", "zh")
    '缺失查询计零（missing=zero）'
    """
    from rankscope.choices import term

    text = str(getattr(value, "value", value))
    kind = setting.rsplit(".", 1)[-1]
    return message(f"{setting}.{text}", lang, term=term(text, lang, kind if kind == "missing" else None))


def paren(text: str, lang: str = "en") -> str:
    """``text`` as an aside after a word: `` (text)`` in English, ``（text）`` (full width, no space) in Chinese.

    >>> "bm25" + paren("baseline"), "bm25" + paren("基线", "zh")
    ('bm25 (baseline)', 'bm25（基线）')
    """
    return f"（{text}）" if lang == "zh" else f" ({text})"


def colon(lang: str = "en") -> str:
    """The colon after a label: ``": "`` in English, ``"："`` (full width) in Chinese."""
    return "：" if lang == "zh" else ": "
