"""A self-contained HTML report: tables, explanations and plots in one file.

Rendered with Jinja2 (autoescaping on) from ``templates/report.html.j2``; the
plots of :mod:`~rankscope.report.plots` are embedded as base64 ``data:`` SVG
images, the CSS is inline, and nothing is fetched from the network, so the file
can be opened offline or attached to a CI run.
"""

from __future__ import annotations

import base64
from functools import cache
from typing import Any

from rankscope.i18n import _, gettext, install_gettext
from rankscope.interpret.bands import LEVELS, level_name
from rankscope.report.plots import all_plots
from rankscope.report.tables import (
    fmt,
    fmt_ci,
    fmt_pct,
    fmt_signed,
    notice_lines,
    p_text,
    pair_heads,
    percent,
    policy_line,
    rated_value,
    reachable_line,
    scenario_lines,
    scenario_table,
    standard_cell,
    standards_note,
    summary_rows,
    system_label,
)

__all__ = ["render_html"]


@cache
def environment(lang: str) -> Any:
    """The Jinja environment of the HTML reports in ``lang`` (its messages said through the catalog)."""
    from rankscope.extras import need

    jinja2 = need("jinja2", "html_report")

    return install_gettext(jinja2.Environment(
        loader=jinja2.PackageLoader("rankscope.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        undefined=jinja2.StrictUndefined,
    ), lang)


def _chunking_section(report: dict[str, Any]) -> dict[str, Any] | None:
    """The table of a chunking comparison (:meth:`rankscope.chunking.ChunkingComparison.report`), if any."""
    ch = report.get("chunking")
    if not ch:
        return None
    lang = report["lang"]
    per = list(ch.get("per_chunking", []))  # measures shown per chunking, not tested across chunkings
    head = [gettext("chunking", lang), gettext("chunks", lang), gettext("mean size (characters)", lang),
            gettext("characters held twice or more", lang), gettext("spans not inside one chunk", lang), *per]
    rows = []
    for row in ch["table"]:
        cov = ch["chunkings"][row["chunking"]]["coverage"]
        rows.append([row["chunking"], str(row["chunks"]), f"{row['mean_size']:.0f}", str(row["overlap_chars"]),
                     f"{row['spans_not_in_one_chunk']} / {cov.get('spans', 0)}",
                     *(f"{row[m]:.4f}" if abs(row[m]) < 100 else f"{row[m]:.0f}" for m in per)])
    note = _("One retriever ({retriever}) built on each chunking; {queries} queries with {spans} judged spans. "
             "Span measures score the judged characters; ordinary measures score chunk qrels derived with the rule "
             "{rule}. Paired tests compare the chunkings query by query.", retriever=ch["retriever"], rule=ch["rule"],
             k=ch["k"], queries=ch["build"].get("queries", 0), spans=ch["build"].get("spans", 0)).text(lang)
    return {"head": head, "rows": rows, "note": note}


def render_html(report: dict[str, Any], *, plots: bool = True) -> str:
    """HTML text of a report dict (``plots=False`` leaves the figures out)."""
    lang = report["lang"]
    names = report["display_names"]
    comp = report["comparison"]

    svgs = all_plots(report) if plots else {}
    encoded = {k: base64.b64encode(v.encode("utf-8")).decode("ascii") for k, v in svgs.items()}
    kmax = report["curves"]["ks"][-1] if report.get("curves") else 0
    band_rows = [
        {"system": s, "metric": names[m], "value": rated_value(r, lang), "level": r["level"],
         "level_name": r["level_name"], "advice": r["advice"]}
        for s in report["systems"] for m in report["metrics"] if (r := report["ratings"][s][m])
    ]
    pair_rows = []
    for p in comp["pairs"]:
        cls = ("sig " + ("pos" if p["diff"] > 0 else "neg")) if p["significant"] else ""
        pair_rows.append({"cls": cls, "cells": [
            f"{p['b']} vs {p['a']}", names[p["metric"]], fmt_signed(p["diff"]), fmt_ci(p["diff_ci"]),
            fmt_pct(p["rel_improvement"]), p_text(p, "p_value"), p_text(p), fmt(p["cohen_d"], 2),
            f"{p['wins']}/{p['ties']}/{p['losses']}"]})
    an = report["analysis"]
    first_rank_lines = []
    for s, fr in an["first_rank"].items():
        if fr["found"]:
            first_rank_lines.append(_("{system}: median rank {median} (quartiles {q1}–{q3}); at rank 1 for {at1} "
                                      "of {n} queries; not found for {nf}.", system=s, median=fr["median"],
                                      q1=fr["q1"], q3=fr["q3"], at1=fr["at_rank_1"], n=fr["n"],
                                      nf=fr["not_found"]).text(lang))
        else:
            first_rank_lines.append(_("{system}: no relevant document retrieved for any query.", system=s).text(lang))
    std_metrics, std_note = standards_note(report["standards"][report["systems"][0]]["checks"], lang)
    return str(environment(lang).get_template("report.html.j2").render(
        chunking=_chunking_section(report),
        r=report, lang=lang, policy=policy_line(report), rows=summary_rows(report),
        label=lambda s: system_label(report, s), reachable=reachable_line(report),
        legend=report["legend"],
        levels=[(lv, level_name(lv, lang)) for lv in LEVELS],
        plots=encoded,
        plot_captions=[("curves", _("Metric@k for k = 1..{kmax}", kmax=kmax).text(lang)),
                       ("distribution", gettext("Per-query score distribution", lang)),
                       ("differences", _("Paired differences against the baseline: the mean (marker) and its "
                                         "unadjusted {level} {method} interval (bar); a filled marker is "
                                         "significant by the {test} with {correction}. The bars are neither "
                                         "corrected for multiple comparisons nor taken from the test, so a hollow "
                                         "marker can sit on a bar that excludes 0.",
                                         level=percent(report["confidence"]), method=report["ci_method"],
                                         test=report["test_name"], correction=report["correction_name"]).text(lang)),
                       ("first_rank", gettext("Rank of the first relevant document", lang)),
                       ("context_recall", gettext("Span recall against context size: mean span recall@k and mean "
                                                  "characters sent to the model at k = 1, 2, …", lang))],
        band_rows=band_rows,
        profile_rows=[(names[m], p) for m, p in report["profiles"].items() if p],
        standards_applicable=any(v["applicable"] for v in report["standards"].values()),
        std_metrics=std_metrics, std_note=std_note, standard_cell=lambda c: standard_cell(c, lang),
        scenario_table=scenario_table(report), scenario_lines=scenario_lines(report), notices=notice_lines(report),
        pair_head=pair_heads(report),
        pair_rows=pair_rows,
        first_rank_lines=first_rank_lines,
        failing_title=_("Failing queries (no relevant document in the top {k})",
                        k=an["failing_k"] if an["failing_k"] else "∞").text(lang),
    ))
