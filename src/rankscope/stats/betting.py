"""Confidence bounds for the mean of bounded values by betting, valid at every sample size.

Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting"
(JRSS-B 86(1), 2024).  Values ``x_i`` known to lie in ``[lo, hi]`` (a metric in
``[0, 1]``; a paired difference of such a metric in ``[-1, 1]``) are rescaled to
``y_i = (x_i - lo) / (hi - lo)`` in ``[0, 1]``.  To test "the mean is at most
``m``" a gambler starts with capital 1 and bets on each new value being above
``m``:

    K_t(m) = prod_{i <= t} (1 + lambda_i(m) * (y_i - m)),   0 <= lambda_i(m) <= c / m,

where the bet ``lambda_i`` may depend on ``y_1 .. y_{i-1}`` only (predictable).  When
the mean is ``m``, ``K_t(m)`` is a non-negative martingale with ``K_0 = 1``, so by
Markov's inequality ``P(K_n(m) >= 1/alpha) <= alpha`` at a fixed ``n`` and by
Ville's inequality ``P(exists t: K_t(m) >= 1/alpha) <= alpha`` over all ``t`` at
once.  The values of ``m`` whose capital reached ``1/alpha`` are rejected; what
is left is a lower confidence bound (one-sided), and with the mirrored bets on
``1 - y`` (level ``alpha/2`` each) an interval.  No normality, no large-sample
approximation: the coverage holds for every distribution on ``[lo, hi]`` and
every ``n``, including skewed differences with many ties at 0.

Bets (the paper's predictable plug-in, with ``c = 3/4``): with the regularised
running mean ``mu_t = (1/2 + sum_{i<=t} y_i) / (t + 1)`` and variance
``s2_t = (1/4 + sum_{i<=t} (y_i - mu_i)^2) / (t + 1)``,

- a fixed number ``n`` of values (:func:`betting_evalue`, :func:`betting_bound`,
  :func:`betting_interval`): ``lambda_t = sqrt(2 log(1/alpha) / (n s2_{t-1}))``;
  the order of the values is arbitrary, so the capital is averaged over
  ``orderings`` random orders drawn from ``rng`` (an average of such capitals is
  still one whose expectation is at most 1: the Markov argument holds; the
  result no longer hangs on the order the queries were listed in);
- a sequence observed one value (or batch) at a time
  (:class:`ConfidenceSequence`, :class:`SequentialTest`):
  ``lambda_t = sqrt(2 log(1/alpha) / (s2_{t-1} t log(1 + t)))`` and the running
  intersection (a value rejected once stays rejected); with ``tuned_for=n`` the
  bets are the fixed-``n`` ones above, which make the sequence narrowest around
  ``n`` values (it stays valid at every ``t``: any predictable bet keeps Ville's
  inequality).

Sampling without replacement from a finite set of ``population`` items (the
queries of a test set evaluated in a random order) bets against the mean of the
items not yet seen, ``m_t = (N m - S_{t-1}) / (N - t + 1)``, and then covers the
mean of the whole set (the paper's section 6).

The price of validity: a bound that holds for *every* distribution on
``[lo, hi]`` must allow for a rare value at ``lo`` that the sample did not show.
With ``n`` differences that are all 0, a difference distribution putting mass
``delta`` on ``-1`` has mean ``-delta`` and shows no ``-1`` with probability
``(1 - delta)^n``, so no valid test can declare "mean above ``-delta``" before
``(1 - delta)^n <= alpha`` (59 queries for ``delta = 0.05``, ``alpha = 0.05``).

>>> x = np.r_[np.zeros(60), np.full(40, 0.1)]   # 100 differences in [-1, 1], mean 0.04
>>> lb = betting_bound(x, bounds=(-1, 1), alpha=0.05)
>>> bool(-0.05 < lb < 0.04)
True
>>> cs = ConfidenceSequence((0.0, 1.0), alpha=0.05).update([0.5, 0.7, 0.6] * 100)
>>> cs.n, bool(cs.lower < 0.6 < cs.upper), bool(cs.width < 0.2)
(300, True, True)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import N_, _

__all__ = [
    "TRUNCATION",
    "ORDERINGS",
    "betting_evalue",
    "betting_bound",
    "betting_interval",
    "ConfidenceSequence",
    "SequentialTest",
    "StopWhen",
    "minimum_queries",
]

#: ``c`` in the bet limit ``lambda <= c / m`` (the capital keeps at least ``1 - c`` of itself per value)
TRUNCATION = 0.75
#: random orders the fixed-``n`` capital is averaged over
ORDERINGS = 32
_BISECTIONS = 48  # bisection steps of a bound on [0, 1]: 2**-48 ~ 4e-15 of the range


# -- checks ------------------------------------------------------------------------------------------------------
def _alpha(alpha: Any) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.floating)) or not 0 < alpha < 1:
        raise InvalidParameterError(_("alpha must be a number between 0 and 1, got {value!r}", value=alpha))
    return float(alpha)


def _bounds(bounds: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise InvalidParameterError(_("bounds must be two numbers (low, high), got {value!r}", value=bounds)) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InvalidParameterError(_("bounds must be two numbers (low, high), got {value!r}", value=bounds))
    return lo, hi


def _scaled(x: Any, lo: float, hi: float) -> np.ndarray:
    """``(x - lo) / (hi - lo)``, refusing values outside ``[lo, hi]`` (the guarantee rests on the bounds)."""
    v = np.asarray(x, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        raise InvalidParameterError(_("the values must be finite numbers (got nan or inf)"))
    tol = 1e-12 * (hi - lo)
    if v.size and (v.min() < lo - tol or v.max() > hi + tol):
        raise InvalidParameterError(_("a value lies outside the bounds [{lo:g}, {hi:g}] the betting bound assumes "
                                      "(smallest {smallest:g}, largest {largest:g})", lo=lo, hi=hi,
                                      smallest=float(v.min()), largest=float(v.max())))
    return np.clip((v - lo) / (hi - lo), 0.0, 1.0)


def _orders(n: int, orderings: int, rng: np.random.Generator | int | None) -> np.ndarray:
    if isinstance(orderings, bool) or not isinstance(orderings, (int, np.integer)) or orderings < 1:
        raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name="orderings",
                                      value=orderings))
    gen = np.random.default_rng(0 if rng is None else rng)
    return np.argsort(gen.random((int(orderings), n)), axis=1)


# -- the fixed-n capital -----------------------------------------------------------------------------------------
def _plugin_bets(y: np.ndarray, alpha: float, fixed_n: int | None, t0: int = 0, s: float = 0.0, q: float = 0.0,
                 ) -> tuple[np.ndarray, float, float]:
    """Predictable plug-in bets for the values ``y`` (last axis = time), after ``t0`` values with sum ``s`` and
    sum of squared deviations ``q`` (a sequence resumed); returns the bets and the new ``s``, ``q`` (1-D only)."""
    t = t0 + np.arange(1, y.shape[-1] + 1, dtype=np.float64)
    mu = np.minimum((0.5 + s + np.cumsum(y, axis=-1)) / (t + 1), 1.0)
    sq = q + np.cumsum((y - mu) ** 2, axis=-1)
    s2 = (0.25 + sq) / (t + 1)
    prev = np.concatenate([np.full((*y.shape[:-1], 1), (0.25 + q) / (t0 + 1)), s2[..., :-1]], axis=-1)
    if fixed_n is None:
        lam = np.sqrt(2 * math.log(1 / alpha) / (prev * t * np.log1p(t)))
    else:
        lam = np.sqrt(2 * math.log(1 / alpha) / (fixed_n * prev))
    if y.ndim == 1 and y.size:
        return lam, s + float(y.sum()), float(sq[-1])
    return lam, s, q


def _log_capital(y: np.ndarray, lam: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``log K_n(m)`` of the lower side for rows ``y`` (``(..., n)``) and bets ``lam``; ``m`` broadcasts to ``y``'s
    leading axes."""
    m = np.asarray(m, dtype=np.float64)[..., None]
    with np.errstate(divide="ignore"):
        bet = np.minimum(lam, TRUNCATION / m)
    return np.log1p(bet * (y - m)).sum(axis=-1)


