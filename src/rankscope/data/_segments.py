"""Sorting many small segments of one array at once (the rows of each query, say).

Segments of one length are gathered side by side as the rows of a matrix and
sorted along its rows: one numpy call per distinct segment length, none per
segment, and no global sort of all values.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sort_segments"]


def sort_segments(values: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """``values`` with each segment ``values[bounds[i]:bounds[i+1]]`` sorted ascending (a new array).

    ``bounds`` starts at 0 and ends at ``len(values)``.

    >>> sort_segments(np.array([3, 1, 2, 9, 5]), np.array([0, 3, 5])).tolist()
    [1, 2, 3, 5, 9]
    """
    out = np.array(values, copy=True)
    lengths = np.diff(bounds)
    if len(lengths) and int(lengths.min()) == int(lengths.max()):
        if lengths[0] > 1:
            out.reshape(len(lengths), int(lengths[0])).sort(axis=1)
        return out
    for length in np.unique(lengths).tolist():
        if length < 2:
            continue
        sel = np.flatnonzero(lengths == length)
        idx = bounds[sel][:, None] + np.arange(length)
        mat = out[idx]
        mat.sort(axis=1)
        out[idx] = mat
    return out
