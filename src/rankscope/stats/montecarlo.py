"""Monte-Carlo p-values: their standard error, and drawing more samples until a verdict is stable.

A p-value estimated from ``B`` random permutations as ``p = (count + 1) / (B + 1)``
has the standard error ``sqrt(p (1 - p) / B)``.  A verdict ``p <= alpha`` whose
p-value lies within :data:`Z_UNCERTAIN` standard errors of ``alpha`` could change
with the seed.  :func:`adaptive_counts` draws ``first`` samples, then as many again
(doubling) while a caller-supplied rule says some verdict is still undecided, up to
``limit``.  Every draw comes from one seeded stream, so the result is deterministic.

>>> p = np.array([0.049, 0.2])
>>> undecided_near(p, standard_error(p, 1000), 0.05).tolist()
[True, False]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["Z_UNCERTAIN", "standard_error", "undecided_near", "adaptive_counts", "Undecided"]

# a p-value closer to alpha than this many standard errors is not a stable verdict (99%, two-sided)
Z_UNCERTAIN = 2.576

Undecided = Callable[[np.ndarray, np.ndarray], np.ndarray]


def standard_error(p: np.ndarray, drawn: int) -> np.ndarray:
    """``sqrt(p (1 - p) / drawn)`` (0 when nothing was drawn)."""
    p = np.asarray(p, dtype=np.float64)
    return np.sqrt(p * (1 - p) / drawn) if drawn else np.zeros_like(p)


def undecided_near(p: np.ndarray, se: np.ndarray, alpha: float, scale: np.ndarray | float = 1.0) -> np.ndarray:
    """Rows whose ``p`` is within ``Z_UNCERTAIN * se * scale`` of ``alpha`` (``scale``: a correction's factor)."""
    se = np.asarray(se, dtype=np.float64) * scale
    return (se > 0) & (np.abs(np.asarray(p) - alpha) <= Z_UNCERTAIN * se)


def adaptive_counts(
    draw: Callable[[int], np.ndarray],
    rows: int,
    first: int,
    limit: int,
    undecided: Callable[[np.ndarray, np.ndarray], np.ndarray] | None,
) -> tuple[np.ndarray, int]:
    """Counts of extreme draws per row and the number drawn.

    ``draw(b)`` returns the counts of the next ``b`` draws (an integer array of
    ``rows`` values); ``undecided(p, se)`` gets the current p-values
    ``(count + 1) / (drawn + 1)`` and standard errors and returns a boolean mask.
    """
    counts = np.zeros(rows, dtype=np.int64)
    drawn, batch = 0, first
    while True:
        counts += draw(batch)
        drawn += batch
        if undecided is None or drawn >= limit:
            return counts, drawn
        p = (counts + 1) / (drawn + 1.0)
        if not np.asarray(undecided(p, standard_error(p, drawn))).any():
            return counts, drawn
        batch = min(drawn, limit - drawn)