class _Fixed:
    """The averaged fixed-``n`` capital of many rows at once: rows ``y`` (R, n), the same ``orders`` for all."""

    def __init__(self, y: np.ndarray, alpha: float, orders: np.ndarray) -> None:
        self.y = y[:, orders]  # (R, P, n)
        self.lam = _plugin_bets(self.y, alpha, y.shape[1])[0]
        self.log_p = math.log(orders.shape[0])

    def log_evalue(self, m: np.ndarray) -> np.ndarray:
        """``log`` of the capital at ``m`` (one per row) averaged over the orders."""
        lk = _log_capital(self.y, self.lam, np.asarray(m)[:, None])
        top = lk.max(axis=1)
        return top + np.log(np.exp(lk - top[:, None]).sum(axis=1)) - self.log_p

    def bound(self, alpha: float) -> np.ndarray:
        """The largest ``m`` whose averaged capital reaches ``1/alpha`` (0 when none): the capital does not
        increase with ``m``, so the rejected values form ``[0, bound]``, found by bisection."""
        target = math.log(1 / alpha)
        rows = self.y.shape[0]
        low, high = np.zeros(rows), np.ones(rows)  # low: rejected (or 0), high: not rejected
        for __ in range(_BISECTIONS):
            mid = (low + high) / 2
            hit = self.log_evalue(mid) >= target
            low, high = np.where(hit, mid, low), np.where(hit, high, mid)
        return low


