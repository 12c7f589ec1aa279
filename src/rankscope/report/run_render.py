"""The one-run report (:func:`~rankscope.report.run_report.build_run_report`) as HTML, Markdown, JSON or LaTeX.

The same content dict renders to every format, in the report's language (the catalog of
:mod:`rankscope.i18n`).  HTML is self-contained (inline CSS, plots embedded
as ``data:`` SVG, nothing fetched).
"""

from __future__ import annotations

import base64
from typing import Any

from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import N_, _, gettext
from rankscope.interpret.bands import LEVELS, level_name
from rankscope.report.markdown import notices_markdown, scenario_markdown
from rankscope.report.tables import (
    DIST_HEADS,
    DIST_KEYS,
    coverage_lines,
    fmt,
    notice_lines,
    policy_line,
    rated_value,
    scenario_lines,
    scenario_table,
    standards_note,
    standards_table,
)

__all__ = ["render_run_report", "RUN_FORMATS"]

RUN_FORMATS = ("html", "markdown", "json", "latex")
#: where a run report's first relevant ranks come from (``analysis.first_rank_source``)
RANK_SOURCES: dict[str, str] = {
    "exact": N_("exact, from the judgments and the run"),
    "stored": N_("stored when the run was scored"),
    "reciprocal_rank": N_("from the reciprocal rank (1/RR)"),
    "unavailable": N_("not available (add mrr to the metrics)"),
}


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def _live_lines(report: dict[str, Any]) -> list[str]:
    live = report.get("live")
    if not live:
        return []
    lang = report["lang"]
    lat = live["latency_ms"]
    lines = [_("{answered} of {asked} queries answered, {failed} failed (failed queries have no ranking: see the "
               "missing-query policy above).", answered=live["answered"], asked=live["asked"],
               failed=live["failed"]).text(lang)]
    if lat["n"]:
        lines.append(_("{n} answers: p50 {p50} ms, p90 {p90} ms, p95 {p95} ms, p99 {p99} ms, max {max} ms.",
                       n=lat["n"], p50=_ms(lat["p50"]), p90=_ms(lat["p90"]), p95=_ms(lat["p95"]), p99=_ms(lat["p99"]),
                       max=_ms(lat["max"])).text(lang))
    return lines


def _plots(report: dict[str, Any]) -> dict[str, str]:
    from rankscope.report.plots import curves_svg, distribution_svg, first_rank_svg

    out = {}
    for key, fn in (("curves", curves_svg), ("distribution", distribution_svg), ("first_rank", first_rank_svg)):
        svg = fn(report) if (key != "curves" or report.get("curves")) else None
        if svg is not None:
            out[key] = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return out


def render_run_html(report: dict[str, Any], *, plots: bool = True) -> str:
    from rankscope.report.html import environment

    lang = report["lang"]
    fr = report["analysis"]["first_rank"].get(report["run"])
    __, std_note = standards_note(report["standards"]["checks"], lang)
    return str(environment(lang).get_template("run_report.html.j2").render(
        r=report, lang=lang, fmt=fmt, policy=policy_line(report), coverage=coverage_lines(report),
        rated={m: rated_value(rt, lang) if rt else fmt(report["means"][m]) for m, rt in report["ratings"].items()},
        standards=standards_table(report["standards"], lang), std_note=std_note,
        scenario_table=scenario_table(report), scenario_lines=scenario_lines(report), notices=notice_lines(report),
        live_lines=_live_lines(report), levels=[(lv, level_name(lv, lang)) for lv in LEVELS],
        plots=_plots(report) if plots else {}, fr=fr, dist_keys=DIST_KEYS,
        dist_heads=[gettext(DIST_HEADS[k], lang) for k in DIST_KEYS],
        rank_source=gettext(RANK_SOURCES[report["analysis"]["first_rank_source"]], lang),
        plot_captions=[("curves",
                        _("Metric@k for k = 1..{kmax}",
                          kmax=len((report.get("curves") or {}).get("ks", []))).text(lang)),
                       ("distribution", gettext("Per-query score distribution", lang)),
                       ("first_rank", gettext("Rank of the first relevant document", lang))],
        failing_title=_("Failing queries (no relevant document in the top {k})",
                        k=report["analysis"]["failing_k"] or "∞").text(lang),
    ))


