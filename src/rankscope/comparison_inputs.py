"""What :func:`rankscope.compare` compares: named runs scored once, aligned on shared queries, and what they lack.

- :func:`named_runs` names each run (dict key, or ``Run.name``) and remembers a run's
  own name (its TREC tag) where it differs from the name it is compared under;
- :func:`evaluate_all` scores every run against the qrels prepared once (or takes
  already computed :class:`~rankscope.engine.EvaluationResult` values);
- :func:`aligned_scores` lines the per-query values up on the queries all runs share;
- :func:`ceilings` is the mean a perfect ranking reaches on those queries (Recall@5
  is below 1 when a query has more than 5 relevant documents, P@5 when it has fewer
  than 5; every metric is 0 on a query without a relevant document);
- :func:`without_relevant` lists the queries with no document judged relevant.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from rankscope.engine.result import EvaluationResult, PerQueryScores
from rankscope.errors import InvalidParameterError, Items, NoOverlapError, RankscopeError
from rankscope.i18n import _
from rankscope.measures.base import Measure

__all__ = ["named_runs", "evaluate_all", "aligned_scores", "ceilings", "without_relevant"]

_PARALLEL_ROWS = 200_000  # below this, thread start-up costs more than it saves


def named_runs(runs: Mapping[str, Any] | Sequence[Any]) -> tuple[list[tuple[str, Any]], dict[str, str]]:
    """``[(name, run or result)]`` and ``{name: tag}`` for runs whose own name differs from their name here."""
    from rankscope.data import Run
    from rankscope.io.convert import as_run

    def conv(r: Any, name: str | None) -> Any:
        if isinstance(r, EvaluationResult):
            return r
        return as_run(r, name=name)

    tags: dict[str, str] = {}
    if isinstance(runs, Mapping):
        items = []
        for k, v in runs.items():
            if isinstance(v, Run) and v.name not in (str(k), "run", ""):
                tags[str(k)] = v.name
            items.append((str(k), conv(v, str(k))))
    elif isinstance(runs, Iterable) and not isinstance(runs, (str, bytes)):
        items = []
        for i, r in enumerate(runs):
            run = conv(r, None)
            items.append((getattr(run, "name", None) or getattr(run, "run_name", None) or f"run{i + 1}", run))
    else:
        raise RankscopeError(_("runs must be a dict of name -> run or a list of runs, got {type}",
                               type=type(runs).__name__))
    names = [n for n, __ in items]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidParameterError(_("two runs share the name {name!r}; pass a dict {{name: run}} to name them",
                                      name=dup[0]))
    if len(items) < 2:
        raise InvalidParameterError(_("compare needs at least 2 runs, got {n}", n=len(items)))
    return items, tags


def evaluate_all(
    qrels: Any, items: list[tuple[str, Any]], metrics: Iterable[str | Measure] | str | None, **options: Any
) -> tuple[dict[str, EvaluationResult], tuple[str, ...], tuple[Measure, ...], Any]:
    """Score every run (qrels prepared once), or take already computed results; also returns the Evaluator (or None)."""
    from rankscope.engine.evaluator import Evaluator

    done = [isinstance(r, EvaluationResult) for __, r in items]
    if any(done) and not all(done):
        return _mixed(qrels, items, metrics, options)
    if all(done):
        from rankscope.engine.result import metric_column

        first: EvaluationResult = items[0][1]
        if metrics is None:
            pairs = [(lb, m) for lb, m in zip(first.labels, first.measures) if all(m in r for __, r in items)]
        else:
            from rankscope.measures.parse import parse_metrics

            pairs = [(lb, m) for lb, m in parse_metrics(metrics)]
        labels, measures = tuple(lb for lb, __ in pairs), tuple(m for __, m in pairs)
        if not labels:
            raise InvalidParameterError(_("the results share no metric"))
        results = {}
        for name, r in items:
            lacking = [lb for lb, m in pairs if m not in r]  # any spelling of a metric finds it
            if lacking:
                holds = Items(r.labels)
                raise InvalidParameterError(_("the result of {name!r} has no metric {metric!r} (it holds: {holds})",
                                              name=name, metric=lacking[0], holds=holds))
            cols = [metric_column(m, r.labels, r.measures) for m in measures]
            pq = PerQueryScores(r.per_query.query_ids, labels, r.per_query.values[:, cols], measures)
            ceil = {lb: r.ceilings[r.labels[c]] for lb, c in zip(labels, cols) if r.labels[c] in r.ceilings}
            results[name] = replace(r, run_name=name, labels=labels, measures=measures, per_query=pq, ceilings=ceil)
        return results, labels, measures, None
    ev = Evaluator(qrels, metrics, diagnostics=True, **options)  # diagnostics: first-relevant ranks for reports
    return _score_runs(ev, items), ev.labels, ev.measures, ev


def _mixed(
    qrels: Any, items: list[tuple[str, Any]], metrics: Iterable[str | Measure] | str | None, options: dict[str, Any]
) -> tuple[dict[str, EvaluationResult], tuple[str, ...], tuple[Measure, ...], Any]:
    """Runs and results given together (a saved evaluation against today's run): the runs are scored as the results
    were — their metrics, their policies — against ``qrels``, which must be the judgments the results were scored on
    (what a perfect ranking reaches on the results' queries is checked)."""
    from rankscope.engine.evaluator import Evaluator

    saved = [(n, r) for n, r in items if isinstance(r, EvaluationResult)]
    if qrels is None:
        runs = Items(tuple(n for n, r in items if not isinstance(r, EvaluationResult)))
        raise InvalidParameterError(_("the runs {runs} need the qrels to be scored against the saved evaluations",
                                      runs=runs))
    policies = {n: r.policies.to_dict() for n, r in saved}
    first_name, first = saved[0]
    for n, p in policies.items():
        if p != policies[first_name]:
            raise InvalidParameterError(_("the saved evaluations {first!r} and {other!r} were scored with other "
                                          "policies ({first_policies} vs {other_policies})", first=first_name, other=n,
                                          first_policies=policies[first_name], other_policies=p))
    given = {k: v for k, v in options.items() if k in policies[first_name]}
    differ = {k: (v, policies[first_name][k]) for k, v in given.items() if v != policies[first_name][k]}
    if differ:
        shown = Items(tuple(_("{setting}={theirs!r} (not {ours!r})", setting=k, theirs=theirs, ours=ours)
                            for k, (ours, theirs) in differ.items()))
        fix = Items(tuple(_("{setting}={theirs!r} (--{option} {theirs})", setting=k, theirs=theirs,
                            option=k.replace("_", "-"))
                          for k, (__, theirs) in differ.items()))
        raise InvalidParameterError(_("{name!r} was evaluated with {shown}; score the runs the same way: {fix}",
                                      name=first_name, shown=shown, fix=fix))
    if metrics is None:
        metrics = [lb for lb, m in zip(first.labels, first.measures) if all(m in r for __, r in saved)]
    extra = {k: v for k, v in options.items() if k not in policies[first_name]}
    ev = Evaluator(qrels, metrics, diagnostics=True, policies=first.policies, **extra)
    results: dict[str, EvaluationResult] = {}
    for name, r in items:
        results[name] = r if isinstance(r, EvaluationResult) else ev.evaluate(r, name=name)
    for name, r in saved:
        reach = ev.ceilings(r.per_query.query_ids)
        for label, value in reach.items():
            j = ev.labels.index(label)
            theirs = r.ceilings.get(r.labels[r.measures.index(ev.measures[j])]) if ev.measures[j] in r.measures \
                else None
            if theirs is not None and abs(theirs - value) > 1e-9:
                raise InvalidParameterError(_("{name!r} was scored against other judgments: a perfect ranking "
                                              "reaches {label} {theirs:.4f} on its queries with the judgments it "
                                              "was scored on, {value:.4f} with these qrels", name=name, label=label,
                                              theirs=theirs, value=value))
    done, labels, measures, __ = evaluate_all(None, list(results.items()), ev.labels, **options)
    return done, labels, measures, ev


def _score_runs(ev: Any, items: list[tuple[str, Any]]) -> dict[str, EvaluationResult]:
    """Score the runs, large ones on parallel threads (the join and the sorts release the GIL).

    The result is the same as scoring them one after the other, in the given order.
    """
    import os

    big = sum(len(run) for __, run in items if hasattr(run, "__len__")) >= _PARALLEL_ROWS
    workers = min(len(items), os.cpu_count() or 1)
    if not big or workers < 2:
        return {name: ev.evaluate(run, name=name) for name, run in items}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [(name, pool.submit(ev.evaluate, run, name)) for name, run in items]
        return {name: f.result() for name, f in futures}


def aligned_scores(results: Sequence[EvaluationResult]) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values of several results on the queries they share: ``(query_ids, systems × queries × metrics)``."""
    common = results[0].per_query.query_ids
    for r in results[1:]:
        common = np.intersect1d(common, r.per_query.query_ids)
    if len(common) == 0:
        raise NoOverlapError(_("the runs share no evaluated query"))
    mats = []
    for r in results:
        q = r.per_query.query_ids
        order = np.argsort(q, kind="stable")
        pos = order[np.searchsorted(q[order], common)]
        mats.append(r.per_query.values[pos])
    return np.asarray(common, dtype=object), np.stack(mats)


def ceilings(ev: Any, labels: Sequence[str], measures: Sequence[Measure], query_ids: np.ndarray) -> dict[str, float]:
    """Mean of each bounded, higher-is-better metric for a perfect ranking, on ``query_ids``.

    Evaluated with the comparison's own :class:`~rankscope.engine.Evaluator` (same
    relevance level and depth; a query the perfect run cannot answer scores 0;
    see :mod:`rankscope.engine.ceilings`).
    """
    by_label = ev.ceilings(query_ids)
    return {label: by_label[ev_label] for label, ev_label in zip(labels, ev.labels) if ev_label in by_label}


def without_relevant(qrels: Any, relevance_level: int, query_ids: np.ndarray) -> list[str]:
    """The queries of ``query_ids`` whose best judged grade is below ``relevance_level``, sorted."""
    best = np.full(len(qrels.query_ids), -np.inf)
    np.maximum.at(best, qrels.qcode, qrels.grades.astype(np.float64))
    pos = np.searchsorted(qrels.query_ids, np.asarray(query_ids, dtype=qrels.query_ids.dtype))
    pos = np.minimum(pos, max(len(qrels.query_ids) - 1, 0))
    known = qrels.query_ids[pos] == query_ids if len(qrels.query_ids) else np.zeros(len(query_ids), dtype=bool)
    lacking = ~known | (best[pos] < relevance_level)
    return sorted(str(q) for q in np.asarray(query_ids)[lacking])