def _rows(x: Any) -> tuple[np.ndarray, bool]:
    v = np.asarray(x, dtype=np.float64)
    return (v[None, :], True) if v.ndim == 1 else (v, False)


def betting_evalue(
    x: Any, null: float, *, bounds: tuple[float, float], alternative: str = "greater", alpha: float = 0.05,
    orderings: int = ORDERINGS, rng: np.random.Generator | int | None = 0,
) -> Any:
    """The betting e-value against ``H0: mean <= null`` (``alternative="greater"``) or ``mean >= null`` (``"less"``).

    ``x`` holds ``n`` values in ``bounds`` (or a ``(rows, n)`` matrix: one e-value per row); ``alpha`` tunes the
    bets (the test at level ``alpha`` rejects when the e-value is at least ``1/alpha``; ``min(1, 1/e)`` is a
    valid p-value).  Values are averaged over ``orderings`` random orders from ``rng``.

    >>> round(float(betting_evalue([0.9] * 20, 0.5, bounds=(0, 1))), 1) > 20
    True
    """
    lo, hi = _bounds(bounds)
    a = _alpha(alpha)
    if alternative not in ("greater", "less"):
        raise InvalidParameterError(_("alternative must be 'greater' or 'less', got {value!r}", value=alternative))
    rows, single = _rows(x)
    y = _scaled(rows, lo, hi)
    m = (float(null) - lo) / (hi - lo)
    if alternative == "less":
        y, m = 1.0 - y, 1.0 - m
    if y.shape[1] == 0 or m >= 1:  # nothing seen, or a null every mean satisfies
        out = np.ones(len(y))
    elif m <= 0:  # H0 "mean <= 0" holds only when every value is 0
        out = np.where(np.any(y > 0, axis=1), np.inf, 1.0)
    else:
        out = np.exp(_Fixed(y, a, _orders(y.shape[1], orderings, rng)).log_evalue(np.full(len(y), m)))
    return float(out[0]) if single else out


def betting_bound(
    x: Any, *, bounds: tuple[float, float], alpha: float = 0.05, side: str = "lower", orderings: int = ORDERINGS,
    rng: np.random.Generator | int | None = 0,
) -> Any:
    """A one-sided ``1 - alpha`` confidence bound of the mean of ``x`` (values in ``bounds``) by betting.

    ``side="lower"``: the largest ``m`` that the test of ``mean <= m`` rejects at level ``alpha``
    (``bounds[0]`` when none); ``"upper"`` mirrors it.  A ``(rows, n)`` matrix gives one bound per row.

    >>> round(betting_bound([0.0] * 59, bounds=(-1, 1), alpha=0.05), 4)   # 59 differences of 0 on [-1, 1]
    -0.0668
    """
    lo, hi = _bounds(bounds)
    a = _alpha(alpha)
    if side not in ("lower", "upper"):
        raise InvalidParameterError(_("side must be 'lower' or 'upper', got {value!r}", value=side))
    rows, single = _rows(x)
    y = _scaled(rows, lo, hi)
    if side == "upper":
        y = 1.0 - y
    if y.shape[1] == 0:
        b = np.zeros(len(y))
    else:
        b = _Fixed(y, a, _orders(y.shape[1], orderings, rng)).bound(a)
    out = lo + (hi - lo) * b if side == "lower" else hi - (hi - lo) * b
    return float(out[0]) if single else out


