"""Comparisons and CI checks over stored runs (``rankscope.compare``, ``gate``); reports: :mod:`.reports`."""

from __future__ import annotations

import math
from typing import Any

from rankscope.data import Qrels, Run
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.service.db import Database
from rankscope.service.store import get_run, get_testset, load_qrels, load_run

__all__ = ["json_safe", "system_names", "load_inputs", "run_comparison"]

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
    for __, name in records:
        counts[name] = counts.get(name, 0) + 1
    return {rid: (name if counts[name] == 1 else f"{name} #{rid}") for rid, name in records}


def load_inputs(db: Database, test_set_id: int, run_ids: list[int]) -> tuple[Qrels, dict[int, Run], dict[int, str]]:
    """Qrels of a test set and its runs (renamed to unique display names), keyed by run id."""
    with db.read() as s:
        qrels = load_qrels(get_testset(s, test_set_id, "test_set_id"))
        recs = [get_run(s, rid, "run_ids") for rid in dict.fromkeys(run_ids)]
    for rec in recs:
        if rec.test_set_id != test_set_id:
            raise InvalidParameterError(_("run {run} belongs to test set {belongs}, not {test_set}", run=rec.id,
                                          belongs=rec.test_set_id, test_set=test_set_id))
    names = system_names([(r.id, r.name) for r in recs])
    runs = {}
    for rec in recs:
        run = load_run(rec)
        run.name = names[rec.id]
        runs[rec.id] = run
    return qrels, runs, names


def run_comparison(qrels: Qrels, runs: dict[int, Run], names: dict[int, str], metrics: list[str],
                   policies: dict[str, Any], baseline_run_id: int | None, test: str, alpha: float,
                   correction: str | None) -> Any:
    from rankscope.comparison import compare
    from rankscope.engine import Policies

    baseline = None
    if baseline_run_id is not None:
        if baseline_run_id not in names:
            raise InvalidParameterError(_("baseline_run_id {value} is not one of the compared runs",
                                          value=baseline_run_id))
        baseline = names[baseline_run_id]
    pol = Policies.of("compare", **{k: v for k, v in policies.items() if k in Policies.__dataclass_fields__})
    return compare(qrels, list(runs.values()), metrics, test=test, alpha=alpha, correction=correction,
                   baseline=baseline, relevance_level=pol.relevance_level,
                   missing=pol.missing, depth=pol.depth, score_precision=pol.score_precision, unjudged=pol.unjudged)
