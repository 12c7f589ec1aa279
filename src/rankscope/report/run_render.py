"""The one-run report (:func:`~rankscope.report.run_report.build_run_report`) as HTML, Markdown, JSON or LaTeX.

The same content dict renders to every format; labels come from ``report/messages``
(run-report texts) and ``interpret/messages`` (the texts shared with the comparison
report), in English and Chinese.  HTML is self-contained (inline CSS, plots embedded
as ``data:`` SVG, nothing fetched).
"""

from __future__ import annotations

import base64
import json
from functools import cache
from importlib import resources
from typing import Any

from rankscope.errors import InvalidParameterError, Items
from rankscope.interpret.bands import LEVELS, level_name
from rankscope.interpret.i18n import check_lang, message
from rankscope.report.markdown import notices_markdown, scenario_markdown
from rankscope.report.tables import (
    fmt,
    notice_lines,
    policy_line,
    rated_value,
    scenario_lines,
    scenario_table,
    standards_note,
    standards_table,
)

__all__ = ["render_run_report", "RUN_FORMATS", "run_message"]

RUN_FORMATS = ("html", "markdown", "json", "latex")
DIST_KEYS = ("mean", "median", "q1", "q3", "min", "max")


@cache
def _messages(lang: str) -> dict[str, str]:
    path = resources.files("rankscope.report").joinpath("messages", f"{check_lang(lang)}.json")
    data: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
    return data


def run_message(key: str, lang: str, **values: Any) -> str:
    """A run-report text (``run.*`` in ``report/messages``), else a shared report text (``interpret/messages``)."""
    table = _messages(lang)
    if key in table:
        return table[key].format(**values) if values else table[key]
    return message(key, lang, **values)


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"


def _coverage(report: dict[str, Any]) -> list[str]:
    """Sentences about queries that change what is measured (shown in every format)."""
    lang = report["lang"]
    q = report["queries"]
    lines = [run_message("run.evaluated", lang, n=q["evaluated"])]
    if q["missing_from_run"]:
        missing = report["policies"].get("missing", "zero")
        effect = run_message("run.missing_zero" if missing == "zero" else "run.missing_ignore", lang)
        lines.append(run_message("run.missing_from_run", lang, n=q["missing_from_run"], missing=missing, effect=effect))
    if q["not_in_qrels"]:
        lines.append(run_message("run.not_in_qrels", lang, n=q["not_in_qrels"]))
    # what the numbers rest on: ids that never match, the judged share of the top k, condensed lists
    return lines + list(report.get("warnings", []))


