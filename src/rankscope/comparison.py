"""Compare several runs on the same queries: paired tests, corrections, effect sizes.

:func:`compare` scores every run against the qrels (qrels prepared once), lines
up the per-query values on the queries that every run was evaluated on, and
for each pair of systems and each metric computes

- the means and their confidence intervals (level ``1 - alpha``, unadjusted for
  multiple comparisons; none from a single query): percentile bootstrap, or with
  ``ci="betting"`` the betting interval of :mod:`rankscope.stats.betting`, valid
  at any number of queries for a metric with a fixed range,
- the mean difference ``b - a`` with its paired interval of the same kind,
- the relative improvement in percent and the paired Cohen's d (d_z),
- a paired significance test (t, Wilcoxon signed-rank, randomization), or
  Sakai's randomized Tukey HSD over all systems at once,
- the p-value adjusted for multiple comparisons across *all* pairs × metrics
  (Tukey HSD: simultaneous over the pairs of each metric),
- win / tie / loss counts per query,

and says what the verdicts rest on: per-run query counts and warnings (queries a
run lacks, queries outside the qrels, queries without a relevant judgment), the
best mean a perfect ranking reaches on the compared queries (``ceilings``), and
the Monte-Carlo standard error of every randomized p-value, with the verdicts
still within that error of ``alpha`` flagged (``near_alpha``) after drawing more
permutations while they were undecided.

Means, differences and tests use the arithmetic mean of the per-query values
(for ``gm_*`` and count measures this is not the trec_eval aggregate).
Randomness (sign flips, permutations, bootstrap resamples) comes from ``rng``; the
default is a fixed seed (0), so the same input always gives the same output.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.comparison_inputs import aligned_scores, ceilings, evaluate_all, named_runs, without_relevant
from rankscope.engine.coverage import DataWarning
from rankscope.engine.result import (
    EvaluationResult,
    _ids_in,
    _ids_out,
    _matrix_in,
    _measures_in,
    _plain,
    result_from_json,
    result_to_json,
)
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _
from rankscope.measures.base import Measure

if TYPE_CHECKING:
    from rankscope.data.notices import InputNotice

__all__ = ["compare", "Comparison", "PairResult", "SCHEMA_VERSION", "aligned_scores", "comparison_to_json",
           "comparison_from_json"]

SCHEMA_VERSION = 1
DEFAULT_SEED = 0
TUKEY = "tukey-hsd"


def _opt(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def _interval(ci: tuple[float, float] | None) -> list[float] | None:
    return None if ci is None else list(ci)


@dataclass(frozen=True)
class PairResult:
    """One metric compared between systems ``a`` and ``b`` (``diff = mean_b - mean_a``).

    ``wins`` counts queries where ``b`` is better than ``a`` (``b > a`` when higher
    is better), ``losses`` where it is worse.  ``rel_improvement`` is in percent
    (None when ``mean_a`` is 0), ``cohen_d`` is the paired effect size d_z
    ``mean(d) / sd(d)`` (None when undefined), ``statistic`` is the test statistic
    (t, Wilcoxon W, or the mean difference for the randomization and Tukey HSD
    tests; None when undefined), ``p_adjusted`` is the p-value after the
    multiple-comparison correction and ``significant`` is ``p_adjusted <= alpha``.
    ``diff_ci`` is None when a single query makes an interval meaningless.
    ``p_mc_se`` is the Monte-Carlo standard error of ``p_value`` (None when exact
    or not randomized) and ``near_alpha`` flags a verdict whose adjusted p-value is
    within 2.576 standard errors of ``alpha`` (it could change with the seed).
    """

    a: str
    b: str
    metric: str
    mean_a: float
    mean_b: float
    diff: float
    diff_ci: tuple[float, float] | None
    rel_improvement: float | None
    cohen_d: float | None
    statistic: float | None
    p_value: float
    p_adjusted: float
    significant: bool
    wins: int
    ties: int
    losses: int
    p_mc_se: float | None = None
    near_alpha: bool = False

    def flipped(self, test: str) -> PairResult:
        """The same comparison seen from ``b`` to ``a``."""
        rel = None if self.mean_b == 0 else 100.0 * (self.mean_a - self.mean_b) / abs(self.mean_b)
        stat = self.statistic
        if stat is not None and test != "wilcoxon":  # W = min(R+, R-) is symmetric
            stat = -stat
        ci = None if self.diff_ci is None else (-self.diff_ci[1], -self.diff_ci[0])
        return replace(
            self, a=self.b, b=self.a, mean_a=self.mean_b, mean_b=self.mean_a, diff=-self.diff,
            diff_ci=ci, rel_improvement=rel,
            cohen_d=None if self.cohen_d is None else -self.cohen_d, statistic=stat,
            wins=self.losses, losses=self.wins,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "a": self.a, "b": self.b, "metric": self.metric, "mean_a": self.mean_a, "mean_b": self.mean_b,
            "diff": self.diff, "diff_ci": _interval(self.diff_ci), "rel_improvement": self.rel_improvement,
            "cohen_d": self.cohen_d, "statistic": self.statistic, "p_value": self.p_value,
            "p_adjusted": self.p_adjusted, "significant": self.significant,
            "wins": self.wins, "ties": self.ties, "losses": self.losses,
            "p_mc_se": self.p_mc_se, "near_alpha": self.near_alpha,
        }


@dataclass(frozen=True, eq=False, repr=False)
class Comparison:
    """The outcome of :func:`compare`: per-system means, CIs and every pairwise test.

    ``systems`` are the run names in the given order, ``labels`` the metric names
    as given, ``measures`` what they mean.  ``results`` holds each run's full
    :class:`EvaluationResult`; ``query_ids`` the queries shared by all runs, on which
    ``means``, ``mean_ci`` and ``pairs`` are computed.  ``pairs`` is ordered by
    pair (baseline first, or i < j in system order), then by metric.

    ``correction`` is ``"tukey-hsd"`` for the Tukey HSD test (its p-values are
    simultaneous over the pairs of systems of each metric) and ``groups`` then holds
    the compact-letter groups per metric and system.  ``permutations_drawn`` is the
    number of random permutations finally drawn (adaptive; 0 when every p-value was
    enumerated exactly).  ``queries`` holds the query counts of each run,
    ``warnings`` what they imply, ``no_relevant`` the compared queries with no
    relevant judgment (None when unknown: results given without qrels),
    ``ceilings`` the mean a perfect ranking reaches per metric (bounded metrics;
    empty without qrels) and ``tags`` a run's own name (TREC tag) where it
    differs from the name it is compared under.
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
    mean_ci: dict[str, dict[str, tuple[float, float] | None]]
    pairs: tuple[PairResult, ...]
    query_ids: np.ndarray
    permutations: int | None = None
    bootstrap: int = 1000
    seed: int | None = None
    scores: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 0)), repr=False)
    permutations_drawn: int | None = None
    queries: dict[str, dict[str, int]] = field(default_factory=dict)
    warnings: tuple[DataWarning, ...] = ()
    no_relevant: tuple[str, ...] | None = None
    ceilings: dict[str, float] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    groups: dict[str, dict[str, str]] | None = None
    ci: str = "bootstrap"

    @property
    def ci_text(self) -> str:
        """What every interval of this comparison is: ``unadjusted 95% percentile-bootstrap CI`` (or betting)."""
        kind = "betting" if self.ci == "betting" else "percentile-bootstrap"
        return f"unadjusted {100 * (1 - self.alpha):.6g}% {kind} CI"

    @property
    def notices(self) -> tuple[InputNotice, ...]:
        """What the readers decided about the compared runs (e.g. a third column read as a rank), each once."""
        return tuple(dict.fromkeys(n for r in self.results.values() for n in r.notices))

    def _metric_index(self, metric: str) -> int:
        if metric in self.labels:
            return self.labels.index(metric)
        from rankscope.measures.parse import parse_metric

        m = parse_metric(metric)
        if m in self.measures:
            return self.measures.index(m)
        have = Items(self.labels)
        raise InvalidParameterError(_("metric {metric!r} is not in this comparison (have: {have})", metric=metric,
                                      have=have))

    def _system(self, name: str) -> None:
        if name not in self.systems:
            have = Items(self.systems)
            raise InvalidParameterError(_("no system {name!r} in this comparison (have: {have})", name=name, have=have))

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
        raise InvalidParameterError(_("{a!r} and {b!r} were not compared (pairs are against baseline {baseline!r})",
                                      a=a, b=b, baseline=self.baseline))

    def per_query(self, metric: str) -> tuple[np.ndarray, np.ndarray]:
        """``(query_ids, matrix)``: per-query values of ``metric``, one row per system."""
        j = self._metric_index(metric)
        return self.query_ids, self.scores[:, :, j].copy()

    def to_dataframe(self) -> Any:
        """A tidy pandas DataFrame: one row per system and metric.

        Columns: ``system``, ``metric``, ``mean``, ``ci_low``, ``ci_high`` (the mean's bootstrap
        interval), ``versus`` (the reference system: the baseline, else the first system),
        ``diff`` (system − reference), ``p_value``, ``p_adjusted``, ``effect_size`` (paired Cohen's
        d_z) and ``significant``; the reference's own rows hold no test (NaN / None).
        """
        from rankscope.extras import need

        pd = need("pandas", "dataframe")
        ref = self.reference
        rows = []
        for s in self.systems:
            for label in self.labels:
                ci = self.mean_ci[s][label]
                row: dict[str, Any] = {"system": s, "metric": label, "mean": self.means[s][label],
                                       "ci_low": np.nan if ci is None else ci[0],
                                       "ci_high": np.nan if ci is None else ci[1], "versus": None, "diff": np.nan,
                                       "p_value": np.nan, "p_adjusted": np.nan, "effect_size": np.nan,
                                       "significant": None}
                if s != ref:
                    try:
                        p = self.pair(ref, s, label)
                    except ValueError:  # not compared (pairs against another baseline)
                        p = None
                    if p is not None:
                        row.update(versus=ref, diff=p.diff, p_value=p.p_value, p_adjusted=p.p_adjusted,
                                   effect_size=np.nan if p.cohen_d is None else p.cohen_d,
                                   significant=p.significant)
                rows.append(row)
        return pd.DataFrame(rows, columns=["system", "metric", "mean", "ci_low", "ci_high", "versus", "diff",
                                           "p_value", "p_adjusted", "effect_size", "significant"])

    @property
    def reference(self) -> str:
        """The system significance markers refer to: the baseline, else the first system."""
        return self.baseline or self.systems[0]

    def __repr__(self) -> str:
        per = ", ".join(f"{s}: " + " ".join(f"{lb}={self.means[s][lb]:.4f}" for lb in self.labels[:3])
                        + (" …" if len(self.labels) > 3 else "") for s in self.systems[:4])
        more = f", … {len(self.systems) - 4} more" if len(self.systems) > 4 else ""
        sig = sum(p.significant for p in self.pairs)
        return (f"Comparison({len(self.systems)} systems, {len(self.query_ids)} queries, test={self.test}, "
                f"correction={self.correction}, alpha={self.alpha:g}: {per}{more}; {sig} of {len(self.pairs)} "
                f"pair×metric tests significant)")

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """A JSON-ready dict (``schema_version`` 1); ``per_query`` adds the per-query values."""
        out: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "systems": _COMPARISON_OUT["systems"](self.systems),
            "tags": dict(self.tags),
            "metrics": _COMPARISON_OUT["labels"](self.labels),
            "measures": _COMPARISON_OUT["measures"](self.measures),
            "baseline": self.baseline,
            "test": self.test,
            "alpha": self.alpha,
            "confidence": 1.0 - self.alpha,
            "ci": self.ci,
            "ci_text": self.ci_text,
            "correction": self.correction,
            "permutations": self.permutations,
            "permutations_drawn": self.permutations_drawn,
            "bootstrap": self.bootstrap,
            "seed": self.seed,
            "n_queries": len(self.query_ids),
            "queries": self.queries,
            "policies": dict(self.results[self.systems[0]].policies or {}) if self.results else {},
            "judged": {s: r.judged.to_dict() for s, r in self.results.items() if r.judged is not None},
            "warnings": [w.to_dict() for w in self.warnings],
            "notices": [n.to_dict() for n in self.notices],
            "no_relevant": _COMPARISON_OUT["no_relevant"](self.no_relevant),
            "ceilings": dict(self.ceilings),
            "means": self.means,
            "mean_ci": _COMPARISON_OUT["mean_ci"](self.mean_ci),
            "best": {label: self.best(label) for label in self.labels},
            "groups": self.groups,
            "pairs": _COMPARISON_OUT["pairs"](self.pairs),
        }
        if per_query:
            qids = [str(q) for q in self.query_ids]
            out["per_query"] = {
                s: {label: dict(zip(qids, self.scores[i, :, j].tolist())) for j, label in enumerate(self.labels)}
                for i, s in enumerate(self.systems)
            }
        return out


