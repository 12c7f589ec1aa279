"""Compare several runs on the same queries: paired tests, corrections, effect sizes.

:func:`compare` scores every run against the qrels (qrels prepared once), lines
up the per-query values on the queries that every run was evaluated on, and
for each pair of systems and each metric computes

- the means and their bootstrap confidence intervals (level ``1 - alpha``),
- the mean difference ``b - a`` with its paired bootstrap interval,
- the relative improvement in percent and the paired Cohen's d,
- a paired significance test (t, Wilcoxon signed-rank or randomization),
- the p-value adjusted for multiple comparisons across *all* pairs × metrics,
- win / tie / loss counts per query.

Means, differences and tests use the arithmetic mean of the per-query values
(for ``gm_*`` and count measures this is not the trec_eval aggregate).
Randomness (sign flips, bootstrap resamples) comes from ``rng``; the default is
a fixed seed (0), so the same input always gives the same output.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from rankscope.engine.result import EvaluationResult, PerQueryScores
from rankscope.errors import InvalidParameterError, NoOverlapError, RankscopeError
from rankscope.measures.base import Measure

__all__ = ["compare", "Comparison", "PairResult", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
DEFAULT_SEED = 0


def _opt(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


@dataclass(frozen=True)
class PairResult:
    """One metric compared between systems ``a`` and ``b`` (``diff = mean_b - mean_a``).

    ``wins`` counts queries where ``b`` is better than ``a`` (``b > a`` when higher
    is better), ``losses`` where it is worse.  ``rel_improvement`` is in percent
    (None when ``mean_a`` is 0), ``cohen_d`` is ``mean(d) / sd(d)`` (None when
    undefined), ``statistic`` is the test statistic (t, Wilcoxon W, or the mean
    difference for the randomization test; None when undefined), ``p_adjusted`` is
    the p-value after the multiple-comparison correction and ``significant`` is
    ``p_adjusted <= alpha``.
    """

    a: str
    b: str
    metric: str
    mean_a: float
    mean_b: float
    diff: float
    diff_ci: tuple[float, float]
    rel_improvement: float | None
    cohen_d: float | None
    statistic: float | None
    p_value: float
    p_adjusted: float
    significant: bool
    wins: int
    ties: int
    losses: int

    def flipped(self, test: str) -> PairResult:
        """The same comparison seen from ``b`` to ``a``."""
        rel = None if self.mean_b == 0 else 100.0 * (self.mean_a - self.mean_b) / abs(self.mean_b)
        stat = self.statistic
        if stat is not None and test != "wilcoxon":  # W = min(R+, R-) is symmetric
            stat = -stat
        return replace(
            self, a=self.b, b=self.a, mean_a=self.mean_b, mean_b=self.mean_a, diff=-self.diff,
            diff_ci=(-self.diff_ci[1], -self.diff_ci[0]), rel_improvement=rel,
            cohen_d=None if self.cohen_d is None else -self.cohen_d, statistic=stat,
            wins=self.losses, losses=self.wins,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "a": self.a, "b": self.b, "metric": self.metric, "mean_a": self.mean_a, "mean_b": self.mean_b,
            "diff": self.diff, "diff_ci": list(self.diff_ci), "rel_improvement": self.rel_improvement,
            "cohen_d": self.cohen_d, "statistic": self.statistic, "p_value": self.p_value,
            "p_adjusted": self.p_adjusted, "significant": self.significant,
            "wins": self.wins, "ties": self.ties, "losses": self.losses,
        }


@dataclass(frozen=True, eq=False)
class Comparison:
    """The outcome of :func:`compare`: per-system means, CIs and every pairwise test.

    ``systems`` are the run names in the given order, ``labels`` the metric names
    as given, ``measures`` what they mean.  ``results`` holds each run's full
    :class:`EvaluationResult`; ``query_ids`` the queries shared by all runs, on which
    ``means``, ``mean_ci`` and ``pairs`` are computed.  ``pairs`` is ordered by
    pair (baseline first, or i < j in system order), then by metric.
    """

    systems: tuple[str, ...]
    labels: tuple[str, ...]
    measures: tuple[Measure, ...]
    results: dict[str, EvaluationResult]
    baseline: str | None
    test: str
    alpha: float
    correction: str
    means: dict[str, dict[str, float]]
    mean_ci: dict[str, dict[str, tuple[float, float]]]
    pairs: tuple[PairResult, ...]
    query_ids: np.ndarray
    permutations: int | None = None
    bootstrap: int = 1000
    seed: int | None = None
    scores: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 0)), repr=False)

    def _metric_index(self, metric: str) -> int:
        if metric in self.labels:
            return self.labels.index(metric)
        from rankscope.measures.parse import parse_metric

        m = parse_metric(metric)
        if m in self.measures:
            return self.measures.index(m)
        raise InvalidParameterError(f"metric {metric!r} is not in this comparison (have: {', '.join(self.labels)})")

    def _system(self, name: str) -> None:
        if name not in self.systems:
            raise InvalidParameterError(f"no system {name!r} in this comparison (have: {', '.join(self.systems)})")

    def leaders(self, metric: str) -> tuple[str, ...]:
        """Every system with the best mean of ``metric`` (several when tied), in system order."""
        j = self._metric_index(metric)
        label = self.labels[j]
        hib = self.measures[j].spec.higher_is_better
        vals = [self.means[s][label] for s in self.systems]
        best = max(vals) if hib else min(vals)
        return tuple(s for s, v in zip(self.systems, vals) if v == best)

    def best(self, metric: str) -> str:
        """The system with the best mean of ``metric`` (highest, or lowest when lower is better).

        Ties go to the system given first; :meth:`leaders` returns all tied systems.
        """
        return self.leaders(metric)[0]

    def pair(self, a: str, b: str, metric: str) -> PairResult:
        """The comparison of ``b`` against ``a`` on ``metric`` (flipped if computed as ``b`` vs ``a``)."""
        self._system(a)
        self._system(b)
        label = self.labels[self._metric_index(metric)]
        for p in self.pairs:
            if p.metric == label and p.a == a and p.b == b:
                return p
            if p.metric == label and p.a == b and p.b == a:
                return p.flipped(self.test)
        raise InvalidParameterError(f"{a!r} and {b!r} were not compared (pairs are against baseline {self.baseline!r})")

    def per_query(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """``(query_ids, matrix)``: per-query values of ``metric``, one row per system."""
        j = self._metric_index(metric)
        return self.query_ids, self.scores[:, :, j].copy()

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """A JSON-ready dict (``schema_version`` 1); ``per_query`` adds the per-query values."""
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "systems": list(self.systems),
            "metrics": list(self.labels),
            "measures": [str(m) for m in self.measures],
            "baseline": self.baseline,
            "test": self.test,
            "alpha": self.alpha,
            "correction": self.correction,
            "permutations": self.permutations,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "n_queries": len(self.query_ids),
            "means": self.means,
            "mean_ci": {s: {k: list(v) for k, v in d.items()} for s, d in self.mean_ci.items()},
            "best": {label: self.best(label) for label in self.labels},
            "pairs": [p.to_dict() for p in self.pairs],
        }
        if per_query:
            qids = [str(q) for q in self.query_ids]
            out["per_query"] = {
                s: {label: dict(zip(qids, self.scores[i, :, j].tolist())) for j, label in enumerate(self.labels)}
                for i, s in enumerate(self.systems)
            }
        return out


def _named_runs(runs: Mapping[str, Any] | Sequence[Any]) -> list[tuple[str, Any]]:
    from rankscope.io.convert import as_run

    def conv(r: Any, name: str | None) -> Any:
        return r if isinstance(r, EvaluationResult) else as_run(r, name=name)

    if isinstance(runs, Mapping):
        items = [(str(k), conv(v, str(k))) for k, v in runs.items()]
    elif isinstance(runs, Iterable) and not isinstance(runs, (str, bytes)):
        items = []
        for i, r in enumerate(runs):
            run = conv(r, None)
            items.append((getattr(run, "name", None) or getattr(run, "run_name", None) or f"run{i + 1}", run))
    else:
        raise RankscopeError(f"runs must be a dict of name -> run or a list of runs, got {type(runs).__name__}")
    names = [n for n, _ in items]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidParameterError(
            f"two runs share the name {dup[0]!r}; pass a dict {{name: run}} to name them"
        )
    if len(items) < 2:
        raise InvalidParameterError(f"compare needs at least 2 runs, got {len(items)}")
    return items


def _evaluate_all(
    qrels: Any, items: list[tuple[str, Any]], metrics: Iterable[str | Measure] | str | None, **options: Any
) -> tuple[dict[str, EvaluationResult], tuple[str, ...], tuple[Measure, ...]]:
    """Score every run (qrels prepared once), or take already computed :class:`EvaluationResult` values."""
    from rankscope.engine.evaluator import Evaluator

    done = [isinstance(r, EvaluationResult) for _, r in items]
    if all(done):
        first: EvaluationResult = items[0][1]
        if metrics is None:
            labels = tuple(lb for lb in first.labels if all(lb in r.labels for _, r in items))
        else:
            from rankscope.measures.parse import parse_metrics

            labels = tuple(lb for lb, _ in parse_metrics(metrics))
        for name, r in items:
            lacking = [lb for lb in labels if lb not in r.labels]
            if lacking:
                raise InvalidParameterError(f"the result of {name!r} has no metric {lacking[0]!r}")
        if not labels:
            raise InvalidParameterError("the results share no metric")
        measures = tuple(first.measures[first.labels.index(lb)] for lb in labels)
        results = {}
        for name, r in items:
            cols = [r.labels.index(lb) for lb in labels]
            pq = PerQueryScores(r.per_query.query_ids, labels, r.per_query.values[:, cols])
            results[name] = replace(r, run_name=name, labels=labels, measures=measures, per_query=pq)
        return results, labels, measures
    if any(done):
        raise InvalidParameterError("give either runs or evaluation results to compare, not a mix")
    ev = Evaluator(qrels, metrics, **options)
    return _score_runs(ev, items), ev.labels, ev.measures


def _score_runs(ev: Any, items: list[tuple[str, Any]]) -> dict[str, EvaluationResult]:
    """Score the runs, large ones on parallel threads (the join and the sorts release the GIL).

    The result is the same as scoring them one after the other, in the given order.
    """
    import os

    big = sum(len(run) for _, run in items if hasattr(run, "__len__")) >= _PARALLEL_ROWS
    workers = min(len(items), os.cpu_count() or 1)
    if not big or workers < 2:
        return {name: ev.evaluate(run, name=name) for name, run in items}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [(name, pool.submit(ev.evaluate, run, name)) for name, run in items]
        return {name: f.result() for name, f in futures}


_PARALLEL_ROWS = 200_000  # below this, thread start-up costs more than it saves


def _pairs(systems: Sequence[str], baseline: str | None) -> list[tuple[int, int]]:
    if baseline is not None:
        ib = systems.index(baseline)
        return [(ib, j) for j in range(len(systems)) if j != ib]
    return [(i, j) for i in range(len(systems)) for j in range(i + 1, len(systems))]


def _generator(rng: np.random.Generator | int | None) -> tuple[np.random.Generator, int | None]:
    if rng is None:
        return np.random.default_rng(DEFAULT_SEED), DEFAULT_SEED
    if isinstance(rng, np.random.Generator):
        return rng, None
    if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)):
        raise InvalidParameterError(f"rng must be a seed (int), a numpy Generator or None, got {rng!r}")
    return np.random.default_rng(int(rng)), int(rng)


def _randomization(
    rows: np.ndarray, ia: np.ndarray, ib: np.ndarray, im: np.ndarray, n_sys: int, n_met: int, all_pairs: bool,
    permutations: int, gen: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """The randomization test of every pair; all pairs of 3+ systems go through differences to system 0."""
    from rankscope.stats import paired

    if not all_pairs or n_sys < 3:
        return paired.randomization(rows[ib * n_met + im] - rows[ia * n_met + im], permutations=permutations,
                                    rng=gen)
    # basis row (s - 1) * M + m = system s minus system 0 on metric m; pair (a, b) = basis b - basis a
    basis = (rows[n_met:].reshape(n_sys - 1, n_met, -1) - rows[:n_met][None]).reshape((n_sys - 1) * n_met, -1)
    combine = np.zeros((len(ia), len(basis)))
    k = np.arange(len(ia))
    has_b, has_a = ib > 0, ia > 0
    combine[k[has_b], ((ib - 1) * n_met + im)[has_b]] += 1.0
    combine[k[has_a], ((ia - 1) * n_met + im)[has_a]] -= 1.0
    return paired.randomization(basis, permutations=permutations, rng=gen, combine=combine)


def aligned_scores(results: Sequence[EvaluationResult]) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values of several results on the queries they share: ``(query_ids, systems × queries × metrics)``."""
    common = results[0].per_query.query_ids
    for r in results[1:]:
        common = np.intersect1d(common, r.per_query.query_ids)
    if len(common) == 0:
        raise NoOverlapError("the runs share no evaluated query")
    mats = []
    for r in results:
        q = r.per_query.query_ids
        order = np.argsort(q, kind="stable")
        pos = order[np.searchsorted(q[order], common)]
        mats.append(r.per_query.values[pos])
    return np.asarray(common, dtype=object), np.stack(mats)


