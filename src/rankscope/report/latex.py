r"""The report's tables as LaTeX (booktabs) that fit a one-column page.

``table`` floats: the means (best value per metric in bold, ``\dag`` / ``\ddag``
significantly better / worse than the reference system), the compact-letter groups
of a Tukey HSD comparison, and the paired comparisons grouped by pair.  Each table's
natural width is computed from Computer Modern metrics
(:mod:`~rankscope.report.latex_width`) and the largest font size at which it fits
the 345 pt ``\textwidth`` of the ``article`` class is used (``\small``,
``\footnotesize`` or ``\scriptsize``; beyond that the table is scaled with
``\resizebox``).  The captions name the test, the correction, α and the interval
level, and carry the warnings about the queries the numbers rest on.  Needs
``\usepackage{booktabs}`` and ``\usepackage{graphicx}`` (and, for Chinese
captions, a CJK setup such as ``xeCJK``).  Text is escaped for LaTeX.

>>> latex_escape("a_b & 50% #1")
'a\\_b \\& 50\\% \\#1'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rankscope.engine.coverage import judged_line
from rankscope.i18n import _, gettext, ngettext
from rankscope.report.latex_width import TABCOLSEP, fit, table_width, text_width
from rankscope.report.tables import (
    fmt,
    fmt_ci,
    fmt_p,
    fmt_pct,
    fmt_signed,
    notice_lines,
    scenario_lines,
    scenario_table,
    summary_rows,
    system_label,
)

__all__ = ["render_latex", "latex_escape", "latex_tables", "LatexTable", "scenario_latex"]

_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
            "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
            "–": "--", "−": "-", "†": r"\dag{}", "‡": r"\ddag{}", "α": r"$\alpha$", "<": r"$<$", ">": r"$>$",
            "×": r"$\times$", "≥": r"$\geq$", "±": r"$\pm$", "≈": r"$\approx$", "Δ": r"$\Delta$"}
_MARKS = {"†": (r"$^{\dagger}$", 3.2), "‡": (r"$^{\ddagger}$", 3.2)}


def latex_escape(text: object) -> str:
    """Escape LaTeX special characters in ``text``."""
    return "".join(_SPECIAL.get(ch, ch) for ch in str(text))


@dataclass(frozen=True)
class _Cell:
    source: str
    width: float  # pt at 10 pt


def _text(text: object, bold: bool = False, italic: bool = False) -> _Cell:
    src = latex_escape(text)
    if bold:
        src = r"\textbf{" + src + "}"
    if italic:
        src = r"\textit{" + src + "}"
    return _Cell(src, text_width(str(text), bold))


def _math(source: str, width: float) -> _Cell:
    return _Cell(source, width)


@dataclass(frozen=True)
class LatexTable:
    """One rendered ``table`` float: its LaTeX lines, its width in pt and the font size chosen."""

    label: str
    lines: tuple[str, ...]
    width: float
    size: str | None


def _table(label: str, align: str, header: list[_Cell], rows: list[list[_Cell] | _Cell], caption: str) -> LatexTable:
    """A booktabs table; a row that is a single cell is a heading spanning every column."""
    cols = len(header)
    widths = [max([header[i].width] + [r[i].width for r in rows if isinstance(r, list)]) for i in range(cols)]
    span = max([r.width for r in rows if isinstance(r, _Cell)], default=0.0)
    size, scale = fit(sum(widths), cols, span)
    lines = [r"\begin{table}[t]", r"\centering", size or r"\scriptsize",
             rf"\setlength{{\tabcolsep}}{{{TABCOLSEP:g}pt}}"]
    if size is None:
        lines.append(r"\resizebox{\linewidth}{!}{%")
    lines += [r"\begin{tabular}{" + align + "}", r"\toprule", " & ".join(c.source for c in header) + r" \\",
              r"\midrule"]
    for r in rows:
        if isinstance(r, _Cell):
            lines.append(rf"\multicolumn{{{cols}}}{{l}}{{{r.source}}} \\")
        else:
            lines.append(" & ".join(c.source for c in r) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if size is None:
        lines.append("}")
    lines += [r"\caption{" + caption + "}", rf"\label{{tab:rankscope-{label}}}", r"\end{table}", ""]
    width = table_width(widths, scale, span) if size is not None else 345.0
    return LatexTable(label, tuple(lines), width, size)


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "。")) else text + "."


def latex_tables(report: dict[str, Any]) -> list[LatexTable]:
    """The report's tables (summary, groups when Tukey HSD, pairs) with their computed widths."""
    lang = report["lang"]
    names = report["display_names"]
    comp = report["comparison"]
    ref = report["reference"]
    metrics = report["metrics"]
    sep = "" if lang == "zh" else " "

    header = [_text(gettext("System", lang))] + [_text(names[m]) for m in metrics]
    rows: list[list[_Cell] | _Cell] = []
    for s, cells in summary_rows(report):
        base = f" ({gettext('baseline', lang)})" if s == ref else ""
        row = [_text(s + base)]
        for c in cells:
            cell = _text(c.text, bold=c.best)
            if c.mark:
                src, w = _MARKS[c.mark]
                cell = _Cell(cell.source + src, cell.width + w)
            row.append(cell)
        rows.append(row)
    tags = report.get("tags") or {}
    n_queries = ngettext("{n} query", "{n} queries", report["n_queries"]).text(lang)
    caption = [gettext("Summary", lang) + ".", n_queries + ".", report["legend"]]
    judged = judged_line(report.get("judged") or {}, lang)  # judged@k of every run
    caption += [judged] if judged else []
    if tags:
        caption.append(_sentence("; ".join(f"{s}: {_('TREC tag {tag}', tag=tag).text(lang)}"
                                           for s, tag in tags.items())))
    caption += [_sentence(w) for w in report["warnings"]] + [_sentence(n) for n in notice_lines(report)]
    tables = [_table("summary", "l" + "r" * len(metrics), header, rows, latex_escape(sep.join(caption)))]

    if report["groups"]:
        rows = [[_text(s)] + [_text(report["groups"][m][s]) for m in metrics] for s in report["systems"]]
        tables.append(_table("groups", "l" + "c" * len(metrics), header, rows,
                             latex_escape(_sentence(report["groups_title"]))))

    if comp["pairs"]:
        head = [_text(gettext("Metric", lang)), _math(r"$\Delta$", 8.4), _text(report["ci_short"]),
                _math(r"$\Delta$\%", 16.7), _math(r"$p_\mathrm{adj}$", 14.0), _math(r"$d_z$", 10.0),
                _text(gettext("W/T/L", lang))]
        rows = []
        current = None
        for p in comp["pairs"]:
            if (p["b"], p["a"]) != current:
                current = (p["b"], p["a"])
                rows.append(_text(f"{p['b']} vs {p['a']}", italic=True))
            flag = r"$^{\approx}$" if p.get("near_alpha") else ""
            rows.append([_text(names[p["metric"]]), _text(fmt_signed(p["diff"]), bold=p["significant"]),
                         _text(fmt_ci(p["diff_ci"])), _text(fmt_pct(p["rel_improvement"])),
                         _Cell(latex_escape(fmt_p(p["p_adjusted"])) + flag,
                               text_width(fmt_p(p["p_adjusted"])) + (5.5 if flag else 0.0)),
                         _text(fmt(p["cohen_d"], 2)), _text(f"{p['wins']}/{p['ties']}/{p['losses']}")])
        legend = [
            gettext("Paired comparisons", lang) + ":", "Δ", "=", f"{gettext('Difference', lang)} (b − a),",
            f"{report['ci_label']};",
            f"Δ% {gettext('Relative change', lang)};", f"p_adj {gettext('adjusted p', lang)};",
            f"d_z {gettext('d_z (paired)', lang)}; {gettext('W/T/L', lang)}.",
        ] if lang == "en" else [
            gettext("Paired comparisons", lang) + "：Δ =",
            f"{gettext('Difference', lang)}（b − a），{report['ci_label']}；",
            f"Δ% {gettext('Relative change', lang)}；p_adj {gettext('adjusted p', lang)}；"
            f"d_z {gettext('d_z (paired)', lang)}；{gettext('W/T/L', lang)}。",
        ]
        notes = [report["legend"]] + [n for n in (report["mc_note"], report["near_alpha"]) if n]
        caption_text = latex_escape(" ".join(legend) + sep + sep.join(notes))
        caption_text = caption_text.replace(r"p\_adj", r"$p_\mathrm{adj}$").replace(r"d\_z", r"$d_z$")
        tables.append(_table("pairs", "lrrrrrr", head, rows, caption_text))
    scen = scenario_latex(report)
    if scen is not None:
        tables.append(scen)
    return tables