# -- the serialiser of a comparison: every field as JSON-ready data and back, bit for bit (rankscope.saved writes it
# to a file; to_dict above shares its field writers); each run's result goes through the result's serialiser ------
def _plain_field(name: str) -> Callable[[Any], Any]:
    return lambda value: _plain(value, name)


_COMPARISON_OUT: dict[str, Callable[[Any], Any]] = {
    "systems": list,
    "labels": list,
    "measures": lambda ms: [str(m) for m in ms],
    "results": lambda rs: {name: result_to_json(r) for name, r in rs.items()},
    "mean_ci": lambda d: {s: {m: _interval(ci) for m, ci in v.items()} for s, v in d.items()},
    "pairs": lambda ps: [p.to_dict() for p in ps],
    "query_ids": _ids_out,
    "scores": lambda a: {"values": a.tolist(), "shape": list(a.shape)},
    "warnings": lambda ws: [{f.name: getattr(w, f.name) for f in fields(w)} for w in ws],
    "no_relevant": lambda n: None if n is None else list(n),
}


def _pair_in(d: dict[str, Any]) -> PairResult:
    ci = d.get("diff_ci")
    return PairResult(**{**d, "diff_ci": None if ci is None else (float(ci[0]), float(ci[1]))})


def _warnings_in(items: list[dict[str, Any]]) -> tuple[DataWarning, ...]:
    known = {f.name for f in fields(DataWarning)}
    return tuple(DataWarning(**{k: v for k, v in w.items() if k in known}) for w in items)


