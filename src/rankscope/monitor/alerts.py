"""Alert rules of a monitor and the evidence behind each alert.

Three kinds of rule (:class:`Rule`):

* ``drop`` — a metric dropped against a baseline by more than ``margin``: the paired per-query
  differences ``new - baseline`` (oriented so that a loss is negative, for a metric where lower is
  better too) of each round;
* ``below`` — a metric fell below a level (a production standard such as ``production:good``,
  a benchmark figure, or a number): the per-query values of each round (or judged window);
* ``signal`` — a label-free signal crossed a limit (``empty_rate``, ``latency_p95``, ``psi`` ...):
  a plain comparison of the observed value, said as such (no test).

**The evidence of ``drop`` and ``below`` is anytime-valid** (:func:`check_sequential`).  Each round
``r`` contributes the betting e-value :func:`rankscope.stats.betting_evalue` ``E_r`` against
*"this round's mean is at least the null"* (``-margin`` for a drop, the level for ``below``),
computed on ``n`` values drawn with replacement (seeded) from the round's ``n`` per-query values,
so that under that null each draw has conditional mean at least the null whatever the retriever
did.  The alarm multiplies the rounds' e-values, each mixed with 1 by a share ``w_r`` fixed before
the round from the rounds before it::

    K_R = prod_{r <= R} (1 - w_r + w_r * E_r),   w_r = 1/2 after a round whose mean was beyond the null,
                                                  w_r = 1/50 otherwise,

and fires once ``K_R >= 1/alpha``.  A convex mix of an e-value and 1 is an e-value, so ``K`` is a
non-negative supermartingale under the null and by Ville's inequality

    P(the alarm ever fires | no round's mean was beyond the null) <= alpha,

however many rounds are checked.  The shares keep a long quiet stretch from burying the capital
(it loses at most 2% a quiet round) while a round that looks like a drop arms the next one.
What this does **not** promise: the queries of a canary are a fixed set, so the guarantee is about
the mean over *those* queries (not every query your users could ask); after an alert clears, a new
test starts with its own ``alpha``.

An alert stays open until ``clear_after`` (2) consecutive rounds are no longer beyond the null
(a ``drop``: the round's mean difference is at least ``-margin``), then a recovery is said and the
test starts again.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import Message, _

__all__ = ["Rule", "RuleState", "Check", "check_sequential", "check_signal", "parse_rule", "rules_from_standard",
           "SIGNALS", "paired_differences", "ARMED_SHARE", "QUIET_SHARE", "metric_bounds"]

#: label-free signals a ``signal`` rule can watch, and whether an alert is raised when the value goes above
#: (True) or below (False) the limit
SIGNALS: dict[str, bool] = {
    "empty_rate": True, "short_rate": True, "unknown_rate": True, "error_rate": True, "latency_p50": True,
    "latency_p95": True, "latency_p99": True, "psi": True, "ks_statistic": True, "rbo": False, "events": False,
}
#: the share of a round's e-value bet after a round beyond the null, and after a quiet one
ARMED_SHARE = 0.5
QUIET_SHARE = 0.02
KINDS = ("drop", "below", "signal")


def _bad(message: Message, /) -> InvalidParameterError:
    return InvalidParameterError(message)


def metric_bounds(metric: str) -> tuple[float, float, bool]:
    """``(low, high, higher_is_better)`` of a metric (its registry entry); metrics without bounds are refused."""
    from rankscope.measures import parse_metric

    m = parse_metric(metric)
    spec = m.spec
    if spec.bounds is None or spec.text:
        raise _bad(_("{metric}: a monitor watches metrics with known bounds (such as ndcg@10, precision@5, "
                     "hit_rate@5, mrr); this one has none", metric=metric))
    lo, hi = spec.bounds
    return float(lo), float(hi), bool(spec.higher_is_better)


@dataclass(frozen=True)
class Rule:
    """One alert rule (see the module docstring).  ``threshold``: the level of ``below``, the limit of ``signal``;
    ``margin``: the drop a ``drop`` rule tolerates; ``source``: the standard it came from (``production:good``)."""

    kind: str
    metric: str
    threshold: float | None = None
    margin: float | None = None
    alpha: float = 0.05
    source: str | None = None
    clear_after: int = 2

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise _bad(_("a rule's kind must be drop, below or signal, got {value!r}", value=self.kind))
        if isinstance(self.alpha, bool) or not isinstance(self.alpha, (int, float)) or not 0 < self.alpha < 1:
            raise _bad(_("alpha must be a number between 0 and 1, got {value!r}", value=self.alpha))
        if isinstance(self.clear_after, bool) or not isinstance(self.clear_after, int) or self.clear_after < 1:
            raise _bad(_("clear_after must be a positive integer, got {value!r}", value=self.clear_after))
        if self.kind == "signal":
            if self.metric not in SIGNALS:
                import difflib

                close = difflib.get_close_matches(self.metric, list(SIGNALS), n=1)
                raise _bad(_("unknown signal {value!r} (known: {known}){hint}", value=self.metric,
                             known=", ".join(SIGNALS), hint=f"; did you mean {close[0]!r}?" if close else ""))
            if not _finite(self.threshold):
                raise _bad(_("the signal rule on {metric} needs a limit (a number)", metric=self.metric))
            return
        lo, hi, __ = metric_bounds(self.metric)
        if self.kind == "drop":
            if not _finite(self.margin) or not 0 <= float(self.margin) < hi - lo:  # type: ignore[arg-type]
                raise _bad(_("the drop rule on {metric} needs a margin between 0 and {high:g}, got {value!r}",
                             metric=self.metric, high=hi - lo, value=self.margin))
        elif not _finite(self.threshold) or not lo < float(self.threshold) <= hi:  # type: ignore[arg-type]
            raise _bad(_("the level of {metric} must lie in ({low:g}, {high:g}], got {value!r}", metric=self.metric,
                         low=lo, high=hi, value=self.threshold))

    @property
    def key(self) -> str:
        """A stable name: ``drop:ndcg@10:0.05``, ``below:precision@5:0.75``, ``signal:empty_rate:0.05``."""
        value = self.margin if self.kind == "drop" else self.threshold
        return f"{self.kind}:{self.metric}:{value:g}"

    @property
    def bounds(self) -> tuple[float, float]:
        """The range of one observed value: the metric's, or (drop) of a difference of it."""
        lo, hi, __ = metric_bounds(self.metric)
        return (lo - hi, hi - lo) if self.kind == "drop" else (lo, hi)

    @property
    def null(self) -> float:
        """The value the test bets against: ``-margin`` (drop) or the level (below)."""
        return -float(self.margin or 0.0) if self.kind == "drop" else float(self.threshold or 0.0)

    def describe(self, lang: str = "en") -> str:
        """The rule in one phrase, in ``lang``."""
        if self.kind == "drop":
            return _("{metric} drops against the baseline by more than {margin}", metric=self.metric,
                     margin=f"{self.margin:g}").text(lang)
        if self.kind == "below":
            source = f" ({self.source})" if self.source else ""
            return _("{metric} falls below {level}{source}", metric=self.metric, level=f"{self.threshold:g}",
                     source=source).text(lang)
        limit = f"{self.threshold:g}"
        if SIGNALS[self.metric]:
            return _("{signal} goes above {limit}", signal=self.metric, limit=limit).text(lang)
        return _("{signal} goes below {limit}", signal=self.metric, limit=limit).text(lang)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rule:
        known = {"kind", "metric", "threshold", "margin", "alpha", "source", "clear_after"}
        extra = sorted(set(data) - known)
        if extra:
            raise _bad(_("unknown field {name!r} in a rule (known: {known})", name=extra[0],
                         known=", ".join(sorted(known))))
        return cls(**{k: data[k] for k in known if k in data})


