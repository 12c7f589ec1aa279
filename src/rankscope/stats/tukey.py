"""Sakai's randomized Tukey HSD test over many systems, and compact-letter groups.

Comparing ``S`` systems pairwise makes ``S (S - 1) / 2`` tests; the randomized
Tukey HSD test (Carterette 2012; Sakai, *Statistical reform in information
retrieval?*, 2014) controls the family-wise error over all of them with one null
distribution.  Under H0 the systems are exchangeable on every query, so each
trial permutes the ``S`` scores of every query at random among the systems,
recomputes the systems' means and keeps their *range* ``max - min``.  The p-value
of the pair ``(i, j)`` is the share of trials whose range reaches the observed
``|mean_i - mean_j|``: ``p = (count + 1) / (B + 1)`` over ``B`` random trials, or
``count / (S!)^n`` when all ``(S!)^n`` assignments can be enumerated
(``(S!)^n <= permutations``).  Each metric is its own family; the same
permutations serve every metric.  ``p`` is already adjusted for the pairs: no
further correction is applied.

:func:`compact_letters` summarises the significant pairs as letter groups
(the insert-absorb algorithm of Piepho, 2004): two systems share a letter
exactly when they are not significantly different.

>>> x = np.array([[[0.9], [0.8], [0.7], [0.9], [0.8], [0.9]],   # system a: 6 queries x 1 metric
...               [[0.1], [0.2], [0.1], [0.3], [0.2], [0.1]],   # system b
...               [[0.2], [0.1], [0.2], [0.2], [0.3], [0.1]]])  # system c
>>> r = tukey_hsd(x, permutations=2000, rng=0)
>>> bool(r.p[0, 0, 1] < 0.05), bool(r.p[0, 1, 2] > 0.5)
(True, True)
>>> compact_letters(["a", "b", "c"], [0.83, 0.17, 0.18], r.p[0] <= 0.05)
{'a': 'a', 'b': 'b', 'c': 'b'}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations as all_orders

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.stats.montecarlo import Undecided, adaptive_counts, standard_error

__all__ = ["TukeyResult", "tukey_hsd", "compact_letters"]

_CHUNK_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class TukeyResult:
    """``p[m, i, j]``: the HSD p-value of systems ``i`` and ``j`` on metric ``m`` (symmetric, 1 on the diagonal).

    ``se`` is the Monte-Carlo standard error of each p-value (0 when ``exact``);
    ``permutations`` the number of random trials drawn (``(S!)^n`` when exact).
    """

    p: np.ndarray
    se: np.ndarray
    exact: bool
    permutations: int


def _ranges(x: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """``(b, M)`` ranges of the system means when query ``q`` of trial ``t`` assigns system ``s`` the scores of
    system ``orders[t, q, s]``; ``x`` is ``(n, S, M)`` (one flat ``take`` of the ``(n * S, M)`` rows)."""
    b, n, s = orders.shape
    rows = (orders + (np.arange(n) * s)[None, :, None]).reshape(-1)
    means = np.take(x.reshape(n * s, -1), rows, axis=0).reshape(b, n, s, -1).sum(axis=1) / n
    return means.max(axis=1) - means.min(axis=1)


def _count(ranges: np.ndarray, observed: np.ndarray, tol: float) -> np.ndarray:
    """``(M, S, S)`` number of trials whose range reaches each observed difference."""
    out = np.empty(observed.shape, dtype=np.int64)
    for m in range(observed.shape[0]):
        r = np.sort(ranges[:, m])
        out[m] = len(r) - np.searchsorted(r, observed[m] - tol, side="left")
    return out


def tukey_hsd(
    scores: np.ndarray,
    *,
    permutations: int = 10_000,
    max_permutations: int | None = None,
    undecided: Undecided | None = None,
    rng: np.random.Generator | int | None = None,
) -> TukeyResult:
    """Randomized Tukey HSD p-values of every pair of systems, per metric (see module doc).

    ``scores`` is ``(systems, queries)`` or ``(systems, queries, metrics)``.  As in
    :func:`~rankscope.stats.paired.sign_flip_test`, ``undecided(p, se)`` (over the
    flattened ``(M, S, S)`` p-values) asks for more trials, up to ``max_permutations``.
    """
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim == 2:
        x = x[:, :, None]
    if x.ndim != 3 or x.shape[0] < 2:
        raise InvalidParameterError(_("scores must be (systems >= 2, queries[, metrics]), got shape {shape}",
                                      shape=x.shape))
    if not np.all(np.isfinite(x)):
        raise InvalidParameterError(_("per-query scores must be finite numbers (got nan or inf)"))
    if isinstance(permutations, bool) or not isinstance(permutations, (int, np.integer)) or permutations < 1:
        raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name="permutations",
                                      value=permutations))
    n_sys, n, n_met = x.shape
    xt = x.transpose(1, 0, 2)  # (n, S, M)
    means = x.mean(axis=1)  # (S, M)
    observed = np.abs(means.T[:, :, None] - means.T[:, None, :])  # (M, S, S)
    tol = 1e-9 * max(float(np.abs(x).max(initial=0.0)), 1e-300)
    if n == 0:
        ones = np.ones((n_met, n_sys, n_sys))
        return TukeyResult(ones, np.zeros_like(ones), True, 0)
    log_total = n * math.lgamma(n_sys + 1)
    if log_total <= math.log(permutations):
        orders_s = np.array(list(all_orders(range(n_sys))))  # (S!, S)
        f = len(orders_s)
        total = f**n
        codes = np.arange(total)[:, None] // (f ** np.arange(n))[None, :] % f  # (T, n): order index per query
        counts = _count(_ranges(xt, orders_s[codes]), observed, tol)
        p = counts / float(total)
        return TukeyResult(p, np.zeros_like(p), True, int(total))
    gen = np.random.default_rng(rng)
    chunk = max(1, _CHUNK_BYTES // (8 * n * n_sys * max(n_met, 2)))
    # up to 8 systems: draw one of the S! orders per query (an index), else sort random keys
    table = np.array(list(all_orders(range(n_sys)))) if n_sys <= 8 else None

    def draw(b: int) -> np.ndarray:
        out = np.zeros(observed.size, dtype=np.int64)
        done = 0
        while done < b:
            c = min(chunk, b - done)
            orders = (table[gen.integers(0, len(table), (c, n))] if table is not None
                      else np.argsort(gen.random((c, n, n_sys)), axis=2))
            out += _count(_ranges(xt, orders), observed, tol).ravel()
            done += c
        return out

    limit = max(int(permutations), int(max_permutations or permutations))
    counts, drawn = adaptive_counts(draw, observed.size, int(permutations), limit, undecided)
    p = ((counts + 1) / (drawn + 1.0)).reshape(observed.shape)
    idx = np.arange(n_sys)
    p[:, idx, idx] = 1.0
    return TukeyResult(np.minimum(p, 1.0), standard_error(p, drawn) * (p < 1), False, drawn)


def compact_letters(systems: Sequence[str], means: Sequence[float], significant: np.ndarray,
                    higher_is_better: bool = True) -> dict[str, str]:
    """Letter groups of ``systems``: two share a letter exactly when ``significant[i, j]`` is False.

    Insert-absorb (Piepho 2004): start with one group of all systems; for each
    significant pair split every group holding both into one without each; drop
    groups contained in another.  Letters go to the groups in the order of their
    best system's mean (``a``: the group of the best system).
    """
    s = len(systems)
    sig = np.asarray(significant, dtype=bool)
    if sig.shape != (s, s):
        raise InvalidParameterError(_("significant must be a {n} x {n} matrix, got shape {shape}", n=s,
                                      shape=sig.shape))
    groups: list[frozenset[int]] = [frozenset(range(s))]
    for i in range(s):
        for j in range(i + 1, s):
            if not (sig[i, j] or sig[j, i]):
                continue
            split: list[frozenset[int]] = []
            for g in groups:
                if i in g and j in g:
                    split += [g - {i}, g - {j}]
                else:
                    split.append(g)
            split = list(dict.fromkeys(split))
            groups = [g for g in split if not any(g < h for h in split)]
    m = np.asarray(means, dtype=np.float64)
    rank = np.argsort(-m if higher_is_better else m, kind="stable")
    position = {int(sys_i): r for r, sys_i in enumerate(rank)}
    groups.sort(key=lambda g: sorted(position[i] for i in g))
    letters = {name: "" for name in systems}
    for k, g in enumerate(groups):
        letter = _letter(k)
        for i in sorted(g):
            letters[systems[i]] += letter
    return letters


def _letter(k: int) -> str:
    """``a`` .. ``z``, then ``A`` .. ``Z``, then ``a1``, ``b1`` ..."""
    base = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return base[k % 52] + (str(k // 52) if k >= 52 else "")