_COMPARISON_IN: dict[str, Callable[[Any], Any]] = {
    "systems": tuple,
    "labels": tuple,
    "measures": _measures_in,
    "results": lambda d: {name: result_from_json(r) for name, r in d.items()},
    "mean_ci": lambda d: {s: {m: None if ci is None else (float(ci[0]), float(ci[1])) for m, ci in v.items()}
                          for s, v in d.items()},
    "pairs": lambda ps: tuple(_pair_in(p) for p in ps),
    "query_ids": _ids_in,
    "scores": lambda d: _matrix_in(d["values"], d["shape"]),
    "warnings": _warnings_in,
    "no_relevant": lambda n: None if n is None else tuple(n),
}


def comparison_to_json(comparison: Comparison) -> dict[str, Any]:
    """Every field of a :class:`Comparison` as JSON-ready data (:func:`comparison_from_json` reads it back)."""
    return {f.name: _COMPARISON_OUT.get(f.name, _plain_field(f.name))(getattr(comparison, f.name))
            for f in fields(comparison)}


def comparison_from_json(data: Mapping[str, Any]) -> Comparison:
    """The :class:`Comparison` :func:`comparison_to_json` wrote (fields it does not hold take their default)."""
    known = {f.name for f in fields(Comparison)}
    return Comparison(**{k: _COMPARISON_IN.get(k, lambda v: v)(v) for k, v in data.items() if k in known})


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
        raise InvalidParameterError(_("rng must be a seed (int), a numpy Generator or None, got {value!r}", value=rng))
    return np.random.default_rng(int(rng)), int(rng)


