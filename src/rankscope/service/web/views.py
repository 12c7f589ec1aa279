"""What the dashboard pages show, computed from the store (no HTML here, except a small SVG chart)."""

from __future__ import annotations

import math
from typing import Any
from xml.sax.saxutils import escape

from sqlalchemy import select

from rankscope.errors import RankscopeError
from rankscope.service.db import Database, Document, Query, QueryScore, RunRecord, TestSet
from rankscope.service.store import get_job, get_testset, job_progress, job_runs, load_qrels, load_run

__all__ = ["evaluation_view", "drilldown", "run_compare_view", "bar_chart"]

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
        for j, (_, values) in enumerate(series):
            v = values[i]
            if v is None or not math.isfinite(v):
                continue
            h = plot_h * max(0.0, min(1.0, v))
            parts.append(f'<rect x="{gx + j * bar_w:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w * 0.9:.1f}" '
                         f'height="{h:.1f}" fill="{PALETTE[j % len(PALETTE)]}"><title>{escape(series[j][0])} '
                         f'{escape(m)} = {v:.4f}</title></rect>')
        parts.append(f'<text x="{left + (i + 0.5) * group_w:.1f}" y="{top + plot_h + 16}" font-size="11" '
                     f'text-anchor="middle">{escape(m)}</text>')
    for j, (name, _) in enumerate(series):
        x = left + j * 150
        parts.append(f'<rect x="{x}" y="{height - 22}" width="10" height="10" fill="{PALETTE[j % len(PALETTE)]}"/>'
                     f'<text x="{x + 14}" y="{height - 13}" font-size="11">{escape(name[:22])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def evaluation_view(db: Database, job_id: str, baseline: int | None, lang: str) -> dict[str, Any]:
    from rankscope.interpret.bands import rate
    from rankscope.service.analysis import load_inputs, run_comparison, system_names

    with db.read() as s:
        job = get_job(s, job_id)
        pairs = job_runs(s, job_id)
        progress = job_progress(s, job)
        info: dict[str, Any] = {"id": job.id, "name": job.name, "status": job.status, "error": job.error,
                "test_set_id": job.test_set_id, "progress": progress,
                "runs": [{"run_id": rec.id, "means": jr.means} for jr, rec in pairs]}
        names = system_names([(rec.id, rec.name) for _, rec in pairs])
        metrics: list[str] = list(job.params.get("metrics", []))
        rows = s.execute(select(QueryScore.query_id, QueryScore.run_id, QueryScore.scores)
                         .where(QueryScore.job_id == job_id).order_by(QueryScore.query_id).limit(
                             MAX_ROWS * max(len(pairs), 1))).all()
        params = dict(job.params)
    pct = 100.0 * (progress["finished"] + progress["failed"]) / progress["total"] if progress["total"] else 0.0
    ctx: dict[str, Any] = {"job": info, "names": names, "metrics": metrics, "table": [], "pct": min(pct, 100.0),
                           "baseline": None, "chart": None, "per_query": [], "warnings": [],
                           "refresh": 2 if info["status"] in ("queued", "running") else None}
    done: list[dict[str, Any]] = [r for r in info["runs"] if r["means"] is not None]
    if info["status"] != "done" or not done:
        return ctx
    run_ids = [r["run_id"] for r in done]
    base: int = baseline if baseline is not None and baseline in run_ids else run_ids[0]
    ctx["baseline"] = base
    marks: dict[tuple[str, str], str] = {}
    if len(run_ids) >= 2:
        try:
            qrels, runs, nm = load_inputs(db, info["test_set_id"], run_ids)
            comp = run_comparison(qrels, runs, nm, metrics, params, base, "t", 0.05, "holm")
            ctx["warnings"] = [w.text(lang) for w in comp.warnings]
            for p in comp.pairs:
                if p.a == names[base]:
                    better = p.diff > 0 if p.diff != 0 else None
                    arrow = "" if better is None else ("▲" if better else "▼")
                    marks[(p.b, p.metric)] = arrow + ("*" if p.significant else "")
        except RankscopeError:
            marks = {}
    for r in done:
        cells = []
        for m in metrics:
            v = r["means"].get(m)
            level = None
            if v is not None:
                try:
                    rating = rate(m, v, lang)
                    level = rating.level if rating else None
                except RankscopeError:
                    level = None
            cells.append({"value": v, "level": level, "mark": marks.get((names[r["run_id"]], m), ""),
                          "title": m})
        ctx["table"].append({"run_id": r["run_id"], "name": names[r["run_id"]], "cells": cells})
    ctx["chart"] = bar_chart(metrics, [(names[r["run_id"]], [r["means"].get(m) for m in metrics]) for r in done])
    first = metrics[0] if metrics else ""
    grid: dict[str, dict[int, float | None]] = {}
    for qid, run_id, scores in rows:
        grid.setdefault(qid, {})[run_id] = scores.get(first)
    ctx["per_query"] = [(q, [vals.get(rid) for rid in run_ids]) for q, vals in list(grid.items())[:MAX_ROWS]]
    info["runs"] = done
    return ctx


def _ranking(run: Any, qid: str) -> list[tuple[str, float]]:
    """The ranked (doc, score) list of one query, ordered as trec_eval ranks (score desc, doc id desc)."""
    rows = run.to_dict().get(qid, {})
    by_doc_desc = sorted(rows.items(), key=lambda kv: kv[0], reverse=True)
    return sorted(by_doc_desc, key=lambda kv: -kv[1])  # stable: ties keep doc id descending


def drilldown(db: Database, job_id: str, query_id: str, depth: int = 20) -> dict[str, Any]:
    with db.read() as s:
        job = get_job(s, job_id)
        ts = get_testset(s, job.test_set_id)
        qrels = load_qrels(ts)
        text = s.scalars(select(Query.text).where(Query.test_set_id == ts.id, Query.query_id == query_id)).first()
        recs = [rec for _, rec in job_runs(s, job_id)]
        scores = {r.run_id: r.scores for r in s.scalars(
            select(QueryScore).where(QueryScore.job_id == job_id, QueryScore.query_id == query_id))}
        rel_level = int(job.params.get("relevance_level", 1))
        from rankscope.service.analysis import system_names

        names = system_names([(r.id, r.name) for r in recs])
        runs = [(rec.id, load_run(rec)) for rec in recs]
        judged = dict(qrels.to_dict().get(query_id, {}))
        rankings = {rid: _ranking(run, query_id) for rid, run in runs}
        wanted = {d for r in rankings.values() for d, _ in r[:depth]}
        texts = dict(s.execute(select(Document.doc_id, Document.text).where(
            Document.test_set_id == ts.id, Document.doc_id.in_(wanted))).all()) if wanted else {}
    systems = []
    for rid, _ in runs:
        ranked = rankings[rid]
        rank_of = {d: i + 1 for i, (d, _) in enumerate(ranked)}
        systems.append({
            "name": names[rid], "scores": scores.get(rid, {}), "rank_of": rank_of,
            "ranking": [(i + 1, d, sc, judged.get(d), (texts.get(d) or "")[:240]) for i, (d, sc) in
                        enumerate(ranked[:depth])],
        })
    judged_sorted = sorted(judged.items(), key=lambda kv: (-kv[1], kv[0]))
    return {"job_id": job_id, "qid": query_id, "text": text, "systems": systems, "judged": judged_sorted,
            "rel_level": rel_level}


def run_compare_view(db: Database, test_set_id: int | None, chosen: list[int], baseline: int | None,
                     metrics_text: str) -> dict[str, Any]:
    from rankscope.service.analysis import json_safe, load_inputs, run_comparison
    from rankscope.service.store import validate_metrics

    with db.read() as s:
        testsets = list(s.scalars(select(TestSet).order_by(TestSet.id)))
        if test_set_id is None and testsets:
            test_set_id = testsets[0].id
        runs = list(s.scalars(select(RunRecord).where(RunRecord.test_set_id == test_set_id).order_by(RunRecord.id)))
    ctx: dict[str, Any] = {"testsets": testsets, "test_set_id": test_set_id, "runs": runs, "chosen": chosen,
                           "baseline": baseline, "metrics_text": metrics_text, "comparison": None, "warnings": None}
    if test_set_id is not None and len(chosen) >= 2:
        metrics = validate_metrics(metrics_text.replace(",", " ").split())
        qrels, loaded, names = load_inputs(db, test_set_id, chosen)
        base = baseline if baseline in loaded else chosen[0]
        comp = run_comparison(qrels, loaded, names, metrics, {}, base, "t", 0.05, "holm")
        ctx["comparison"] = json_safe(comp.to_dict())
        ctx["warnings"] = {lg: [w.text(lg) for w in comp.warnings] for lg in ("en", "zh")}
        ctx["baseline"] = base
    return ctx
