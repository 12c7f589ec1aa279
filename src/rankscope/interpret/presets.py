"""Scenario presets, industry benchmark figures and production standards, from the metric
guide transcribed in presets.json (docs/interpretation.md).

Data in ``presets.json``.  A *scenario* (``faq``, ``document_qa``,
``academic_search``, ``enterprise_kb``, ``production_monitoring``) names the
metrics the guide recommends for it and the benchmark figures it quotes.  The
*production standards* (minimum / good / excellent) and the scenario benchmarks
are usable as named gates: ``production:good``, ``benchmark:faq``; a gate is a
list of ``(metric, ">=", threshold)`` requirements.

>>> standard_requirements("production:good")
[('recall@5', '>=', 0.8), ('precision@5', '>=', 0.75), ('mrr', '>=', 0.7)]
>>> get_scenario("faq").metrics()
['mrr', 'hit_rate@3', 'precision@3']
>>> check_standard({"R@5": 0.82, "P@5": 0.7, "MRR": 0.9}, "production:good")[1]
StandardCheck(metric='precision@5', op='>=', threshold=0.75, value=0.7, passed=False)
>>> highest_tier({"recall@5": 0.82, "precision@5": 0.77, "mrr": 0.75})
'good'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _, gettext
from rankscope.interpret.i18n import check_lang, load_data
from rankscope.measures import Measure, parse_metric

__all__ = [
    "Scenario",
    "StandardCheck",
    "get_scenario",
    "scenario_names",
    "tier_name",
    "standard_names",
    "standard_requirements",
    "check_standard",
    "highest_tier",
    "TIERS",
]

TIERS: tuple[str, ...] = ("minimum", "good", "excellent")
Requirement = tuple[str, str, float]


@dataclass(frozen=True)
class Scenario:
    """A usage scenario of the metric guide: recommended metrics and benchmark figures.  Its names and note are
    English, said in another language by the message catalog (where the guide's original Chinese is)."""

    key: str
    name: str
    benchmark_name: str
    recommended: tuple[str, ...]
    benchmark: tuple[tuple[str, float], ...]
    caveat: str | None = None

    def title(self, lang: str = "en") -> str:
        """The scenario's name in ``lang``."""
        return gettext(self.name, check_lang(lang), context="guide")

    def note(self, lang: str = "en") -> str | None:
        """The caveat about this scenario in ``lang``, if any."""
        return None if self.caveat is None else gettext(self.caveat, check_lang(lang), context="guide-note")

    def metrics(self) -> list[str]:
        """Metrics to evaluate: the recommended ones, else (none given) the benchmark's."""
        return list(self.recommended) if self.recommended else [m for m, __ in self.benchmark]


@dataclass(frozen=True)
class StandardCheck:
    """One requirement of a standard checked against a value (``None``: metric not evaluated)."""

    metric: str
    op: str
    threshold: float
    value: float | None
    passed: bool | None


@cache
def _scenarios() -> dict[str, Scenario]:
    data = load_data("presets.json")["scenarios"]
    out = {}
    for key, s in data.items():
        out[key] = Scenario(
            key=key,
            name=s["name"],
            benchmark_name=s.get("benchmark_name", s["name"]),
            recommended=tuple(s["recommended"]),
            benchmark=tuple((m, float(v)) for m, v in s["benchmark"].items()),
            caveat=s.get("note"),
        )
    return out


def tier_name(tier: str, lang: str = "en") -> str:
    """The name of a production standard's tier (``minimum``, ``good``, ``excellent``) in ``lang``.

    >>> tier_name("good"), tier_name("good", "zh")
    ('good', '良好')
    """
    return gettext(load_data("presets.json")["production_standards"]["tiers"][tier]["name"], check_lang(lang),
                   context="guide")


def scenario_names() -> list[str]:
    """Keys of the scenarios, in the guide's order."""
    return list(_scenarios())


def get_scenario(name: str) -> Scenario:
    """The scenario ``name`` (see :func:`scenario_names`)."""
    try:
        return _scenarios()[name]
    except KeyError:
        known = Items(tuple(scenario_names()))
        raise InvalidParameterError(_("unknown scenario {name!r}; known: {known}", name=name, known=known)) from None


def standard_names() -> list[str]:
    """Names usable as gates: ``production:<tier>`` and ``benchmark:<scenario>`` (with figures)."""
    names = [f"production:{t}" for t in TIERS]
    names += [f"benchmark:{k}" for k, s in _scenarios().items() if s.benchmark]
    return names


def standard_requirements(name: str) -> list[Requirement]:
    """The requirements of a named standard: ``[(metric, ">=", threshold), ...]``."""
    kind, __, key = name.partition(":")
    if kind == "production":
        tiers = load_data("presets.json")["production_standards"]["tiers"]
        if key in tiers:
            return [(m, ">=", float(v)) for m, v in tiers[key]["requirements"].items()]
    elif kind == "benchmark" and key in _scenarios():
        if _scenarios()[key].benchmark:
            return [(m, ">=", v) for m, v in _scenarios()[key].benchmark]
        metrics, known = Items(tuple(_scenarios()[key].recommended)), Items(tuple(standard_names()))
        raise InvalidParameterError(_("there is no standard {name!r}: docs/interpretation.md gives no benchmark "
                                      "figures for the scenario {key!r} (it only recommends the metrics {metrics}); "
                                      "known: {known}",
                                      name=name, key=key, metrics=metrics, known=known))
    known = Items(tuple(standard_names()))
    raise InvalidParameterError(_("unknown standard {name!r}; known: {known}", name=name, known=known))


def _by_measure(values: Mapping[str, float]) -> dict[Measure, float]:
    out: dict[Measure, float] = {}
    for label, v in values.items():
        out.setdefault(parse_metric(label), float(v))
    return out


def check_standard(values: Mapping[str, float], name: str) -> list[StandardCheck]:
    """Check metric means (labels in any spelling) against the standard ``name``.

    A requirement whose metric is not in ``values`` gets ``value=None, passed=None``.
    """
    have = _by_measure(values)
    out = []
    for metric, op, threshold in standard_requirements(name):
        v = have.get(parse_metric(metric))
        out.append(StandardCheck(metric, op, threshold, v, None if v is None else round(v, 10) >= threshold))
    return out


def highest_tier(values: Mapping[str, float]) -> str | None:
    """The highest production tier whose requirements all hold (``None``: not even minimum).

    Tiers with a metric missing from ``values`` do not hold.
    """
    best = None
    for tier in TIERS:
        if all(c.passed for c in check_standard(values, f"production:{tier}")):
            best = tier
    return best