def compare(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: Iterable[str | Measure] | str | None = None,
    *,
    test: str = "t",
    alpha: float = 0.05,
    correction: str | None = None,
    baseline: str | None = None,
    permutations: int = 10_000,
    max_permutations: int | None = None,
    bootstrap: int = 1000,
    rng: np.random.Generator | int | None = None,
    relevance_level: int = 1,
    missing: str = "zero",
    depth: int | None = None,
    score_precision: str = "float32",
    chunking: Any = None,
    rule: str = "any",
    unjudged: str = "keep",
    ci: str = "bootstrap",
    warnings: Sequence[DataWarning] = (),
) -> Comparison:
    """Compare runs pairwise on ``metrics`` with a paired test and a multiple-comparison correction.

    Parameters
    ----------
    qrels, runs : the judgments and a ``{name: run}`` dict or a list of runs (named by ``Run.name``);
        the runs may instead be :class:`EvaluationResult` values already computed — alone (then ``qrels`` is
        not used and ``metrics`` selects among their metrics) or with runs, which are then scored against
        ``qrels`` with the evaluations' metrics and policies (last month's evaluation against today's run);
        :func:`rankscope.compare` also takes saved evaluations (their path), ``RetrieverEvaluation`` values and
        retrievers with a test set, and resolves them before calling this
    metrics : metric names (default: the engine's default set)
    test : ``"t"`` (paired Student t), ``"wilcoxon"`` (signed-rank), ``"randomization"`` (sign flips)
        or ``"tukey-hsd"`` (Sakai's randomized Tukey HSD over all systems, with compact-letter groups)
    alpha : significance level; also sets the confidence level ``1 - alpha`` of the intervals
    correction : ``"holm"`` (the default), ``"bonferroni"``, ``"bh"`` (Benjamini–Hochberg) or ``"none"``,
        applied across all pairs × metrics; not with ``"tukey-hsd"``, whose p-values are already
        simultaneous over the pairs of systems of each metric
    baseline : compare every other system against this one (default: all pairs)
    permutations : random permutations of the randomization and Tukey HSD tests (first batch)
    max_permutations : draw more (doubling, default up to 16 × ``permutations``) while a verdict is within
        Monte-Carlo error of ``alpha``; pass ``permutations`` to draw one batch only
    bootstrap : resamples for the confidence intervals
    ci : ``"bootstrap"`` (percentile intervals, the default) or ``"betting"`` (betting intervals: their level
        holds at any number of queries for a metric with a fixed range; none for a metric without one); either
        way at level ``1 - alpha`` and not adjusted for multiple comparisons
    rng : seed or numpy Generator (default: seed 0, so results are reproducible)
    relevance_level, missing, depth, score_precision, unjudged : as in :func:`rankscope.evaluate`
        (``unjudged="condense"``: condensed lists); ``qrels`` may be labels with provenance
        (``read_labels``): each run's share of model labels in its top k is then reported
        chunking, rule : with span judgments as ``qrels`` (:class:`~rankscope.data.spans.SpanQrels`): where the
        runs' chunks lie and how chunk qrels are derived, as in :func:`rankscope.evaluate`
    warnings : said before the comparison's own (what running the retrievers of :func:`rankscope.compare` found)

    >>> from rankscope import Qrels, Run
    >>> qrels = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(6)})
    >>> bm25 = Run.from_ranked_lists({f"q{i}": ["x", "a"] for i in range(6)}, name="bm25")
    >>> dense = Run.from_ranked_lists({f"q{i}": ["a"] for i in range(6)}, name="dense")
    >>> c = compare(qrels, [bm25, dense], ["mrr"], test="randomization")
    >>> p = c.pair("bm25", "dense", "mrr")
    >>> p.diff, p.wins, p.p_value, c.best("mrr")
    (0.5, 6, 0.03125, 'dense')
    """
    from rankscope.engine.coverage import counts_dict, coverage_warnings
    from rankscope.stats import bootstrap as bs
    from rankscope.stats import corrections, effect, paired
    from rankscope.stats.montecarlo import undecided_near

    if test not in paired.TESTS:
        tests = Items(paired.TESTS)
        raise InvalidParameterError(_("test must be one of {tests}, got {value!r}", tests=tests, value=test))
    if test == TUKEY and correction is not None:
        from rankscope.choices import Term

        given = Term(correction)
        raise InvalidParameterError(_("the tukey-hsd test already controls the family-wise error over all pairs of "
                                      "systems (per metric); leave the correction unset instead of {correction}",
                                      correction=given))
    method = TUKEY if test == TUKEY else corrections._method("holm" if correction is None else correction)
    if ci not in ("bootstrap", "betting"):
        raise InvalidParameterError(_("ci must be 'bootstrap' or 'betting', got {value!r}", value=ci))
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InvalidParameterError(_("alpha must be a number between 0 and 1, got {value!r}", value=alpha))
    gen, seed = _generator(rng)
    items, tags = named_runs(runs)
    systems = tuple(n for n, __ in items)
    if baseline is not None and baseline not in systems:
        names = Items(systems)
        raise InvalidParameterError(_("baseline {name!r} is not one of the runs ({names})", name=baseline, names=names))

    results, labels, measures, ev = evaluate_all(
        qrels, items, metrics, relevance_level=relevance_level, missing=missing, depth=depth,
        score_precision=score_precision, unjudged=unjudged,
        **({"chunking": chunking, "rule": rule} if chunking is not None else {}),
    )
    mixed = sorted({str(dict(results[s].policies or {}).get("unjudged", "keep")) for s in systems})
    if len(mixed) > 1:  # condensed scores are not comparable with scores that keep unjudged documents
        policies = Items(tuple(mixed))
        raise InvalidParameterError(_("the results were evaluated with different unjudged policies ({policies}); "
                                      "evaluate them all with the same one", policies=policies))
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
    one = n < 2  # an interval from one query has width 0 and says nothing
    mean_ci = {
        s: {labels[m]: None if one else (float(lo[i * n_met + m]), float(hi[i * n_met + m])) for m in range(n_met)}
        for i, s in enumerate(systems)
    }

    pair_idx = _pairs(systems, baseline)
    ia = np.repeat([a for a, __ in pair_idx], n_met)
    ib = np.repeat([b for __, b in pair_idx], n_met)
    im = np.tile(np.arange(n_met), len(pair_idx))
    diffs = rows[ib * n_met + im] - rows[ia * n_met + im]  # (k, n)
    dboot = boot[ib * n_met + im] - boot[ia * n_met + im]
    dlo, dhi = bs.percentile_ci(dboot, alpha)
    no_range: set[int] = set()
    if ci == "betting" and not one:
        lo, hi, dlo, dhi, no_range = _betting_intervals(rows, diffs, im, measures, alpha, s_boot)
        mean_ci = {s: {labels[m]: None if m in no_range else (float(lo[i * n_met + m]), float(hi[i * n_met + m]))
                       for m in range(n_met)} for i, s in enumerate(systems)}
    mean_a, mean_b = means_arr[ia * n_met + im], means_arr[ib * n_met + im]

    def scale(p: np.ndarray) -> np.ndarray:
        """How much the correction multiplies each p-value (to scale its Monte-Carlo error)."""
        adjusted = corrections.adjust(p, method) if method != TUKEY else p
        return np.where(p > 0, adjusted / np.maximum(p, 1e-300), 1.0)

    def undecided(p: np.ndarray, se: np.ndarray) -> np.ndarray:
        adjusted = corrections.adjust(p, method) if method != TUKEY else p
        return undecided_near(adjusted, se, alpha, scale(p))

    limit = 16 * permutations if max_permutations is None else max_permutations
    se = np.zeros(len(diffs))
    drawn: int | None = None
    groups = None
    if test == "t":
        stat, p = paired.paired_t(diffs)
    elif test == "wilcoxon":
        stat, p = paired.wilcoxon(diffs)
    elif test == "randomization":
        r = _randomization(rows, ia, ib, im, n_sys, n_met, baseline is None, permutations, limit, undecided,
                           np.random.default_rng(s_test))
        stat, p, se, drawn = r.statistic, r.p, r.se, r.permutations
    else:
        from rankscope.stats.tukey import compact_letters, tukey_hsd

        tk = tukey_hsd(scores, permutations=permutations, max_permutations=limit, rng=np.random.default_rng(s_test),
                       undecided=lambda p_, se_: undecided_near(p_, se_, alpha))
        stat, p, se, drawn = mean_b - mean_a, tk.p[im, ia, ib], tk.se[im, ia, ib], tk.permutations
        groups = {labels[m]: compact_letters(systems, [means[s][labels[m]] for s in systems], tk.p[m] <= alpha,
                                             bool(hib[m])) for m in range(n_met)}
    p_adj = corrections.adjust(p, method) if method != TUKEY else p
    sig = corrections.reject(p_adj, alpha)
    near = undecided_near(p_adj, se, alpha, scale(p))
    rel = effect.relative_improvement(mean_a, mean_b)
    cd = effect.cohen_d_paired(diffs)
    wtl = effect.win_tie_loss(diffs, hib[im])

    pairs = tuple(
        PairResult(
            a=systems[ia[k]], b=systems[ib[k]], metric=labels[im[k]],
            mean_a=float(mean_a[k]), mean_b=float(mean_b[k]), diff=float(mean_b[k] - mean_a[k]),
            diff_ci=None if one or int(im[k]) in no_range else (float(dlo[k]), float(dhi[k])),
            rel_improvement=_opt(rel[k]),
            cohen_d=_opt(cd[k]), statistic=_opt(stat[k]),
            p_value=float(p[k]), p_adjusted=float(p_adj[k]), significant=bool(sig[k]),
            wins=int(wtl[k, 0]), ties=int(wtl[k, 1]), losses=int(wtl[k, 2]),
            p_mc_se=float(se[k]) if se[k] > 0 else None, near_alpha=bool(near[k]),
        )
        for k in range(len(diffs))
    )
    pol = results[systems[0]].policies
    level = int(pol.get("relevance_level", relevance_level))
    no_rel = None if ev is None else tuple(without_relevant(ev.qrels, level, qids))
    counts = {s: results[s].queries for s in systems}
    coverage = coverage_warnings(counts, missing=str(pol.get("missing", missing)), relevance_level=level,
                                 compared=n, no_relevant=None if no_rel is None else len(no_rel),
                                 judged={s: results[s].judged for s in systems},
                                 unjudged=str(pol.get("unjudged", unjudged)))
    return Comparison(
        systems=systems, labels=labels, measures=measures, results=results, baseline=baseline, test=test,
        alpha=float(alpha), correction=method, means=means, mean_ci=mean_ci, pairs=pairs, query_ids=qids,
        permutations=permutations if test in ("randomization", TUKEY) else None, bootstrap=bootstrap, seed=seed,
        scores=scores, permutations_drawn=drawn, queries={s: counts_dict(c) for s, c in counts.items()},
        warnings=tuple(warnings) + tuple(coverage), no_relevant=no_rel,
        ceilings=_saved_ceilings(results, labels, qids) if ev is None else ceilings(ev, labels, measures, qids),
        tags=tags, groups=groups, ci=ci,
    )


