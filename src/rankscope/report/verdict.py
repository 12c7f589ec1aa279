"""The verdict on one system's means: ratings, advice, explanations, production standards, a scenario.

Shared by the comparison report (:mod:`rankscope.report.content`, once per system) and
the one-run report (:mod:`rankscope.report.run_report`), so that both rate the same way:

* every rating compares a mean with the *ceiling*, what a perfect ranking reaches on
  the evaluated queries (collection-aware bands): a perfect run is rated in the best
  band even where the collection keeps Recall@5 or P@5 below 1;
* the production standards (minimum / good / excellent) check each mean as measured against
  the thresholds, as ``rankscope check --preset production:<tier>`` does — one rule in every
  output: a threshold above what a perfect ranking reaches is not met and is said to be
  unreachable, with that ceiling beside the mean;
* a scenario (``faq``, ``document_qa``, ...) adds its recommended metrics and its
  benchmark figures, checked against the means as measured.

>>> from rankscope.measures import parse_metric
>>> v = system_verdict({"P@5": 0.4}, [parse_metric("P@5")], {"P@5": 0.4}, None, n=3, lang="en")
>>> v["ratings"]["P@5"]["level"], v["ratings"]["P@5"]["relative"]
('excellent', 1.0)
>>> v = system_verdict({"P@5": 0.4, "recall@5": 1.0, "mrr": 1.0}, [parse_metric(m) for m in ("P@5", "recall@5", "mrr")],
...                    {"P@5": 0.4}, None, n=3, lang="en")
>>> c = v["standards"]["checks"]["minimum"][1]
>>> c["metric"], c["value"], c["passed"], c["ceiling"], c["unreachable"]
('precision@5', 0.4, False, 0.4, True)
>>> v["standards"]["status_text"]
'below minimum (precision@5 >= 0.6 cannot be met: a perfect ranking scores 0.400 on these qrels)'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rankscope.i18n import _, gettext
from rankscope.interpret.bands import rate
from rankscope.interpret.explain import explain
from rankscope.interpret.presets import TIERS, check_standard, get_scenario, tier_name
from rankscope.measures import parse_metric
from rankscope.measures.base import Measure

__all__ = ["system_verdict", "scenario_section", "standing", "relative_means", "standard_checks"]


def relative_means(means: Mapping[str, float], ceilings: Mapping[str, float]) -> dict[str, float]:
    """Each mean divided by its ceiling (metrics without a ceiling, or a ceiling of 0, keep their mean)."""
    return {label: v / ceilings[label] if ceilings.get(label) else v for label, v in means.items()}


def standing(checks: dict[str, list[dict[str, Any]]]) -> tuple[str | None, str, list[str]]:
    """Highest production tier met, the status (``met`` / ``below_minimum`` / ``not_evaluated``), metrics missing.

    A tier is met when all its metrics were evaluated and pass; a failing metric decides
    "below" whatever is missing, a missing one leaves the tier undecided.
    """
    highest = None
    missing = sorted({c["metric"] for cs in checks.values() for c in cs if c["value"] is None})
    for tier in TIERS:
        if any(c["passed"] is False for c in checks[tier]):
            return highest, "met" if highest else "below_minimum", missing
        if any(c["passed"] is None for c in checks[tier]):
            return highest, "met" if highest else "not_evaluated", missing
        highest = tier
    return highest, "met", missing


def standard_checks(means: Mapping[str, float], ceilings: Mapping[str, float]) -> dict[str, list[dict[str, Any]]]:
    """Every production tier's checks of the means as measured (the rule of ``rankscope check``): each with the
    ceiling a perfect ranking reaches on its metric (``None`` when unknown) and whether the threshold is above it
    (``unreachable``)."""
    reach = {parse_metric(label): c for label, c in ceilings.items()}
    out: dict[str, list[dict[str, Any]]] = {}
    for tier in TIERS:
        out[tier] = []
        for c in check_standard(means, f"production:{tier}"):
            ceiling = reach.get(parse_metric(c.metric))
            out[tier].append({**vars(c), "ceiling": ceiling,
                              "unreachable": ceiling is not None and round(ceiling, 10) < c.threshold})
    return out


def system_verdict(
    means: Mapping[str, float],
    measures: Sequence[Measure],
    ceilings: Mapping[str, float],
    per_query: np.ndarray | None,
    *,
    n: int,
    lang: str,
) -> dict[str, Any]:
    """Ratings (with ceiling and relative mean), explanations and production standing of one system.

    ``per_query`` (queries × metrics, in the order of ``means``) feeds the explanations; ``n`` is the
    number of queries the means rest on (no rating without a query).
    """
    labels = list(means)
    relative = relative_means(means, ceilings)
    ratings: dict[str, Any] = {}
    explanations: dict[str, str] = {}
    for j, (label, m) in enumerate(zip(labels, measures)):
        ceiling = ceilings.get(label)
        r = rate(m, min(relative[label], 1.0), lang) if n and ceiling != 0 else None
        ratings[label] = None if r is None else {
            **r.to_dict(), "value": means[label], "ceiling": ceiling,
            "relative": relative[label] if ceiling else None}
        if per_query is not None:
            explanations[label] = explain(label, per_query[:, j], lang, measure=m, ceiling=ceiling)
    checks = standard_checks(means, ceilings)
    tier, status, missing = standing(checks)
    if status == "met" and tier is not None:
        shown = tier_name(tier, lang)
    elif status == "not_evaluated":
        shown = _("not evaluated (no {metrics})", metrics=", ".join(missing)).text(lang)
    else:
        shown = gettext("below minimum", lang)
    blocked = next((c for t in TIERS[TIERS.index(tier) + 1 if tier else 0:] for c in checks[t] if c["unreachable"]),
                   None)
    if blocked is not None and status != "not_evaluated":  # why the next tier cannot be met on these qrels
        shown = _("{tier} ({metric} {op} {threshold} cannot be met: a perfect ranking scores {ceiling} on these "
                  "qrels)", tier=shown, metric=blocked["metric"], op=blocked["op"],
                  threshold=f"{blocked['threshold']:g}", ceiling=f"{blocked['ceiling']:.3f}").text(lang)
    standards = {"highest_tier": tier, "highest_tier_name": None if tier is None else tier_name(tier, lang),
                 "status": status, "status_text": shown, "not_evaluated": missing, "checks": checks,
                 "applicable": any(c["value"] is not None for cs in checks.values() for c in cs)}
    return {"ratings": ratings, "explanations": explanations, "standards": standards}


def scenario_section(
    scenario: str | None, means: Mapping[str, Mapping[str, float]], lang: str
) -> dict[str, Any] | None:
    """The scenario part of a report: its name, recommended metrics, benchmark figures checked per system.

    ``means`` is ``{system: {label: mean}}``; a benchmark metric a system was not evaluated on is
    shown as not evaluated (``value=None``), with the metrics to add in ``missing``.
    """
    if scenario is None:
        return None
    sc = get_scenario(scenario)
    checks = {s: [vars(c) for c in check_standard(m, f"benchmark:{sc.key}")] for s, m in means.items()} \
        if sc.benchmark else {}
    missing = sorted({c["metric"] for cs in checks.values() for c in cs if c["value"] is None})
    return {"key": sc.key, "name": sc.title(lang), "recommended": list(sc.recommended),
            "benchmark": dict(sc.benchmark), "note": sc.note(lang), "checks": checks, "missing": missing}
