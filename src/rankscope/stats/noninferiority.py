"""One-sided non-inferiority tests of a mean difference against a margin, with the matching confidence bound.

For per-query differences ``d`` (positive = the new run is better) and a margin
``delta >= 0``, H0 is ``mean(d) <= -delta`` (the run lost more than allowed) and
H1 ``mean(d) > -delta``.  Each test also gives the one-sided lower confidence
bound ``L`` of ``mean(d)`` at level ``1 - alpha`` obtained by inverting the same
test, so that ``p <= alpha`` exactly when ``L > -delta``: the verdict can be read
from either.  (A one-sided bound at ``alpha = 0.05`` is the lower end of a
two-sided 90% interval; ``alpha = 0.025`` matches a two-sided 95% interval.)

The margin is stated on the *mean*, so only tests of the mean qualify:

- ``"betting"`` (the default of the gate): the betting e-value of Waudby-Smith &
  Ramdas (2024) for values known to lie in ``bounds`` (``(-1, 1)`` for the
  difference of a metric in ``[0, 1]``), see :mod:`rankscope.stats.betting`;
  ``p = min(1, 1 / e)`` and ``L`` is the betting lower bound.  Its level holds at
  every ``n`` and for every distribution within the bounds (skewed, many ties);
  the price is power on few queries.
- ``"t"``: the paired t-test on ``d + delta``; ``L = mean - t_{1-alpha, n-1} * sd / sqrt(n)``.
- ``"randomization"``: the sign-flip test on ``d + delta``.  It assumes that
  ``d + delta`` is symmetric about 0 under H0.  A flip of the query set ``F``
  (``k`` queries) is at least as extreme as the observed assignment for the shift
  ``theta`` exactly when ``theta >= mean_F(d)``, so ``L`` is an order statistic of
  the flipped-set means (Hartigan's randomization interval).
- ``"bootstrap"``: the studentized (bootstrap-t) test: ``t* = (m* - m) / (s* / sqrt(n))``
  over query resamples, ``p = (1 + #{t* >= t_obs}) / (B + 1)`` and
  ``L = m - q_{1-alpha}(t*) * s / sqrt(n)``.  Second-order accurate when the
  differences are skewed, but still above its level on few, skewed queries.

The t, randomization and bootstrap tests rest on approximations; on real skewed
retrieval differences their type-I error at the margin exceeds ``alpha`` on small
samples (measured by ``bench/gate_calibration.py``; :func:`calibration_warning`
says when a sample lies in that region).

Degenerate samples are *undecided*, never passed: fewer than 2 differences, or
all differences equal (no variation to measure: a zero standard deviation is not
proof of anything), or a Monte-Carlo p-value still within error of ``alpha``
after the most resamples allowed.  ``undecided`` names the reason.

The Wilcoxon signed-rank test is refused: it tests a pseudo-median (the
Hodges–Lehmann location), not the mean the margin is stated on; on skewed
differences whose mean sits exactly at the margin it rejects far more often than
``alpha`` (see ``tests/stats/test_gate_noninferiority.py``).

Monte-Carlo p-values carry their standard error ``sqrt(p (1 - p) / B)``; a
verdict within :data:`Z_UNCERTAIN` standard errors of ``alpha`` is redrawn with
4 times as many resamples (same seed, so still deterministic) up to
``max_resamples``, and flagged ``near_alpha`` if it is still undecided.

>>> r = non_inferiority(np.array([0.0, 0.01, -0.01, 0.02, 0.0, 0.01]), 0.05, "t")
>>> r.passed, round(r.lower_bound, 4), r.lower_bound > -0.05
(True, -0.0036, True)
>>> non_inferiority([-0.04, -0.04], 0.05, "t").undecided   # equal differences prove nothing
'no_variance'

"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _
from rankscope.stats.montecarlo import Z_UNCERTAIN

__all__ = ["NON_INFERIORITY_TESTS", "NonInferiority", "non_inferiority", "Z_UNCERTAIN", "refuse_wilcoxon",
           "UNDECIDED", "miscalibrated", "skewness", "CALIBRATION"]

NON_INFERIORITY_TESTS: tuple[str, ...] = ("betting", "t", "randomization", "bootstrap")

#: why a verdict is undecided: fewer than 2 differences, all of them equal, a Monte-Carlo p-value within error of
#: alpha after the most resamples allowed
UNDECIDED: tuple[str, ...] = ("no_queries", "one_query", "no_variance", "unstable")

_WILCOXON = (
    "the Wilcoxon signed-rank test cannot check a maximum drop: it tests a pseudo-median (Hodges-Lehmann "
    "location), not the mean the margin is stated on, and passes runs whose mean dropped by more than the "
    "margin when a few queries lose a lot; use --test betting, t, randomization or bootstrap"
)


def refuse_wilcoxon(test: str) -> None:
    """Raise the explanation of why Wilcoxon cannot test a margin on a mean (and the other unknown tests)."""
    if test == "wilcoxon":
        raise InvalidParameterError(_("the Wilcoxon signed-rank test cannot check a maximum drop: it tests a "
                                      "pseudo-median (Hodges-Lehmann location), not the mean the margin is stated "
                                      "on, and passes runs whose mean dropped by more than the margin when a few "
                                      "queries lose a lot; use --test betting, t, randomization or bootstrap"))
    if test not in NON_INFERIORITY_TESTS:
        tests = Items(NON_INFERIORITY_TESTS)
        raise InvalidParameterError(_("the test of a maximum drop must be one of {tests}, got {value!r}", tests=tests,
                                      value=test))


@dataclass(frozen=True)
class NonInferiority:
    """The outcome of :func:`non_inferiority` (``lower_bound``: one-sided ``1 - alpha`` bound of ``mean(d)``).

    ``undecided`` is None for a verdict, else the reason none can be given (one of :data:`UNDECIDED`); an
    undecided result has not ``passed``.  ``p_value`` and ``lower_bound`` are nan / ``-inf`` when undefined.
    ``skew`` is the sample skewness of the differences (nan below 3 of them or without variation).
    """

    test: str
    alpha: float
    margin: float
    n: int
    mean_diff: float
    p_value: float
    lower_bound: float
    mc_se: float | None = None
    resamples: int | None = None
    undecided: str | None = None
    skew: float = math.nan
    bounds: tuple[float, float] | None = None

    @property
    def passed(self) -> bool:
        """``p <= alpha`` on a sample that allows a verdict: evidence that the mean drop is smaller than the margin."""
        return self.undecided is None and self.p_value <= self.alpha

    @property
    def near_alpha(self) -> bool:
        """A Monte-Carlo p-value within :data:`Z_UNCERTAIN` standard errors of ``alpha``."""
        return self.mc_se is not None and abs(self.p_value - self.alpha) <= Z_UNCERTAIN * self.mc_se

    @property
    def confidence(self) -> float:
        """Confidence level of :attr:`lower_bound` (``1 - alpha``)."""
        return 1.0 - self.alpha

    @property
    def miscalibrated(self) -> bool:
        """Whether this test was measured above its level at this ``n`` and skewness (:func:`miscalibrated`)."""
        return miscalibrated(self.test, self.n, self.skew)


def skewness(d: np.ndarray) -> float:
    """The sample skewness ``g1 = m3 / m2^1.5`` of ``d`` (nan below 3 values or without variation).

    >>> round(skewness(np.array([0.0, 0.0, 0.0, -1.0])), 4)
    -1.1547
    """
    d = np.asarray(d, dtype=np.float64)
    if len(d) < 3:
        return math.nan
    c = d - d.mean()
    m2 = float(np.mean(c * c))
    if m2 <= 1e-300:
        return math.nan
    return float(np.mean(c**3) / m2**1.5)


#: where each approximate test was measured above its level (``bench/gate_calibration.py``: nominal 0.05, margin
#: 0.05, nDCG@10 differences of five real DL-HARD run pairs and a synthetic case, n = 10 / 25 / 50 / 200, 3,000
#: replications): ``(largest n, skewness at or below)`` pairs.  A sample with at most that many queries and a
#: sample skewness at or below the value lies in the region (the simulation's skewness is that of the whole
#: difference set; a small sample's own skewness is a noisy estimate of it)
CALIBRATION: dict[str, tuple[tuple[int, float], ...]] = {
    "t": ((200, -1.0),),
    "randomization": ((200, -1.0),),
    "bootstrap": ((50, -1.0), (10, math.inf)),
}


def miscalibrated(test: str, n: int, skew: float) -> bool:
    """Whether ``test`` was measured anti-conservative (type-I error above ``alpha`` by more than 2 Monte-Carlo
    standard errors) at this many queries and this skewness: the region :data:`CALIBRATION`.

    >>> miscalibrated("t", 50, -1.4), miscalibrated("betting", 10, -3.0)
    (True, False)
    """
    return any(n <= most and (below == math.inf or (math.isfinite(skew) and skew <= below))
               for most, below in CALIBRATION.get(test, ()))


def _t(d: np.ndarray, margin: float, alpha: float) -> tuple[float, float]:
    from scipy import stats

    from rankscope.stats.paired import paired_t

    n = len(d)  # >= 2 and not all equal: the caller says undecided otherwise
    __, p = paired_t((d + margin)[None, :], "greater")
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    return float(p[0]), mean - float(stats.t.ppf(1 - alpha, n - 1)) * sd / math.sqrt(n)


def _flipped_set_means(d: np.ndarray, resamples: int, seed: int) -> tuple[np.ndarray, int, bool]:
    """Means of ``d`` over the flipped set of each sign assignment (``-inf`` for the identity); exact when 2**n fits."""
    from rankscope.stats.paired import _all_signs, _flipped_sums

    n = len(d)
    rows = np.vstack([d, np.ones(n)])
    exact = n <= 62 and 2**n <= resamples
    if exact:
        sums = _all_signs(n) @ rows.T  # (2**n, 2)
        flipped, ones = sums[:, 0], sums[:, 1]
    else:
        out = _flipped_sums(rows, np.random.default_rng(seed), resamples)
        flipped, ones = out[0], out[1]
    k = np.rint((n - ones) / 2.0)
    part = (d.sum() - flipped) / 2.0  # sum of d over the flipped set
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(k > 0, part / np.maximum(k, 1.0), -np.inf)
    return v, (2**n if exact else resamples), exact


def _randomization(d: np.ndarray, margin: float, alpha: float, resamples: int, seed: int
                   ) -> tuple[float, float, int, bool]:
    v, total, exact = _flipped_set_means(d, resamples, seed)
    v = np.sort(v)
    tol = 1e-12 * max(float(np.abs(d).sum()), 1e-300)
    count = int(np.searchsorted(v, -margin + tol, side="right"))  # assignments at least as extreme at theta
    # reject H0 "mean <= theta" when the count of flipped means <= theta stays at or below c
    if exact:
        p = count / total
        c = math.floor(alpha * total + 1e-9)
    else:
        p = (count + 1) / (total + 1)
        c = math.floor(alpha * (total + 1) + 1e-9) - 1
    lower = -math.inf if c < 0 else float(v[min(c, len(v) - 1)])
    return min(p, 1.0), lower, total, exact


def _bootstrap_t(d: np.ndarray, margin: float, alpha: float, resamples: int, seed: int) -> tuple[float, float, int]:
    from rankscope.stats.bootstrap import bootstrap_means

    n = len(d)
    mean = float(d.mean())
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    if n < 2 or sd == 0:  # nothing to studentize with: no evidence (the caller reports it undecided)
        return 1.0, -math.inf, resamples
    m1, m2 = bootstrap_means(np.vstack([d, d * d]), resamples, np.random.default_rng(seed))
    var = np.maximum(m2 - m1 * m1, 0.0) * n / (n - 1)
    se = np.sqrt(var / n)
    dev = m1 - mean
    degenerate = np.where(dev > 0, np.inf, np.where(dev < 0, -np.inf, 0.0))  # a resample of equal values
    t_star = np.where(se > 0, dev / np.where(se > 0, se, 1.0), degenerate)
    t_obs = (mean + margin) / (sd / math.sqrt(n))
    count = int((t_star >= t_obs - 1e-12 * max(abs(t_obs), 1.0)).sum())
    p = (count + 1) / (resamples + 1)
    # reject while #{t* >= t_obs} <= c: t_obs above the (c+1)-th largest t*
    c = math.floor(alpha * (resamples + 1) + 1e-9) - 1
    q = math.inf if c < 0 else float(np.sort(t_star)[::-1][min(c, resamples - 1)])
    lower = mean - q * sd / math.sqrt(n)
    return min(p, 1.0), lower, resamples


def _betting(d: np.ndarray, margin: float, alpha: float, bounds: tuple[float, float], orderings: int, seed: int
             ) -> tuple[float, float]:
    from rankscope.stats.betting import betting_bound, betting_evalue

    e = float(betting_evalue(d, -margin, bounds=bounds, alternative="greater", alpha=alpha, orderings=orderings,
                             rng=seed))
    lower = float(betting_bound(d, bounds=bounds, alpha=alpha, orderings=orderings, rng=seed))
    return min(1.0, 1.0 / e) if e > 0 else 1.0, lower


def non_inferiority(
    diffs: Any,
    margin: float,
    test: str = "betting",
    alpha: float = 0.05,
    *,
    resamples: int = 10_000,
    max_resamples: int | None = None,
    rng: np.random.Generator | int | None = None,
    bounds: tuple[float, float] = (-1.0, 1.0),
    orderings: int | None = None,
) -> NonInferiority:
    """Test ``mean(diffs) > -margin`` (see module doc); ``rng`` seeds the randomization, bootstrap and betting tests.

    ``max_resamples`` (default ``16 * resamples``) bounds the redraws of a verdict
    that lies within Monte-Carlo error of ``alpha``.  ``bounds`` is the range every
    difference can take (the betting test's guarantee rests on it); ``orderings``
    the random orders its capital is averaged over (default
    :data:`~rankscope.stats.betting.ORDERINGS`).
    """
    from rankscope.stats.betting import ORDERINGS

    refuse_wilcoxon(test)
    d = np.asarray(diffs, dtype=np.float64).ravel()
    if not np.all(np.isfinite(d)):
        raise InvalidParameterError(_("per-query differences must be finite numbers (got nan or inf)"))
    if not (math.isfinite(margin) and margin >= 0):
        raise InvalidParameterError(_("the margin must be a finite number >= 0, got {value!r}", value=margin))
    if isinstance(alpha, bool) or not 0 < alpha < 1:
        raise InvalidParameterError(_("alpha must be a number between 0 and 1, got {value!r}", value=alpha))
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name="resamples",
                                      value=resamples))
    n = len(d)
    mean = float(d.mean()) if n else math.nan
    skew = skewness(d)
    given = (float(bounds[0]), float(bounds[1])) if test == "betting" else None
    reason = "no_queries" if n == 0 else "one_query" if n == 1 else "no_variance" if np.all(d == d[0]) else None
    if reason is not None:
        return NonInferiority(test, float(alpha), float(margin), n, mean, math.nan, -math.inf, undecided=reason,
                              skew=skew, bounds=given)
    seed = int(np.random.default_rng(0 if rng is None else rng).integers(0, 2**63 - 1))
    if test == "t":
        p, lower = _t(d, margin, alpha)
        return NonInferiority(test, float(alpha), float(margin), n, mean, p, lower, skew=skew)
    if test == "betting":
        assert given is not None
        p, lower = _betting(d, margin, alpha, given, ORDERINGS if orderings is None else orderings, seed)
        return NonInferiority(test, float(alpha), float(margin), n, mean, p, lower, skew=skew, bounds=given)
    limit = 16 * resamples if max_resamples is None else max(int(max_resamples), resamples)
    b = int(resamples)
    while True:
        if test == "randomization":
            p, lower, b_used, exact = _randomization(d, margin, alpha, b, seed)
        else:
            (p, lower, b_used), exact = _bootstrap_t(d, margin, alpha, b, seed), False
        se = None if exact else math.sqrt(p * (1 - p) / b_used)
        result = NonInferiority(test, float(alpha), float(margin), n, mean, p, lower, se, b_used, skew=skew)
        if not result.near_alpha or b >= limit:
            return replace(result, undecided="unstable") if result.near_alpha else result
        b = min(4 * b, limit)