def _betting_intervals(rows: np.ndarray, diffs: np.ndarray, im: np.ndarray, measures: Sequence[Measure],
                       alpha: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, set[int]]:
    """Betting intervals of every row mean (rows ``s * M + m``) and every pair's difference, per metric's range;
    the metrics without a fixed range get none (their indices are returned)."""
    from rankscope.stats.betting import betting_interval

    n_met = len(measures)
    lo, hi = np.full(len(rows), np.nan), np.full(len(rows), np.nan)
    dlo, dhi = np.full(len(diffs), np.nan), np.full(len(diffs), np.nan)
    none = set()
    for m, measure in enumerate(measures):
        bounds = measure.spec.bounds
        if bounds is None:
            none.add(m)
            continue
        own = np.arange(m, len(rows), n_met)
        lo[own], hi[own] = betting_interval(rows[own], bounds=bounds, alpha=alpha, rng=seed)
        mine = np.flatnonzero(im == m)
        if len(mine):
            w = float(bounds[1] - bounds[0])
            dlo[mine], dhi[mine] = betting_interval(diffs[mine], bounds=(-w, w), alpha=alpha, rng=seed)
    return lo, hi, dlo, dhi, none


def _saved_ceilings(
    results: Mapping[str, EvaluationResult], labels: Sequence[str], qids: np.ndarray
) -> dict[str, float]:
    """The ceilings results computed earlier carry, when every result was evaluated on exactly the compared queries."""
    found: dict[str, float] = {}
    for r in results.values():
        if len(r.per_query.query_ids) != len(qids) or not r.ceilings:
            return {}
        for label in labels:
            if label in r.ceilings:
                if label in found and abs(found[label] - r.ceilings[label]) > 1e-12:
                    return {}  # evaluated against other qrels: no shared ceiling
                found[label] = r.ceilings[label]
    return found


