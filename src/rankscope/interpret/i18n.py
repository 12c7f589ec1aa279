"""Languages of the interpretation and the reports: the check of a language code, the package's data files, how a
report states a setting.  The messages themselves are the gettext catalog of :mod:`rankscope.i18n`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from rankscope.choices import LANGS  # declared once, with the CLI and service choices
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import N_, _, colon, gettext, paren, say

__all__ = ["LANGS", "check_lang", "load_data", "message", "messages", "pick", "setting_text", "paren", "colon"]


def check_lang(lang: str) -> str:
    """Return ``lang`` if it is a supported language code, else raise InvalidParameterError."""
    if lang not in LANGS:
        langs = Items(LANGS)
        raise InvalidParameterError(_("lang must be one of {langs}, got {value!r}", langs=langs, value=lang))
    return lang


@cache
def load_data(name: str) -> Any:
    """Parse a JSON data file of this package (``bands.json``, ``messages/en.json``, ...)."""
    path = resources.files("rankscope.interpret").joinpath(*name.split("/"))
    return json.loads(path.read_text(encoding="utf-8"))


@cache
def messages(lang: str) -> dict[str, str]:
    """The keyed messages still looked up by a key built at run time (``messages/<lang>.json`` and
    ``messages/<lang>/*.json``)."""
    folder = resources.files("rankscope.interpret").joinpath("messages")
    table: dict[str, str] = dict(load_data(f"messages/{lang}.json"))
    part_dir = folder.joinpath(lang)
    parts = sorted((f for f in part_dir.iterdir() if f.name.endswith(".json")), key=lambda f: f.name) \
        if part_dir.is_dir() else []
    for part in parts:
        table.update(json.loads(part.read_text(encoding="utf-8")))
    return table


def message(key: str, lang: str = "en", /, **values: Any) -> str:
    """The keyed message ``key`` in ``lang``, formatted with ``values`` (each value that can say itself said in
    ``lang``)."""
    table = messages(check_lang(lang))
    try:
        template = table[key]
    except KeyError:
        raise KeyError(f"no message {key!r} in messages/{lang}") from None
    return str(template).format(**{k: say(v, lang) for k, v in values.items()}) if values else str(template)


def pick(texts: dict[str, str], lang: str) -> str:
    """The ``lang`` entry of a ``{"en": ..., "zh": ...}`` dict."""
    return texts[check_lang(lang)]


#: how a report states a setting's value: (setting, value) -> its English (translated by the catalog)
SETTING_TEXTS: dict[tuple[str, str], str] = {
    ("test", "t"): N_("paired t test"),
    ("test", "wilcoxon"): N_("Wilcoxon signed-rank test"),
    ("test", "randomization"): N_("paired randomization test"),
    ("test", "tukey-hsd"): N_("randomized Tukey HSD test"),
    ("correction", "holm"): N_("Holm correction over all pairs × metrics"),
    ("correction", "bonferroni"): N_("Bonferroni correction over all pairs × metrics"),
    ("correction", "bh"): N_("Benjamini–Hochberg correction over all pairs × metrics"),
    ("correction", "none"): N_("no multiple-comparison correction"),
    ("correction", "tukey-hsd"): N_("simultaneous over all pairs of systems of each metric"),
    ("policy.missing", "zero"): N_("scored 0 (zero)"),
    ("policy.missing", "ignore"): N_("left out (ignore)"),
}


def setting_text(setting: str, value: object, lang: str = "en") -> str:
    """How a report states a setting's value (``test`` ``t``, ``correction`` ``holm``, ``policy.missing`` ``zero``):
    :data:`SETTING_TEXTS` in ``lang``, whose Chinese holds the value's term (:data:`rankscope.choices.TERMS`).

    >>> setting_text("test", "t", "en"), setting_text("test", "t", "zh")
    ('paired t test', '配对 t 检验（t）')
    >>> setting_text("policy.missing", "zero", "zh")
    '缺失查询计零（missing=zero）'
    """
    return gettext(SETTING_TEXTS[setting, str(getattr(value, "value", value))], lang)
