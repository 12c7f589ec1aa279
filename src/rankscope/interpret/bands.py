"""Rating bands per metric (poor / fair / good / excellent) with advice, from the metric guide
transcribed in bands.json (docs/interpretation.md).

The bands live in ``bands.json``; a metric is rated by its registry family
(``precision``, ``recall``, ``mrr``, ``ndcg``) whatever its cutoff, so
``precision@3`` and ``P@10`` use the Precision@K table.  Metrics the guide gives
no table for (hit rate, MAP, ...) have no band: :func:`rate` returns ``None``.

Ranges are intervals such as ``[0.5, 0.7)``; values are rounded to 10 decimals
before they are placed, so a mean of 0.8499999999999999 counts as 0.85.

>>> r = rate("P@5", 0.4)
>>> r.level, r.advice
('poor', 'heavy retrieval noise — consider a reranker or a better retrieval strategy')
>>> rate("mrr", 0.81, lang="zh").level_name, rate("recall@5", 0.85).level
('优秀', 'good')
>>> rate("hit_rate@5", 0.9) is None
True
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _, gettext
from rankscope.interpret.i18n import check_lang, load_data
from rankscope.measures import Measure, parse_metric

__all__ = ["Band", "Rating", "band_table", "rate", "LEVELS", "level_name", "metric_profile"]

LEVELS: tuple[str, ...] = ("poor", "fair", "good", "excellent")
_RANGE = re.compile(r"^\s*([\[(])\s*([0-9.]+)\s*,\s*([0-9.]+)\s*([\])])\s*$")


@dataclass(frozen=True)
class Band:
    """One row of a band table: level, interval and advice (English; its Chinese, the guide's original, is in the
    message catalog)."""

    level: str
    low: float
    high: float
    low_closed: bool
    high_closed: bool
    advice: str

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in this band's interval."""
        above = value >= self.low if self.low_closed else value > self.low
        below = value <= self.high if self.high_closed else value < self.high
        return above and below

    def advice_in(self, lang: str) -> str:
        """The advice text in ``lang``."""
        return gettext(self.advice, check_lang(lang), context="guide")

    @property
    def range_text(self) -> str:
        """The interval in the notation of ``bands.json``, e.g. ``[0.5, 0.7)``."""
        return f"{'[' if self.low_closed else '('}{self.low:g}, {self.high:g}{']' if self.high_closed else ')'}"


@dataclass(frozen=True)
class Rating:
    """Where a value falls: the metric, value, band level and the advice in one language."""

    metric: str
    value: float
    level: str
    level_name: str
    advice: str
    band: Band

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"metric": self.metric, "value": self.value, "level": self.level,
                "level_name": self.level_name, "advice": self.advice, "range": self.band.range_text}


def _parse_range(text: str) -> tuple[float, float, bool, bool]:
    m = _RANGE.match(text)
    if not m:
        raise ValueError(f"bands.json: malformed range {text!r}")
    return float(m.group(2)), float(m.group(3)), m.group(1) == "[", m.group(4) == "]"


@cache
def _tables() -> dict[str, tuple[Band, ...]]:
    data = load_data("bands.json")
    out: dict[str, tuple[Band, ...]] = {}
    for family, entry in data["metrics"].items():
        bands = []
        for row in entry["bands"]:
            low, high, lc, hc = _parse_range(row["range"])
            bands.append(Band(row["level"], low, high, lc, hc, row["advice"]))
        out[family] = tuple(bands)
    return out


def _measure(metric: str | Measure) -> Measure:
    return metric if isinstance(metric, Measure) else parse_metric(metric)


def band_table(metric: str | Measure) -> tuple[Band, ...] | None:
    """The bands of ``metric``'s family (or of a family name), or ``None`` if the guide gives none."""
    if isinstance(metric, str) and metric in _tables():
        return _tables()[metric]
    return _tables().get(_measure(metric).name)


def level_name(level: str, lang: str = "en") -> str:
    """The display name of a band level (``poor`` → ``差`` in zh)."""
    return gettext(load_data("bands.json")["levels"][level], check_lang(lang), context="guide")


def rate(metric: str | Measure, value: float, lang: str = "en") -> Rating | None:
    """Place ``value`` of ``metric`` in its band; ``None`` when the metric has no bands."""
    check_lang(lang)
    table = band_table(metric)
    if table is None:
        return None
    v = float(value)
    if math.isnan(v):
        raise InvalidParameterError(_("cannot rate {metric}: the value is NaN", metric=str(metric)))
    v = round(v, 10)
    for band in table:
        if band.contains(v):
            return Rating(str(metric), float(value), band.level, level_name(band.level, lang),
                          band.advice_in(lang), band)
    raise InvalidParameterError(_("{metric} = {value!r} is outside every band (expected a value in [0, 1])",
                                  metric=str(metric), value=value))


def metric_profile(metric: str | Measure, lang: str = "en") -> dict[str, str] | None:
    """The guide's comparison-table row of a metric family: focus, strength, limitation, typical use.

    >>> metric_profile("P@5")["limitation"], metric_profile("hit_rate@3", "zh")["use"]
    ('ignores recall', '快速评估')
    """
    check_lang(lang)
    family = metric if isinstance(metric, str) and metric in load_data("bands.json")["profiles"] else \
        _measure(metric).name
    row = load_data("bands.json")["profiles"].get(family)
    return None if row is None else {k: gettext(v, lang, context="guide") for k, v in row.items()}
