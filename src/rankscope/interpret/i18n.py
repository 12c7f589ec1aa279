"""Languages of the interpretation and the reports: the check of a language code, the package's data files, how a
report states a setting.  The texts themselves are said through the catalog of :mod:`rankscope.i18n`.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from rankscope.choices import LANGS  # declared once, with the CLI and service choices
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import N_, _, gettext

__all__ = ["LANGS", "check_lang", "load_data", "setting_text"]


def check_lang(lang: str) -> str:
    """Return ``lang`` if it is a supported language code, else raise InvalidParameterError."""
    if lang not in LANGS:
        langs = Items(LANGS)
        raise InvalidParameterError(_("lang must be one of {langs}, got {value!r}", langs=langs, value=lang))
    return lang


@cache
def load_data(name: str) -> Any:
    """Parse a JSON data file of this package (``bands.json``, ``presets.json``)."""
    path = resources.files("rankscope.interpret").joinpath(*name.split("/"))
    return json.loads(path.read_text(encoding="utf-8"))


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
    ("ci", "bootstrap"): N_("percentile-bootstrap"),
    ("ci", "betting"): N_("betting"),
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
