"""Betting confidence bounds and anytime-valid confidence sequences (rankscope.stats.betting).

The reference is a plain loop written from the equations of Waudby-Smith & Ramdas (JRSS-B 2024): the regularised
running mean and variance, the predictable plug-in bets truncated at c/m, the product of (1 + bet * (y - m)).
(The code also agrees with the ``confseq`` package's ``betting_mart`` / ``betting_lower_cs`` / ``betting_cs`` to
1e-14; that package does not build on Python 3.11, so it is not a test dependency.)
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rankscope.errors import InvalidParameterError
from rankscope.stats import betting as B
from rankscope.stats.betting import (
    ConfidenceSequence,
    SequentialTest,
    StopWhen,
    betting_bound,
    betting_evalue,
    betting_interval,
    minimum_queries,
)


def _reference_capital(y: list[float], m: float, alpha: float, fixed_n: int | None) -> list[float]:
    """K_t(m) for t = 1..n, one value at a time, straight from the paper."""
    caps, k = [], 1.0
    s, q = 0.0, 0.0
    var_prev = 0.25
    for t, v in enumerate(y, start=1):
        if fixed_n is None:
            lam = math.sqrt(2 * math.log(1 / alpha) / (var_prev * t * math.log(1 + t)))
        else:
            lam = math.sqrt(2 * math.log(1 / alpha) / (fixed_n * var_prev))
        lam = min(lam, B.TRUNCATION / m)
        k *= 1 + lam * (v - m)
        caps.append(k)
        s += v
        mu = min((0.5 + s) / (t + 1), 1.0)
        q += (v - mu) ** 2
        var_prev = (0.25 + q) / (t + 1)
    return caps


def test_the_fixed_n_capital_is_the_papers() -> None:
    rng = np.random.default_rng(1)
    for _ in range(10):
        n = int(rng.integers(3, 80))
        y = rng.beta(0.5, 2.0, n)
        m, alpha = float(rng.uniform(0.05, 0.9)), float(rng.choice([0.01, 0.05, 0.1]))
        ref = _reference_capital(y.tolist(), m, alpha, n)[-1]
        mine = math.exp(B._Fixed(y[None, :], alpha, np.arange(n)[None, :]).log_evalue(np.array([m]))[0])
        assert mine == pytest.approx(ref, rel=1e-12)


def test_the_sequence_rejects_what_the_papers_capital_rejects() -> None:
    rng = np.random.default_rng(2)
    y = rng.beta(2.0, 5.0, 300)
    cs = ConfidenceSequence((0, 1), 0.05, side="lower", resolution=100)
    for chunk in np.array_split(y, 7):  # batches of any size give the same sequence
        cs.update(chunk)
    side = cs._by_side["lower"]
    for k in range(1, 100, 7):
        m = side.points[k]
        caps = _reference_capital(y.tolist(), float(m), 0.05, None)
        assert side.best[k] == pytest.approx(max(0.0, math.log(max(caps))), abs=1e-9)
        assert bool(side.rejected[k]) == (max(caps) >= 20)


def test_one_value_at_a_time_equals_one_batch() -> None:
    y = np.random.default_rng(3).uniform(-1, 1, 120)
    a, b = ConfidenceSequence((-1, 1), resolution=200), ConfidenceSequence((-1, 1), resolution=200)
    a.update(y)
    for v in y:
        b.update(v)
    assert (a.lower, a.upper, a.n) == (b.lower, b.upper, b.n)


def _ever_misses(x: np.ndarray, mu: float, alpha: float, population: int | None = None) -> np.ndarray:
    """Whether the exact two-sided sequence (alpha/2 a side) excludes ``mu`` at some t, for each row of ``x``."""
    miss = np.zeros(len(x), dtype=bool)
    for flip in (False, True):
        y, m = (1 - x, 1 - mu) if flip else (x, mu)
        lam = B._plugin_bets(y, alpha / 2, None)[0]
        if population is None:
            mt = np.full(y.shape, m)
        else:
            before = np.concatenate([np.zeros((len(y), 1)), np.cumsum(y, axis=1)[:, :-1]], axis=1)
            mt = (population * m - before) / (population - np.arange(y.shape[1]))
        bet = np.minimum(lam, B.TRUNCATION / np.clip(mt, 1e-12, None))
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(mt < 0, np.inf, np.where(mt > 1, 0.0, np.log1p(bet * (y - np.clip(mt, 0, 1)))))
        miss |= (np.cumsum(f, axis=1) >= math.log(2 / alpha)).any(axis=1)
    return miss


@pytest.mark.parametrize("kind", ["bernoulli", "skewed", "ties"])
def test_coverage_holds_at_every_n_up_to_500(kind: str) -> None:
    """Simulated coverage of the whole sequence t = 1..500 (seeded): at least 1 - alpha - 2 MC s.e."""
    rng = np.random.default_rng(20261125)
    reps, n, alpha = 4000, 500, 0.05
    if kind == "bernoulli":
        x, mu = (rng.random((reps, n)) < 0.3).astype(float), 0.3
    elif kind == "skewed":  # a difference in [-1, 1] rescaled: most near 0, a few large losses
        d = np.where(rng.random((reps, n)) < 0.1, -rng.uniform(0.3, 1.0, (reps, n)), rng.normal(0.05, 0.05, (reps, n)))
        d = np.clip(d, -1, 1)
        x, mu = (d + 1) / 2, (0.9 * 0.05 - 0.1 * 0.65 + 1) / 2
    else:  # 70% exact ties at one value, the rest spread
        x = np.where(rng.random((reps, n)) < 0.7, 0.5, rng.uniform(0, 1, (reps, n)))
        mu = 0.5
    coverage = 1 - float(_ever_misses(x, mu, alpha).mean())
    se = math.sqrt(alpha * (1 - alpha) / reps)
    assert coverage >= 1 - alpha - 2 * se, coverage


def test_coverage_of_the_class_and_without_replacement() -> None:
    """The class itself (grid, batches) covers the mean of a finite population sampled in a random order."""
    rng = np.random.default_rng(7)
    population = rng.beta(0.4, 1.5, 400)
    mu = float(population.mean())
    reps, alpha, misses = 150, 0.1, 0
    for _ in range(reps):
        cs = ConfidenceSequence((0, 1), alpha, resolution=200, population=len(population))
        cs.update(rng.permutation(population)[:300])
        misses += cs.excludes(mu)
    se = math.sqrt(alpha * (1 - alpha) / reps)
    assert misses / reps <= alpha + 2 * se
    exact = _ever_misses(np.array([rng.permutation(population) for _ in range(2000)]), mu, alpha, len(population))
    assert exact.mean() <= alpha + 2 * math.sqrt(alpha * (1 - alpha) / 2000)


def test_all_of_a_population_pins_its_mean() -> None:
    values = np.random.default_rng(4).uniform(0, 1, 60)
    cs = ConfidenceSequence((0, 1), 0.05, population=60, resolution=1000).update(values)
    assert cs.lower <= values.mean() <= cs.upper and cs.width <= 0.01


def test_the_state_survives_json() -> None:
    y = np.random.default_rng(5).uniform(-1, 1, 200)
    cs = ConfidenceSequence((-1, 1), 0.05, resolution=300).update(y[:100])
    again = ConfidenceSequence.from_dict(json.loads(json.dumps(cs.to_dict())))
    cs.update(y[100:])
    again.update(y[100:])
    assert (again.lower, again.upper, again.n, again.mean) == (cs.lower, cs.upper, cs.n, cs.mean)
    t = SequentialTest(-0.05, bounds=(-1, 1)).update(y[:50])
    t2 = SequentialTest.from_dict(json.loads(json.dumps(t.to_dict())))
    assert t2.update(y[50:]).p_value == t.update(y[50:]).p_value


def test_a_drop_alarm_keeps_its_false_alarm_rate_and_finds_a_drop() -> None:
    """Fed paired differences one batch at a time: under 'no drop beyond the margin' it alarms at most alpha of the
    time over 500 observations; a real drop of 0.2 is found."""
    rng = np.random.default_rng(11)
    reps, alpha = 300, 0.05
    alarms = 0
    for _ in range(reps):
        t = SequentialTest(-0.05, bounds=(-1, 1), alpha=alpha, alternative="less")
        d = np.clip(rng.normal(-0.05, 0.2, 500), -1, 1)
        for batch in np.array_split(d, 5):
            t.update(batch)
        alarms += t.rejected
    assert alarms / reps <= alpha + 2 * math.sqrt(alpha * (1 - alpha) / reps)
    drop = SequentialTest(-0.05, bounds=(-1, 1), alpha=alpha).update(np.clip(rng.normal(-0.25, 0.2, 300), -1, 1))
    assert drop.rejected and drop.rejected_at is not None and drop.rejected_at < 300 and drop.p_value <= alpha


def test_the_fixed_n_bound_keeps_its_level_on_few_skewed_values() -> None:
    rng = np.random.default_rng(12)
    reps, alpha = 2000, 0.05
    for n in (10, 40):
        d = np.where(rng.random((reps, n)) < 0.1, -rng.uniform(0.3, 1.0, (reps, n)), 0.0)
        true = -0.1 * 0.65
        lb = betting_bound(d, bounds=(-1, 1), alpha=alpha, orderings=8, rng=n)
        assert float(np.mean(lb > true)) <= alpha + 2 * math.sqrt(alpha * (1 - alpha) / reps)


def test_no_valid_test_passes_zeros_below_the_minimum() -> None:
    assert minimum_queries(0.05) == 59 and (1 - 0.05) ** 58 > 0.05 >= (1 - 0.05) ** 59
    assert betting_bound(np.zeros(58), bounds=(-1, 1)) <= -0.05
    assert betting_evalue(np.zeros(58), -0.05, bounds=(-1, 1)) < 20


def test_intervals_and_bounds_agree() -> None:
    x = np.random.default_rng(6).uniform(0, 1, 80)
    lo, hi = betting_interval(x, bounds=(0, 1), alpha=0.1, rng=3)
    assert lo < x.mean() < hi
    lower = betting_bound(x, bounds=(0, 1), alpha=0.05)
    e = betting_evalue(x, lower - 1e-9, bounds=(0, 1), alpha=0.05)
    assert e >= 20 > betting_evalue(x, lower + 1e-6, bounds=(0, 1), alpha=0.05)


@pytest.mark.parametrize("bad", [dict(bounds=(1, 0)), dict(bounds=(0, 1), alpha=1.5), dict(bounds=(0, 0.5))])
def test_bad_input_is_a_clear_error(bad: dict) -> None:
    with pytest.raises(InvalidParameterError):
        betting_bound([0.2, 0.8], **bad)


def test_stop_when_needs_something_to_stop_on() -> None:
    with pytest.raises(InvalidParameterError, match="width or a value"):
        StopWhen("ndcg@10")
    assert StopWhen("ndcg@10", width=0.05).planned(50) == 50
    assert StopWhen("ndcg@10", excludes=0.5).planned(50) is None
