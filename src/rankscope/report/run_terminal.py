"""The verdict on one run in the terminal (rich): production standards, advice, a scenario.

``rankscope evaluate`` prints its table of means (with a rating column), the summary
line, then :func:`print_run_verdict`: the highest production tier met, one line of
advice per rated metric, and the scenario's benchmark figures when ``--scenario`` is
given.  Everything comes from the one-run report dict
(:func:`~rankscope.report.run_report.build_run_report`), as in every other format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rankscope.i18n import gettext
from rankscope.report.tables import rated_value
from rankscope.report.terminal import BAND_STYLES, print_scenario
from rankscope.report.wrap import print_prose

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["print_run_verdict", "BAND_STYLES"]


def _colon(lang: str) -> str:
    return "：" if lang == "zh" else ": "


def print_run_verdict(report: dict[str, Any], console: Console) -> None:
    """Standards, advice and scenario of a one-run report dict."""
    from rich.text import Text

    lang = report["lang"]
    std = report["standards"]
    if std["applicable"]:
        style = {"excellent": "bold cyan", "good": "green", "minimum": "yellow"}.get(std["highest_tier"] or "", "red")
        line = Text(f"{gettext('Production standards', lang)} · {gettext('Highest tier met', lang)}{_colon(lang)}")
        line.append(std["status_text"], style=style)
        print_prose(console, line)
    rated = [(m, r) for m, r in report["ratings"].items() if r]
    if rated:
        console.print(Text(gettext("Advice", lang), style="bold"))
        for m, r in rated:  # wrapped at word boundaries, continuation lines indented under the text
            line = Text(f"{report['display_names'][m]} {rated_value(r, lang)} ")
            line.append(r["level_name"], style=BAND_STYLES.get(r["level"], ""))
            line.append(f"{_colon(lang)}{r['advice']}")
            print_prose(console, line, first="  • ")
        if report["ceilings"] and any(c < 1 - 1e-9 for c in report["ceilings"].values()):
            print_prose(console, gettext("Ratings compare each mean with the best a perfect ranking reaches on "
                                         "these qrels (reachable): Recall@k is below 1 when a query has more than "
                                         "k relevant documents, P@k when it has fewer than k, and every metric is "
                                         "0 on a query without a relevant document. Production standards check "
                                         "each mean as measured, as rankscope check does, and show that ceiling "
                                         "beside it.", lang), style="dim")
    print_scenario(report, console)