def _finite(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, float)) and math.isfinite(float(x))


def rules_from_standard(name: str, alpha: float = 0.05) -> list[Rule]:
    """``below`` rules for each requirement of a named standard (``production:good``, ``benchmark:faq``).

    >>> [r.key for r in rules_from_standard("production:good")]
    ['below:recall@5:0.8', 'below:precision@5:0.75', 'below:mrr:0.7']
    """
    from rankscope.interpret.presets import standard_requirements

    return [Rule("below", metric, threshold=float(value), alpha=alpha, source=name)
            for metric, _op, value in standard_requirements(name)]


def parse_rule(text: str, alpha: float = 0.05) -> list[Rule]:
    """Rules from their short form (the command line's and the dashboard's).

    * ``production:good`` / ``benchmark:faq`` — the standard's requirements as ``below`` rules;
    * ``ndcg@10 >= 0.5`` — alert when ndcg@10 falls below 0.5;
    * ``drop ndcg@10 0.05`` — alert when ndcg@10 drops against the baseline by more than 0.05;
    * ``empty_rate <= 0.05`` / ``rbo >= 0.6`` — alert when the signal crosses the limit.

    >>> [r.key for r in parse_rule("drop ndcg@10 0.05") + parse_rule("P@5 >= 0.6") + parse_rule("psi <= 0.25")]
    ['drop:ndcg@10:0.05', 'below:P@5:0.6', 'signal:psi:0.25']
    """
    parts = str(text).split()
    if len(parts) == 1 and ":" in parts[0]:
        return rules_from_standard(parts[0], alpha)
    if len(parts) == 3 and parts[0].lower() == "drop":
        return [Rule("drop", parts[1], margin=_num(parts[2], text), alpha=alpha)]
    if len(parts) == 3 and parts[1] in (">=", "<="):
        name, op, value = parts
        if name in SIGNALS:
            if (op == "<=") != SIGNALS[name]:
                side = "<=" if SIGNALS[name] else ">="
                raise _bad(_("{rule!r}: write '{name} {op} LIMIT' for this signal", rule=text, name=name, op=side))
            return [Rule("signal", name, threshold=_num(value, text), alpha=alpha)]
        if op != ">=":
            from rankscope.errors import RankscopeError
            from rankscope.measures import parse_metric

            try:
                parse_metric(name)
            except RankscopeError:  # neither a metric nor a signal: say which signals there are
                return [Rule("signal", name, threshold=_num(value, text), alpha=alpha)]
            raise _bad(_("{rule!r}: a metric rule reads METRIC >= LEVEL (alert when it falls below)", rule=text))
        return [Rule("below", name, threshold=_num(value, text), alpha=alpha)]
    raise _bad(_("cannot read the rule {rule!r}: write production:good, 'ndcg@10 >= 0.5', 'drop ndcg@10 0.05' or "
                 "'empty_rate <= 0.05'", rule=text))