def betting_interval(
    x: Any, *, bounds: tuple[float, float], alpha: float = 0.05, orderings: int = ORDERINGS,
    rng: np.random.Generator | int | None = 0,
) -> tuple[Any, Any]:
    """A two-sided ``1 - alpha`` confidence interval of the mean: the lower and upper betting bounds at
    ``alpha / 2`` each (the paper's hedged capital with weight 1/2).

    >>> lo, hi = betting_interval([0.2, 0.4] * 50, bounds=(0, 1))
    >>> bool(lo < 0.3 < hi), round(hi - lo, 2)
    (True, 0.07)
    """
    a = _alpha(alpha)
    gen = np.random.default_rng(0 if rng is None else rng)
    seeds = gen.integers(0, 2**63 - 1, size=2)
    return (betting_bound(x, bounds=bounds, alpha=a / 2, side="lower", orderings=orderings, rng=int(seeds[0])),
            betting_bound(x, bounds=bounds, alpha=a / 2, side="upper", orderings=orderings, rng=int(seeds[1])))


def minimum_queries(margin: float, alpha: float = 0.05, spread: float = 1.0) -> int:
    """The fewest values of a difference in ``[-spread, spread]`` that all equal 0 and yet let *any* test valid for
    every such distribution declare "mean above ``-margin``" at level ``alpha``: ``(1 - margin/spread)^n <= alpha``.

    >>> minimum_queries(0.05), minimum_queries(0.1), minimum_queries(0.02)
    (59, 29, 149)
    """
    r = float(margin) / float(spread)
    if not 0 < r < 1:
        return 1 if r >= 1 else 0
    return math.ceil(math.log(_alpha(alpha)) / math.log1p(-r) - 1e-12)


# -- sequences -------------------------------------------------------------------------------------------------
_CHUNK = 1 << 20  # values x points per block of a batch update