def scenario_latex(report: dict[str, Any]) -> LatexTable | None:
    """The scenario's benchmark figures checked per system (or its recommended metrics when it gives none)."""
    sc = report.get("scenario")
    if not sc:
        return None
    lang = report["lang"]
    sep = "" if lang == "zh" else " "
    caption = latex_escape(sep.join(_sentence(x) for x in [
        f"{gettext('Scenario', lang)}{'：' if lang == 'zh' else ': '}{sc['name']}", *scenario_lines(report)]))
    table = scenario_table(report)
    if table is None:  # no benchmark figures: the recommended metrics
        head = [_text(gettext("Scenario", lang)), _text(gettext("Metric", lang))]
        return _table("scenario", "ll", head, [[_text(sc["name"]), _text(", ".join(sc["recommended"]))]], caption)
    rows: list[list[_Cell] | _Cell] = []
    for system, checks in sc["checks"].items():
        row = [_text(system_label(report, system))]
        for c in checks:  # a value that meets the figure is marked with a check (\surd), one below it with a cross
            mark = "" if c["value"] is None else r"\,$\surd$" if c["passed"] else r"\,$\times$"
            cell = _text("–" if c["value"] is None else fmt(c["value"]))
            row.append(_Cell(cell.source + mark, cell.width + (7.0 if mark else 0.0)))
        rows.append(row)
    head = [_text(table[0][0])] + [_text(f"{m} ≥ {v:g}") for m, v in sc["benchmark"].items()]
    return _table("scenario", "l" + "r" * (len(head) - 1), head, rows, caption)


def render_latex(report: dict[str, Any]) -> str:
    """LaTeX source of the tables of a report dict (see :func:`latex_tables`)."""
    out = ["% generated by rankscope " + report["rankscope_version"]
           + "; needs \\usepackage{booktabs} and \\usepackage{graphicx}"]
    for table in latex_tables(report):
        out.append(f"% {table.label}: {table.width:.0f}pt wide at {table.size or 'resizebox'}")
        out += table.lines
    return "\n".join(out)
