"""Cell-level model of the report's tables, shared by every renderer.

:func:`summary_rows` gives, per system and metric, the formatted mean, whether it
is a best value (computed from the means, ties all marked), the significance mark
against the reference system (``†`` better, ``‡`` worse) and the rating band.

>>> fmt_p(0.00001), fmt_p(0.0432), fmt_signed(0.05), fmt_pct(None)
('<0.001', '0.043', '+0.050', '–')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rankscope.i18n import N_, _, gettext, ngettext

__all__ = ["DIST_HEADS", "DIST_KEYS", "coverage_lines",
           "Cell", "summary_rows", "policy_line", "fmt", "fmt_p", "fmt_signed", "fmt_pct", "fmt_ci", "percent",
           "system_label", "reachable_line", "p_text", "MARKS", "rated_value", "scenario_table", "scenario_lines",
           "notice_lines", "standards_note", "standards_table", "standard_cell"]

MARKS = {"better": "†", "worse": "‡"}


@dataclass(frozen=True)
class Cell:
    """One mean in the summary table."""

    text: str
    value: float
    best: bool
    mark: str
    level: str | None


def fmt(x: float | None, digits: int = 3) -> str:
    """A number with ``digits`` decimals (``–`` for None)."""
    return "–" if x is None else f"{x:.{digits}f}"


def fmt_signed(x: float | None, digits: int = 3) -> str:
    """A signed number (``+0.050``)."""
    return "–" if x is None else f"{x:+.{digits}f}"


def fmt_pct(x: float | None) -> str:
    """A signed percentage with one decimal."""
    return "–" if x is None else f"{x:+.1f}%"


def fmt_p(p: float | None) -> str:
    """A p-value: three decimals, ``<0.001`` below that."""
    if p is None:
        return "–"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def fmt_ci(ci: list[float] | tuple[float, float] | None) -> str:
    """An interval ``[+0.010, +0.050]``; ``–`` when there is none (a single query).

    >>> fmt_ci([0.01, 0.05]), fmt_ci(None)
    ('[+0.010, +0.050]', '–')
    """
    return "–" if ci is None else f"[{fmt_signed(ci[0])}, {fmt_signed(ci[1])}]"


def percent(level: float) -> str:
    """A confidence level as a percentage: ``0.95`` -> ``95%``, ``0.975`` -> ``97.5%``.

    >>> percent(0.9), percent(0.975)
    ('90%', '97.5%')
    """
    return f"{100 * level:.6g}%"


def system_label(report: dict[str, Any], system: str, lang: str | None = None) -> str:
    """A system's name, with its TREC tag when it differs (``bm25+rm3+bert (TREC tag T5-P)``)."""
    from rankscope.i18n import paren

    tag = report.get("tags", {}).get(system)
    lang = lang or report["lang"]
    return system if not tag else system + paren(_("TREC tag {tag}", tag=tag).text(lang), lang)


def reachable_line(report: dict[str, Any]) -> str | None:
    """The metrics a perfect ranking cannot take to 1 on these qrels, with the best it reaches (or None)."""

    capped = [(m, c) for m, c in report.get("ceilings", {}).items() if c < 1 - 1e-9]
    if not capped:
        return None
    values = ", ".join(f"{report['display_names'][m]} {c:.3f}" for m, c in capped)
    return _("Best a perfect ranking reaches on these qrels (ratings and standards compare with it): {values}.",
             values=values).text(report["lang"])


def pair_heads(report: dict[str, Any]) -> list[str]:
    """The heads of the paired-comparison table of the Markdown and HTML reports, in the report's language."""
    lang = report["lang"]
    return [gettext("Comparison", lang), gettext("Metric", lang), gettext("Difference", lang), report["ci_label"],
            gettext("Relative change", lang), gettext("p", lang), gettext("adjusted p", lang),
            gettext("d_z (paired)", lang), gettext("W/T/L", lang)]


def p_text(p: dict[str, Any], key: str = "p_adjusted") -> str:
    """A pair's p-value with its Monte-Carlo standard error when it has one (``0.041 ± 0.002``)."""
    se = p.get("p_mc_se")
    return fmt_p(p[key]) + (f" ± {se:.1g}" if se else "") + (" ≈α" if p.get("near_alpha") else "")


def summary_rows(report: dict[str, Any]) -> list[tuple[str, list[Cell]]]:
    """``[(system, [Cell per metric])]`` in system and metric order."""
    means = report["comparison"]["means"]
    rows = []
    for s in report["systems"]:
        cells = []
        for label in report["metrics"]:
            v = means[s][label]
            sig = report["significance"][s][label]
            rating = report["ratings"][s][label]
            cells.append(Cell(fmt(v), v, s in report["leaders"][label], MARKS.get(sig or "", ""),
                              rating["level"] if rating else None))
        rows.append((s, cells))
    return rows


def policy_line(report: dict[str, Any]) -> str:
    """One line: number of queries, relevance level, missing-query policy, depth, condensed lists when used,
    and judged@k of every run."""
    from rankscope.engine.coverage import judged_line
    from rankscope.interpret.i18n import setting_text

    lang = report["lang"]
    pol = report["policies"]
    depth = pol.get("depth")
    missing = setting_text("policy.missing", pol.get("missing", "zero"), lang)
    settings = _("Relevance level {relevance_level}; queries missing from a run: {missing}; depth: {depth}.",
                 relevance_level=pol.get("relevance_level", 1), missing=missing,
                 depth="–" if depth is None else depth)
    line = ngettext("{n} query", "{n} queries", report["n_queries"]).text(lang) + " · " + settings.text(lang)
    extra = [gettext("Unjudged documents removed before ranking (condensed lists, unjudged=condense).",
                     lang)] if pol.get("unjudged") == "condense" else []
    judged = judged_line(report.get("judged") or {}, lang)
    return " ".join([line, *extra, *([judged] if judged else [])])