class _Sided:
    """The running log-capital of one side at a set of points (scaled means), with the crossing record."""

    def __init__(self, points: np.ndarray, alpha: float) -> None:
        self.points = points
        self.alpha = alpha
        self.log_k = np.zeros(len(points))
        self.best = np.zeros(len(points))  # the highest log-capital so far (anytime-valid p-value = exp(-best))
        self.target = math.log(1 / alpha)
        self.first = np.full(len(points), -1)  # index in the last batch where each point was first rejected

    @property
    def rejected(self) -> np.ndarray:
        return self.best >= self.target

    def advance(self, y: np.ndarray, lam: np.ndarray, seen: int, total: float, population: int | None) -> None:
        """Bet on ``y`` (this side's orientation) with bets ``lam``, after ``seen`` values summing to ``total``;
        ``first`` then holds, per point, the index in ``y`` where it was first rejected (-1: not in this batch)."""
        self.first = np.full(len(self.points), -1)
        step = max(1, _CHUNK // max(len(self.points), 1))
        for start in range(0, len(y), step):
            yb, lb = y[start:start + step], lam[start:start + step]
            m = np.broadcast_to(self.points, (len(yb), len(self.points)))
            below = above = np.zeros_like(m, dtype=bool)
            if population is not None:  # bet against the mean of the items not seen yet
                before = total + np.concatenate([[0.0], np.cumsum(yb)[:-1]])
                t = seen + start + np.arange(len(yb), dtype=np.float64)  # items seen before each one
                m = (population * self.points[None, :] - before[:, None]) / (population - t)[:, None]
                # the values seen already exceed what a mean of m allows (rejected for certain), or fall so short
                # of it that only a smaller mean is possible (the other side's business: no bet)
                below, above = m < 0, m > 1
                m = np.clip(m, 0.0, 1.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                bet = np.minimum(lb[:, None], TRUNCATION / m)
                factor = np.where(below, np.inf, np.where(above, 0.0, np.log1p(bet * (yb[:, None] - m))))
            factor = np.nan_to_num(factor, nan=0.0, posinf=np.inf)
            path = self.log_k[None, :] + np.cumsum(factor, axis=0)
            crossed = path >= self.target
            new = (self.first < 0) & ~(self.best >= self.target) & crossed.any(axis=0)
            self.first[new] = start + crossed[:, new].argmax(axis=0)
            self.best = np.maximum(self.best, path.max(axis=0))
            self.log_k = path[-1]
            total += float(yb.sum())

    def to_dict(self) -> dict[str, Any]:
        return {"log_capital": self.log_k.tolist(), "best": self.best.tolist()}

    def load(self, data: Mapping[str, Any]) -> None:
        self.log_k = np.asarray(data["log_capital"], dtype=np.float64)
        self.best = np.asarray(data["best"], dtype=np.float64)


class _Sequence:
    """What every sequence shares: bounds, level, running statistics and the update loop."""

    kind = ""

    def __init__(self, bounds: tuple[float, float], alpha: float, population: int | None,
                 tuned_for: int | None = None) -> None:
        self.lo, self.hi = _bounds(bounds)
        if tuned_for is not None and (isinstance(tuned_for, bool) or not isinstance(tuned_for, (int, np.integer))
                                      or tuned_for < 1):
            raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name="tuned_for",
                                          value=tuned_for))
        self.tuned_for = None if tuned_for is None else int(tuned_for)
        self.alpha = _alpha(alpha)
        if population is not None and (isinstance(population, bool) or not isinstance(population, (int, np.integer))
                                       or population < 1):
            raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name="population",
                                          value=population))
        self.population = None if population is None else int(population)
        self.n = 0
        self._s = 0.0  # sum of the scaled values
        self._q = 0.0  # sum of squared deviations from the running mean (the bets' variance estimate)
        self._sum = 0.0  # sum of the values as given

    def _sides(self) -> dict[str, _Sided]:
        raise NotImplementedError

    @property
    def mean(self) -> float:
        """The mean of the values seen (nan before the first)."""
        return self._sum / self.n if self.n else math.nan

    def update(self, values: Any) -> Any:
        """Add one value or a batch (in order); returns ``self``."""
        y = _scaled(np.atleast_1d(np.asarray(values, dtype=np.float64)).ravel(), self.lo, self.hi)
        if self.population is not None and self.n + len(y) > self.population:
            raise InvalidParameterError(_("more values ({n}) than the population of {population} they are drawn "
                                          "from", n=self.n + len(y), population=self.population))
        if not len(y):
            return self
        for name, side in self._sides().items():
            yy = y if name == "lower" else 1.0 - y
            s = self._s if name == "lower" else self.n - self._s
            lam = _plugin_bets(yy, side.alpha, self.tuned_for, self.n, s, self._q)[0]
            side.advance(yy, lam, self.n, s, self.population)
        __, self._s, self._q = _plugin_bets(y, 0.5, None, self.n, self._s, self._q)
        self._sum += float(np.sum(self.lo + (self.hi - self.lo) * y))
        self.n += len(y)
        return self

    def _state(self) -> dict[str, Any]:
        return {"kind": self.kind, "bounds": [self.lo, self.hi], "alpha": self.alpha, "population": self.population,
                "tuned_for": self.tuned_for,
                "n": self.n, "scaled_sum": self._s, "squared_deviations": self._q, "sum": self._sum,
                "sides": {name: side.to_dict() for name, side in self._sides().items()}}

    def _restore(self, data: Mapping[str, Any]) -> None:
        self.n = int(data["n"])
        self._s, self._q, self._sum = float(data["scaled_sum"]), float(data["squared_deviations"]), float(data["sum"])
        for name, side in self._sides().items():
            side.load(data["sides"][name])


