"""Paired tests against scipy and against an exact enumeration of sign flips."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from rankscope.errors import InvalidParameterError
from rankscope.stats import paired


def _matrix(k: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.random((k, n))
    b = np.clip(a + rng.normal(0.03, 0.2, (k, n)), 0, 1)
    return b - a


@pytest.mark.parametrize("n", [2, 3, 10, 57, 500])
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_t_matches_scipy_ttest_rel(n: int, alternative: str) -> None:
    rng = np.random.default_rng(n)
    a, b = rng.random((4, n)), rng.random((4, n))
    t, p = paired.paired_t(b - a, alternative)  # type: ignore[arg-type]
    ref = stats.ttest_rel(b, a, axis=1, alternative=alternative)
    np.testing.assert_allclose(t, ref.statistic, rtol=1e-10)
    np.testing.assert_allclose(p, ref.pvalue, rtol=1e-10)


def test_t_degenerate_rows() -> None:
    d = np.array([[0.0, 0.0, 0.0], [0.1, 0.1, 0.1], [-0.2, -0.2, -0.2]])
    t, p = paired.paired_t(d)
    assert np.isnan(t[0]) and p[0] == 1.0
    assert t[1] == np.inf and p[1] == 0.0
    assert t[2] == -np.inf and p[2] == 0.0
    _, p_less = paired.paired_t(d, "less")
    assert p_less.tolist() == [1.0, 1.0, 0.0]


@pytest.mark.parametrize("n", [8, 30, 80, 400])
@pytest.mark.parametrize("alternative", ["two-sided", "greater"])
def test_wilcoxon_matches_scipy(n: int, alternative: str) -> None:
    d = np.round(_matrix(3, n, n), 2)  # rounding creates ties and zeros
    w, p = paired.wilcoxon(d, alternative)  # type: ignore[arg-type]
    for i in range(3):
        ref = stats.wilcoxon(d[i], alternative=alternative)
        assert w[i] == pytest.approx(ref.statistic)
        assert p[i] == pytest.approx(ref.pvalue, rel=1e-10)


def test_wilcoxon_all_zero_row_is_not_significant() -> None:
    w, p = paired.wilcoxon(np.array([[0.0] * 6, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]]))
    assert np.isnan(w[0]) and p[0] == 1.0
    assert p[1] == pytest.approx(stats.wilcoxon([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]).pvalue)


def _exact_p(d: np.ndarray, alternative: str) -> float:
    """Independent reference: enumerate every sign assignment with itertools."""
    obs = d.sum()
    hits = 0
    total = 0
    for signs in itertools.product((1.0, -1.0), repeat=len(d)):
        s = float(np.dot(signs, d))
        total += 1
        if alternative == "two-sided":
            hits += abs(s) >= abs(obs) - 1e-12
        elif alternative == "greater":
            hits += s >= obs - 1e-12
        else:
            hits += s <= obs + 1e-12
    return hits / total


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_randomization_enumerates_exactly_when_feasible(alternative: str) -> None:
    d = np.round(_matrix(3, 9, 5), 2)  # 512 assignments, with ties among |d|
    _, p = paired.randomization(d, alternative, permutations=1000, rng=0)  # type: ignore[arg-type]
    for i in range(3):
        assert p[i] == pytest.approx(_exact_p(d[i], alternative), abs=1e-12)


def test_randomization_exact_matches_scipy_permutation_test() -> None:
    d = np.round(_matrix(1, 10, 11), 3)[0]
    _, p = paired.randomization(d[None, :], permutations=5000)
    ref = stats.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf)
    assert p[0] == pytest.approx(ref.pvalue, abs=1e-12)


def test_randomization_monte_carlo_agrees_with_exact_enumeration() -> None:
    # n = 16: 65,536 assignments, sampled with 20,000 random sign vectors
    d = np.round(_matrix(4, 16, 3), 2)
    exact = np.array([_exact_p(row, "two-sided") for row in d])
    perms = 20_000
    _, p = paired.randomization(d, permutations=perms, rng=7)
    se = np.sqrt(exact * (1 - exact) / perms) + 1e-4
    assert np.all(np.abs(p - exact) <= 4 * se), (p, exact)
    # p = (count + 1) / (permutations + 1)
    count = p * (perms + 1) - 1
    np.testing.assert_allclose(count, np.round(count), atol=1e-6)


def test_randomization_is_reproducible_with_a_seed() -> None:
    d = _matrix(6, 300, 1)
    _, p1 = paired.randomization(d, permutations=3000, rng=42)
    _, p2 = paired.randomization(d, permutations=3000, rng=np.random.default_rng(42))
    _, p3 = paired.randomization(d, permutations=3000, rng=43)
    assert p1.tolist() == p2.tolist()
    assert p1.tolist() != p3.tolist()


def test_randomization_shares_signs_across_rows() -> None:
    # the same row twice gives the same p-value: one batch of sign vectors for all rows
    row = _matrix(1, 200, 9)
    _, p = paired.randomization(np.vstack([row, row, -row]), permutations=2000, rng=3)
    assert p[0] == p[1] == p[2]


def test_randomization_chunking_does_not_change_results(monkeypatch: pytest.MonkeyPatch) -> None:
    d = _matrix(3, 500, 2)
    _, p_big = paired.randomization(d, permutations=3000, rng=5)
    monkeypatch.setattr(paired, "_CHUNK_BYTES", 8 * 63 * 100)  # 100 permutations per chunk
    monkeypatch.setattr(paired, "_TABLE_BYTES", 1)  # one row per block: the byte stream is replayed per row
    _, p_small = paired.randomization(d, permutations=3000, rng=5)
    np.testing.assert_array_equal(p_big, p_small)


def test_randomization_agrees_with_t_on_large_samples() -> None:
    d = _matrix(3, 2000, 4)
    _, p_t = paired.paired_t(d)
    _, p_r = paired.randomization(d, permutations=20_000, rng=0)
    np.testing.assert_allclose(p_r, p_t, atol=0.02)


def test_bad_input_raises_clear_errors() -> None:
    with pytest.raises(InvalidParameterError, match="alternative"):
        paired.paired_t(np.zeros((1, 3)), "bigger")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="finite"):
        paired.wilcoxon(np.array([[0.1, np.nan]]))
    with pytest.raises(InvalidParameterError, match="permutations"):
        paired.randomization(np.zeros((1, 3)), permutations=0)


def test_randomization_of_combined_rows_equals_direct_rows() -> None:
    base = np.round(_matrix(3, 400, 12), 2)
    combine = np.array([[1.0, 0, 0], [0, 1, -1], [-1, 0, 1], [0, 0, 1]])
    _, direct = paired.randomization(combine @ base, permutations=2000, rng=8)
    _, combined = paired.randomization(base, permutations=2000, rng=8, combine=combine)
    assert combined.tolist() == direct.tolist()
    small = np.round(_matrix(2, 8, 1), 2)  # 256 assignments: exact enumeration through the combination
    _, p = paired.randomization(small, permutations=1000, combine=np.array([[1.0, -1.0]]))
    assert p[0] == pytest.approx(_exact_p(small[0] - small[1], "two-sided"), abs=1e-12)
    with pytest.raises(InvalidParameterError, match="combine must have shape"):
        paired.randomization(base, combine=np.ones((2, 2)))


def test_randomization_is_exact_when_the_non_zero_differences_allow_it() -> None:
    # 12 non-zero and 28 zero differences: 2**12 = 4096 sign assignments matter, fewer than 10,000 permutations,
    # so the p-value is exact although 2**40 assignments of all the signs would not be enumerable
    rng = np.random.default_rng(24)
    d = np.zeros((3, 40))
    for i in range(3):
        d[i, rng.choice(40, 12, replace=False)] = np.round(rng.normal(0.05 * i, 0.1, 12), 3)
    _, p = paired.randomization(d, permutations=10_000, rng=0)
    for i in range(3):
        assert p[i] == pytest.approx(_exact_p(d[i][d[i] != 0], "two-sided"), abs=1e-12)
    r = paired.sign_flip_test(d, permutations=10_000, rng=0)
    assert r.exact.all() and (r.se == 0).all() and r.permutations == 0


def test_monte_carlo_standard_error_of_each_p_value() -> None:
    d = _matrix(4, 60, 5)
    r = paired.sign_flip_test(d, permutations=4000, rng=1)
    assert not r.exact.any() and r.permutations == 4000
    np.testing.assert_allclose(r.se, np.sqrt(r.p * (1 - r.p) / 4000))
    _, p = paired.randomization(d, permutations=4000, rng=1)
    assert p.tolist() == r.p.tolist()


def test_adaptive_draws_continue_the_same_stream_until_the_verdict_is_stable() -> None:
    d = _matrix(3, 60, 5)
    alpha = 0.05

    def undecided(p: np.ndarray, se: np.ndarray) -> np.ndarray:
        return np.abs(p - alpha) <= 2.576 * se

    fixed = paired.sign_flip_test(d, permutations=1000, rng=2)
    first = paired.sign_flip_test(d, permutations=1000, max_permutations=64_000, undecided=undecided, rng=2)
    again = paired.sign_flip_test(d, permutations=1000, max_permutations=64_000, undecided=undecided, rng=2)
    assert first.p.tolist() == again.p.tolist() and first.permutations == again.permutations
    if undecided(fixed.p, fixed.se).any():
        assert first.permutations > 1000
    assert first.permutations == 64_000 or not undecided(first.p, first.se).any()
    # the draws continue one stream: 2 000 sign vectors in one batch or in two give the same counts
    one = paired.sign_flip_test(d, permutations=2000, rng=2)
    two = paired.sign_flip_test(d, permutations=1000, max_permutations=2000,
                                undecided=lambda p, se: np.ones(len(p), dtype=bool), rng=2)
    assert one.p.tolist() == two.p.tolist()
