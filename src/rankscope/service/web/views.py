"""What the dashboard pages show, computed from the store (no HTML here, except a small SVG chart).

Significance marks are the reports' own (``†`` significantly better than the baseline, ``‡``
worse: paired t-test, Holm, α = 0.05), read from the cached JSON report of the evaluation, so
the dashboard and every report say the same thing; nothing is re-scored when a page is viewed.
"""

from __future__ import annotations

import json
import math
from typing import Any
from xml.sax.saxutils import escape

from rankscope.i18n import _, gettext
from rankscope.service import store
from rankscope.service.db import Database

__all__ = ["evaluation_view", "drilldown", "run_compare_view", "bar_chart", "testset_view", "evaluations_view",
           "delete_view", "run_coverage"]

MAX_ROWS = 500
PALETTE = ("#2563eb", "#f97316", "#16a34a", "#9333ea", "#dc2626", "#0891b2", "#ca8a04", "#db2777")


def bar_chart(metrics: list[str], series: list[tuple[str, list[float | None]]]) -> str:
    """Grouped bars (one group per metric, one bar per run) as an inline SVG.

    >>> svg = bar_chart(["mrr"], [("bm25", [0.5]), ("dense", [0.75])])
    >>> svg.startswith("<svg") and "bm25" in svg and svg.count("<rect") == 4
    True
    """
    width, height, left, top, bottom = 760, 260, 40, 20, 60
    plot_w, plot_h = width - left - 10, height - top - bottom
    group_w = plot_w / max(len(metrics), 1)
    bar_w = group_w * 0.8 / max(len(series), 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img">']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = top + plot_h * (1 - tick)
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e7eb"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{tick:g}</text>')
    for i, m in enumerate(metrics):
        gx = left + i * group_w + group_w * 0.1
        for j, (__, values) in enumerate(series):
            v = values[i]
            if v is None or not math.isfinite(v):
                continue
            h = plot_h * max(0.0, min(1.0, v))
            parts.append(f'<rect x="{gx + j * bar_w:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w * 0.9:.1f}" '
                         f'height="{h:.1f}" fill="{PALETTE[j % len(PALETTE)]}"><title>{escape(series[j][0])} '
                         f'{escape(m)} = {v:.4f}</title></rect>')
        parts.append(f'<text x="{left + (i + 0.5) * group_w:.1f}" y="{top + plot_h + 16}" font-size="11" '
                     f'text-anchor="middle">{escape(m)}</text>')
    for j, (name, _values) in enumerate(series):
        x = left + j * 150
        parts.append(f'<rect x="{x}" y="{height - 22}" width="10" height="10" fill="{PALETTE[j % len(PALETTE)]}"/>'
                     f'<text x="{x + 14}" y="{height - 13}" font-size="11">{escape(name[:22])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def run_coverage(n_queries: int, n_judged: int | None, judged_in_set: int) -> dict[str, Any]:
    """How a run's queries match its test set: ``level`` ok / warn / fail and the counts.

    ``fail``: no query of the run has judgments (the evaluation would stop with no overlap);
    ``warn``: some judged queries are absent from the run, or some run queries have no judgments.

    >>> run_coverage(10, 10, 10)["level"], run_coverage(12, 10, 10)["level"], run_coverage(5, 0, 10)["level"]
    ('ok', 'warn', 'fail')
    """
    if n_judged is None:
        return {"level": "unknown", "judged": None, "extra": None, "absent": None}
    extra = n_queries - n_judged
    absent = max(judged_in_set - n_judged, 0)
    level = "fail" if n_judged == 0 else ("warn" if extra or absent else "ok")
    return {"level": level, "judged": n_judged, "extra": extra, "absent": absent}


def testset_view(db: Database, test_set_id: int) -> dict[str, Any]:
    with db.read() as s:
        ts = store.get_testset(s, test_set_id)
        judged = len(set(store.load_qrels(ts).queries))
        runs = store.list_runs(s, test_set_id)
        queries = store.testset_queries(s, test_set_id, 0, 50)
        deps = store.testset_dependents(s, test_set_id)
    rows = [{"run": r, "coverage": run_coverage(r.n_queries, r.n_judged, judged)} for r in runs]
    return {"ts": ts, "runs": rows, "queries": queries, "judged": judged, "dependents": deps}


def evaluations_view(db: Database) -> list[dict[str, Any]]:
    from rankscope.service.api.evaluations import job_out

    with db.read() as s:
        jobs = [job_out(s, j) for j in store.list_jobs(s, None, 200)]
        names = store.testset_names(s, {j["test_set_id"] for j in jobs})
    for j in jobs:
        j["test_set_name"] = names.get(j["test_set_id"], str(j["test_set_id"]))
    return jobs


def _marks(report_json: str | None, names: dict[int, str]) -> dict[tuple[str, str], str]:
    from rankscope.report.tables import MARKS

    if not report_json:
        return {}
    content = json.loads(report_json)
    sig = content.get("significance") or {}
    return {(s, m): MARKS.get(v or "", "") for s, row in sig.items() for m, v in row.items()}


def _report_warnings(report_json: str | None, lang: str) -> list[str]:
    """The coverage warnings (missing queries, no relevant judgment ...) of a cached JSON comparison report."""
    from rankscope.engine.coverage import DataWarning

    if not report_json:
        return []
    stored = (json.loads(report_json).get("comparison") or {}).get("warnings") or []
    return [DataWarning.from_dict(w).text(lang) for w in stored]


def evaluation_view(db: Database, job_id: str, baseline: int | None, lang: str) -> dict[str, Any]:
    from rankscope.interpret.bands import rate
    from rankscope.report.run_report import latency_summary
    from rankscope.service.analysis import system_names
    from rankscope.service.api.evaluations import job_out
    from rankscope.service.reports import check_request, report_formats

    with db.read() as s:
        job = store.get_job(s, job_id)
        info = job_out(s, job)
        ts_name = store.testset_names(s, [job.test_set_id]).get(job.test_set_id, str(job.test_set_id))
        pairs = store.job_runs(s, job_id)
        live = store.live_summary(s, job_id) if job.kind == "live" else None
        scores = store.job_scores(s, job_id) if job.status == "done" else []
    names = system_names([(rec.id, rec.name) for __, rec in pairs])
    metrics: list[str] = list(job.params.get("metrics", []))
    progress = info["progress"]
    pct = 100.0 * (progress["finished"] + progress["failed"]) / progress["total"] if progress["total"] else 0.0
    ctx: dict[str, Any] = {
        "job": info, "names": names, "metrics": metrics, "table": [], "pct": min(pct, 100.0), "baseline": None,
        "chart": None, "per_query": [], "warnings": [], "per_query_cols": [], "ts_name": ts_name, "report": None,
        "marks_ready": False, "formats": report_formats(len(pairs)), "live": None, "more_rows": 0,
        "refresh": 2 if info["status"] in ("queued", "running") else None,
        "failure": (job.error_said or {}).get(lang) or job.error,  # why it failed, in the page's language
    }
    if live is not None:
        from rankscope.service.jobs.live import NO_TEXT

        # the service's own reason is said in the page's language; a retriever's (HTTP status, transport error) as is
        errors = {q: gettext("not asked: the test set has no text for this query", lang) if e == NO_TEXT else e for q,
                  e in live["errors"].items()}
        kinds: dict[str, int] = {}
        for e in errors.values():
            kinds[e] = kinds.get(e, 0) + 1
        ctx["live"] = {**live, "latency": latency_summary(live["latencies_ms"]), "url": job.params.get("retriever_url"),
                       "kinds": sorted(kinds.items(), key=lambda kv: -kv[1])[:20],
                       "failed_list": sorted(errors.items())[:200]}
    done = [r for r in info["runs"] if r["means"] is not None]
    if info["status"] != "done" or not done:
        return ctx
    run_ids = [r["run_id"] for r in done]
    base = baseline if baseline in run_ids else run_ids[0]
    ctx["baseline"] = base
    key = check_request(db, job_id, "html", base)
    marks: dict[tuple[str, str], str] = {}
    if len(run_ids) >= 2:  # asked first: reports are rendered oldest request first, the table needs this one
        js = store.request_report(db, job_id, "json", "en", key)
        ctx["marks_ready"] = js.status in ("done", "failed")
        marks = _marks(js.body if js.status == "done" else None, names)
    else:
        ctx["marks_ready"] = True
    # each run's own warnings at once (ids that never match, a top 10 mostly unjudged, condensed lists ...),
    # then what the comparison adds when its report is ready (queries left out of the paired tests ...)
    from rankscope.engine.coverage import DataWarning

    texts = [DataWarning.from_dict(w).text(lang) for r in done for w in r["warnings"]]
    if len(run_ids) >= 2:
        texts += _report_warnings(js.body if js.status == "done" else None, lang)
    ctx["warnings"] = list(dict.fromkeys(texts))
    html = store.request_report(db, job_id, "html", lang, key)
    ctx["report"] = {"status": html.status, "lang": lang, "baseline": base}
    if html.status in ("pending", "rendering") or not ctx["marks_ready"]:
        ctx["refresh"] = 2
    for r in done:
        cells = []
        for m in metrics:
            v = r["means"].get(m)
            rating = rate(m, v, lang) if v is not None else None
            cells.append({"value": v, "level": rating.level if rating else None,
                          "level_name": rating.level_name if rating else None, "mark": marks.get(
                (names[r["run_id"]], m), ""), "title": rating.level_name if rating else m})
        judged = r.get("judged") or {}
        ctx["table"].append({"run_id": r["run_id"], "name": names[r["run_id"]], "cells": cells,
                             "queries": r["queries"] or {}, "judged": judged.get(f"judged@{judged.get('k', 10)}"),
                             "judged_warn": bool(judged.get("mostly_unjudged") or judged.get("nothing_judged"))})
    ctx["condensed"] = job.params.get("unjudged") == "condense"
    best_of = _best(metrics, [r["means"] for r in done])
    for row in ctx["table"]:
        for m, cell in zip(metrics, row["cells"]):
            cell["best"] = len(done) > 1 and cell["value"] is not None and cell["value"] == best_of.get(m)
    ctx["sig_legend"] = sig_legend(lang)
    ctx["chart"] = bar_chart(metrics, [(names[r["run_id"]], [r["means"].get(m) for m in metrics]) for r in done])
    grid: dict[str, dict[int, dict[str, Any]]] = {}
    for run_id, qid, sc, __ in scores:
        grid.setdefault(qid, {})[run_id] = sc
    ctx["per_query_cols"] = [(rid, names[rid], m) for m in metrics for rid in run_ids]
    ordered = sorted(grid)
    ctx["more_rows"] = max(len(ordered) - MAX_ROWS, 0)
    ctx["per_query"] = [(q, [grid[q].get(rid, {}).get(m) for rid, __, m in ctx["per_query_cols"]])
                        for q in ordered[:MAX_ROWS]]
    return ctx


def sig_legend(lang: str) -> str:
    """The reports' legend of the significance marks (the dashboard uses the same test and marks)."""
    from rankscope.interpret.i18n import setting_text

    return _("† significantly better than the baseline, ‡ significantly worse ({test}, {correction}, α = {alpha}); "
             "bold: best value per metric.", test=setting_text("test", "t", lang), alpha=0.05,
             correction=setting_text("correction", "holm", lang)).text(lang)


def _best(metrics: list[str], means: list[dict[str, Any]]) -> dict[str, float]:
    """The best mean per metric (the highest, or the lowest where lower is better)."""
    from rankscope.measures import parse_metrics

    out = {}
    for label, m in parse_metrics(metrics):
        vals = [v for row in means if (v := row.get(label)) is not None]
        if vals:
            out[label] = max(vals) if m.spec.higher_is_better else min(vals)
    return out


def _ranking(run: Any, qid: str) -> list[tuple[str, float]]:
    """The ranked (doc, score) list of one query, ordered as trec_eval ranks (score desc, doc id desc)."""
    rows = run.to_dict().get(qid, {})
    by_doc_desc = sorted(rows.items(), key=lambda kv: kv[0], reverse=True)
    return sorted(by_doc_desc, key=lambda kv: -kv[1])  # stable: ties keep doc id descending


def drilldown(db: Database, job_id: str, query_id: str, depth: int = 20) -> dict[str, Any]:
    from rankscope.service.analysis import system_names

    with db.read() as s:
        job = store.get_job(s, job_id)
        ts = store.get_testset(s, job.test_set_id)
        qrels = store.load_qrels(ts)
        text = store.query_text(s, ts.id, query_id)
        recs = [rec for __, rec in store.job_runs(s, job_id)]
        scores = store.query_scores(s, job_id, query_id)
        rel_level = int(job.params.get("relevance_level", 1))
        names = system_names([(r.id, r.name) for r in recs])
        runs = [(rec.id, store.load_run(rec)) for rec in recs]
        judged = dict(qrels.to_dict().get(query_id, {}))
        rankings = {rid: _ranking(run, query_id) for rid, run in runs}
        texts = store.documents(s, ts.id, {d for r in rankings.values() for d, __ in r[:depth]})
    systems = []
    for rid, __ in runs:
        ranked = rankings[rid]
        rank_of = {d: i + 1 for i, (d, __) in enumerate(ranked)}
        systems.append({
            "name": names[rid], "scores": scores.get(rid, {}), "rank_of": rank_of,
            "ranking": [(i + 1, d, sc, judged.get(d), (texts.get(d) or "")[:240]) for i, (d, sc) in
                        enumerate(ranked[:depth])],
        })
    judged_sorted = sorted(judged.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"job_id": job_id, "job_name": job.name, "qid": query_id, "text": text, "systems": systems,
            "judged": judged_sorted, "rel_level": rel_level}


def run_compare_view(db: Database, test_set_id: int | None, chosen: list[int], baseline: int | None,
                     metrics_text: str, lang: str = "en") -> dict[str, Any]:
    from rankscope.report.tables import MARKS
    from rankscope.service.analysis import json_safe, load_inputs, run_comparison

    with db.read() as s:
        testsets = store.list_testsets(s)
        if test_set_id is None and testsets:
            test_set_id = testsets[0].id
        runs = store.list_runs(s, test_set_id) if test_set_id is not None else []
    ctx: dict[str, Any] = {"testsets": testsets, "test_set_id": test_set_id, "runs": runs, "chosen": chosen,
                           "baseline": baseline, "metrics_text": metrics_text, "comparison": None, "marks": {},
                           "warnings": None, "sig_legend": ""}
    if test_set_id is not None and len(chosen) >= 2:
        metrics = store.validate_metrics(metrics_text.replace(",", " ").split())
        qrels, loaded, names = load_inputs(db, test_set_id, chosen)
        base = baseline if baseline in loaded else chosen[0]
        comp = run_comparison(qrels, loaded, names, metrics, {}, base, "t", 0.05, "holm")
        ctx["comparison"] = json_safe(comp.to_dict())
        ctx["warnings"] = {lg: [w.text(lg) for w in comp.warnings] for lg in ("en", "zh")}
        ctx["baseline"] = base
        ctx["sig_legend"] = sig_legend(lang)
        for p in comp.pairs:
            if p.significant:
                m = comp.measures[comp.labels.index(p.metric)]
                better = p.diff > 0 if m.spec.higher_is_better else p.diff < 0
                other = p.b if p.a == names[base] else p.a
                ctx["marks"][(other, p.metric)] = MARKS["better" if better == (p.a == names[base]) else "worse"]
    return ctx


def delete_view(db: Database, kind: str, key: Any) -> dict[str, Any]:
    """What a delete removes with the object (shown on the confirmation page)."""
    with db.read() as s:
        if kind == "testset":
            ts = store.get_testset(s, int(key))
            return {"kind": kind, "key": key, "name": ts.name, "dependents": store.testset_dependents(s, ts.id),
                    "back": f"/testsets/{ts.id}"}
        if kind == "run":
            rec = store.get_run(s, int(key))
            return {"kind": kind, "key": key, "name": rec.name, "dependents": store.run_dependents(s, rec.id),
                    "back": f"/testsets/{rec.test_set_id}"}
        job = store.get_job(s, str(key))
        return {"kind": "evaluation", "key": key, "name": job.name or job.id[:8], "dependents": {},
                "back": f"/evaluations/{job.id}"}
