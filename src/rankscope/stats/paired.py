"""Paired significance tests over per-query differences, vectorized over many comparisons.

Every function takes a matrix ``diffs`` of shape ``(k, n)``: ``k`` comparisons
(system pairs × metrics), each with ``n`` per-query differences ``d = b - a``
measured on the same queries.  All comparisons are tested in one call.

``alternative`` is ``"two-sided"`` (H1: mean d ≠ 0), ``"greater"`` (H1: mean d > 0)
or ``"less"`` (H1: mean d < 0).

Degenerate data: when every difference is zero (or there are fewer than two
queries) a test has nothing to detect; it returns ``statistic = nan`` and
``p = 1.0`` (never significant).  When every difference is the same non-zero
value the t statistic is ±inf and its p-value 0 in the direction of that value.

scipy is imported inside the functions that use it, so importing this module is cheap.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from rankscope.choices import TESTS  # declared once, with the CLI and service choices
from rankscope.errors import InvalidParameterError

__all__ = ["Alternative", "paired_t", "wilcoxon", "randomization", "sign_flip_sums", "TESTS"]

Alternative = Literal["two-sided", "greater", "less"]

# bytes of the sign matrix held in memory at once by the randomization test
_CHUNK_BYTES = 32 * 1024 * 1024
# per-row subset-sum tables (n/8 groups x 256 sums each) held at once; more rows are done in blocks
_TABLE_BYTES = 64 * 1024 * 1024


def _check(diffs: np.ndarray, alternative: str) -> np.ndarray:
    d = np.asarray(diffs, dtype=np.float64)
    if d.ndim == 1:
        d = d[None, :]
    if d.ndim != 2:
        raise InvalidParameterError(f"diffs must be a (comparisons × queries) matrix, got shape {d.shape}")
    if alternative not in ("two-sided", "greater", "less"):
        raise InvalidParameterError(
            f"alternative must be 'two-sided', 'greater' or 'less', got {alternative!r}"
        )
    if not np.all(np.isfinite(d)):
        raise InvalidParameterError("per-query differences must be finite numbers (got nan or inf)")
    return d


def paired_t(diffs: np.ndarray, alternative: Alternative = "two-sided") -> tuple[np.ndarray, np.ndarray]:
    """Paired Student t-test on each row: ``t = mean(d) / (sd(d) / sqrt(n))``, ``df = n - 1``.

    The p-value comes from the t distribution with ``n - 1`` degrees of freedom
    (scipy), exact for any ``n`` — not a table of critical values.

    >>> t, p = paired_t(np.array([[0.15, 0.12, 0.13, 0.12, 0.13]]))
    >>> round(float(t[0]), 3), bool(p[0] < 1e-4)
    (23.735, True)
    """
    from scipy import stats

    d = _check(diffs, alternative)
    k, n = d.shape
    stat = np.full(k, np.nan)
    p = np.ones(k)
    if n < 2:
        return stat, p
    mean = d.mean(axis=1)
    sd = d.std(axis=1, ddof=1)
    # a row whose values are all equal has sd == 0 in exact arithmetic; std may give ~1e-17
    const = np.all(d == d[:, :1], axis=1)
    ok = ~const
    stat[ok] = mean[ok] / (sd[ok] / np.sqrt(n))
    nonzero_const = const & (mean != 0)
    stat[nonzero_const] = np.sign(mean[nonzero_const]) * np.inf
    valid = ok | nonzero_const
    if alternative == "two-sided":
        p[valid] = 2.0 * stats.t.sf(np.abs(stat[valid]), n - 1)
    elif alternative == "greater":
        p[valid] = stats.t.sf(stat[valid], n - 1)
    else:
        p[valid] = stats.t.cdf(stat[valid], n - 1)
    return stat, np.minimum(p, 1.0)


def wilcoxon(diffs: np.ndarray, alternative: Alternative = "two-sided") -> tuple[np.ndarray, np.ndarray]:
    """Wilcoxon signed-rank test on each row (scipy, zero differences dropped: ``zero_method="wilcox"``).

    scipy chooses the exact null distribution for small samples without ties and
    the normal approximation otherwise (``method="auto"``).  Rows whose
    differences are all zero get ``p = 1``.

    >>> w, p = wilcoxon(np.array([[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, -0.05]]))
    >>> float(w[0]), round(float(p[0]), 4)
    (1.0, 0.0312)
    """
    from scipy import stats

    d = _check(diffs, alternative)
    k, _ = d.shape
    stat = np.full(k, np.nan)
    p = np.ones(k)
    live = np.any(d != 0, axis=1)
    if live.any():
        res = stats.wilcoxon(d[live], alternative=alternative, axis=1)
        stat[live] = res.statistic
        p[live] = res.pvalue
    return stat, np.minimum(p, 1.0)


def _all_signs(n: int) -> np.ndarray:
    """All ``2**n`` sign vectors (rows), the identity (all +1) first."""
    codes = np.arange(2**n, dtype=np.uint64)[:, None]
    bits = (codes >> np.arange(n, dtype=np.uint64)) & np.uint64(1)
    return 1.0 - 2.0 * bits.astype(np.float64)


def sign_flip_sums(diffs: np.ndarray, signs: np.ndarray) -> np.ndarray:
    """``(k, P)`` sums of each row of ``diffs`` under each sign vector (a matrix product)."""
    return np.asarray(diffs @ signs.T)


_BYTE_BITS = ((np.arange(256)[:, None] >> np.arange(8)) & 1).astype(np.float64)  # (256, 8): bit i of byte v


def _byte_table(row: np.ndarray) -> np.ndarray:
    """``T[g * 256 + v]`` = sum of the values of query group ``g`` (8 queries) whose bit is set in byte ``v``."""
    groups = (len(row) + 7) // 8
    padded = np.zeros(groups * 8)
    padded[: len(row)] = row
    return (padded.reshape(groups, 8) @ _BYTE_BITS.T).ravel()


def _flipped_sums(d: np.ndarray, gen: np.random.Generator, permutations: int) -> np.ndarray:
    """``(k, permutations)`` sums of each row of ``d`` under random sign flips.

    Each permutation is ``ceil(n / 8)`` random bytes (one bit per query: 1 = flip).
    A flip of the queries in set F turns the sum ``S`` into ``S - 2 * sum_F d``; the
    flipped part is read from per-row tables of the 256 subset sums of each group of
    8 queries, so one permutation costs ``n / 8`` look-ups per row, not ``n`` products.
    """
    k, n = d.shape
    groups = (n + 7) // 8
    total = d.sum(axis=1)
    # rows are processed in blocks whose tables fit in _TABLE_BYTES; every block replays
    # the same random byte stream (same seed), so all rows see the same sign vectors
    block = max(1, _TABLE_BYTES // (groups * 256 * 8))
    seed = int(gen.integers(0, 2**63 - 1))
    offsets = np.arange(groups, dtype=np.intp) * 256
    out = np.empty((k, permutations))
    chunk = max(1, min(permutations, _CHUNK_BYTES // (8 * groups)))
    for first in range(0, k, block):
        rows_here = range(first, min(k, first + block))
        tables = {r: _byte_table(d[r]) for r in rows_here}
        stream = np.random.default_rng(seed)
        done = 0
        while done < permutations:
            m = min(chunk, permutations - done)
            raw = np.frombuffer(stream.bytes(m * groups), dtype=np.uint8).reshape(m, groups)
            idx = raw + offsets  # (m, groups) positions in a table
            for r in rows_here:
                out[r, done:done + m] = total[r] - 2.0 * tables[r].take(idx).sum(axis=1)
            done += m
    return out


def randomization(
    diffs: np.ndarray,
    alternative: Alternative = "two-sided",
    *,
    permutations: int = 10_000,
    rng: np.random.Generator | int | None = None,
    combine: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Paired randomization (Fisher sign-flip) test on each row.

    Under H0 the two systems are exchangeable on every query, so each difference
    keeps or flips its sign with probability 1/2.  The statistic is the mean
    difference; ``count`` is the number of the ``permutations`` random sign
    assignments whose mean is at least as extreme (``|.|`` for two-sided,
    ``>=`` for greater, ``<=`` for less) and ``p = (count + 1) / (permutations + 1)``
    (the observed assignment counts once, so p is never 0).

    When ``2**n <= permutations`` every assignment is enumerated instead and
    ``p = count / 2**n`` exactly (count includes the identity).

    One batch of sign vectors, drawn from ``rng`` (one random bit per query), is
    shared by all rows and processed in chunks of about 32 MB; the same seed gives
    the same p-values.  Floating point ties are resolved with a relative
    tolerance of 1e-9.

    ``combine`` (a ``(k, r)`` matrix) tests the rows ``combine @ diffs`` instead of
    ``diffs`` itself: the flipped sums are linear in the differences, so the sums of
    the ``r`` given rows under each sign vector are computed once and combined.
    All pairs of ``S`` systems need only the ``S - 1`` differences to one system.
    The tolerance then also allows ``1e-12`` times the magnitude of the combined rows.

    >>> d = np.array([[0.15, 0.12, 0.13, 0.12, 0.13]])
    >>> m, p = randomization(d, permutations=1000, rng=1)   # 2**5 <= 1000: exact
    >>> round(float(m[0]), 3), float(p[0])
    (0.13, 0.0625)
    """
    base = _check(diffs, alternative)
    if isinstance(permutations, bool) or not isinstance(permutations, (int, np.integer)) or permutations < 1:
        raise InvalidParameterError(f"permutations must be a positive integer, got {permutations!r}")
    gen = np.random.default_rng(rng)
    comb = None if combine is None else np.asarray(combine, dtype=np.float64)
    if comb is not None and (comb.ndim != 2 or comb.shape[1] != base.shape[0]):
        raise InvalidParameterError(f"combine must have shape (k, {base.shape[0]}), got {comb.shape}")
    d = base if comb is None else comb @ base
    k, n = d.shape
    stat = np.full(k, np.nan)
    p = np.ones(k)
    if n == 0:
        return stat, p
    stat = d.mean(axis=1)
    obs = d.sum(axis=1)
    tol = 1e-9 * np.maximum(np.abs(d).sum(axis=1), 1e-300)
    if comb is not None:
        tol += 1e-12 * (np.abs(comb) @ np.abs(base).sum(axis=1))

    def flipped(sums: np.ndarray) -> np.ndarray:
        return sums if comb is None else comb @ sums

    def extreme(sums: np.ndarray) -> np.ndarray:
        if alternative == "two-sided":
            return np.abs(sums) >= (np.abs(obs) - tol)[:, None]
        if alternative == "greater":
            return sums >= (obs - tol)[:, None]
        return sums <= (obs + tol)[:, None]

    live = np.any(d != 0, axis=1)
    if n <= 62 and 2**n <= permutations:
        signs = _all_signs(n)
        count = extreme(flipped(sign_flip_sums(base, signs))).sum(axis=1)
        p = count / float(2**n)
    else:
        count = extreme(flipped(_flipped_sums(base, gen, permutations))).sum(axis=1)
        p = (count + 1) / (permutations + 1.0)
    p = np.where(live, p, 1.0)
    return stat, np.minimum(p, 1.0)
