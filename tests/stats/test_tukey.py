"""Sakai's randomized Tukey HSD against a plain loop-based reference, compact letters, and compare(test="tukey-hsd")."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from rankscope import Qrels, Run, compare
from rankscope.errors import InvalidParameterError
from rankscope.stats.tukey import compact_letters, tukey_hsd


def _reference_hsd(x: list[list[float]], trials: list[list[tuple[int, ...]]] | None) -> list[list[float]]:
    """Randomized Tukey HSD written as plainly as possible.

    ``x[s][q]`` is the score of system s on query q.  Each trial gives, per query, the order in which the
    systems' scores are dealt back to the systems; p(i, j) = share of trials whose range of the system means
    reaches |mean_i - mean_j|.  ``trials=None`` enumerates every trial (exact); otherwise the identity counts
    once more and p = (count + 1) / (B + 1).
    """
    s_count, n = len(x), len(x[0])
    means = [sum(row) / n for row in x]
    exact = trials is None
    if trials is None:
        trials = [list(t) for t in itertools.product(itertools.permutations(range(s_count)), repeat=n)]
    counts = [[0] * s_count for _ in range(s_count)]
    for trial in trials:
        trial_means = []
        for s in range(s_count):
            total = 0.0
            for q in range(n):
                total += x[trial[q][s]][q]
            trial_means.append(total / n)
        spread = max(trial_means) - min(trial_means)
        for i in range(s_count):
            for j in range(s_count):
                if spread >= abs(means[i] - means[j]) - 1e-9:
                    counts[i][j] += 1
    b = len(trials)
    return [[(counts[i][j] / b if exact else (counts[i][j] + 1) / (b + 1)) if i != j else 1.0
             for j in range(s_count)] for i in range(s_count)]


def test_exact_enumeration_equals_the_reference() -> None:
    rng = np.random.default_rng(5)
    x = np.round(rng.random((3, 4)), 2)  # 3 systems, 4 queries: (3!)^4 = 1296 trials
    r = tukey_hsd(x, permutations=2000)
    assert r.exact and r.permutations == 1296 and (r.se == 0).all()
    ref = _reference_hsd(x.tolist(), None)
    np.testing.assert_allclose(r.p[0], ref, atol=1e-12)


def test_monte_carlo_agrees_with_the_reference() -> None:
    rng = np.random.default_rng(11)
    base = rng.random(25)
    x = np.clip(base[None, :] + rng.normal([[0.0], [0.05], [0.12], [0.13]], 0.1, (4, 25)), 0, 1)
    b = 3000
    r = tukey_hsd(x, permutations=b, max_permutations=b, rng=1)
    assert not r.exact and r.permutations == b
    py_rng = random.Random(2)
    trials = [[tuple(py_rng.sample(range(4), 4)) for _ in range(25)] for _ in range(b)]
    ref = np.array(_reference_hsd(x.tolist(), trials))
    se = np.sqrt(ref * (1 - ref) / b)
    assert np.all(np.abs(r.p[0] - ref) <= 4 * np.sqrt(2) * se + 2e-3), (r.p[0], ref)
    np.testing.assert_allclose(r.se[0][~np.eye(4, dtype=bool)],
                               np.sqrt(r.p[0] * (1 - r.p[0]) / b)[~np.eye(4, dtype=bool)])


def test_hsd_is_never_less_conservative_than_the_unadjusted_randomization_test() -> None:
    from rankscope.stats.paired import randomization

    rng = np.random.default_rng(3)
    x = rng.random((5, 40)) + np.arange(5)[:, None] * 0.03
    r = tukey_hsd(x, permutations=4000, max_permutations=4000, rng=0)
    for i, j in itertools.combinations(range(5), 2):
        _, p = randomization(x[j] - x[i], permutations=4000, rng=0)
        assert r.p[0, i, j] >= p[0] - 0.02


def _shares_letter(a: str, b: str) -> bool:
    return bool(set(a) & set(b))


@pytest.mark.parametrize("seed", range(30))
def test_compact_letters_share_a_letter_exactly_when_not_significant(seed: int) -> None:
    rng = np.random.default_rng(seed)
    s = int(rng.integers(2, 9))
    means = rng.random(s)
    sig = np.abs(means[:, None] - means[None, :]) > rng.uniform(0.1, 0.5)
    names = [f"s{i}" for i in range(s)]
    letters = compact_letters(names, means, sig)
    for i, j in itertools.combinations(range(s), 2):
        assert _shares_letter(letters[names[i]], letters[names[j]]) == (not sig[i, j]), (letters, sig)
    best = names[int(np.argmax(means))]
    assert "a" in letters[best]


def _five_systems() -> tuple[Qrels, dict[str, Run]]:
    rng = np.random.default_rng(8)
    n = 40
    qrels = Qrels.from_dict({f"q{i}": {f"r{i}": 1} for i in range(n)})
    runs = {}
    for k, name in enumerate(["a", "b", "c", "d", "e"]):
        pos = np.minimum(rng.geometric(0.25 + 0.15 * k, n) - 1, 15)
        runs[name] = Run.from_ranked_lists(
            {f"q{i}": [f"x{j}" for j in range(int(pos[i]))] + [f"r{i}"] for i in range(n)}, name=name)
    return qrels, runs


def test_compare_with_tukey_hsd() -> None:
    qrels, runs = _five_systems()
    c = compare(qrels, runs, ["mrr", "ndcg@10"], test="tukey-hsd", bootstrap=50)
    assert c.test == "tukey-hsd" and c.correction == "tukey-hsd" and c.groups is not None
    assert len(c.pairs) == 2 * math.comb(5, 2)
    for p in c.pairs:
        assert p.p_adjusted == p.p_value and p.significant == (p.p_value <= 0.05)
    # the groups say exactly which pairs differ
    for label in c.labels:
        for i, j in itertools.combinations(c.systems, 2):
            assert _shares_letter(c.groups[label][i], c.groups[label][j]) != c.pair(i, j, label).significant
    # the p-values are those of tukey_hsd on the per-query values
    again = tukey_hsd(c.scores, permutations=10_000, max_permutations=160_000, rng=np.random.default_rng(
        np.random.default_rng(0).integers(0, 2**63 - 1, size=2)[0]),
        undecided=lambda p, se: (se > 0) & (np.abs(p - 0.05) <= 2.576 * se))
    assert c.pair("a", "e", "mrr").p_value == again.p[0, 0, 4]
    assert c.pair("b", "d", "ndcg@10").p_value == again.p[1, 1, 3]
    assert c.permutations_drawn == again.permutations
    d = c.to_dict()
    assert d["groups"]["mrr"] == c.groups["mrr"]
    with_base = compare(qrels, runs, ["mrr"], test="tukey-hsd", baseline="a", bootstrap=50)
    assert [p.b for p in with_base.pairs] == ["b", "c", "d", "e"]
    assert with_base.groups == {"mrr": c.groups["mrr"]}


def test_tukey_hsd_refuses_a_second_correction() -> None:
    qrels, runs = _five_systems()
    with pytest.raises(InvalidParameterError, match="family-wise"):
        compare(qrels, runs, ["mrr"], test="tukey-hsd", correction="holm")
