"""Effect sizes of paired comparisons, vectorized over rows of per-query values.

- relative improvement ``100 * (mean_b - mean_a) / mean_a`` (undefined — ``nan`` —
  when ``mean_a == 0``);
- Cohen's d for paired data (often written d_z): ``mean(d) / sd(d)`` with
  ``sd`` the sample standard deviation (``ddof=1``) of the per-query differences;
  ``nan`` when fewer than two queries or every difference is equal;
- win / tie / loss counts: the number of queries on which ``b`` is better than,
  equal to (``|b - a| <= 1e-12``) or worse than ``a``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["relative_improvement", "cohen_d_paired", "win_tie_loss", "TIE_TOLERANCE"]

TIE_TOLERANCE = 1e-12


def relative_improvement(mean_a: np.ndarray, mean_b: np.ndarray) -> np.ndarray:
    """``100 * (b - a) / a`` in percent; ``nan`` where ``a == 0``.

    >>> relative_improvement(np.array([0.5, 0.0]), np.array([0.6, 0.1])).round(6).tolist()
    [20.0, nan]
    """
    a = np.asarray(mean_a, dtype=np.float64)
    b = np.asarray(mean_b, dtype=np.float64)
    out = np.full(a.shape, np.nan)
    nz = a != 0
    out[nz] = 100.0 * (b[nz] - a[nz]) / np.abs(a[nz])
    return out


def cohen_d_paired(diffs: np.ndarray) -> np.ndarray:
    """``mean(d) / sd(d)`` of each row (``nan`` when undefined).

    >>> cohen_d_paired(np.array([[0.1, 0.2, 0.3], [0.1, 0.1, 0.1]])).round(4).tolist()
    [2.0, nan]
    """
    d = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    out = np.full(d.shape[0], np.nan)
    if d.shape[1] < 2:
        return out
    const = np.all(d == d[:, :1], axis=1)
    sd = d.std(axis=1, ddof=1)
    ok = ~const
    out[ok] = d[ok].mean(axis=1) / sd[ok]
    return out


def win_tie_loss(diffs: np.ndarray, higher_is_better: np.ndarray | bool = True) -> np.ndarray:
    """``(k, 3)`` counts of wins, ties and losses of ``b`` over ``a`` for ``d = b - a``.

    A win is ``d > 0`` for a metric where higher is better, ``d < 0`` otherwise.

    >>> win_tie_loss(np.array([[0.1, 0.0, -0.2, 0.3]])).tolist()
    [[2, 1, 1]]
    """
    d = np.atleast_2d(np.asarray(diffs, dtype=np.float64))
    hib = np.broadcast_to(np.asarray(higher_is_better, dtype=bool), (d.shape[0],))
    signed = np.where(hib[:, None], d, -d)
    ties = (np.abs(d) <= TIE_TOLERANCE).sum(axis=1)
    wins = (signed > TIE_TOLERANCE).sum(axis=1)
    losses = d.shape[1] - ties - wins
    return np.column_stack([wins, ties, losses]).astype(np.int64)