def _randomization(
    rows: np.ndarray, ia: np.ndarray, ib: np.ndarray, im: np.ndarray, n_sys: int, n_met: int, all_pairs: bool,
    permutations: int, limit: int, undecided: Any, gen: np.random.Generator,
) -> Any:
    """The randomization test of every pair; all pairs of 3+ systems go through differences to system 0."""
    from rankscope.stats import paired

    options = {"permutations": permutations, "max_permutations": limit, "undecided": undecided, "rng": gen}
    if not all_pairs or n_sys < 3:
        return paired.sign_flip_test(rows[ib * n_met + im] - rows[ia * n_met + im], **options)
    # basis row (s - 1) * M + m = system s minus system 0 on metric m; pair (a, b) = basis b - basis a
    basis = (rows[n_met:].reshape(n_sys - 1, n_met, -1) - rows[:n_met][None]).reshape((n_sys - 1) * n_met, -1)
    combine = np.zeros((len(ia), len(basis)))
    k = np.arange(len(ia))
    has_b, has_a = ib > 0, ia > 0
    combine[k[has_b], ((ib - 1) * n_met + im)[has_b]] += 1.0
    combine[k[has_a], ((ia - 1) * n_met + im)[has_a]] -= 1.0
    return paired.sign_flip_test(basis, combine=combine, **options)