def _live_lines(report: dict[str, Any]) -> list[str]:
    live = report.get("live")
    if not live:
        return []
    lang = report["lang"]
    lat = live["latency_ms"]
    lines = [run_message("run.live_summary", lang, answered=live["answered"], asked=live["asked"],
                         failed=live["failed"])]
    if lat["n"]:
        lines.append(run_message("run.latency_line", lang, n=lat["n"], p50=_ms(lat["p50"]), p90=_ms(lat["p90"]),
                                 p95=_ms(lat["p95"]), p99=_ms(lat["p99"]), max=_ms(lat["max"])))
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
    from rankscope.extras import need

    jinja2 = need("jinja2", "html_report")

    lang = report["lang"]

    def t(key: str, **kw: Any) -> str:
        return run_message(key, lang, **kw)

    env = jinja2.Environment(loader=jinja2.PackageLoader("rankscope.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
                             undefined=jinja2.StrictUndefined)
    fr = report["analysis"]["first_rank"].get(report["run"])
    _, std_note = standards_note(report["standards"]["checks"], lang)
    return str(env.get_template("run_report.html.j2").render(
        r=report, t=t, lang=lang, fmt=fmt, policy=policy_line(report), coverage=_coverage(report),
        rated={m: rated_value(rt, lang) if rt else fmt(report["means"][m]) for m, rt in report["ratings"].items()},
        standards=standards_table(report["standards"], lang), std_note=std_note,
        scenario_table=scenario_table(report), scenario_lines=scenario_lines(report), notices=notice_lines(report),
        live_lines=_live_lines(report), levels=[(lv, level_name(lv, lang)) for lv in LEVELS],
        plots=_plots(report) if plots else {}, fr=fr, dist_keys=DIST_KEYS,
        plot_captions=[("curves", t("report.plot_curves", kmax=len((report.get("curves") or {}).get("ks", [])))),
                       ("distribution", t("report.plot_distribution")),
                       ("first_rank", t("report.plot_first_rank"))],
        failing_title=t("report.failing", k=report["analysis"]["failing_k"] or "∞"),
    ))


def _esc(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def render_run_markdown(report: dict[str, Any]) -> str:
    lang = report["lang"]

    def t(key: str, **kw: Any) -> str:
        return run_message(key, lang, **kw)

    names = report["display_names"]
    out = [f"## {_esc(t('run.title', run=report['run']))}", "", policy_line(report), ""]
    out += [f"- {_esc(line)}" for line in _coverage(report)] + [""]
    out += notices_markdown(report)
    out += [f"### {t('run.means')}", "",
            f"| {t('report.metric')} | {t('run.value')} | {t('report.band')} | {t('report.advice')} |",
            "|---|---|---|---|"]
    for m in report["metrics"]:
        r = report["ratings"][m]
        value = rated_value(r, lang) if r else fmt(report["means"][m])
        out.append(f"| {_esc(names[m])} | {_esc(value)} | {_esc(r['level_name']) if r else '–'} | "
                   f"{_esc(r['advice']) if r else ''} |")
    out.append("")
    if report["ceilings"] and any(c < 1 - 1e-9 for c in report["ceilings"].values()):
        out += [_esc(t("report.ceiling_note")), ""]
    std = report["standards"]
    if std["applicable"]:
        head, rows = standards_table(std, lang)
        out += [f"### {t('report.standards')}", "", f"{_esc(t('report.tier'))}: **{_esc(std['status_text'])}**", ""]
        out += ["| " + " | ".join(_esc(h) for h in head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(_esc(c) for c in row) + " |" for row in rows] + [""]
    out += scenario_markdown(report)
    out += [f"### {t('report.explanations')}", ""]
    out += [f"- {_esc(text)}" for text in report["explanations"].values()] + [""]
    head = [t("report.metric")] + [t(f"run.{k}") for k in DIST_KEYS] + [t("run.zero")]
    out += [f"### {t('run.distribution')}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for m in report["metrics"]:
        d = report["distribution"][m]
        out.append("| " + " | ".join([_esc(names[m])] + [fmt(d[k]) for k in DIST_KEYS] + [str(d["zero"])]) + " |")
    out.append("")
    an = report["analysis"]
    fr = an["first_rank"].get(report["run"])
    if fr:
        out += [f"### {t('report.first_rank')}", "", "- " + _esc(
            t("report.first_rank_summary", system=report["run"], median=fr["median"], q1=fr["q1"], q3=fr["q3"],
              at1=fr["at_rank_1"], n=fr["n"], nf=fr["not_found"]) if fr["found"]
            else t("report.first_rank_none", system=report["run"]))]
        failing = an["failing"][report["run"]]
        shown = ", ".join(f"`{q}`" for q in failing[:20]) + (" …" if len(failing) > 20 else "")
        out.append("- " + _esc(t("report.failing", k=an["failing_k"] or "∞")) + ": " + _esc(
            t("report.failing_count", system=report["run"], count=len(failing), n=report["n_queries"]))
            + (f": {shown}" if failing else ""))
        out += ["- " + _esc(t("run.rank_source", source=t(f"run.source.{an['first_rank_source']}"))), ""]
    if report["worst"]:
        first = report["metrics"][0]
        out += [f"### {t('run.worst', metric=names[first])}", ""]
        out.append(", ".join(f"`{w['query_id']}` ({fmt(w['value'])})" for w in report["worst"]))
        out.append("")
    live = report.get("live")
    if live:
        out += [f"### {t('run.live')}", ""] + [f"- {_esc(line)}" for line in _live_lines(report)]
        for kind in live["error_kinds"]:
            out.append(f"- {_esc(kind['error'])}: {kind['queries']}")
        out.append("")
    out += [f"<sub>{t('report.generated', version=report['rankscope_version'])}</sub>", ""]
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
    raise InvalidParameterError(f"unknown format {fmt_name!r} for a one-run report; known: {known}").keyed(
        "report.unknown_run_format", fmt=fmt_name, known=known)
