"""The report as Markdown, short enough for a pull-request comment.

Sections: summary table (best value per metric in bold, † / ‡ significantly
better / worse than the reference system), rating bands with advice, production
standards, detailed analysis (plain-language sentences), paired comparisons,
per-query analysis (first-relevant rank, failing queries, biggest wins and losses
on the first metric).
"""

from __future__ import annotations

from typing import Any

from rankscope.i18n import _, colon, gettext, paren
from rankscope.report.tables import (
    fmt,
    fmt_ci,
    fmt_pct,
    fmt_signed,
    notice_lines,
    p_text,
    pair_heads,
    policy_line,
    reachable_line,
    scenario_lines,
    scenario_table,
    summary_rows,
    system_label,
)

__all__ = ["render_markdown"]

_MAX_FAILING = 20


def _esc(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(_esc(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(rows_i) + " |" for rows_i in rows]
    return out


def notices_markdown(report: dict[str, Any]) -> list[str]:
    """What the readers decided about the inputs, as a quote block (nothing when they decided nothing)."""
    lines = notice_lines(report)
    if not lines:
        return []
    head = gettext("Input", report["lang"])
    return [f"> ℹ️ **{head}:** {_esc(n)}" + ("  " if i < len(lines) - 1 else "") for i, n in enumerate(lines)] + [""]


def scenario_markdown(report: dict[str, Any]) -> list[str]:
    """The scenario section: name, recommended metrics, note, benchmark figures checked per system."""
    sc = report.get("scenario")
    if not sc:
        return []
    out = [f"### {_esc(gettext('Scenario', report['lang']))}: {_esc(sc['name'])}", ""]
    lines = scenario_lines(report)
    if lines:  # one paragraph, a line break after each sentence
        out += [_esc(line) + ("  " if i < len(lines) - 1 else "") for i, line in enumerate(lines)] + [""]
    table = scenario_table(report)
    if table is not None:
        out += [*_table(table[0], [[_esc(c) for c in row] for row in table[1]]), ""]
    return out


def render_markdown(report: dict[str, Any]) -> str:
    """Markdown text of a report dict (see :func:`~rankscope.report.content.build_report`)."""
    lang = report["lang"]

    names = report["display_names"]
    ref = report["reference"]
    comp = report["comparison"]
    out = [f"## {gettext('Retrieval evaluation report', lang)}", ""]
    out.append(policy_line(report))
    out.append("")
    if report["warnings"]:
        warn_head = f"{gettext('Warning', lang)}{colon(report['lang']).rstrip()}"
        out += [f"> ⚠️ **{warn_head}** {_esc(w)}" + ("  " if i < len(report["warnings"]) - 1 else "")
                for i, w in enumerate(report["warnings"])]
        out.append("")
    out += notices_markdown(report)

    # summary
    header = [gettext("System", lang)] + [names[m] for m in report["metrics"]]
    rows = []
    for s, cells in summary_rows(report):
        sys_cell = _esc(system_label(report, s)) + (paren(gettext("baseline", lang),
                                                          report["lang"]) if s == ref else "")
        row = [sys_cell]
        for c in cells:
            text = f"**{c.text}**" if c.best else c.text
            row.append(text + c.mark)
        rows.append(row)
    out += [f"### {gettext('Summary', lang)}", "", *_table(header, rows), ""]
    out += [report["legend"], ""]
    if report["groups"]:
        out += [f"**{_esc(report['groups_title'])}**", ""]
        out += _table([gettext("System", lang)] + [names[m] for m in report["metrics"]],
                      [[_esc(system_label(report, s))] + [f"`{report['groups'][m][s]}`" for m in report["metrics"]]
                       for s in report["systems"]])
        out.append("")

    # bands
    band_rows = []
    for s in report["systems"]:
        for m in report["metrics"]:
            r = report["ratings"][s][m]
            if r:
                value = fmt(r["value"])
                if r.get("ceiling") is not None and r["ceiling"] < 1 - 1e-9:
                    value = _("{value} of {ceiling} reachable ({pct})", value=value, ceiling=fmt(r["ceiling"]),
                              pct=f"{100 * r['relative']:.1f}%").text(lang)
                band_rows.append([_esc(s), _esc(names[m]), _esc(value), _esc(r["level_name"]), _esc(r["advice"])])
    if band_rows:
        out += [f"### {gettext('Interpretation', lang)}", ""]
        out += _table([gettext("System", lang), gettext("Metric", lang), "", gettext("Rating", lang),
                       gettext("Advice", lang)], band_rows)
        out.append("")
        reach = reachable_line(report)
        if reach:
            out += [_esc(reach), ""]

    # production standards
    if any(v["applicable"] for v in report["standards"].values()):
        out += [f"### {gettext('Production standards', lang)}", ""]
        std_rows = []
        for s in report["systems"]:
            std_rows.append([_esc(s), _esc(report["standards"][s]["status_text"])])
        out += [*_table([gettext("System", lang), gettext("Highest tier met", lang)], std_rows), ""]
        if report["ceilings"]:
            out += [_esc(gettext("Ratings compare each mean with the best a perfect ranking reaches on these qrels "
                                 "(reachable): Recall@k is below 1 when a query has more than k relevant "
                                 "documents, P@k when it has fewer than k, and every metric is 0 on a query "
                                 "without a relevant document. Production standards check each mean as measured, "
                                 "as rankscope check does, and show that ceiling beside it.", lang)), ""]
    out += scenario_markdown(report)

    # detailed analysis
    out += [f"### {gettext('Detailed analysis', lang)}", ""]
    for s in report["systems"]:
        out.append(f"**{_esc(s)}**")
        out.append("")
        out += [f"- {_esc(text)}" for text in report["explanations"][s].values()]
        out.append("")

    # pairs
    if comp["pairs"]:
        out += [f"### {gettext('Paired comparisons', lang)}", ""]
        prow = []
        for p in comp["pairs"]:
            sig = " ✓" if p["significant"] else ""
            prow.append([f"{_esc(p['b'])} vs {_esc(p['a'])}", _esc(names[p["metric"]]), fmt_signed(p["diff"]) + sig,
                         fmt_ci(p["diff_ci"]), fmt_pct(p["rel_improvement"]), _esc(p_text(p, "p_value")),
                         _esc(p_text(p)), fmt(p["cohen_d"], 2), f"{p['wins']}/{p['ties']}/{p['losses']}"])
        out += [*_table(pair_heads(report), prow), ""]
        out += [_esc(note) + "  " for note in (report["mc_note"], report["near_alpha"]) if note]
        out += [report["legend"], ""]

    # per-query analysis
    an = report["analysis"]
    out += [f"### {gettext('Per-query analysis', lang)}", ""]
    if an["first_rank"]:
        out += [f"**{gettext('Rank of the first relevant document', lang)}**", ""]
        for s, fr in an["first_rank"].items():
            if fr["found"]:
                out.append("- " + _esc(_("{system}: median rank {median} (quartiles {q1}–{q3}); at rank 1 for "
                                         "{at1} of {n} queries; not found for {nf}.", system=s, median=fr["median"],
                                         q1=fr["q1"], q3=fr["q3"], at1=fr["at_rank_1"], n=fr["n"],
                                         nf=fr["not_found"]).text(lang)))
            else:
                out.append("- " + _esc(_("{system}: no relevant document retrieved for any query.",
                                         system=s).text(lang)))
        out.append("")
        k = an["failing_k"]
        out += [f"**{_('Failing queries (no relevant document in the top {k})', k=k if k else '∞').text(lang)}**", ""]
        for s, qs in an["failing"].items():
            shown = ", ".join(f"`{q}`" for q in qs[:_MAX_FAILING]) + (" …" if len(qs) > _MAX_FAILING else "")
            out.append("- " + _esc(_("{system}: {count} of {n} queries", system=s, count=len(qs),
                                     n=report["n_queries"]).text(lang))
                       + (f": {shown}" if qs else ""))
        out.append("")
    if an["no_relevant_count"]:
        level = report["policies"].get("relevance_level", 1)
        heading = _("Queries with no relevant judgment at relevance level {level} (not failures of any system)",
                    level=level).text(lang)
        out += [f"**{heading}**", ""]
        listed = an["no_relevant"] or []
        shown = ", ".join(f"`{q}`" for q in listed[:_MAX_FAILING]) + (" …" if len(listed) > _MAX_FAILING else "")
        out += ["- " + _esc(_("{count} of {n} queries", count=an["no_relevant_count"],
                              n=report["n_queries"]).text(lang))
                + (f": {shown}" if listed else ""), ""]
    first_metric = report["metrics"][0]
    for d in an["differences"]:
        if d["metric"] != first_metric:
            continue
        pair = {"a": d["a"], "b": d["b"], "metric": names[d["metric"]]}
        for title, items in ((_("Queries where {b} beats {a} the most on {metric}", **pair), d["wins"]),
                             (_("Queries where {b} loses to {a} the most on {metric}", **pair), d["losses"])):
            listed = ", ".join(f"`{it['query_id']}` ({fmt_signed(it['diff'])})" for it in items)
            out.append(f"- {_esc(title.text(lang))}: {listed or gettext('none', lang)}")
    out += ["", f"<sub>{_('Generated by rankscope {version}.', version=report['rankscope_version']).text(lang)}</sub>",
            ""]
    return "\n".join(out)
