"""Notebook displays: compact HTML tables, tidy DataFrames and matplotlib figures.

``_repr_html_`` of :class:`~rankscope.engine.EvaluationResult`, :class:`~rankscope.comparison.Comparison`,
:class:`~rankscope.data.testset.TestSet` and :class:`~rankscope.gate.GateResult` call the functions
here, so that Jupyter shows a small table instead of a text dump:

* a result: each metric's mean, its 95% bootstrap interval (1,000 resamples, seed 0), the rating
  band (collection-aware), the number of queries and every notice of "never silent" (queries
  missing from the run, run queries without judgments, queries without a relevant document,
  float32 reordering, what the reader decided about the input);
* a comparison: one table, systems × metrics, each cell the mean and its interval, the best
  value in bold and the significance marks in the cell — with a baseline, ``†`` / ``‡``
  significantly better / worse than it; without one, as ranx's report does, the superscript
  letters of the systems this one is significantly better than — then the test, correction,
  α and the warnings;
* a test set: its size, judged queries, corpus, span judgments and load issues;
* a gate: the verdict, each requirement with its measured value, and the warnings.

Everything is escaped, styled inline (no script, nothing fetched) and imported lazily:
``import rankscope`` does not import this module.

>>> from rankscope import Qrels, Run, evaluate
>>> res = evaluate(Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}}),
...                Run.from_ranked_lists({"q1": ["d1"], "q2": ["d9", "d2"]}, name="bm25"), ["mrr"])
>>> html = html_result(res)
>>> "<table" in html and "bm25" in html and "0.750" in html
True
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape
from typing import Any

import numpy as np

from rankscope.choices import term
from rankscope.i18n import _, gettext, ngettext
from rankscope.interpret.i18n import setting_text
from rankscope.report.tables import fmt

__all__ = ["html_result", "html_comparison", "html_testset", "html_gate", "comparison_frame", "plot_result",
           "plot_comparison", "mean_intervals", "notebook_lang"]

_BOOTSTRAP = 1000
_SEED = 0
_LEVEL_COLORS = {"poor": "#fde2e1", "fair": "#fff3cd", "good": "#dcf3e0", "excellent": "#cdeefc"}
_CSS = (
    "<style>"
    ".rankscope-nb{font-family:system-ui,-apple-system,'Segoe UI','Noto Sans','Noto Sans CJK SC',sans-serif;"
    "font-size:13px;line-height:1.4;color:#1d2330}"
    ".rankscope-nb table{border-collapse:collapse;margin:4px 0}"
    ".rankscope-nb th,.rankscope-nb td{border-bottom:1px solid #d9dee7;padding:3px 9px;text-align:right;"
    "white-space:nowrap}"
    ".rankscope-nb th{background:#f4f6fa;font-weight:600}"
    ".rankscope-nb th:first-child,.rankscope-nb td:first-child,.rankscope-nb .t{text-align:left}"
    ".rankscope-nb .ci{color:#5b6475;font-size:11px}"
    ".rankscope-nb .head{font-weight:600;margin:2px 0}"
    ".rankscope-nb .meta{color:#5b6475;margin:2px 0}"
    ".rankscope-nb .warn{color:#92400e;margin:2px 0}"
    ".rankscope-nb .note{color:#1e5a8a;margin:2px 0}"
    ".rankscope-nb .pass{color:#067647;font-weight:700}.rankscope-nb .fail{color:#b42318;font-weight:700}"
    ".rankscope-nb sup{color:#7a1f9e;font-weight:700}"
    # prose in a cell (a gate's details) wraps inside the output area instead of running past it
    ".rankscope-nb table.wraps{max-width:100%}"
    ".rankscope-nb td.prose{white-space:normal;overflow-wrap:anywhere;min-width:14em;text-align:left}"
    "</style>"
)


def _wrap(*parts: str) -> str:
    return '<div class="rankscope-nb">' + _CSS + "".join(parts) + "</div>"


def _lines(items: Iterable[str], cls: str, mark: str) -> str:
    return "".join(f'<p class="{cls}">{mark} {escape(str(t))}</p>' for t in items)


def mean_intervals(values: np.ndarray, alpha: float = 0.05) -> list[tuple[float, float] | None]:
    """The percentile bootstrap interval of the mean of each column of a queries × metrics matrix (seed 0).

    >>> mean_intervals(np.array([[0.0], [1.0]]))[0][0] >= 0.0
    True
    """
    from rankscope.stats.bootstrap import bootstrap_means, percentile_ci

    n = values.shape[0]
    if n < 2:
        return [None] * values.shape[1]
    boot = bootstrap_means(np.ascontiguousarray(values.T), _BOOTSTRAP, np.random.default_rng(_SEED))
    lo, hi = percentile_ci(boot, alpha)
    return [(float(a), float(b)) for a, b in zip(lo, hi)]


def _ci(ci: tuple[float, float] | list[float] | None) -> str:
    return "" if ci is None else f'<br><span class="ci">[{fmt(ci[0])}, {fmt(ci[1])}]</span>'


def _result_warnings(result: Any, lang: str) -> list[str]:
    """The sentences of "never silent" for one result: query coverage, judged@10 and its warnings (ids that never
    match, a top 10 mostly unjudged, model labels, condensed lists), float32 reordering."""
    from rankscope.engine.coverage import judged_line

    q = result.queries
    out = [w.text(lang) for w in result.warnings()]
    line = None if result.judged is None else judged_line({result.run_name: result.judged.to_dict()}, lang)
    out += [line] if line else []
    if getattr(q, "float32_reordered", 0):
        out.append(_("note: {run}: float32 score rounding (trec_eval's rule) changed the ranking of {n} of {total} "
                     "queries: their scores equal as float32 tie and are ordered by doc id (--score-precision "
                     "float64 ranks by the full scores)", run=result.run_name, n=q.float32_reordered,
                     total=q.evaluated).text(lang))
    return out


def notebook_lang(lang: str | None = None) -> str:
    """The language of the displays: ``lang``, else the default of :func:`rankscope.choices.resolve_lang`."""
    from rankscope.choices import resolve_lang

    return resolve_lang(lang)


def html_result(result: Any, lang: str | None = None) -> str:
    """The notebook display of an :class:`~rankscope.engine.EvaluationResult` (see module doc)."""
    from rankscope.report.verdict import system_verdict

    lang = notebook_lang(lang)
    values = np.asarray(result.per_query.values, dtype=np.float64)
    means = result.mean()
    n = len(result.per_query)
    verdict = system_verdict(means, result.measures, result.ceilings, None, n=n, lang=lang)
    cis = mean_intervals(values)
    rows = []
    for (label, v), ci in zip(means.items(), cis):
        r = verdict["ratings"][label]
        band = "" if r is None else escape(r["level_name"])
        style = "" if r is None else f' style="background:{_LEVEL_COLORS[r["level"]]}"'
        reach = "" if r is None or r.get("ceiling") is None or r["ceiling"] >= 1 - 1e-9 else \
            f'<br><span class="ci">{escape(gettext("reachable", lang))} {fmt(r["ceiling"])}</span>'
        rows.append(f"<tr><td>{escape(label)}</td><td>{fmt(v, 4)}{_ci(ci)}</td><td class=\"t\"{style}>{band}"
                    f"{reach}</td></tr>")
    pol = result.policies
    depth = pol.get("depth")
    queries = ngettext("{n} query", "{n} queries", n).text(lang)
    head = (f'<p class="head">{escape(result.run_name)} · {escape(queries)}</p>'
            f'<p class="meta">' + escape(_("relevance level {level} · missing={missing} · depth {depth} · {ci} "
                                           "bootstrap intervals of the mean", level=pol.get("relevance_level", 1),
                                           missing=term(pol.get("missing"), lang, "missing"),
                                           depth="–" if depth is None else depth, ci="95%").text(lang)) + "</p>")
    std = verdict["standards"]
    colon = "：" if lang == "zh" else ": "
    tier = (f'<p class="meta">{escape(gettext("Production standards", lang))} · '
            f'{escape(gettext("Highest tier met", lang))}'
            f'{colon}<b>{escape(std["status_text"])}</b></p>') if std["applicable"] else ""
    table = (f'<table><thead><tr><th>{escape(gettext("Metric", lang))}</th>'
             f'<th>{escape(gettext("mean", lang))}</th><th class="t">{escape(gettext("Rating", lang))}</th>'
             "</tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    return _wrap(head, _lines(_result_warnings(result, lang), "warn", "⚠"),
                 _lines((nt.text(lang) for nt in result.notices), "note", "ℹ"), table, tier)


def _letters(n: int) -> list[str]:
    return [chr(ord("a") + i) if i < 26 else f"s{i + 1}" for i in range(n)]


def html_comparison(comparison: Any, lang: str | None = None) -> str:
    """The notebook display of a :class:`~rankscope.comparison.Comparison`: one table with the significance marks."""
    lang = notebook_lang(lang)
    systems, labels = list(comparison.systems), list(comparison.labels)
    letters = _letters(len(systems))
    baseline = comparison.baseline
    head_cells = "".join(f"<th>{escape(lb)}</th>" for lb in labels)
    rows = []
    for i, s in enumerate(systems):
        cells = []
        for j, label in enumerate(labels):
            v = comparison.means[s][label]
            hib = comparison.measures[j].spec.higher_is_better
            best = s in comparison.leaders(label)
            marks = ""
            if baseline is not None:
                if s != baseline:
                    p = comparison.pair(baseline, s, label)
                    if p.significant:
                        marks = "†" if (p.diff > 0) == hib else "‡"
            else:  # ranx style: the systems this one is significantly better than
                beaten = []
                for k, other in enumerate(systems):
                    if other == s:
                        continue
                    p = comparison.pair(other, s, label)
                    if p.significant and (p.diff > 0) == hib and p.diff != 0:
                        beaten.append(letters[k])
                marks = "".join(beaten)
            text = fmt(v, 4)
            text = f"<b>{text}</b>" if best else text
            cells.append(f"<td>{text}{f'<sup>{escape(marks)}</sup>' if marks else ''}"
                         f"{_ci(comparison.mean_ci[s][label])}</td>")
        name = escape(s) + (f' <span class="ci">({escape(comparison.tags[s])})</span>' if s in comparison.tags else "")
        tag = "" if baseline is not None else f"<sup>{letters[i]}</sup> "
        base = f' <span class="ci">({escape(gettext("baseline", lang))})</span>' if s == baseline else ""
        rows.append(f"<tr><td>{tag}{name}{base}</td>{''.join(cells)}</tr>")
    values = {"test": setting_text("test", comparison.test, lang),
              "correction": setting_text("correction", comparison.correction, lang),
              "alpha": f"{comparison.alpha:g}", "ci": f"{100 * (1 - comparison.alpha):.6g}%",
              "method": setting_text("ci", getattr(comparison, "ci", "bootstrap"), lang)}
    legend = _("bold: best mean · superscript letters: the systems this one is significantly better than ({test}, "
               "{correction}, α = {alpha}) · unadjusted {ci} {method} intervals of the mean",
               **values).text(lang) if baseline is None else \
        _("bold: best mean · † / ‡ significantly better / worse than {baseline}: {test}, {correction}, α = {alpha} "
          "· unadjusted {ci} {method} intervals of the mean", baseline=baseline, **values).text(lang)
    size = _("{systems} systems · {queries} queries", systems=len(systems),
             queries=len(comparison.query_ids)).text(lang)
    head = f'<p class="head">{escape(size)}</p><p class="meta">{escape(legend)}</p>'
    table = (f'<table><thead><tr><th>{escape(gettext("System", lang))}</th>{head_cells}</tr></thead><tbody>'
             + "".join(rows) + "</tbody></table>")
    return _wrap(head, _lines((w.text(lang) for w in comparison.warnings), "warn", "⚠"),
                 _lines((nt.text(lang) for nt in comparison.notices), "note", "ℹ"), table)


def html_testset(ts: Any, lang: str | None = None) -> str:
    """The notebook display of a :class:`~rankscope.data.testset.TestSet`."""
    lang = notebook_lang(lang)
    rows = [(gettext("queries", lang), len(ts.queries)), (gettext("judged queries", lang), len(ts.judged_query_ids)),
            (gettext("judgments", lang), len(ts.qrels))]
    if ts.corpus is not None:
        rows.append((gettext("corpus documents", lang), len(ts.corpus)))
    if getattr(ts, "spans", None) is not None:
        rows.append((gettext("judged spans", lang), len(ts.spans)))
    unjudged = len(ts.queries) - len(ts.judged_query_ids)
    table = "<table><tbody>" + "".join(f"<tr><td>{escape(k)}</td><td>{v:,}</td></tr>"
                                       for k, v in rows) + "</tbody></table>"
    warn = [ngettext("{n} query has no judgment", "{n} queries have no judgment",
                     unjudged).text(lang)] if unjudged else []
    issues = [str(i) for i in ts.issues[:10]] + (
        [_("… {n} more", n=len(ts.issues) - 10).text(lang)] if len(ts.issues) > 10 else [])
    return _wrap(f'<p class="head">{escape(_("test set {name}", name=ts.name).text(lang))}</p>', table,
                 _lines(warn, "warn", "⚠"), _lines(issues, "warn", "⚠"))


def html_gate(gate: Any, lang: str | None = None) -> str:
    """The notebook display of a :class:`~rankscope.gate.GateResult`: the verdict, each requirement, the warnings."""
    lang = notebook_lang(lang)
    colon = "：" if lang == "zh" else ": "
    n = len(gate.outcomes)
    failed, undecided = gate.failed, gate.undecided
    if failed:
        head, said = ("fail", gettext("gate FAILED", lang)), ngettext(
            "{failed} of {n} requirement not met", "{failed} of {n} requirements not met", n, failed=failed)
    elif undecided:
        head, said = ("fail", gettext("gate UNDECIDED", lang)), ngettext(
            "{undecided} of {n} requirement could not be decided",
            "{undecided} of {n} requirements could not be decided", n, undecided=undecided)
    else:
        head, said = ("pass", gettext("gate passed", lang)), ngettext("{n} requirement holds",
                                                                       "{n} requirements hold", n)
    verdict = (f'<p class="head"><span class="{head[0]}">{escape(head[1])}</span>{colon}'
               f'{escape(said.text(lang))}</p>')
    base = escape(_(" against baseline {baseline}",
                    baseline=gate.baseline_name).text(lang)) if gate.baseline_name else ""
    meta = (f'<p class="meta">{escape(_("run {run}", run=gate.run_name).text(lang))}{base} · '
            f'{escape(ngettext("{n} query", "{n} queries", gate.n_queries).text(lang))}</p>')
    rows = []
    for o in gate.outcomes:
        mark = ('<span class="pass">PASS</span>' if o.passed else '<span class="fail">FAIL</span>'
                if o.status == "fail" else '<span class="fail">UNDECIDED</span>')
        if o.kind == "threshold":
            req = f"{o.label} {o.op} {o.threshold:g}"
            detail = "" if o.source in (None, "--require") else o.source
            if o.ceiling is not None:
                ceiling = _("unreachable: a perfect ranking scores {ceiling}", ceiling=f"{o.ceiling:.4f}")
                detail += f" ({ceiling.text(lang)})"
            measured = f"{o.value:.4f}"
        else:
            req = _("{metric} drops at most {margin}", metric=o.label, margin=f"{o.margin:.4g}").text(lang)
            measured = f"{o.value:.4f} vs {o.baseline_value:.4f}"
            detail = o.evidence(lang)
        rows.append(f"<tr><td>{mark}</td><td class=\"t\">{escape(req)}</td><td>{measured}</td>"
                    f"<td class=\"prose\">{escape(detail)}</td></tr>")
    table = (f'<table class="wraps"><thead><tr><th></th><th class="t">{escape(gettext("requirement", lang))}</th>'
             f'<th>{escape(gettext("measured", lang))}</th><th class="t">{escape(gettext("detail", lang))}</th>'
             '</tr></thead><tbody>' + "".join(rows) + "</tbody></table>")
    return _wrap(verdict, meta, _lines((w.text(lang) for w in gate.warnings), "warn", "⚠"),
                 _lines((nt.text(lang) for nt in getattr(gate, "notices", ())), "note", "ℹ"), table)


def comparison_frame(comparison: Any) -> Any:
    """The tidy DataFrame of :meth:`~rankscope.comparison.Comparison.to_dataframe`."""
    from rankscope.extras import need

    pd = need("pandas", "dataframe")

    from rankscope.report.content import reference_system

    ref = reference_system(comparison)
    rows = []
    for s in comparison.systems:
        for label in comparison.labels:
            ci = comparison.mean_ci[s][label]
            row: dict[str, Any] = {"system": s, "metric": label, "mean": comparison.means[s][label],
                                   "ci_low": np.nan if ci is None else ci[0],
                                   "ci_high": np.nan if ci is None else ci[1], "versus": None, "diff": np.nan,
                                   "p_value": np.nan, "p_adjusted": np.nan, "effect_size": np.nan,
                                   "significant": None}
            if s != ref:
                try:
                    p = comparison.pair(ref, s, label)
                except ValueError:  # not compared (pairs against another baseline)
                    p = None
                if p is not None:
                    row.update(versus=ref, diff=p.diff, p_value=p.p_value, p_adjusted=p.p_adjusted,
                               effect_size=np.nan if p.cohen_d is None else p.cohen_d, significant=p.significant)
            rows.append(row)
    return pd.DataFrame(rows, columns=["system", "metric", "mean", "ci_low", "ci_high", "versus", "diff", "p_value",
                                       "p_adjusted", "effect_size", "significant"])


def _only(report: dict[str, Any], metric: str | None, measures: Any, labels: Any) -> dict[str, Any]:
    """The report restricted to ``metric`` (any spelling), for one-metric plots."""
    if metric is None:
        return report
    from rankscope.engine.result import metric_column

    label = labels[metric_column(metric, tuple(labels), tuple(measures))]
    return {**report, "metrics": [label]}


def _figure(report: dict[str, Any], kind: str) -> Any:
    from rankscope.errors import InvalidParameterError, Items
    from rankscope.report.plots import FIGURES

    if kind not in FIGURES:
        kinds = Items(tuple(FIGURES))
        raise InvalidParameterError(_("unknown plot kind {kind!r}; choose one of: {kinds}", kind=kind, kinds=kinds))
    fig = FIGURES[kind](report)
    if fig is None:
        need = {"curves": _("curves need the qrels and the run(s): plot(kind='curves', qrels=qrels, run=run)"),
                "first_rank": _("first-relevant ranks need the qrels and the run (plot(kind='first_rank', qrels=qrels, "
                                "run=run)) or an uncut mrr among the metrics")}.get(kind, _("nothing to draw"))
        raise InvalidParameterError(_("no {kind} plot for this result: {need}", kind=kind, need=need))
    return fig


def plot_result(result: Any, metric: str | None, kind: str, *, qrels: Any = None, run: Any = None,
                kmax: int = 100) -> Any:
    """A figure of one result (see :meth:`~rankscope.engine.EvaluationResult.plot`)."""
    from rankscope.extras import need
    from rankscope.report.run_report import build_run_report

    need("matplotlib", "plots")  # before any work

    report = build_run_report(result, qrels=qrels, run=run, curves=kind == "curves", kmax=kmax)
    return _figure(_only(report, metric, result.measures, result.labels), kind)


def plot_comparison(comparison: Any, metric: str | None, kind: str, *, qrels: Any = None, runs: Any = None,
                    kmax: int = 100) -> Any:
    """A figure of a comparison (see :meth:`~rankscope.comparison.Comparison.plot`)."""
    from rankscope.extras import need
    from rankscope.report.content import build_report

    need("matplotlib", "plots")  # before any work

    report = build_report(comparison, qrels=qrels, runs=runs, curves=kind == "curves", kmax=kmax)
    if metric is not None and kind == "differences":
        label = report["metrics"][comparison._metric_index(metric)]
        comp = {**report["comparison"], "pairs": [p for p in report["comparison"]["pairs"] if p["metric"] == label]}
        report = {**report, "comparison": comp}
    return _figure(_only(report, metric, comparison.measures, comparison.labels), kind)