def compare(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: Iterable[str | Measure] | str | None = None,
    *,
    test: str = "t",
    alpha: float = 0.05,
    correction: str = "holm",
    baseline: str | None = None,
    permutations: int = 10_000,
    bootstrap: int = 1000,
    rng: np.random.Generator | int | None = None,
    relevance_level: int = 1,
    missing: str = "zero",
    depth: int | None = None,
) -> Comparison:
    """Compare runs pairwise on ``metrics`` with a paired test and a multiple-comparison correction.

    Parameters
    ----------
    qrels, runs : the judgments and a ``{name: run}`` dict or a list of runs (named by ``Run.name``);
        the runs may instead be :class:`EvaluationResult` values already computed (then ``qrels``
        is not used and ``metrics`` selects among their metrics), ``RetrieverEvaluation`` values, or
        retrievers with a test set as ``qrels`` (each is run over it first; see
        :mod:`rankscope.retrieval.compare_entry`)
    metrics : metric names (default: the engine's default set)
    test : ``"t"`` (paired Student t), ``"wilcoxon"`` (signed-rank) or ``"randomization"`` (sign flips)
    alpha : significance level; also sets the confidence level ``1 - alpha`` of the intervals
    correction : ``"holm"`` (default), ``"bonferroni"``, ``"bh"`` (Benjamini–Hochberg) or ``"none"``,
        applied across all pairs × metrics
    baseline : compare every other system against this one (default: all pairs)
    permutations : sign assignments of the randomization test
    bootstrap : resamples for the confidence intervals
    rng : seed or numpy Generator (default: seed 0, so results are reproducible)
    relevance_level, missing, depth : as in :func:`rankscope.evaluate`

    >>> from rankscope import Qrels, Run
    >>> qrels = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(6)})
    >>> bm25 = Run.from_ranked_lists({f"q{i}": ["x", "a"] for i in range(6)}, name="bm25")
    >>> dense = Run.from_ranked_lists({f"q{i}": ["a"] for i in range(6)}, name="dense")
    >>> c = compare(qrels, [bm25, dense], ["mrr"], test="randomization")
    >>> p = c.pair("bm25", "dense", "mrr")
    >>> p.diff, p.wins, p.p_value, c.best("mrr")
    (0.5, 6, 0.03125, 'dense')
    """
    from rankscope.retrieval.compare_entry import resolve_retrievers
    from rankscope.stats import bootstrap as bs
    from rankscope.stats import corrections, effect, paired

    qrels, runs = resolve_retrievers(qrels, runs, metrics)  # RetrieverEvaluations, {name: retriever} + a TestSet
    if test not in paired.TESTS:
        raise InvalidParameterError(f"test must be one of {', '.join(paired.TESTS)}, got {test!r}")
    correction = corrections._method(correction)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InvalidParameterError(f"alpha must be a number between 0 and 1, got {alpha!r}")
    gen, seed = _generator(rng)
    items = _named_runs(runs)
    systems = tuple(n for n, _ in items)
    if baseline is not None and baseline not in systems:
        raise InvalidParameterError(f"baseline {baseline!r} is not one of the runs ({', '.join(systems)})")

    results, labels, measures = _evaluate_all(
        qrels, items, metrics, relevance_level=relevance_level, missing=missing, depth=depth
    )
    qids, scores = aligned_scores([results[s] for s in systems])  # (S, n, M)
    n_sys, n, n_met = scores.shape
    hib = np.array([m.spec.higher_is_better for m in measures])

    # independent streams: the bootstrap does not depend on the chosen test
    s_test, s_boot = gen.integers(0, 2**63 - 1, size=2)
    rows = scores.transpose(0, 2, 1).reshape(n_sys * n_met, n)  # row s*M + m
    boot = bs.bootstrap_means(rows, bootstrap, np.random.default_rng(s_boot))
    lo, hi = bs.percentile_ci(boot, alpha)
    means_arr = rows.mean(axis=1)
    means = {s: {labels[m]: float(means_arr[i * n_met + m]) for m in range(n_met)} for i, s in enumerate(systems)}
    mean_ci = {
        s: {labels[m]: (float(lo[i * n_met + m]), float(hi[i * n_met + m])) for m in range(n_met)}
        for i, s in enumerate(systems)
    }

    pair_idx = _pairs(systems, baseline)
    ia = np.repeat([a for a, _ in pair_idx], n_met)
    ib = np.repeat([b for _, b in pair_idx], n_met)
    im = np.tile(np.arange(n_met), len(pair_idx))
    diffs = rows[ib * n_met + im] - rows[ia * n_met + im]  # (k, n)
    dboot = boot[ib * n_met + im] - boot[ia * n_met + im]
    dlo, dhi = bs.percentile_ci(dboot, alpha)

    if test == "t":
        stat, p = paired.paired_t(diffs)
    elif test == "wilcoxon":
        stat, p = paired.wilcoxon(diffs)
    else:
        stat, p = _randomization(rows, ia, ib, im, n_sys, n_met, baseline is None, permutations,
                                 np.random.default_rng(s_test))
    p_adj = corrections.adjust(p, correction)
    sig = corrections.reject(p_adj, alpha)
    mean_a, mean_b = means_arr[ia * n_met + im], means_arr[ib * n_met + im]
    rel = effect.relative_improvement(mean_a, mean_b)
    cd = effect.cohen_d_paired(diffs)
    wtl = effect.win_tie_loss(diffs, hib[im])

    pairs = tuple(
        PairResult(
            a=systems[ia[k]], b=systems[ib[k]], metric=labels[im[k]],
            mean_a=float(mean_a[k]), mean_b=float(mean_b[k]), diff=float(mean_b[k] - mean_a[k]),
            diff_ci=(float(dlo[k]), float(dhi[k])), rel_improvement=_opt(rel[k]), cohen_d=_opt(cd[k]),
            statistic=_opt(stat[k]),
            p_value=float(p[k]), p_adjusted=float(p_adj[k]), significant=bool(sig[k]),
            wins=int(wtl[k, 0]), ties=int(wtl[k, 1]), losses=int(wtl[k, 2]),
        )
        for k in range(len(diffs))
    )
    return Comparison(
        systems=systems, labels=labels, measures=measures, results=results, baseline=baseline, test=test,
        alpha=float(alpha), correction=correction, means=means, mean_ci=mean_ci, pairs=pairs, query_ids=qids,
        permutations=permutations if test == "randomization" else None, bootstrap=bootstrap, seed=seed,
        scores=scores,
    )