def _esc(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_run_markdown(report: dict[str, Any]) -> str:
    lang = report["lang"]

    names = report["display_names"]
    out = [f"## {_esc(_('Evaluation report: {run}', run=report['run']).text(lang))}", "", policy_line(report), ""]
    out += [f"- {_esc(line)}" for line in coverage_lines(report)] + [""]
    out += notices_markdown(report)
    out += [f"### {gettext('Results', lang)}", "",
            f"| {gettext('Metric', lang)} | {gettext('Value', lang)} | {gettext('Rating', lang)} | "
            f"{gettext('Advice', lang)} |",
            "|---|---|---|---|"]
    for m in report["metrics"]:
        r = report["ratings"][m]
        value = rated_value(r, lang) if r else fmt(report["means"][m])
        out.append(f"| {_esc(names[m])} | {_esc(value)} | {_esc(r['level_name']) if r else '–'} | "
                   f"{_esc(r['advice']) if r else ''} |")
    out.append("")
    if report["ceilings"] and any(c < 1 - 1e-9 for c in report["ceilings"].values()):
        out += [_esc(gettext("Ratings compare each mean with the best a perfect ranking reaches on these qrels "
                             "(reachable): Recall@k is below 1 when a query has more than k relevant documents, "
                             "P@k when it has fewer than k, and every metric is 0 on a query without a relevant "
                             "document. Production standards check each mean as measured, as rankscope check does, "
                             "and show that ceiling beside it.", lang)), ""]
    std = report["standards"]
    if std["applicable"]:
        head, rows = standards_table(std, lang)
        out += [f"### {gettext('Production standards', lang)}", "",
                f"{_esc(gettext('Highest tier met', lang))}: **{_esc(std['status_text'])}**", ""]
        out += ["| " + " | ".join(_esc(h) for h in head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in rows] + [""]
    out += scenario_markdown(report)
    out += [f"### {gettext('Detailed analysis', lang)}", ""]
    out += [f"- {_esc(text)}" for text in report["explanations"].values()] + [""]
    head = [gettext("Metric", lang), *(gettext(DIST_HEADS[k], lang) for k in DIST_KEYS), gettext("queries at 0", lang)]
    out += [f"### {gettext('Per-query distribution', lang)}", "", "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head)]
    for m in report["metrics"]:
        d = report["distribution"][m]
        out.append("| " + " | ".join([_esc(names[m])] + [fmt(d[k]) for k in DIST_KEYS] + [str(d["zero"])]) + " |")
    out.append("")
    an = report["analysis"]
    fr = an["first_rank"].get(report["run"])
    if fr:
        out += [f"### {gettext('Rank of the first relevant document', lang)}", "", "- " + _esc(
            _("{system}: median rank {median} (quartiles {q1}–{q3}); at rank 1 for {at1} of {n} queries; not found "
              "for {nf}.", system=report["run"], median=fr["median"], q1=fr["q1"], q3=fr["q3"], at1=fr["at_rank_1"],
              n=fr["n"], nf=fr["not_found"]).text(lang) if fr["found"]
            else _("{system}: no relevant document retrieved for any query.", system=report["run"]).text(lang))]
        failing = an["failing"][report["run"]]
        shown = ", ".join(f"`{q}`" for q in failing[:20]) + (" …" if len(failing) > 20 else "")
        out.append("- " + _esc(_("Failing queries (no relevant document in the top {k})",
                                 k=an["failing_k"] or "∞").text(lang)) + ": " + _esc(
            _("{system}: {count} of {n} queries", system=report["run"], count=len(failing),
              n=report["n_queries"]).text(lang))
            + (f": {shown}" if failing else ""))
        out += ["- " + _esc(_("First-relevant ranks: {source}.",
                              source=gettext(RANK_SOURCES[an["first_rank_source"]], lang)).text(lang)), ""]
    if report["worst"]:
        first = report["metrics"][0]
        out += [f"### {_('Lowest-scoring queries ({metric})', metric=names[first]).text(lang)}", ""]
        out.append(", ".join(f"`{w['query_id']}` ({fmt(w['value'])})" for w in report["worst"]))
        out.append("")
    live = report.get("live")
    if live:
        out += [f"### {gettext('Live retriever', lang)}", ""] + [f"- {_esc(line)}" for line in _live_lines(report)]
        for kind in live["error_kinds"]:
            out.append(f"- {_esc(kind['error'])}: {kind['queries']}")
        out.append("")
    out += [f"<sub>{_('Generated by rankscope {version}.', version=report['rankscope_version']).text(lang)}</sub>", ""]
    return "\n".join(out)


def render_run_report(report: dict[str, Any], fmt_name: str) -> str:
    """Render a one-run report dict as ``html``, ``markdown``, ``json`` or ``latex`` text.

    >>> from rankscope import Qrels, Run
    >>> from rankscope.engine import evaluate
    >>> from rankscope.report.run_report import build_run_report
    >>> q = Qrels.from_dict({"q1": {"d1": 1}})
    >>> rep = build_run_report(evaluate(q, Run.from_ranked_lists({"q1": ["d1"]}, name="bm25"), ["mrr"]))
    >>> render_run_report(rep, "markdown").splitlines()[0]
    '## Evaluation report: bm25'
    """
    if fmt_name == "json":
        from rankscope.report.json_report import render_json

        return render_json(report)
    if fmt_name == "markdown":
        return render_run_markdown(report)
    if fmt_name == "html":
        return render_run_html(report)
    if fmt_name == "latex":
        from rankscope.report.run_latex import render_run_latex

        return render_run_latex(report)
    known = Items(RUN_FORMATS)
    raise InvalidParameterError(_("unknown format {fmt!r} for a one-run report; known: {known}", fmt=fmt_name,
                                  known=known))
