"""Power analysis for the paired t-test: how many queries detect a given difference.

With per-query differences of standard deviation ``sd``, a true mean difference
``delta`` and ``n`` queries, the paired t statistic follows a noncentral t
distribution with ``n - 1`` degrees of freedom and noncentrality
``delta / sd * sqrt(n)``.  The power at level ``alpha`` is the probability that
it falls beyond the critical value(s) ``t_{1-alpha/2, n-1}`` (two-sided) or
``t_{1-alpha, n-1}`` (one-sided).  :func:`queries_needed` returns the smallest
``n >= 2`` whose power reaches the target, starting from the normal
approximation ``((z_{1-alpha/2} + z_power) * sd / delta)^2`` and stepping.

``delta`` is the smallest difference that matters to the user, stated in advance.
Power computed at the *observed* difference ("observed power") is a one-to-one
function of the p-value and says nothing more (Hoenig & Heisey, 2001), so
:func:`estimate` has no such default.  A standard deviation of 0 (every query
differs by the same amount) makes the formula degenerate: it is reported as a
warning.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _

__all__ = ["power_of", "queries_needed", "PowerEstimate", "estimate", "SD_ZERO", "OBSERVED_POWER"]

SD_ZERO = (
    "the per-query differences do not vary (their standard deviation is 0: every query differs by the same "
    "amount): the t-test's power formula is degenerate and any 2 queries 'detect' the difference; check the runs"
)
OBSERVED_POWER = (
    "give the difference to detect (delta): the smallest difference that matters to you; power at the observed "
    "difference (\"observed power\") only restates the p-value"
)


def _validate(sd: float, delta: float, alpha: float, alternative: str) -> None:
    if not (math.isfinite(sd) and sd >= 0):
        raise InvalidParameterError(_("the standard deviation must be a finite number >= 0, got {value!r}", value=sd))
    if not (math.isfinite(delta) and delta != 0):
        raise InvalidParameterError(_("the difference to detect must be a non-zero number, got {value!r}", value=delta))
    if not 0 < alpha < 1:
        raise InvalidParameterError(_("alpha must be between 0 and 1, got {value!r}", value=alpha))
    if alternative not in ("two-sided", "one-sided"):
        raise InvalidParameterError(_("alternative must be 'two-sided' or 'one-sided', got {value!r}",
                                      value=alternative))


def power_of(n: int, sd: float, delta: float, alpha: float = 0.05, alternative: str = "two-sided") -> float:
    """Power of the paired t-test with ``n`` queries (see module doc).

    >>> round(power_of(34, 1.0, 0.5), 3)
    0.808
    """
    from scipy import stats

    _validate(sd, delta, alpha, alternative)
    if n < 2:
        return 0.0
    if sd == 0:
        return 1.0
    df = n - 1
    nc = abs(delta) / sd * math.sqrt(n)
    if alternative == "one-sided":
        return float(stats.nct.sf(stats.t.ppf(1 - alpha, df), df, nc))
    crit = stats.t.ppf(1 - alpha / 2, df)
    return float(stats.nct.sf(crit, df, nc) + stats.nct.cdf(-crit, df, nc))


def queries_needed(
    sd: float, delta: float, alpha: float = 0.05, power: float = 0.8, alternative: str = "two-sided"
) -> int:
    """Smallest number of queries whose paired t-test reaches ``power`` for a true difference ``delta``.

    >>> queries_needed(1.0, 0.5)
    34
    >>> queries_needed(0.1, 0.02, power=0.9)
    265
    """
    from scipy import stats

    _validate(sd, delta, alpha, alternative)
    if not 0 < power < 1:
        raise InvalidParameterError(_("power must be between 0 and 1, got {value!r}", value=power))
    if sd == 0:
        return 2
    tail = alpha / 2 if alternative == "two-sided" else alpha
    z = stats.norm.ppf(1 - tail) + stats.norm.ppf(power)
    n = max(2, math.floor((z * sd / abs(delta)) ** 2))
    while n > 2 and power_of(n - 1, sd, delta, alpha, alternative) >= power:
        n -= 1
    while power_of(n, sd, delta, alpha, alternative) < power:
        n += 1
    return n


@dataclass(frozen=True)
class PowerEstimate:
    """A power analysis from observed per-query differences of one run pair, for a stated ``delta``.

    ``current_power`` is the power to detect ``delta`` with the ``n`` queries at hand;
    ``warnings`` says when the analysis is degenerate (standard deviation 0).
    """

    n: int
    mean_diff: float
    sd_diff: float
    delta: float
    alpha: float
    power: float
    queries_needed: int
    current_power: float
    warnings: tuple[str, ...] = ()


def estimate(
    diffs: np.ndarray, delta: float, alpha: float = 0.05, power: float = 0.8,
    alternative: str = "two-sided",
) -> PowerEstimate:
    """Power analysis from per-query differences for the stated difference ``delta`` (no default: see module doc).

    >>> e = estimate(np.array([0.1, -0.1, 0.2, 0.0, 0.3, -0.2, 0.1, 0.0]), delta=0.05)
    >>> e.queries_needed, round(e.sd_diff, 4)
    (83, 0.1604)
    """
    d = np.asarray(diffs, dtype=np.float64).ravel()
    if len(d) < 2:
        raise InvalidParameterError(_("power analysis needs at least 2 queries, got {n}", n=len(d)))
    if delta is None:
        raise InvalidParameterError(_("give the difference to detect (delta): the smallest difference that matters "
                                      'to you; power at the observed difference ("observed power") only restates '
                                      "the p-value"))
    sd = 0.0 if np.all(d == d[0]) else float(d.std(ddof=1))
    mean = float(d.mean())
    target = float(delta)
    return PowerEstimate(
        n=len(d), mean_diff=mean, sd_diff=sd, delta=target, alpha=alpha, power=power,
        queries_needed=queries_needed(sd, target, alpha, power, alternative),
        current_power=power_of(len(d), sd, target, alpha, alternative),
        warnings=(SD_ZERO,) if sd == 0 else (),
    )
