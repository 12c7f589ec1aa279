"""τ_AP with tied scores (averaged over the orders of each tie, so the order runs are given in does not matter) and
the batched τ-b / τ_AP that the bootstrap over queries uses, against scipy and a brute-force average."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import kendalltau

from rankscope.labels.system_ranking import kendall_tau_b, tau_ap


def tau_ap_one_order(reference: np.ndarray, order: list[int]) -> float:
    """τ_AP of one complete ranking ``order`` (best first); a reference tie counts one half."""
    n, total = len(order), 0.0
    for i in range(1, n):
        s = order[i]
        above = [t for t in order[:i]]
        total += sum(1.0 if reference[t] > reference[s] else 0.5 if reference[t] == reference[s] else 0.0
                     for t in above) / i
    return 2.0 / (n - 1) * total - 1.0


def tau_ap_all_tie_orders(reference: np.ndarray, estimate: np.ndarray) -> float:
    """The mean of τ_AP over every order of the systems tied under ``estimate``."""
    levels = sorted(set(estimate.tolist()), reverse=True)
    groups = [[i for i in range(len(estimate)) if estimate[i] == v] for v in levels]
    values = [tau_ap_one_order(reference, [s for g in combo for s in g])
              for combo in itertools.product(*(itertools.permutations(g) for g in groups))]
    return float(np.mean(values))


def test_tau_ap_does_not_depend_on_the_order_of_tied_runs() -> None:
    ref, est = np.array([0.3, 0.2, 0.1]), np.array([0.5, 0.5, 0.1])
    swapped = [1, 0, 2]
    assert tau_ap(ref, est) == pytest.approx(tau_ap(ref[swapped], est[swapped]))
    assert tau_ap(ref, est) == pytest.approx(tau_ap_all_tie_orders(ref, est))


@pytest.mark.parametrize("seed", range(30))
def test_tau_ap_is_the_mean_over_tie_orders(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    ref = rng.integers(0, 4, n).astype(float)  # ties in the reference too
    est = rng.integers(0, 3, n).astype(float)
    expected = tau_ap_all_tie_orders(ref, est)
    assert tau_ap(ref, est) == pytest.approx(expected)
    perm = rng.permutation(n)
    assert tau_ap(ref[perm], est[perm]) == pytest.approx(expected)
    assert tau_ap(-ref, -est, higher_is_better=False) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(10))
def test_batched_tau_b_and_tau_ap_match_one_at_a_time(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ref = rng.integers(0, 5, size=(40, 6)).astype(float)
    est = ref + rng.integers(-2, 3, size=(40, 6))
    taus = kendall_tau_b(ref, est)
    aps = tau_ap(ref, est)
    for b in range(40):
        expected = kendalltau(ref[b], est[b]).statistic
        assert taus[b] == pytest.approx(expected, nan_ok=True) or (np.isnan(taus[b]) and np.isnan(expected))
        assert aps[b] == pytest.approx(tau_ap_all_tie_orders(ref[b], est[b]))