def rated_value(rating: dict[str, Any], lang: str) -> str:
    """A rated mean, with what a perfect ranking reaches when that is below 1 (``0.420 of 0.600 reachable (70.0%)``)."""

    value = fmt(rating["value"])
    ceiling = rating.get("ceiling")
    if ceiling is None or ceiling >= 1 - 1e-9:
        return value
    return _("{value} of {ceiling} reachable ({pct})", value=value, ceiling=fmt(ceiling),
             pct=f"{100 * rating['relative']:.1f}%").text(lang)


def scenario_table(report: dict[str, Any]) -> tuple[list[str], list[list[str]]] | None:
    """The scenario's benchmark figures checked per system: header and rows (``0.912 ✓``, ``0.700 ✗``, ``–``).

    ``None`` when the report has no scenario or the scenario gives no benchmark figures.
    """

    sc = report.get("scenario")
    if not sc or not sc["benchmark"]:
        return None
    head = [gettext("System", report["lang"])] + [f"{m} ≥ {v:g}" for m, v in sc["benchmark"].items()]
    rows = [[system_label(report, s)] + [_checked(c) for c in checks] for s, checks in sc["checks"].items()]
    return head, rows


def _checked(c: dict[str, Any]) -> str:
    return "–" if c["value"] is None else f"{fmt(c['value'])} {'✓' if c['passed'] else '✗'}"


def scenario_lines(report: dict[str, Any]) -> list[str]:
    """The scenario's recommended metrics, the guide's note and the benchmark metrics not evaluated, as sentences."""

    sc = report.get("scenario")
    if not sc:
        return []
    lang = report["lang"]
    out = []
    if sc["recommended"]:
        out.append(_("Recommended metrics: {metrics}.", metrics=", ".join(sc["recommended"])).text(lang))
    if sc["note"]:
        out.append(sc["note"])
    if sc.get("missing"):
        out.append(_("Not evaluated: {metrics}; add {option} to check them against the benchmark.",
                     metrics=", ".join(sc["missing"]), option=" ".join(f"-m {m}" for m in sc["missing"])).text(lang))
    return out


def notice_lines(report: dict[str, Any]) -> list[str]:
    """What the readers decided about the inputs (e.g. a third column read as a rank), one sentence each."""
    return [str(n["message"]) for n in report.get("notices") or []]


def standards_note(checks: dict[str, list[dict[str, Any]]], lang: str) -> tuple[list[str], str]:
    """The metrics of the production standards and one line stating every tier's thresholds."""
    from rankscope.interpret.presets import tier_name

    note = "; ".join(f"{tier_name(tier, lang)}: " + ", ".join(f"{c['metric']} ≥ {c['threshold']:g}" for c in cs)
                     for tier, cs in checks.items())
    return [c["metric"] for c in checks["minimum"]], note


def standards_table(standards: dict[str, Any], lang: str) -> tuple[list[str], list[list[str]]]:
    """One system's production standards: a row per tier, a column per metric (``≥ 0.7: 0.105 ✗``: the mean as
    measured), with what a perfect ranking reaches beside it when that is below 1.

    >>> std = {"checks": {"minimum": [{"metric": "recall@5", "threshold": 0.7, "value": 0.105, "passed": False,
    ...                                "ceiling": 0.207}]}}
    >>> standards_table(std, "en")[1]
    [['minimum', '≥ 0.7: 0.105 ✗ (a perfect ranking: 0.207)']]
    """
    from rankscope.interpret.presets import tier_name

    checks = standards["checks"]
    head = [gettext("Production standards", lang)] + [c["metric"] for c in checks["minimum"]]
    rows = [[tier_name(tier, lang)] + [f"≥ {c['threshold']:g}: {standard_cell(c, lang)}" for c in cs]
            for tier, cs in checks.items()]
    return head, rows


def standard_cell(check: dict[str, Any], lang: str) -> str:
    """A production-standard check: the mean as measured and its mark, and the ceiling beside it when below 1."""

    cell = _checked(check)
    ceiling = check.get("ceiling")
    if check["value"] is None or ceiling is None or ceiling >= 1 - 1e-9:
        return cell
    return _("{cell} (a perfect ranking: {ceiling})", cell=cell, ceiling=fmt(ceiling)).text(lang)


#: the columns of the per-query distribution: key -> head (English, said through the catalog)
DIST_HEADS: dict[str, str] = {"mean": N_("mean"), "median": N_("median"), "q1": N_("25%"), "q3": N_("75%"),
                              "min": N_("min"), "max": N_("max")}
DIST_KEYS = tuple(DIST_HEADS)


def coverage_lines(report: dict[str, Any]) -> list[str]:
    """Sentences about queries that change what is measured (shown in every format of a run report)."""
    lang = report["lang"]
    q = report["queries"]
    lines = [ngettext("{n} query scored", "{n} queries scored", q["evaluated"]).text(lang)]
    if q["missing_from_run"]:
        missing = report["policies"].get("missing", "zero")
        effect = gettext("each scores 0" if missing == "zero" else "they are left out of every mean", lang)
        lines.append(_("{n} judged queries have no ranking in the run; policy '{missing}': {effect}.",
                       n=q["missing_from_run"], missing=missing, effect=effect).text(lang))
    if q["not_in_qrels"]:
        lines.append(ngettext("{n} query of the run has no relevance judgments and is not scored.",
                              "{n} queries of the run have no relevance judgments and are not scored.",
                              q["not_in_qrels"]).text(lang))
    # what the numbers rest on: ids that never match, the judged share of the top k, condensed lists
    return lines + list(report.get("warnings", []))