class ConfidenceSequence(_Sequence):
    """An anytime-valid confidence sequence for the mean of values in ``bounds``, fed one value or a batch at a time.

    With probability at least ``1 - alpha`` the interval ``[lower, upper]`` contains the mean at *every* ``n`` at
    once, so it may be looked at after each value and the sampling stopped whenever it is narrow enough (or
    excludes a value): the interval at a stopping time chosen from the data keeps its level.  ``side="both"``
    bets at ``alpha / 2`` on each side; ``"lower"`` / ``"upper"`` give a one-sided bound at ``alpha``
    (the other end stays at the bound).  The bounds are computed on ``resolution + 1`` equally spaced candidate
    means and rounded outwards (never narrower than the exact sequence).  ``population``: the values are drawn
    without replacement from that many items (in a random order), and the interval covers their mean.

    The state is a few arrays; :meth:`to_dict` / :meth:`from_dict` save and restore it (JSON-ready), so a monitor
    can resume after a restart.

    >>> cs = ConfidenceSequence((-1, 1), alpha=0.05)
    >>> for batch in ([0.1, 0.0, 0.2] * 20, [0.1] * 60):
    ...     _ = cs.update(batch)
    >>> cs.n, round(cs.mean, 4), bool(cs.lower < 0.1 < cs.upper)
    (120, 0.1, True)
    >>> ConfidenceSequence.from_dict(cs.to_dict()).lower == cs.lower
    True
    """

    kind = "confidence_sequence"

    def __init__(self, bounds: tuple[float, float] = (0.0, 1.0), alpha: float = 0.05, *, side: str = "both",
                 resolution: int = 1000, population: int | None = None, tuned_for: int | None = None) -> None:
        super().__init__(bounds, alpha, population, tuned_for)
        if side not in ("both", "lower", "upper"):
            raise InvalidParameterError(_("side must be 'both', 'lower' or 'upper', got {value!r}", value=side))
        if isinstance(resolution, bool) or not isinstance(resolution, (int, np.integer)) or resolution < 2:
            raise InvalidParameterError(_("resolution must be an integer >= 2, got {value!r}", value=resolution))
        self.side, self.resolution = side, int(resolution)
        grid = np.linspace(0.0, 1.0, self.resolution + 1)
        each = self.alpha / 2 if side == "both" else self.alpha
        self._by_side = {name: _Sided(grid, each) for name in ("lower", "upper") if side in ("both", name)}

    def _sides(self) -> dict[str, _Sided]:
        return self._by_side

    def _end(self, name: str) -> float | None:
        """The end of one side: the last of the candidates rejected from that end on, as a mean (None: none)."""
        side = self._by_side.get(name)
        if side is None or not side.rejected[0]:
            return None
        kept = np.flatnonzero(~side.rejected)  # every candidate up to the first one kept is rejected
        g = float(side.points[kept[0] - 1] if len(kept) else side.points[-1])
        return self.lo + (self.hi - self.lo) * g if name == "lower" else self.hi - (self.hi - self.lo) * g

    def _logical(self) -> tuple[float, float]:
        """What a finite population's mean can still be: the values seen plus the unseen all at one bound."""
        if self.population is None or not self.n:
            return self.lo, self.hi
        rest = self.population - self.n
        span = self.hi - self.lo
        return (self.lo + span * self._s / self.population,
                self.lo + span * (self._s + rest) / self.population)

    @property
    def lower(self) -> float:
        """The lower end: the largest candidate mean below which every candidate was rejected (``bounds[0]`` when
        none was); for a finite population at least the mean the values seen already imply."""
        end = self._end("lower")
        bet = self.lo if end is None else end
        return max(bet, self._logical()[0]) if self.side != "upper" else self.lo

    @property
    def upper(self) -> float:
        """The upper end (``bounds[1]`` when nothing was rejected)."""
        end = self._end("upper")
        bet = self.hi if end is None else end
        return min(bet, self._logical()[1]) if self.side != "lower" else self.hi

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def excludes(self, value: float) -> bool:
        """Whether ``value`` lies outside the sequence: at or below a rejected lower candidate (below what a finite
        population allows), or at or above a rejected upper one."""
        low, high = self._end("lower"), self._end("upper")
        floor, ceiling = self._logical()
        return ((low is not None and value <= low) or (high is not None and value >= high)
                or value < floor or value > ceiling)

    def describe(self) -> str:
        """What the interval is: level, sidedness, anytime-valid."""
        level = f"{100 * (1 - self.alpha):.6g}%"
        sided = "two-sided" if self.side == "both" else "one-sided"
        return f"{level} {sided} anytime-valid betting confidence sequence (unadjusted)"

    def to_dict(self) -> dict[str, Any]:
        """The whole state (JSON-ready)."""
        return {**self._state(), "side": self.side, "resolution": self.resolution}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ConfidenceSequence:
        """Restore a sequence saved by :meth:`to_dict`."""
        cs = cls(tuple(data["bounds"]), data["alpha"], side=data["side"],  # type: ignore[arg-type]
                 resolution=data["resolution"], population=data["population"], tuned_for=data.get("tuned_for"))
        cs._restore(data)
        return cs


