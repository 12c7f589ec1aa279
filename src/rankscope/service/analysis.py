"""Comparisons, reports and CI checks over stored runs (``rankscope.compare``, ``report``, ``gate``)."""

from __future__ import annotations

import math
from typing import Any

from rankscope.data import Qrels, Run
from rankscope.errors import InvalidParameterError
from rankscope.service.db import Database
from rankscope.service.store import get_job, get_run, get_testset, job_runs, load_qrels, load_run, per_query

__all__ = ["json_safe", "system_names", "load_inputs", "job_inputs", "run_comparison", "render_job_report",
           "stored_results"]

REPORT_FORMATS = {"html": ("html", "text/html", "html"), "markdown": ("markdown", "text/markdown", "md"),
                  "json": ("json", "application/json", "json"), "latex": ("latex", "application/x-tex", "tex")}


def json_safe(obj: Any) -> Any:
    """Replace NaN/inf by None, recursively (JSON has no such numbers).

    >>> json_safe({"a": [1.0, float("nan")], "b": (2, float("inf"))})
    {'a': [1.0, None], 'b': [2, None]}
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def system_names(records: list[tuple[int, str]]) -> dict[int, str]:
    """Display names of runs, unique: ``name``, or ``name #id`` when two runs share a name.

    >>> system_names([(1, "bm25"), (2, "dense"), (3, "bm25")])
    {1: 'bm25 #1', 2: 'dense', 3: 'bm25 #3'}
    """
    counts: dict[str, int] = {}
    for _, name in records:
        counts[name] = counts.get(name, 0) + 1
    return {rid: (name if counts[name] == 1 else f"{name} #{rid}") for rid, name in records}


def load_inputs(db: Database, test_set_id: int, run_ids: list[int]) -> tuple[Qrels, dict[int, Run], dict[int, str]]:
    """Qrels of a test set and its runs (renamed to unique display names), keyed by run id."""
    with db.read() as s:
        qrels = load_qrels(get_testset(s, test_set_id, "test_set_id"))
        recs = [get_run(s, rid, "run_ids") for rid in dict.fromkeys(run_ids)]
    for rec in recs:
        if rec.test_set_id != test_set_id:
            raise InvalidParameterError(f"run {rec.id} belongs to test set {rec.test_set_id}, not {test_set_id}")
    names = system_names([(r.id, r.name) for r in recs])
    runs = {}
    for rec in recs:
        run = load_run(rec)
        run.name = names[rec.id]
        runs[rec.id] = run
    return qrels, runs, names


def job_inputs(db: Database, job_id: str) -> tuple[dict[str, Any], int, list[int]]:
    """Policies, test set and run ids of a finished evaluation."""
    with db.read() as s:
        job = get_job(s, job_id)
        if job.status != "done":
            raise InvalidParameterError(f"evaluation {job_id} is {job.status}, not done yet")
        return dict(job.params), job.test_set_id, [rec.id for _, rec in job_runs(s, job_id)]


def _baseline(baseline_run_id: int | None, names: dict[int, str]) -> str | None:
    if baseline_run_id is None:
        return None
    if baseline_run_id not in names:
        raise InvalidParameterError(f"baseline_run_id {baseline_run_id} is not one of the compared runs")
    return names[baseline_run_id]


def run_comparison(qrels: Qrels, runs: dict[int, Run], names: dict[int, str], metrics: list[str],
                   policies: dict[str, Any], baseline_run_id: int | None, test: str, alpha: float,
                   correction: str | None) -> Any:
    from rankscope.comparison import compare
    from rankscope.engine import Policies

    pol = Policies.of("compare", **{k: v for k, v in policies.items() if k in Policies.__dataclass_fields__})
    return compare(qrels, list(runs.values()), metrics, test=test, alpha=alpha, correction=correction,
                   baseline=_baseline(baseline_run_id, names), relevance_level=pol.relevance_level,
                   missing=pol.missing, depth=pol.depth, score_precision=pol.score_precision)


def stored_results(db: Database, job_id: str, names: dict[int, str]) -> dict[str, Any]:
    """Each run's :class:`~rankscope.engine.EvaluationResult` as the job stored it: per-query scores,
    query counts and policies, read back without evaluating anything again."""
    import dataclasses

    import numpy as np

    from rankscope.engine import EvaluationResult, PerQueryScores, Policies
    from rankscope.engine.prepare import PolicyCounts
    from rankscope.measures import parse_metrics

    counted = {f.name for f in dataclasses.fields(PolicyCounts)}
    out: dict[str, Any] = {}
    with db.read() as s:
        params = dict(get_job(s, job_id).params)
        pairs = parse_metrics(params["metrics"])
        labels, measures = tuple(lb for lb, _ in pairs), tuple(m for _, m in pairs)
        policies = Policies(**{k: v for k, v in params.items() if k in Policies.__dataclass_fields__})
        for jr, rec in job_runs(s, job_id):
            rows = sorted(per_query(s, job_id, rec.id), key=lambda r: r.query_id)  # the engine's (code point) order
            ids = np.array([r.query_id for r in rows], dtype=object)
            values = np.array([[np.nan if r.scores.get(k) is None else r.scores[k] for k in labels] for r in rows],
                              dtype=np.float64).reshape(len(rows), len(labels))
            queries = PolicyCounts(**{k: v for k, v in (jr.queries or {}).items() if k in counted})
            name = names[rec.id]
            out[name] = EvaluationResult(name, labels, measures, PerQueryScores(ids, labels, values, measures),
                                         queries, policies)
    return out


def render_job_report(db: Database, job_id: str, fmt: str, lang: str, baseline_run_id: int | None) -> str:
    """The report of a finished evaluation in one of :data:`REPORT_FORMATS`."""
    from rankscope.report import build_report, render_report

    if fmt not in REPORT_FORMATS:
        raise InvalidParameterError(f"format must be one of {', '.join(REPORT_FORMATS)}, got {fmt!r}")
    from rankscope.comparison import compare

    _, test_set_id, run_ids = job_inputs(db, job_id)
    qrels, runs, names = load_inputs(db, test_set_id, run_ids)  # the runs feed the report's metric@k curves
    # the per-query scores the job stored: the metrics are not evaluated again
    comparison = compare(None, stored_results(db, job_id, names), test="t", alpha=0.05, correction="holm",
                         baseline=_baseline(baseline_run_id, names))
    kind = REPORT_FORMATS[fmt][0]
    report = build_report(comparison, qrels=qrels, runs=list(runs.values()), lang=lang,
                          curves=kind in ("html", "json"))
    return str(render_report(report, kind))
