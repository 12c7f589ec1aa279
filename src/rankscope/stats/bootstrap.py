"""Paired bootstrap confidence intervals for means and differences of means.

The queries are resampled with replacement ``resamples`` times; each resample is
applied to every row of the score matrix at once (so differences between rows
are *paired*: both systems see the same resampled queries).  A resample is
stored as a vector of per-query counts and a row's resampled mean is a matrix
product ``scores @ counts.T / n``; the interval is the percentile interval
``[q(alpha/2), q(1 - alpha/2)]`` of the resampled means.
"""

from __future__ import annotations

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _

__all__ = ["bootstrap_means", "percentile_ci"]

_CHUNK_BYTES = 1024 * 1024  # a chunk of resamples stays in cache


def bootstrap_means(
    scores: np.ndarray, resamples: int = 1000, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """Resampled means: a ``(rows, resamples)`` matrix for a ``(rows, n)`` score matrix.

    Row ``i`` of the result holds the mean of ``scores[i]`` over each bootstrap
    resample of the ``n`` queries; the resamples are shared across rows, so
    ``out[i] - out[j]`` is the paired bootstrap distribution of the difference.

    >>> bootstrap_means(np.array([[1.0, 1.0, 1.0]]), 4, rng=0).tolist()
    [[1.0, 1.0, 1.0, 1.0]]
    """
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2:
        raise InvalidParameterError(_("scores must be a 2-D matrix, got shape {shape}", shape=x.shape))
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 1:
        raise InvalidParameterError(_("bootstrap resamples must be a positive integer, got {value!r}", value=resamples))
    rows, n = x.shape
    if n == 0:
        return np.full((rows, resamples), np.nan)
    gen = np.random.default_rng(rng)
    out = np.empty((rows, resamples))
    chunk = max(1, min(resamples, _CHUNK_BYTES // (8 * n)))
    done = 0
    while done < resamples:
        b = min(chunk, resamples - done)
        idx = gen.integers(0, n, size=(b, n))
        idx += np.arange(b)[:, None] * n
        counts = np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)
        out[:, done:done + b] = x @ counts.T / n
        done += b
    return out


def percentile_ci(samples: np.ndarray, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper percentile bounds (``alpha/2``, ``1 - alpha/2``) of each row.

    >>> lo, hi = percentile_ci(np.array([np.arange(101.0)]), 0.1)
    >>> float(lo[0]), float(hi[0])
    (5.0, 95.0)
    """
    if not 0 < alpha < 1:
        raise InvalidParameterError(_("alpha must be between 0 and 1, got {value!r}", value=alpha))
    q = np.quantile(np.asarray(samples, dtype=np.float64), [alpha / 2, 1 - alpha / 2], axis=-1)
    return q[0], q[1]