class SequentialTest(_Sequence):
    """An anytime-valid sequential test of ``H0: mean >= null`` (``alternative="less"``) or ``mean <= null``
    (``"greater"``) for values in ``bounds``, fed one value or a batch at a time.

    ``rejected`` turns true (and stays true) once the betting capital reaches ``1/alpha``; under H0 that happens
    with probability at most ``alpha`` over the whole, unbounded stream (Ville's inequality), however often it is
    looked at.  Fed paired differences ``new - reference`` of a metric in ``[0, 1]`` (bounds ``(-1, 1)``) with
    ``null=-margin`` and ``alternative="less"``, it is a drop alarm whose false-alarm rate is ``alpha``.
    ``p_value`` is the anytime-valid p-value ``min(1, 1 / max capital)``; ``rejected_at`` the number of values
    seen when it first rejected.

    >>> alarm = SequentialTest(-0.05, bounds=(-1, 1), alpha=0.01, alternative="less")
    >>> _ = alarm.update([0.0, 0.01, -0.02] * 30)      # no drop: no alarm
    >>> alarm.rejected
    False
    >>> _ = alarm.update([-0.3, -0.1, -0.2] * 30)      # a drop of 0.2
    >>> alarm.rejected, alarm.rejected_at is not None and alarm.rejected_at > 90
    (True, True)
    """

    kind = "sequential_test"

    def __init__(self, null: float, *, bounds: tuple[float, float] = (0.0, 1.0), alpha: float = 0.05,
                 alternative: str = "less", population: int | None = None, tuned_for: int | None = None) -> None:
        super().__init__(bounds, alpha, population, tuned_for)
        if alternative not in ("greater", "less"):
            raise InvalidParameterError(_("alternative must be 'greater' or 'less', got {value!r}", value=alternative))
        if not self.lo <= float(null) <= self.hi:
            raise InvalidParameterError(_("the null value {value!r} lies outside the bounds [{lo:g}, {hi:g}]",
                                          value=null, lo=self.lo, hi=self.hi))
        self.null, self.alternative = float(null), alternative
        m = (self.null - self.lo) / (self.hi - self.lo)
        name = "lower" if alternative == "greater" else "upper"  # "greater": reject small means (lower side)
        self._side_name = name
        self._one = {name: _Sided(np.array([m if name == "lower" else 1.0 - m]), self.alpha)}
        self.rejected_at: int | None = None

    def _sides(self) -> dict[str, _Sided]:
        return self._one

    def update(self, values: Any) -> SequentialTest:
        """Add one value or a batch (in order); returns ``self``."""
        before, was = self.n, self.rejected
        super().update(values)
        first = int(self._one[self._side_name].first[0])
        if not was and first >= 0:
            self.rejected_at = before + first + 1
        return self

    @property
    def rejected(self) -> bool:
        return bool(self._one[self._side_name].rejected[0])

    @property
    def e_value(self) -> float:
        """The current capital (an e-value for H0)."""
        return float(np.exp(self._one[self._side_name].log_k[0]))

    @property
    def p_value(self) -> float:
        """``min(1, 1 / largest capital so far)``: an anytime-valid p-value."""
        return float(min(1.0, math.exp(-self._one[self._side_name].best[0])))

    def to_dict(self) -> dict[str, Any]:
        """The whole state (JSON-ready)."""
        return {**self._state(), "null": self.null, "alternative": self.alternative, "rejected_at": self.rejected_at}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SequentialTest:
        """Restore a test saved by :meth:`to_dict`."""
        test = cls(data["null"], bounds=tuple(data["bounds"]), alpha=data["alpha"],  # type: ignore[arg-type]
                   alternative=data["alternative"], population=data["population"], tuned_for=data.get("tuned_for"))
        test._restore(data)
        test.rejected_at = data["rejected_at"]
        return test


