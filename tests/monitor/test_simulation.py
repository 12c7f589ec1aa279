"""A simulated production canary (``rankscope.monitor.simulate``): a degradation at a known round is alerted within
three rounds, and 50 stationary streams of the same length raise false drop alerts at a rate within alpha."""

from __future__ import annotations

import pytest

from rankscope.datasets import load_dataset
from rankscope.monitor.simulate import simulate_canary, synthetic_base

ALPHA = 0.05


@pytest.fixture(scope="module")
def setup() -> tuple:
    ts = load_dataset("cranfield")
    return ts.qrels, synthetic_base(ts.qrels, seed=1)


@pytest.mark.slow
def test_a_degradation_is_alerted_within_three_rounds(setup: tuple) -> None:
    qrels, base = setup
    sims = [simulate_canary(qrels, base, rounds=16, degrade_at=8, fraction=0.3, margin=0.02, alpha=ALPHA, seed=s)
            for s in range(5)]
    assert all(s.means[-1] < s.means[0] - 0.05 for s in sims)  # the degradation is real: nDCG@10 -0.1
    assert all(s.rounds_to_alert is not None and s.rounds_to_alert <= 3 for s in sims), \
        [s.rounds_to_alert for s in sims]
    assert not any(s.false_alarm for s in sims)


@pytest.mark.slow
def test_fifty_stationary_streams_stay_within_alpha(setup: tuple) -> None:
    qrels, base = setup
    sims = [simulate_canary(qrels, base, rounds=16, margin=0.02, alpha=ALPHA, seed=1000 + s) for s in range(50)]
    rate = sum(s.false_alarm for s in sims) / 50
    assert rate <= ALPHA
