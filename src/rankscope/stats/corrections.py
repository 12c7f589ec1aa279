"""Multiple-comparison corrections of a family of p-values.

- ``holm`` (default): Holm's step-down method; controls the family-wise error
  rate like Bonferroni but is uniformly more powerful.  Sorted ascending,
  ``p_(i) * (m - i + 1)``, made non-decreasing by a running maximum, capped at 1.
- ``bonferroni``: ``min(1, m * p)``.
- ``bh``: Benjamini–Hochberg; controls the false discovery rate.  Sorted
  ascending, ``p_(i) * m / i``, made non-increasing from the largest down by a
  running minimum, capped at 1.
- ``none``: the p-values unchanged.

A hypothesis is rejected when its adjusted p-value is ``<= alpha`` for holm,
bonferroni and bh (the same rule statsmodels' ``multipletests`` uses).
"""

from __future__ import annotations

import numpy as np

from rankscope.choices import CORRECTIONS  # declared once, with the CLI and service choices
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _

__all__ = ["CORRECTIONS", "adjust", "reject"]

_ALIASES = {"fdr_bh": "bh", "benjamini-hochberg": "bh", "benjamini_hochberg": "bh", "bonf": "bonferroni"}


def _method(method: str) -> str:
    key = _ALIASES.get(str(method).lower(), str(method).lower())
    if key not in CORRECTIONS:
        choices = Items(CORRECTIONS)
        raise InvalidParameterError(_("correction must be one of {choices}, got {value!r}", choices=choices,
                                      value=method))
    return key


def adjust(pvalues: np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p-values of one family, in the input order.

    >>> adjust(np.array([0.01, 0.04, 0.03]), "holm").round(4).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust(np.array([0.01, 0.04, 0.03]), "bh").round(4).tolist()
    [0.03, 0.04, 0.04]
    """
    method = _method(method)
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise InvalidParameterError(_("p-values must be a 1-D array, got shape {shape}", shape=p.shape))
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise InvalidParameterError(_("p-values must be numbers between 0 and 1"))
    m = len(p)
    if m == 0 or method == "none":
        return p.copy()
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if method == "holm":
        adj = np.maximum.accumulate(ranked * (m - np.arange(m)))
    else:  # bh
        adj = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def reject(adjusted: np.ndarray, alpha: float) -> np.ndarray:
    """Which hypotheses are rejected: ``adjusted <= alpha``.

    >>> reject(np.array([0.03, 0.05, 0.2]), 0.05).tolist()
    [True, True, False]
    """
    if not 0 < alpha < 1:
        raise InvalidParameterError(_("alpha must be between 0 and 1, got {value!r}", value=alpha))
    return np.asarray(adjusted) <= alpha