# -- early stopping --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StopWhen:
    """When to stop an expensive evaluation early: the anytime-valid interval of the mean of ``metric`` (or, with
    ``baseline``, of the per-query difference ``metric - baseline``) is at most ``width`` wide, or excludes
    ``excludes`` (a threshold; with a baseline, ``-margin``).

    Queries are taken in a random order (``seed``) in rounds of ``every``; the interval is a
    :class:`ConfidenceSequence` at level ``1 - alpha`` over the ``population`` of queries available, so
    the interval reported when the evaluation stops covers the mean over *all* of them with probability at least
    ``1 - alpha``, whenever it stops.  ``baseline`` maps query ids to the baseline's value of the metric.
    ``bounds`` is the range of one query's value (of the difference with a baseline: twice as wide, centred on 0).

    >>> StopWhen("ndcg@10", width=0.1).reason(ConfidenceSequence((0, 1)).update([0.5] * 2000))
    'width'
    """

    metric: str
    width: float | None = None
    excludes: float | None = None
    alpha: float = 0.05
    every: int = 10
    min_queries: int = 10
    seed: int = 0
    baseline: Mapping[str, float] | None = None
    bounds: tuple[float, float] = (0.0, 1.0)

    def __post_init__(self) -> None:
        if self.width is None and self.excludes is None:
            raise InvalidParameterError(_("stop_when needs a width or a value to exclude"))
        if self.width is not None and not (isinstance(self.width, (int, float)) and self.width > 0):
            raise InvalidParameterError(_("the width must be a number > 0, got {value!r}", value=self.width))
        _alpha(self.alpha)
        for name in ("every", "min_queries"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name=name, value=v))

    @property
    def value_bounds(self) -> tuple[float, float]:
        """The range of one observation: the metric's, or of a difference to the baseline."""
        lo, hi = _bounds(self.bounds)
        return (lo - hi, hi - lo) if self.baseline is not None else (lo, hi)

    def planned(self, population: int | None = None) -> int | None:
        """The sample size the bets are tuned for: the number of values after which a sequence of the widest
        spread (values at both bounds) would be ``width`` wide, ``2 log(2/alpha) / (width / range)^2`` (at most
        ``population``); None without a width (the sequence's own bets)."""
        if self.width is None:
            return None
        lo, hi = self.value_bounds
        n = math.ceil(2 * math.log(2 / self.alpha) / (self.width / (hi - lo)) ** 2)
        return n if population is None else max(1, min(n, population))

    def start(self, population: int | None = None) -> ConfidenceSequence:
        """A fresh confidence sequence for this rule, its bets tuned for :meth:`planned` values."""
        return ConfidenceSequence(self.value_bounds, self.alpha, population=population,
                                  tuned_for=self.planned(population))

    def reason(self, cs: ConfidenceSequence) -> str | None:
        """``"width"`` or ``"excludes"`` when the rule is met (after ``min_queries``), else None."""
        if cs.n < self.min_queries:
            return None
        if self.width is not None and cs.width <= self.width:
            return "width"
        if self.excludes is not None and cs.excludes(self.excludes):
            return "excludes"
        return None


#: why an early stop stopped (or did not)
_STOP_REASONS: dict[str, str] = {
    "width": N_("the interval is at most {width} wide"),
    "excludes": N_("the interval excludes {value}"),
    "none": N_("the rule was never met, every query was used"),
    "failed": N_("a pair could not be judged, so no early stop was made"),
}

@dataclass(frozen=True)
class Stopped:
    """How an evaluation stopped early: the interval when it stopped, the queries used and the calls saved."""

    metric: str
    reason: str | None
    used: int
    available: int
    lower: float
    upper: float
    mean: float
    alpha: float
    difference: bool = False

    width: float | None = None
    excludes: float | None = None
    unit: str = "queries"
    grade: int | None = None

    @property
    def saved(self) -> int:
        """Queries not run (calls not made)."""
        return self.available - self.used

    def text(self, lang: str = "en") -> str:
        """One sentence: how many queries were used and saved, why it stopped, and what the interval guarantees."""
        reason = _(_STOP_REASONS[self.reason or "none"], width=f"{self.width:g}" if self.width is not None else "",
                   value=f"{self.excludes:g}" if self.excludes is not None else "")
        values = {"used": self.used, "available": self.available, "saved": self.saved, "reason": reason,
                  "metric": self.metric, "grade": self.grade, "level": f"{100 * (1 - self.alpha):.6g}%",
                  "lower": f"{self.lower:.4f}", "upper": f"{self.upper:.4f}"}
        if self.unit == "pairs":
            said = _("stopped after {used} of {available} pairs ({saved} not judged; {reason}): with probability at "
                     "least {level}, the share of pairs graded {grade} or more over all {available} pairs lies in "
                     "[{lower}, {upper}] (anytime-valid betting confidence sequence, two-sided, unadjusted; pairs "
                     "taken in a random order)", **values)
        elif self.difference:
            said = _("stopped after {used} of {available} queries ({saved} not run; {reason}): with probability at "
                     "least {level}, the mean difference of {metric} to the baseline over all {available} queries "
                     "lies in [{lower}, {upper}] (anytime-valid betting confidence sequence, two-sided, unadjusted; "
                     "queries taken in a random order)", **values)
        else:
            said = _("stopped after {used} of {available} queries ({saved} not run; {reason}): with probability at "
                     "least {level}, the mean {metric} over all {available} queries lies in [{lower}, {upper}] "
                     "(anytime-valid betting confidence sequence, two-sided, unadjusted; queries taken in a random "
                     "order)", **values)
        return said.text(lang)

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "reason": self.reason, "used": self.used, "available": self.available,
                "saved": self.saved, "interval": [self.lower, self.upper], "mean": self.mean,
                "confidence": 1 - self.alpha, "difference": self.difference, "unit": self.unit,
                "text": self.text()}