def _num(value: str, text: str) -> float:
    try:
        x = float(value)
    except ValueError:
        raise _bad(_("{rule!r}: {value!r} is not a number", rule=text, value=value)) from None
    if not math.isfinite(x):
        raise _bad(_("{rule!r}: {value!r} is not a number", rule=text, value=value))
    return x


@dataclass
class RuleState:
    """What a rule remembers between rounds (JSON-ready: :meth:`to_dict` / :meth:`from_dict`)."""

    log_capital: float = 0.0
    best: float = 0.0
    rounds: int = 0
    armed: bool = False
    firing: bool = False
    episodes: int = 0
    calm: int = 0
    opened: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> RuleState:
        return cls(**dict(data)) if data else cls()

    def _reset_test(self) -> None:
        self.log_capital = self.best = 0.0
        self.rounds = 0
        self.armed = False


@dataclass(frozen=True)
class Check:
    """A rule checked on one round or window (``label``): whether it is firing now, and whether this check opened
    or cleared an alert; ``value`` is the round's mean (of the differences, for a drop) or the signal's value;
    ``bound`` the round's one-sided betting bound at ``alpha`` (a drop: the mean difference is at most ``bound``;
    below: the mean is at most ``bound``); ``p_value`` the anytime-valid p-value of the whole test so far;
    ``worst`` the queries that lost most (drop) or scored lowest (below), with their values."""

    rule: Rule
    label: str
    firing: bool
    opened: bool
    cleared: bool
    value: float | None
    n: int = 0
    bound: float | None = None
    p_value: float | None = None
    e_value: float | None = None
    worst: list[tuple[str, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule.key, "kind": self.rule.kind, "metric": self.rule.metric, "label": self.label,
                "firing": self.firing, "opened": self.opened, "cleared": self.cleared, "value": self.value,
                "n": self.n, "bound": self.bound, "p_value": self.p_value, "e_value": self.e_value,
                "alpha": self.rule.alpha, "null": self.rule.null if self.rule.kind != "signal" else None,
                "worst": [[q, v] for q, v in self.worst]}

    def text(self, lang: str = "en") -> str:
        """What the check says, in one sentence: the size of the drop, its bound, the evidence, the guarantee."""

        r = self.rule
        if self.value is None:
            return _("{rule}: no value to check", rule=r.describe(lang)).text(lang)
        if r.kind == "signal":
            return _("{signal} is {value} (limit {limit}; an observed value, not a test)", signal=r.metric,
                     value=f"{self.value:.4g}", limit=f"{r.threshold:g}").text(lang)
        level = f"{100 * (1 - r.alpha):.6g}%"
        if r.kind == "drop":
            return _("{metric} changed by {diff} on average over {n} queries against the baseline; this round's "
                     "mean difference is at most {bound} ({level} betting bound); margin {margin}; anytime-valid p "
                     "= {p} (alarm at alpha = {alpha})", metric=r.metric, n=self.n, diff=f"{self.value:+.4f}",
                     level=level, bound=f"{self.bound:+.4f}" if self.bound is not None else "–",
                     margin=f"{r.margin:g}", p=f"{self.p_value:.3g}", alpha=f"{r.alpha:g}").text(lang)
        return _("{metric} is {mean} on average over {n} queries, at most {bound} ({level} betting bound); level "
                 "{threshold}; anytime-valid p = {p} (alarm at alpha = {alpha})", metric=r.metric, n=self.n,
                 mean=f"{self.value:.4f}", level=level, bound=f"{self.bound:.4f}" if self.bound is not None else "–",
                 threshold=f"{r.threshold:g}", p=f"{self.p_value:.3g}", alpha=f"{r.alpha:g}").text(lang)


def paired_differences(current: Mapping[str, float | None], baseline: Mapping[str, float | None],
                       higher_is_better: bool = True) -> tuple[list[str], np.ndarray, int]:
    """``(query ids, differences, unpaired)``: ``current - baseline`` per query present with a value on both sides
    (``baseline - current`` when lower is better, so that a loss is negative), in sorted query order; ``unpaired``
    counts the queries of either side left out.

    >>> paired_differences({"a": 0.5, "b": 1.0, "c": None}, {"a": 0.75, "b": 1.0, "d": 0.1})
    (['a', 'b'], array([-0.25,  0.  ]), 2)
    """
    both = sorted(q for q, v in current.items()
                  if v is not None and baseline.get(q) is not None and math.isfinite(v))
    cur = np.array([current[q] for q in both], dtype=np.float64)
    base = np.array([baseline[q] for q in both], dtype=np.float64)
    diff = cur - base if higher_is_better else base - cur
    unpaired = len(set(current) | set(baseline)) - len(both)
    return both, diff, unpaired


def check_sequential(rule: Rule, state: RuleState, values: Sequence[float] | np.ndarray, *,
                     ids: Sequence[str] | None = None, label: str = "", seed: int = 0, bound: bool = True) -> Check:
    """Check a ``drop`` (values: paired differences) or ``below`` (values: per-query metric values) rule on one
    round and update ``state`` in place (see the module docstring for the test and its guarantee); ``bound=False``
    skips the round's betting bound (what the check shows, not what it decides)."""
    from rankscope.stats.betting import betting_bound, betting_evalue

    if rule.kind not in ("drop", "below"):
        raise _bad(_("{rule}: only drop and below rules are tested", rule=rule.key))
    v = np.asarray(values, dtype=np.float64).ravel()
    if not v.size:
        return Check(rule, label, state.firing, False, False, None)
    lo, hi = rule.bounds
    v = np.clip(v, lo, hi)
    null = rule.null
    mean = float(v.mean())
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, state.rounds, 0x6D6F6E])
    draws = v[rng.integers(0, v.size, size=v.size)]
    e = float(betting_evalue(draws, null, bounds=(lo, hi), alternative="less", alpha=rule.alpha,
                             rng=int(rng.integers(2**31))))
    share = ARMED_SHARE if state.armed else QUIET_SHARE
    state.log_capital += math.log1p(share * (e - 1.0)) if math.isfinite(e) else math.log(1 + share * 1e12)
    state.best = max(state.best, state.log_capital)
    state.rounds += 1
    beyond = mean < null
    state.armed = beyond
    upper = float(betting_bound(v, bounds=(lo, hi), alpha=rule.alpha, side="upper")) if bound else None
    order = np.argsort(v, kind="stable")[:5]
    worst = [(str(ids[i]) if ids is not None else str(i), float(v[i])) for i in order]
    p_value = min(1.0, math.exp(-state.best))
    opened = cleared = False
    if state.firing:
        state.calm = 0 if beyond else state.calm + 1
        if state.calm >= rule.clear_after:
            state.firing, cleared = False, True
            state.calm = 0
            state.opened = None
            state._reset_test()
    elif state.best >= math.log(1 / rule.alpha):
        state.firing = opened = True
        state.episodes += 1
        state.calm = 0
        state.opened = label
    return Check(rule, label, state.firing, opened, cleared, mean, int(v.size), upper, p_value,
                 math.exp(min(state.log_capital, 700.0)), worst)


def check_signal(rule: Rule, state: RuleState, value: float | None, *, label: str = "") -> Check:
    """Check a ``signal`` rule on one observed value (None: no data) and update ``state``: firing while the value is
    beyond the limit, cleared after ``clear_after`` values within it."""
    if rule.kind != "signal":
        raise _bad(_("{rule}: not a signal rule", rule=rule.key))
    if value is None or not math.isfinite(value):
        return Check(rule, label, state.firing, False, False, None)
    limit = float(rule.threshold or 0.0)
    beyond = value > limit if SIGNALS[rule.metric] else value < limit
    opened = cleared = False
    if state.firing:
        state.calm = 0 if beyond else state.calm + 1
        if state.calm >= rule.clear_after:
            state.firing, cleared, state.calm, state.opened = False, True, 0, None
    elif beyond:
        state.firing = opened = True
        state.episodes += 1
        state.opened = label
    return Check(rule, label, state.firing, opened, cleared, float(value), 1)
