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

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rankscope.choices import TESTS  # declared once, with the CLI and service choices
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.stats.montecarlo import adaptive_counts, standard_error

__all__ = ["Alternative", "paired_t", "wilcoxon", "randomization", "sign_flip_test", "SignFlipResult",
           "sign_flip_sums", "TESTS"]

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
        raise InvalidParameterError(_("diffs must be a (comparisons × queries) matrix, got shape {shape}",
                                      shape=d.shape))
    if alternative not in ("two-sided", "greater", "less"):
        raise InvalidParameterError(_("alternative must be 'two-sided', 'greater' or 'less', got {value!r}",
                                      value=alternative))
    if not np.all(np.isfinite(d)):
        raise InvalidParameterError(_("per-query differences must be finite numbers (got nan or inf)"))
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
    k, __ = d.shape
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


class _Flipper:
    """Sums of each row of ``d`` under a stream of random sign flips, drawn batch after batch.

    Each sign vector is ``ceil(n / 8)`` random bytes (one bit per query: 1 = flip)
    from ``numpy.random.default_rng(seed)``.  A flip of the queries in set F turns
    the sum ``S`` into ``S - 2 * sum_F d``; the flipped part is read from per-row
    tables of the 256 subset sums of each group of 8 queries, so one sign vector
    costs ``n / 8`` look-ups per row, not ``n`` products.  Bytes are drawn in
    chunks of a multiple of 4 sign vectors, so the stream does not depend on the
    chunk size and later batches continue it.  When the tables of every row do not
    fit in ``_TABLE_BYTES`` they are rebuilt per chunk.
    """

    def __init__(self, d: np.ndarray, seed: int) -> None:
        self.d = d
        k, n = d.shape
        self.groups = (n + 7) // 8
        self.total = d.sum(axis=1)
        self.stream = np.random.default_rng(seed)
        self.offsets = np.arange(self.groups, dtype=np.intp) * 256
        fits = k * self.groups * 256 * 8 <= _TABLE_BYTES
        self.tables = [_byte_table(r) for r in d] if fits else None

    def draw(self, m: int) -> Iterator[np.ndarray]:
        """``(k, c)`` flipped sums for the next ``m`` sign vectors, in chunks of ``c`` columns."""
        k = self.d.shape[0]
        chunk = max(4, min(m, _CHUNK_BYTES // (8 * max(self.groups, k))) // 4 * 4)
        done = 0
        while done < m:
            c = min(chunk, m - done)
            raw = np.frombuffer(self.stream.bytes(c * self.groups), dtype=np.uint8).reshape(c, self.groups)
            idx = raw + self.offsets  # (c, groups) positions in a table
            out = np.empty((k, c))
            for r in range(k):
                table = self.tables[r] if self.tables is not None else _byte_table(self.d[r])
                out[r] = self.total[r] - 2.0 * table.take(idx).sum(axis=1)
            yield out
            done += c


def _flipped_sums(d: np.ndarray, gen: np.random.Generator, permutations: int) -> np.ndarray:
    """``(k, permutations)`` sums of each row of ``d`` under random sign flips (see :class:`_Flipper`)."""
    flipper = _Flipper(d, int(gen.integers(0, 2**63 - 1)))
    return np.concatenate(list(flipper.draw(permutations)), axis=1)


@dataclass(frozen=True)
class SignFlipResult:
    """The outcome of :func:`sign_flip_test` for each row.

    ``statistic`` is the mean difference, ``p`` the p-value, ``se`` its Monte-Carlo
    standard error ``sqrt(p (1 - p) / permutations)`` (0 where the p-value is exact),
    ``exact`` which rows were enumerated, ``permutations`` the random sign
    assignments drawn for the other rows.
    """

    statistic: np.ndarray
    p: np.ndarray
    se: np.ndarray
    exact: np.ndarray
    permutations: int


def sign_flip_test(
    diffs: np.ndarray,
    alternative: Alternative = "two-sided",
    *,
    permutations: int = 10_000,
    max_permutations: int | None = None,
    undecided: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    rng: np.random.Generator | int | None = None,
    combine: np.ndarray | None = None,
) -> SignFlipResult:
    """The paired randomization test of :func:`randomization`, with Monte-Carlo errors and adaptive draws.

    A row whose ``z`` non-zero differences allow it (``2**z <= permutations``) is
    enumerated exactly over those ``z`` signs (a zero difference is the same
    flipped or not).  The other rows share ``permutations`` random sign vectors.
    When ``undecided(p, se)`` (a boolean mask over rows) says some verdict is still
    within Monte-Carlo error, as many sign vectors again are drawn from the same
    stream (doubling) until no row is undecided or ``max_permutations`` is reached;
    the seed fixes the whole sequence, so the result is deterministic.
    """
    base = _check(diffs, alternative)
    for name, value in (("permutations", permutations), ("max_permutations", max_permutations)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
            raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name=name, value=value))
    gen = np.random.default_rng(rng)
    comb = None if combine is None else np.asarray(combine, dtype=np.float64)
    if comb is not None and (comb.ndim != 2 or comb.shape[1] != base.shape[0]):
        raise InvalidParameterError(_("combine must have shape (k, {rows}), got {shape}", rows=base.shape[0],
                                      shape=comb.shape))
    d = base if comb is None else comb @ base
    k, n = d.shape
    p, se = np.ones(k), np.zeros(k)
    if n == 0:
        return SignFlipResult(np.full(k, np.nan), p, se, np.ones(k, dtype=bool), 0)
    obs = d.sum(axis=1)
    tol = 1e-9 * np.maximum(np.abs(d).sum(axis=1), 1e-300)
    if comb is not None:
        tol += 1e-12 * (np.abs(comb) @ np.abs(base).sum(axis=1))

    def extreme(sums: np.ndarray, rows: np.ndarray) -> np.ndarray:
        o, t = obs[rows][:, None], tol[rows][:, None]
        if alternative == "two-sided":
            return np.abs(sums) >= np.abs(o) - t
        if alternative == "greater":
            return sums >= o - t
        return sums <= o + t

    nonzero = d != 0
    z = nonzero.sum(axis=1)
    exact = (z <= 62) & (2.0 ** np.minimum(z, 62) <= permutations)
    for size in np.unique(z[exact & (z > 0)]):
        rows = np.flatnonzero(exact & (z == size))
        values = d[rows][nonzero[rows]].reshape(len(rows), int(size))
        count = extreme(values @ _all_signs(int(size)).T, rows).sum(axis=1)
        p[rows] = count / float(2**size)
    mc = np.flatnonzero(~exact)
    drawn = 0
    if len(mc):
        flipper = _Flipper(base, int(gen.integers(0, 2**63 - 1)))
        mix = None if comb is None else comb[mc]

        def draw(b: int) -> np.ndarray:
            return sum((extreme(sums[mc] if mix is None else mix @ sums, mc).sum(axis=1)
                        for sums in flipper.draw(b)), np.zeros(len(mc), dtype=np.int64))

        def rows_undecided(p_mc: np.ndarray, se_mc: np.ndarray) -> np.ndarray:
            assert undecided is not None
            p[mc], se[mc] = p_mc, se_mc
            return np.asarray(undecided(p, se))[mc]

        limit = max(int(permutations), int(max_permutations or permutations))
        counts, drawn = adaptive_counts(draw, len(mc), int(permutations), limit,
                                        None if undecided is None else rows_undecided)
        p[mc] = (counts + 1) / (drawn + 1.0)
        se[mc] = standard_error(p[mc], drawn)
    return SignFlipResult(d.mean(axis=1), np.minimum(p, 1.0), se, exact, drawn)


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

    When the row's ``z`` non-zero differences allow it (``2**z <= permutations``)
    every assignment of their signs is enumerated instead and ``p = count / 2**z``
    exactly (count includes the identity; zero differences do not change a sum).
    :func:`sign_flip_test` also gives the Monte-Carlo standard errors and can
    draw more sign vectors while a verdict is undecided.

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
    r = sign_flip_test(diffs, alternative, permutations=permutations, rng=rng, combine=combine)
    return r.statistic, r.p
