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

__all__ = ["Cell", "summary_rows", "policy_line", "fmt", "fmt_p", "fmt_signed", "fmt_pct", "MARKS"]

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
    """One line: number of queries, relevance level, missing-query policy, depth."""
    from rankscope.interpret.i18n import message

    lang = report["lang"]
    pol = report["policies"]
    depth = pol.get("depth")
    return message("n_queries", lang, n=report["n_queries"]) + " · " + message(
        "report.policies", lang, relevance_level=pol.get("relevance_level", 1), missing=pol.get("missing", "zero"),
        depth="–" if depth is None else depth)
