"""Bootstrap intervals, effect sizes and power analysis."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.power import TTestPower

from rankscope.errors import InvalidParameterError
from rankscope.stats import bootstrap, effect, power


def test_bootstrap_means_equal_a_direct_resampling() -> None:
    x = np.random.default_rng(0).random((3, 50))
    out = bootstrap.bootstrap_means(x, 200, rng=5)
    # recompute the first resamples with the same generator stream
    gen = np.random.default_rng(5)
    idx = gen.integers(0, 50, size=(200, 50))
    np.testing.assert_allclose(out, x[:, idx].mean(axis=2), rtol=1e-12)


def test_bootstrap_is_paired_and_reproducible() -> None:
    x = np.random.default_rng(1).random((2, 300))
    x[1] = x[0] + 0.05  # b is a everywhere + 0.05: every paired resample differs by exactly 0.05
    out = bootstrap.bootstrap_means(x, 500, rng=3)
    np.testing.assert_allclose(out[1] - out[0], 0.05, atol=1e-12)
    assert np.array_equal(out, bootstrap.bootstrap_means(x, 500, rng=3))
    lo, hi = bootstrap.percentile_ci(out, 0.05)
    assert np.all(lo <= x.mean(axis=1)) and np.all(x.mean(axis=1) <= hi)


def test_bootstrap_ci_covers_the_true_mean_most_of_the_time() -> None:
    rng = np.random.default_rng(2)
    samples = rng.normal(0.5, 0.2, size=(200, 100))
    lo, hi = bootstrap.percentile_ci(bootstrap.bootstrap_means(samples, 500, rng=1), 0.05)
    coverage = np.mean((lo <= 0.5) & (hi >= 0.5))
    assert 0.88 <= coverage <= 0.99


def test_effect_sizes() -> None:
    d = np.array([[0.1, 0.2, 0.3, 0.0], [0.0, 0.0, 0.0, 0.0]])
    np.testing.assert_allclose(effect.cohen_d_paired(d)[0], d[0].mean() / d[0].std(ddof=1))
    assert np.isnan(effect.cohen_d_paired(d)[1])
    assert effect.win_tie_loss(d).tolist() == [[3, 1, 0], [0, 4, 0]]
    assert effect.win_tie_loss(d, np.array([False, True])).tolist() == [[0, 1, 3], [0, 4, 0]]
    assert effect.relative_improvement(np.array([0.4]), np.array([0.5])).tolist() == pytest.approx([25.0])


@pytest.mark.parametrize(
    ("es", "alpha", "pw"), [(0.5, 0.05, 0.8), (0.2, 0.05, 0.8), (0.1, 0.01, 0.9), (1.5, 0.05, 0.8)]
)
def test_queries_needed_matches_statsmodels(es: float, alpha: float, pw: float) -> None:
    ref = TTestPower().solve_power(effect_size=es, alpha=alpha, power=pw, alternative="two-sided")
    assert power.queries_needed(0.2, 0.2 * es, alpha, pw) == int(np.ceil(ref))
    ref1 = TTestPower().solve_power(effect_size=es, alpha=alpha, power=pw, alternative="larger")
    assert power.queries_needed(0.2, 0.2 * es, alpha, pw, "one-sided") == int(np.ceil(ref1))


@pytest.mark.parametrize("n", [5, 30, 200])
def test_power_of_matches_statsmodels(n: int) -> None:
    ref = TTestPower().power(effect_size=0.3, nobs=n, alpha=0.05, alternative="two-sided")
    assert power.power_of(n, 1.0, 0.3) == pytest.approx(ref, rel=1e-9)


def test_estimate_from_differences_and_errors() -> None:
    d = np.random.default_rng(0).normal(0.02, 0.1, 400)
    e = power.estimate(d, delta=0.01)
    assert e.queries_needed == power.queries_needed(float(d.std(ddof=1)), 0.01)
    assert 0 < e.current_power < 1
    with pytest.raises(InvalidParameterError, match="non-zero"):
        power.queries_needed(0.1, 0.0)
    with pytest.raises(InvalidParameterError, match="at least 2"):
        power.estimate(np.array([0.1]), 0.05)


def test_power_needs_a_stated_effect_not_the_observed_one() -> None:
    # "observed power" (power at the observed difference) only restates the p-value: the effect must be stated
    d = np.random.default_rng(1).normal(0.02, 0.1, 50)
    with pytest.raises(InvalidParameterError, match="observed power"):
        power.estimate(d, None)  # type: ignore[arg-type]
    assert power.estimate(d, 0.05).delta == 0.05


def test_power_warns_when_the_differences_do_not_vary() -> None:
    e = power.estimate(np.full(30, 0.1), 0.05)
    assert e.sd_diff == 0 and any("standard deviation is 0" in w for w in e.warnings)
    assert power.estimate(np.random.default_rng(2).normal(0, 0.1, 30), 0.05).warnings == ()
