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

__all__ = ["Cell", "summary_rows", "policy_line", "fmt", "fmt_p", "fmt_signed", "fmt_pct", "fmt_ci", "percent",
           "system_label", "reachable_line", "p_text", "MARKS"]

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
    from rankscope.interpret.i18n import message

    tag = report.get("tags", {}).get(system)
    return system if not tag else f"{system} ({message('report.tag', lang or report['lang'], tag=tag)})"


def reachable_line(report: dict[str, Any]) -> str | None:
    """The metrics a perfect ranking cannot take to 1 on these qrels, with the best it reaches (or None)."""
    from rankscope.interpret.i18n import message

    capped = [(m, c) for m, c in report.get("ceilings", {}).items() if c < 1 - 1e-9]
    if not capped:
        return None
    values = ", ".join(f"{report['display_names'][m]} {c:.3f}" for m, c in capped)
    return message("report.reachable_line", report["lang"], values=values)


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
    from rankscope.interpret.coverage import judged_line
    from rankscope.interpret.i18n import message

    lang = report["lang"]
    pol = report["policies"]
    depth = pol.get("depth")
    missing = message(f"policy.missing.{pol.get('missing', 'zero')}", lang)
    line = message("n_queries", lang, n=report["n_queries"]) + " · " + message(
        "report.policies", lang, relevance_level=pol.get("relevance_level", 1), missing=missing,
        depth="–" if depth is None else depth)
    extra = [message("report.policy_condensed", lang)] if pol.get("unjudged") == "condense" else []
    judged = judged_line(report.get("judged") or {}, lang)
    return " ".join([line, *extra, *([judged] if judged else [])])
