"""The report of one run: everything an :class:`~rankscope.engine.EvaluationResult` can tell, as a dict.

A comparison report (:mod:`rankscope.report.content`) needs two systems; this is the
report of a single one — a nightly evaluation, a live-retriever job.  It gathers,
in a JSON-ready dict read by every renderer (:mod:`rankscope.report.run_render`):

* means with their rating bands, advice, plain-language explanations, metric profiles
  and production-standard tiers (:mod:`rankscope.interpret`, the same as the comparison
  report);
* query counts and coverage warnings (judged queries absent from the run, run queries
  without judgments: never silent);
* the per-query distribution of every metric (mean, quartiles, min, max, share at 0)
  and the lowest-scoring queries;
* the first-relevant-rank distribution and the failing queries — exact from the qrels
  and the run when given, else from ranks the caller stored (``first_ranks``), else from
  an uncut ``mrr`` column;
* for live retrievers (``live=``): answered / failed queries, error counts and latency
  percentiles.

>>> from rankscope import Qrels, Run
>>> from rankscope.engine import evaluate
>>> q = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}})
>>> r = Run.from_ranked_lists({"q1": ["d1"], "q2": ["d9", "d2"]}, name="bm25")
>>> rep = build_run_report(evaluate(q, r, ["mrr", "P@1"]), qrels=q, run=r)
>>> rep["means"], rep["analysis"]["first_rank"]["bm25"]["median"], rep["analysis"]["failing"]["bm25"]
({'mrr': 0.75, 'P@1': 0.5}, 1, ['q2'])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rankscope.engine.policies import Policies
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.interpret.analysis import failing_queries, ranks_from_reciprocal, summarize_first_ranks
from rankscope.interpret.bands import metric_profile
from rankscope.interpret.explain import display_name
from rankscope.interpret.i18n import check_lang
from rankscope.report.content import align, evaluated_first_ranks, failing_k, metric_curves
from rankscope.report.verdict import scenario_section, system_verdict

__all__ = ["build_run_report", "RUN_REPORT_SCHEMA", "latency_summary"]

RUN_REPORT_SCHEMA = "rankscope.report.run"
RUN_REPORT_SCHEMA_VERSION = 1


def _first_ranks(result: Any, qrels: Any, run: Any, given: Mapping[str, int] | None) -> tuple[np.ndarray | None, str]:
    ids = np.asarray(result.per_query.query_ids, dtype=object)
    held = getattr(result, "diagnostics", None)
    if held is not None and "first_rel_rank" in held:  # computed with the metrics, in the same pass
        return align(held.query_ids, held["first_rel_rank"].astype(np.int64), ids), "exact"
    if qrels is not None and run is not None:
        name = str(result.run_name)
        return evaluated_first_ranks(qrels, {name: run}, Policies.coerce(result.policies), ids)[name], "exact"
    if given is not None:
        return np.asarray([int(given.get(str(q), 0) or 0) for q in ids], dtype=np.int64), "stored"
    for j, m in enumerate(result.measures):
        if m.name == "mrr" and m.cutoff is None and not m.params:
            return ranks_from_reciprocal(result.per_query.values[:, j]), "reciprocal_rank"
    return None, "unavailable"


def _distribution(values: np.ndarray) -> dict[str, float | int | None]:
    v = values[np.isfinite(values)]
    if not len(v):
        return {"n": 0, "mean": None, "median": None, "q1": None, "q3": None, "min": None, "max": None, "zero": 0}
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    return {"n": len(v), "mean": float(v.mean()), "median": float(med), "q1": float(q1), "q3": float(q3),
            "min": float(v.min()), "max": float(v.max()), "zero": int((v == 0).sum())}


def latency_summary(latencies_ms: Sequence[float]) -> dict[str, float | int | None]:
    """Count, mean and percentiles (p50, p90, p95, p99, max) of latencies in milliseconds.

    >>> latency_summary([10.0, 20.0, 30.0, 40.0])["p50"]
    25.0
    """
    v = np.asarray([x for x in latencies_ms if x is not None], dtype=np.float64)
    if not len(v):
        return {"n": 0, "mean": None, "p50": None, "p90": None, "p95": None, "p99": None, "max": None}
    p50, p90, p95, p99 = (float(x) for x in np.percentile(v, [50, 90, 95, 99]))
    return {"n": len(v), "mean": float(v.mean()), "p50": p50, "p90": p90, "p95": p95, "p99": p99,
            "max": float(v.max())}


def _live_section(live: Mapping[str, Any]) -> dict[str, Any]:
    errors: dict[str, str] = {str(k): str(v) for k, v in (live.get("errors") or {}).items()}
    kinds = Counter(e.split(":", 1)[-1].strip() if e.startswith(("HttpRetrieverError", "BadAnswer")) else e
                    for e in errors.values())
    return {
        "asked": int(live.get("asked", 0)),
        "answered": int(live.get("answered", 0)),
        "failed": len(errors),
        "errors": dict(sorted(errors.items())[:200]),
        "error_kinds": [{"error": k, "queries": n} for k, n in kinds.most_common(20)],
        "latency_ms": latency_summary(list(live.get("latencies_ms") or [])),
        "url": live.get("url"),
    }


def build_run_report(
    result: Any,
    *,
    qrels: Any = None,
    run: Any = None,
    first_ranks: Mapping[str, int] | None = None,
    lang: str = "en",
    live: Mapping[str, Any] | None = None,
    top_n: int = 10,
    kmax: int = 100,
    curves: bool = False,
    scenario: str | None = None,
    per_query: bool = True,
) -> dict[str, Any]:
    """Gather the report of one :class:`~rankscope.engine.EvaluationResult` (see module doc).

    ``per_query=False`` leaves out what is listed per query (``query_ids``, ``per_query``,
    ``first_ranks``, ``worst``): the summary a command line prints, without Python lists of a
    million queries' values.

    ``scenario`` (a :func:`~rankscope.interpret.presets.scenario_names` key) adds its recommended
    metrics and benchmark figures, checked against the means.

    ``qrels`` and ``run`` (the inputs of the result) make first-relevant ranks exact and allow
    ``curves=True`` (metric@k for k = 1..``kmax``); ``first_ranks`` are ranks stored earlier
    (``{query_id: rank}``, 0 = none found); ``live`` holds ``asked``, ``answered``, ``errors``
    (``{query_id: message}``), ``latencies_ms`` and ``url`` of a live-retriever evaluation.
    """
    from rankscope._version import __version__

    check_lang(lang)
    if isinstance(top_n, bool) or not isinstance(top_n, int) or top_n < 1:
        raise InvalidParameterError(_("top_n must be a positive integer, got {value!r}", value=top_n))
    name = str(result.run_name)
    labels = list(result.labels)
    measures = list(result.measures)
    ids = np.asarray(result.per_query.query_ids, dtype=object)
    values = np.asarray(result.per_query.values, dtype=np.float64)
    means = result.mean()
    n = len(ids)

    ceilings = dict(getattr(result, "ceilings", None) or {})  # what a perfect ranking reaches: collection-aware
    verdict = system_verdict(means, measures, ceilings, values, n=n, lang=lang)

    ranks, source = _first_ranks(result, qrels, run, first_ranks)
    k_fail = failing_k(measures)
    worst = []
    if n and labels and per_query:
        order = np.lexsort((ids.astype(str), values[:, 0]))[:top_n]
        worst = [{"query_id": str(ids[i]), "value": float(values[i, 0])} for i in order]
    counts = result.queries
    report: dict[str, Any] = {
        "schema": RUN_REPORT_SCHEMA,
        "schema_version": RUN_REPORT_SCHEMA_VERSION,
        "rankscope_version": __version__,
        "lang": lang,
        "run": name,
        "systems": [name],
        "reference": name,
        "metrics": labels,
        "display_names": {label: display_name(label, m) for label, m in zip(labels, measures)},
        "higher_is_better": {label: m.spec.higher_is_better for label, m in zip(labels, measures)},
        "n_queries": n,
        "policies": dict(result.policies or {}),
        "queries": {"evaluated": counts.evaluated, "missing_from_run": counts.missing_from_run,
                    "not_in_qrels": counts.not_in_qrels},
        "judged": {} if getattr(result, "judged", None) is None else {name: result.judged.to_dict()},
        # the query counts above are said in the coverage lines; the warnings here (queries missing from the run
        # too: they change what is measured, and compare and check warn about them)
        "warnings": [w.text(lang) for w in result.warnings() if w.kind != "not_in_qrels"],
        "means": means,
        "ceilings": ceilings,
        "ratings": verdict["ratings"],
        "explanations": verdict["explanations"],
        "profiles": {label: metric_profile(m, lang) for label, m in zip(labels, measures)},
        "standards": verdict["standards"],
        "scenario": scenario_section(scenario, {name: means}, lang),
        "notices": [nt.to_dict(lang) for nt in getattr(result, "notices", ())],
        "distribution": {label: _distribution(values[:, j]) for j, label in enumerate(labels)},
        "worst": worst,
        "analysis": {
            "first_rank_source": source,
            "first_rank": {} if ranks is None else {name: summarize_first_ranks(ranks).to_dict()},
            "failing_k": k_fail,
            "failing": {} if ranks is None else {name: failing_queries(ids, ranks, k_fail)},
        },
        "live": None if live is None else _live_section(live),
        "query_ids": [str(q) for q in ids] if per_query else [],
        "per_query": {name: {label: values[:, j].tolist() for j, label in enumerate(labels)}} if per_query else {},
        "first_ranks": {} if ranks is None or not per_query else {name: ranks.tolist()},
        "curves": None,
    }
    if curves and qrels is not None and run is not None and n:
        report["curves"] = metric_curves(qrels, {name: run}, Policies.coerce(result.policies), kmax, ids)
    return report
