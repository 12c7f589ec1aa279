"""The report as Markdown, short enough for a pull-request comment.

Sections: summary table (best value per metric in bold, † / ‡ significantly
better / worse than the reference system), rating bands with advice, production
standards, detailed analysis (plain-language sentences), paired comparisons,
per-query analysis (first-relevant rank, failing queries, biggest wins and losses
on the first metric).
"""

from __future__ import annotations

from typing import Any

from rankscope.interpret.i18n import colon, message, paren
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
    head = message("report.notices", report["lang"])
    return [f"> ℹ️ **{head}:** {_esc(n)}" + ("  " if i < len(lines) - 1 else "") for i, n in enumerate(lines)] + [""]


def scenario_markdown(report: dict[str, Any]) -> list[str]:
    """The scenario section: name, recommended metrics, note, benchmark figures checked per system."""
    sc = report.get("scenario")
    if not sc:
        return []
    out = [f"### {_esc(message('report.scenario', report['lang']))}: {_esc(sc['name'])}", ""]
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

    def t(key: str, **kw: Any) -> str:
        return message(key, lang, **kw)

    names = report["display_names"]
    ref = report["reference"]
    comp = report["comparison"]
    out = [f"## {t('report.title')}", ""]
    out.append(policy_line(report))
    out.append("")
    if report["warnings"]:
        warn_head = f"{t('report.warning')}{colon(report['lang']).rstrip()}"
        out += [f"> ⚠️ **{warn_head}** {_esc(w)}" + ("  " if i < len(report["warnings"]) - 1 else "")
                for i, w in enumerate(report["warnings"])]
        out.append("")
    out += notices_markdown(report)

    # summary
    header = [t("report.system")] + [names[m] for m in report["metrics"]]
    rows = []
    for s, cells in summary_rows(report):
        sys_cell = _esc(system_label(report, s)) + (paren(t("report.baseline"), report["lang"]) if s == ref else "")
        row = [sys_cell]
        for c in cells:
            text = f"**{c.text}**" if c.best else c.text
            row.append(text + c.mark)
        rows.append(row)
    out += [f"### {t('report.summary')}", "", *_table(header, rows), ""]
    out += [report["legend"], ""]
    if report["groups"]:
        out += [f"**{_esc(report['groups_title'])}**", ""]
        out += _table([t("report.system")] + [names[m] for m in report["metrics"]],
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
                    value = t("report.of_reachable", value=value, ceiling=fmt(r["ceiling"]),
                              pct=f"{100 * r['relative']:.1f}%")
                band_rows.append([_esc(s), _esc(names[m]), _esc(value), _esc(r["level_name"]), _esc(r["advice"])])
    if band_rows:
        out += [f"### {t('report.interpretation')}", ""]
        out += _table([t("report.system"), t("report.metric"), "", t("report.band"), t("report.advice")], band_rows)
        out.append("")
        reach = reachable_line(report)
        if reach:
            out += [_esc(reach), ""]

    # production standards
    if any(v["applicable"] for v in report["standards"].values()):
        out += [f"### {t('report.standards')}", ""]
        std_rows = []
        for s in report["systems"]:
            std_rows.append([_esc(s), _esc(report["standards"][s]["status_text"])])
        out += [*_table([t("report.system"), t("report.tier")], std_rows), ""]
        if report["ceilings"]:
            out += [_esc(t("report.ceiling_note")), ""]
    out += scenario_markdown(report)

    # detailed analysis
    out += [f"### {t('report.explanations')}", ""]
    for s in report["systems"]:
        out.append(f"**{_esc(s)}**")
        out.append("")
        out += [f"- {_esc(text)}" for text in report["explanations"][s].values()]
        out.append("")

    # pairs
    if comp["pairs"]:
        out += [f"### {t('report.comparisons')}", ""]
        prow = []
        for p in comp["pairs"]:
            sig = " ✓" if p["significant"] else ""
            prow.append([f"{_esc(p['b'])} vs {_esc(p['a'])}", _esc(names[p["metric"]]), fmt_signed(p["diff"]) + sig,
                         fmt_ci(p["diff_ci"]), fmt_pct(p["rel_improvement"]), _esc(p_text(p, "p_value")),
                         _esc(p_text(p)), fmt(p["cohen_d"], 2), f"{p['wins']}/{p['ties']}/{p['losses']}"])
        head = [report["ci_label"] if k == "ci" else t(k)
                for k in ("report.pair", "report.metric", "report.diff", "ci", "report.rel_improvement",
                          "report.p_value", "report.p_adjusted", "report.effect", "report.wtl")]
        out += [*_table(head, prow), ""]
        out += [_esc(note) + "  " for note in (report["mc_note"], report["near_alpha"]) if note]
        out += [report["legend"], ""]

    # per-query analysis
    an = report["analysis"]
    out += [f"### {t('report.per_query')}", ""]
    if an["first_rank"]:
        out += [f"**{t('report.first_rank')}**", ""]
        for s, fr in an["first_rank"].items():
            if fr["found"]:
                out.append("- " + _esc(t("report.first_rank_summary", system=s, median=fr["median"], q1=fr["q1"],
                                          q3=fr["q3"], at1=fr["at_rank_1"], n=fr["n"], nf=fr["not_found"])))
            else:
                out.append("- " + _esc(t("report.first_rank_none", system=s)))
        out.append("")
        k = an["failing_k"]
        out += [f"**{t('report.failing', k=k if k else '∞')}**", ""]
        for s, qs in an["failing"].items():
            shown = ", ".join(f"`{q}`" for q in qs[:_MAX_FAILING]) + (" …" if len(qs) > _MAX_FAILING else "")
            out.append("- " + _esc(t("report.failing_count", system=s, count=len(qs), n=report["n_queries"]))
                       + (f": {shown}" if qs else ""))
        out.append("")
    if an["no_relevant_count"]:
        level = report["policies"].get("relevance_level", 1)
        out += [f"**{t('report.no_relevant', level=level)}**", ""]
        listed = an["no_relevant"] or []
        shown = ", ".join(f"`{q}`" for q in listed[:_MAX_FAILING]) + (" …" if len(listed) > _MAX_FAILING else "")
        out += ["- " + _esc(t("report.no_relevant_count", count=an["no_relevant_count"], n=report["n_queries"]))
                + (f": {shown}" if listed else ""), ""]
    first_metric = report["metrics"][0]
    for d in an["differences"]:
        if d["metric"] != first_metric:
            continue
        for key, items in (("report.wins", d["wins"]), ("report.losses", d["losses"])):
            title = t(key, a=d["a"], b=d["b"], metric=names[d["metric"]])
            listed = ", ".join(f"`{it['query_id']}` ({fmt_signed(it['diff'])})" for it in items)
            out.append(f"- {_esc(title)}: {listed or t('report.none')}")
    out += ["", f"<sub>{t('report.generated', version=report['rankscope_version'])}</sub>", ""]
    return "\n".join(out)
