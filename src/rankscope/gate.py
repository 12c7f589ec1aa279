"""A CI quality gate: requirements on a run's metrics and non-inferiority against a baseline.

Two kinds of checks:

- a *threshold* ``"recall@5>=0.8"`` (operators ``>=``, ``<=``, ``>``, ``<``; the
  metric in any spelling the registry parses; the value may end in ``%``): the
  run's mean of the metric is compared with the threshold (means are rounded to
  10 decimals first, so float noise cannot flip a result);
- a *maximum drop* ``"ndcg@10=0.02"`` (or ``"ndcg@10=2%"``, relative to the
  baseline's mean) against a baseline run: a paired, one-sided non-inferiority
  test on the queries both runs share.  With per-query differences
  ``d = run - baseline`` (``baseline - run`` for a metric where lower is better)
  and margin ``delta``, H0 is ``mean(d) <= -delta`` and H1 ``mean(d) > -delta``;
  the chosen test (t, Wilcoxon or randomization) is run on ``d + delta`` with the
  alternative "greater" and the check passes when ``p <= alpha``.  Comparing the
  two means alone would pass a run that is worse by chance on a small query set
  and fail one that is not; the test requires evidence that the drop is smaller
  than the margin.  Each maximum drop is tested at ``alpha`` without correction:
  all of them must pass (an intersection–union test keeps the level).

Named presets (``production:good``, ``benchmark:faq``, ...) come from
:mod:`rankscope.interpret.presets` and add their thresholds.

>>> from rankscope import Qrels, Run
>>> qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
>>> run = Run.from_ranked_lists({"q1": ["a"], "q2": ["x", "b"]})
>>> gate = check(qrels, run, ["mrr>=0.7", "P@1>0.6"])
>>> for o in gate.outcomes:
...     print(o.line())
PASS  mrr >= 0.7: 0.7500
FAIL  P@1 > 0.6: 0.5000
>>> gate.exit_code
1
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.measures.base import Measure

__all__ = ["Requirement", "MaxDrop", "Outcome", "GateResult", "parse_requirement", "parse_max_drop", "check"]

OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt,
}
_REQ = re.compile(r"^\s*(?P<metric>.+?)\s*(?P<op>>=|<=|>|<)\s*(?P<value>[^<>=\s]+)\s*$")


def _number(text: str, what: str, original: str) -> tuple[float, bool]:
    """A float, and whether it was written as a percentage."""
    t = text.strip()
    pct = t.endswith("%")
    try:
        v = float(t[:-1] if pct else t)
    except ValueError:
        raise InvalidParameterError(f"{what} in {original!r} must be a number, got {text.strip()!r}") from None
    if not math.isfinite(v):
        raise InvalidParameterError(f"{what} in {original!r} must be a finite number, got {text.strip()!r}")
    return (v / 100.0 if pct else v), pct


@dataclass(frozen=True)
class Requirement:
    """``metric op threshold``, e.g. ``recall@5 >= 0.8``; ``source`` says where it came from."""

    label: str
    measure: Measure
    op: str
    threshold: float
    source: str = "--require"

    def holds(self, value: float) -> bool:
        """Whether ``value`` (rounded to 10 decimals) satisfies the requirement."""
        return OPERATORS[self.op](round(value, 10), self.threshold)


@dataclass(frozen=True)
class MaxDrop:
    """The largest acceptable drop of ``metric`` against the baseline (absolute, or relative if ``relative``)."""

    label: str
    measure: Measure
    max_drop: float
    relative: bool = False


def parse_requirement(text: str, source: str = "--require") -> Requirement:
    """Parse ``"metric>=value"`` (also ``<=``, ``>``, ``<``; value may end in ``%``).

    >>> parse_requirement("Recall@5 >= 80%")
    Requirement(label='Recall@5', measure=Measure('recall@5'), op='>=', threshold=0.8, source='--require')
    """
    from rankscope.measures.parse import parse_metric

    m = _REQ.match(text or "")
    if m is None or m["metric"].endswith(("=", "!")):
        raise InvalidParameterError(
            f"cannot read the requirement {text!r}; write it as METRIC>=VALUE (or <=, >, <), e.g. recall@5>=0.8"
        )
    value, _ = _number(m["value"], "the threshold", text)
    label = m["metric"]
    return Requirement(label, parse_metric(label), m["op"], value, source)


def parse_max_drop(text: str) -> MaxDrop:
    """Parse ``"metric=drop"``: an absolute drop (``ndcg@10=0.02``) or relative to the baseline (``ndcg@10=2%``).

    >>> parse_max_drop("ndcg@10=0.02"), parse_max_drop("mrr=5%").relative
    (MaxDrop(label='ndcg@10', measure=Measure('ndcg@10'), max_drop=0.02, relative=False), True)
    """
    from rankscope.measures.parse import parse_metric

    label, sep, value = (text or "").rpartition("=")
    label = label.strip()
    if not sep or not label:
        raise InvalidParameterError(
            f"cannot read the maximum drop {text!r}; write it as METRIC=DROP, e.g. ndcg@10=0.02"
        )
    drop, pct = _number(value, "the maximum drop", text)
    if drop < 0:
        raise InvalidParameterError(f"the maximum drop in {text!r} must be >= 0, got {value.strip()!r}")
    return MaxDrop(label, parse_metric(label), drop, pct)


@dataclass(frozen=True)
class Outcome:
    """The result of one check.

    ``kind`` is ``"threshold"`` or ``"non_inferiority"``.  For a threshold,
    ``value`` is the run's mean.  For non-inferiority, ``value`` and
    ``baseline_value`` are the two means on the shared queries, ``margin`` the
    absolute drop allowed and ``p_value`` that of the one-sided test.
    """

    kind: str
    label: str
    passed: bool
    value: float
    op: str | None = None
    threshold: float | None = None
    source: str | None = None
    baseline_value: float | None = None
    margin: float | None = None
    p_value: float | None = None
    test: str | None = None
    alpha: float | None = None

    def line(self) -> str:
        """One line for the terminal: verdict, requirement, measured value."""
        verdict = "PASS" if self.passed else "FAIL"
        if self.kind == "threshold":
            where = "" if self.source in (None, "--require") else f" [{self.source}]"
            return f"{verdict}  {self.label} {self.op} {self.threshold:g}: {self.value:.4f}{where}"
        assert self.baseline_value is not None and self.margin is not None and self.p_value is not None
        diff = self.value - self.baseline_value
        rel = "<=" if self.passed else ">"
        return (
            f"{verdict}  {self.label} drop <= {self.margin:.4g} vs baseline: {self.value:.4f} vs "
            f"{self.baseline_value:.4f} (diff {diff:+.4f}); one-sided {self.test} p={self.p_value:.3g} {rel} "
            f"alpha={self.alpha:g}"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class GateResult:
    """All checks of one run; ``passed`` when every check holds."""

    run_name: str
    baseline_name: str | None
    n_queries: int
    outcomes: tuple[Outcome, ...]

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        """0 when every requirement holds, 1 otherwise."""
        return 0 if self.passed else 1

    def lines(self) -> list[str]:
        """One line per requirement, then a verdict line."""
        failed = sum(not o.passed for o in self.outcomes)
        verdict = (
            f"gate passed: {len(self.outcomes)} requirement(s) hold" if failed == 0
            else f"gate FAILED: {failed} of {len(self.outcomes)} requirement(s) not met"
        )
        return [o.line() for o in self.outcomes] + [verdict]

    def to_markdown(self) -> str:
        """A Markdown summary (for ``$GITHUB_STEP_SUMMARY`` or a pull-request comment)."""
        head = "passed" if self.passed else "FAILED"
        out = [f"## rankscope gate {head}: `{self.run_name}`", ""]
        base = f" against baseline `{self.baseline_name}`" if self.baseline_name else ""
        out += [f"{self.n_queries} queries{base}.", "", "| | requirement | measured | detail |", "|---|---|---|---|"]
        for o in self.outcomes:
            mark = "✅" if o.passed else "❌"
            if o.kind == "threshold":
                src = "" if o.source in (None, "--require") else f"from {o.source}"
                out.append(f"| {mark} | `{o.label} {o.op} {o.threshold:g}` | {o.value:.4f} | {src} |")
            else:
                assert o.baseline_value is not None
                out.append(
                    f"| {mark} | `{o.label}` drops at most {o.margin:.4g} | {o.value:.4f} "
                    f"(baseline {o.baseline_value:.4f}, diff {o.value - o.baseline_value:+.4f}) | "
                    f"one-sided {o.test} p = {o.p_value:.3g}, alpha = {o.alpha:g} |"
                )
        return "\n".join(out) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "run": self.run_name, "baseline": self.baseline_name, "n_queries": self.n_queries,
            "passed": self.passed, "outcomes": [o.to_dict() for o in self.outcomes],
        }


def preset_requirements(name: str) -> list[Requirement]:
    """The thresholds of a named standard (``production:good``, ``benchmark:faq``, ...)."""
    from rankscope.interpret.presets import standard_requirements
    from rankscope.measures.parse import parse_metric

    return [Requirement(m, parse_metric(m), op, float(v), name) for m, op, v in standard_requirements(name)]


def _non_inferiority(d: np.ndarray, margin: float, test: str, permutations: int, rng: Any) -> float:
    from rankscope.stats import paired

    shifted = (d + margin)[None, :]
    if test == "t":
        _, p = paired.paired_t(shifted, "greater")
    elif test == "wilcoxon":
        _, p = paired.wilcoxon(shifted, "greater")
    else:
        _, p = paired.randomization(shifted, "greater", permutations=permutations, rng=rng)
    return float(p[0])


def check(
    qrels: Any,
    run: Any,
    requirements: Iterable[str | Requirement] = (),
    *,
    preset: str | Sequence[str] | None = None,
    baseline: Any = None,
    max_drops: Iterable[str | MaxDrop] = (),
    test: str = "t",
    alpha: float = 0.05,
    permutations: int = 10_000,
    rng: np.random.Generator | int | None = None,
    relevance_level: int = 1,
    missing: str = "zero",
    depth: int | None = None,
) -> GateResult:
    """Check ``run`` against thresholds, presets and (with ``baseline``) maximum drops.

    ``rng`` (default seed 0) drives the randomization test.  Raises
    :class:`~rankscope.errors.InvalidParameterError` when there is nothing to
    check, when ``max_drops`` are given without a baseline, or on a bad option.
    """
    from rankscope.comparison import aligned_scores
    from rankscope.engine.evaluator import Evaluator
    from rankscope.io.convert import as_run
    from rankscope.stats.paired import TESTS

    reqs = [r if isinstance(r, Requirement) else parse_requirement(r) for r in requirements]
    presets = [preset] if isinstance(preset, str) else list(preset or [])
    for name in presets:
        reqs += preset_requirements(name)
    drops = [d if isinstance(d, MaxDrop) else parse_max_drop(d) for d in max_drops]
    if not reqs and not drops:
        raise InvalidParameterError("nothing to check: give at least one requirement, preset or maximum drop")
    if drops and baseline is None:
        raise InvalidParameterError("a maximum drop needs a baseline run to compare with")
    if baseline is not None and not drops:
        raise InvalidParameterError("a baseline run needs at least one maximum drop (e.g. ndcg@10=0.02)")
    if test not in TESTS:
        raise InvalidParameterError(f"test must be one of {', '.join(TESTS)}, got {test!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InvalidParameterError(f"alpha must be a number between 0 and 1, got {alpha!r}")
    gen = np.random.default_rng(0 if rng is None else rng)

    measures: list[Measure] = []
    for m in [r.measure for r in reqs] + [d.measure for d in drops]:
        if m not in measures:
            measures.append(m)
    ev = Evaluator(qrels, measures, relevance_level=relevance_level, missing=missing,  # type: ignore[arg-type]
                   depth=depth)
    run = as_run(run)
    result = ev.evaluate(run)
    means = dict(zip(measures, result.mean().values()))
    outcomes = [
        Outcome("threshold", r.label, r.holds(means[r.measure]), means[r.measure], r.op, r.threshold, r.source)
        for r in reqs
    ]
    n_queries = result.queries.evaluated
    base_name = None
    if drops:
        base = as_run(baseline)
        base_name = base.name if base.name != run.name else f"{base.name} (baseline)"
        base_res = ev.evaluate(base, name=base_name)
        qids, scores = aligned_scores([result, base_res])
        n_queries = len(qids)
        for dr in drops:
            j = measures.index(dr.measure)
            ours, theirs = scores[0, :, j], scores[1, :, j]
            hib = dr.measure.spec.higher_is_better
            d = ours - theirs if hib else theirs - ours
            margin = dr.max_drop * abs(float(theirs.mean())) if dr.relative else dr.max_drop
            p = _non_inferiority(d, margin, test, permutations, gen)
            outcomes.append(Outcome(
                "non_inferiority", dr.label, p <= alpha, float(ours.mean()), baseline_value=float(theirs.mean()),
                margin=margin, p_value=p, test=test, alpha=float(alpha),
            ))
    return GateResult(run.name, base_name, n_queries, tuple(outcomes))
