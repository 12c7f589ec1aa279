"""Languages and message lookup for the interpretation and the reports.

Texts live in ``messages/<lang>.json`` and ``messages/<lang>/*.json`` (one file per part of the package:
``io.json``, ``labels.json`` ...), the same keys in every language, each key in one file; a message is a
:meth:`str.format` template filled with keyword arguments.

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
from rankscope.errors import InvalidParameterError, Items

__all__ = ["LANGS", "check_lang", "message", "messages", "load_data", "pick", "setting_text", "paren", "colon"]



def check_lang(lang: str) -> str:
    """Return ``lang`` if it is a supported language code, else raise InvalidParameterError."""
    if lang not in LANGS:
        langs = Items(LANGS)
        raise InvalidParameterError(f"lang must be one of {langs}, got {lang!r}").keyed("core.bad_lang", langs=langs,
                                                                                         value=lang)
    return lang


@cache
def load_data(name: str) -> Any:
    """Parse a JSON data file of this package (``bands.json``, ``messages/en.json``, ...)."""
    path = resources.files("rankscope.interpret").joinpath(*name.split("/"))
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def messages(lang: str) -> dict[str, str]:
    """Every message in ``lang``: ``messages/<lang>.json`` and the files of ``messages/<lang>/``, merged (a key said
    in two files is a packaging mistake, raised as such)."""
    folder = resources.files("rankscope.interpret").joinpath("messages")
    table: dict[str, str] = dict(load_data(f"messages/{lang}.json"))
    part_dir = folder.joinpath(lang)
    parts = sorted((f for f in part_dir.iterdir() if f.name.endswith(".json")), key=lambda f: f.name) \
        if part_dir.is_dir() else []
    for part in parts:
        for key, text in json.loads(part.read_text(encoding="utf-8")).items():
            if key in table:
                raise RuntimeError(f"message {key!r} is in messages/{lang}/{part.name} and in another file")
            table[key] = text
    return table


def pick(texts: dict[str, str], lang: str) -> str:
    """The ``lang`` entry of a ``{"en": ..., "zh": ...}`` dict."""
    return texts[check_lang(lang)]


def message(key: str, lang: str = "en", /, **values: Any) -> str:
    """The message ``key`` in ``lang``, formatted with ``values``; a value that can say itself (a ``text(lang)``
    method: :class:`~rankscope.errors.Said`, :class:`~rankscope.errors.Items`, an error) is said in ``lang`` too.

    >>> from rankscope.errors import Said
    >>> message("engine.n_queries.one", "en", n=1), message("cli.summary", "en", evaluated=Said.counted(
    ...     "engine.n_queries", 1), missing="zero", missing_from_run="0", not_in_qrels="0")[:26]
    ('1 query', '1 query evaluated (missing')
    """
    table = messages(check_lang(lang))
    try:
        template = table[key]
    except KeyError:
        raise KeyError(f"no message {key!r} in messages/{lang}") from None
    if not values:
        return str(template)
    return str(template).format(**{k: v.text(lang) if callable(getattr(v, "text", None)) else v
                                   for k, v in values.items()})


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
