"""The comparison in the terminal, with rich.

A table of means (best value per metric bold with ``★``, computed from the means;
``†`` / ``‡`` significantly better / worse than the reference system; each value
coloured by its rating band), the paired comparisons, and the plain-language
explanations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankscope.i18n import colon, gettext, paren
from rankscope.report.fit import fit
from rankscope.report.tables import (
    fmt,
    fmt_ci,
    fmt_pct,
    fmt_signed,
    notice_lines,
    p_text,
    policy_line,
    reachable_line,
    scenario_lines,
    scenario_table,
    summary_rows,
    system_label,
)
from rankscope.report.wrap import print_prose

if TYPE_CHECKING:
    from rich.console import Console

    from rankscope.comparison import Comparison

__all__ = ["print_comparison", "print_report", "print_notices", "print_scenario", "BAND_STYLES"]

BAND_STYLES = {"poor": "red", "fair": "yellow", "good": "green", "excellent": "bold cyan"}


def print_report(report: dict[str, Any], console: Console | None = None, *, explanations: bool = True) -> None:
    """Print a report dict (see :func:`~rankscope.report.content.build_report`)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = console or Console()
    lang = report["lang"]
    names = report["display_names"]
    ref = report["reference"]
    comp = report["comparison"]

    for w in report["warnings"]:  # what the numbers rest on comes first
        print_prose(console, f"⚠ {gettext('Warning', lang)}{colon(lang)}{w}", rest="  ", style="bold yellow")
    print_notices(report, console)
    # the policy line is printed under the table as prose, wrapped to the terminal (a caption is squeezed to the
    # table's width and centred)
    table = Table(title=gettext("Retrieval evaluation report", lang), show_lines=False)
    table.add_column(gettext("System", lang), style="bold")
    for m in report["metrics"]:
        table.add_column(names[m], justify="right")
    for s, cells in summary_rows(report):
        row: list[Any] = [system_label(report, s) + (paren(gettext("baseline", lang), lang) if s == ref else "")]
        for c in cells:
            style = BAND_STYLES.get(c.level or "", "")
            if c.best:
                style = (style + " bold").strip()
            row.append(Text(c.text + (" ★" if c.best else "") + c.mark, style=style))
        table.add_row(*row)
    console.print(fit(table))
    print_prose(console, policy_line(report), style="dim")
    _prose(console, "★ " + gettext("best", lang) + ("；" if lang == "zh" else "; ") + report["legend"], lang, "dim")
    reach = reachable_line(report)
    if reach:
        _prose(console, reach, lang, "dim")
    if report["groups"]:
        gt = Table(title=report["groups_title"])
        gt.add_column(gettext("System", lang), style="bold")
        for m in report["metrics"]:
            gt.add_column(names[m], justify="center")
        for s in report["systems"]:
            gt.add_row(system_label(report, s), *[report["groups"][m][s] for m in report["metrics"]])
        console.print(fit(gt))

    pairs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in comp["pairs"]:
        pairs.setdefault((p["b"], p["a"]), []).append(p)
    for (b, a), rows in pairs.items():
        pt = Table(title=f"{gettext('Paired comparisons', lang)}{colon(lang)}{b} vs {a}")
        heads = (gettext("Metric", lang), gettext("Δ", lang), report["ci_short"], gettext("Δ%", lang),
                 gettext("p adj.", lang), gettext("d_z", lang), gettext("W/T/L", lang))  # the CI said in full below
        for i, head in enumerate(heads):
            pt.add_column(head, justify="right" if i else "left", no_wrap=True)
        for p in rows:
            style = ("green" if p["diff"] > 0 else "red") if p["significant"] else ""
            pt.add_row(names[p["metric"]], Text(fmt_signed(p["diff"]), style=style), fmt_ci(p["diff_ci"]),
                       fmt_pct(p["rel_improvement"]), p_text(p),
                       fmt(p["cohen_d"], 2), f"{p['wins']}/{p['ties']}/{p['losses']}")
        console.print(fit(pt))
    if pairs:
        print_prose(console, report["ci_note"], style="dim")
    for note in (report["mc_note"], report["near_alpha"]):
        if note:
            print_prose(console, note, style="bold yellow" if note == report["near_alpha"] else "dim")
    print_scenario(report, console)

    if explanations:
        print_prose(console, gettext("Detailed analysis", lang), style="bold underline")
        for s in report["systems"]:
            print_prose(console, system_label(report, s), style="bold")
            for text in report["explanations"][s].values():  # continuation lines indented under the text
                print_prose(console, text, first="  • ")


def _prose(console: Console, text: str, lang: str, style: str = "") -> None:
    """A sentence, wrapped by display cells at word boundaries (:func:`~rankscope.report.wrap.print_prose`)."""
    print_prose(console, text, style=style)


def print_notices(report: dict[str, Any], console: Console) -> None:
    """What the readers decided about the inputs (e.g. a third column read as a rank), one line each."""

    for n in notice_lines(report):
        print_prose(console, f"ℹ {gettext('Input', report['lang'])}{colon(report['lang'])}{n}", rest="  ",
                    style="cyan")


def print_scenario(report: dict[str, Any], console: Console) -> None:
    """The scenario section: its name, recommended metrics, note and benchmark figures checked per system."""
    from rich.table import Table
    from rich.text import Text

    sc = report.get("scenario")
    if not sc:
        return
    lang = report["lang"]
    title = f"{gettext('Scenario', lang)}{'：' if lang == 'zh' else ': '}{sc['name']}"
    table = scenario_table(report)
    if table is None:
        print_prose(console, title, style="bold underline")
    else:
        st = Table(title=title)
        for i, h in enumerate(table[0]):
            st.add_column(h, justify="left" if i == 0 else "right", style="bold" if i == 0 else "")
        for row in table[1]:
            st.add_row(*[Text(c, style="green" if c.endswith("✓") else "red" if c.endswith("✗") else "")
                         for c in row])
        console.print(fit(st))
    for line in scenario_lines(report):
        print_prose(console, line, style="dim")


def print_comparison(
    comparison: Comparison,
    console: Console | None = None,
    lang: str = "en",
    *,
    explanations: bool = True,
    qrels: Any = None,
    runs: Any = None,
    scenario: str | None = None,
) -> None:
    """Print ``comparison`` as rich tables (see module doc); ``qrels``/``runs`` make first ranks exact; ``scenario``
    adds its benchmark figures."""
    from rankscope.report.content import build_report

    report = build_report(comparison, qrels=qrels, runs=runs, lang=lang, curves=False, scenario=scenario)
    print_report(report, console, explanations=explanations)
