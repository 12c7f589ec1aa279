"""Small vectorized helpers shared by the metric kernels."""

from __future__ import annotations

import numpy as np

from rankscope.measures.kernel_input import KernelInput

__all__ = ["within", "safe_div", "rel_ret_at"]


def within(p: KernelInput, k: int | None) -> np.ndarray | None:
    """Row mask of the top ``k`` ranks, or None for no cutoff."""
    return None if k is None else p.rank < k


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` with 0 where ``den`` is 0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    shape = num.shape if num.shape == den.shape else np.broadcast_shapes(num.shape, den.shape)
    out = np.zeros(shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def rel_ret_at(p: KernelInput, k: int | None, rel: int | None = None) -> np.ndarray:
    """Relevant retrieved documents per query within the top ``k``."""
    mask = p.is_rel(rel)
    if k is not None:
        mask = mask & (p.rank < k)
    return p.count(mask).astype(np.float64)
