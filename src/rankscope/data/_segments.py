"""Sorting many small segments of one array at once (the rows of each query, say).

Segments of one length are gathered side by side as the rows of a matrix and
sorted along its rows: one numpy call per distinct segment length, none per
segment, and no global sort of all values.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sort_segments", "blocks_in_order", "argsort_within_blocks"]


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


def blocks_in_order(codes: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Row order that puts the blocks ``starts[i]:starts[i+1]`` of a grouped table in ``codes`` order.

    Each code occupies one block; rows keep their order within a block.

    >>> blocks_in_order(np.array([2, 2, 0, 1, 1]), np.array([0, 2, 3])).tolist()
    [2, 3, 4, 0, 1]
    """
    n = len(codes)
    bounds = np.append(starts, n)
    border = np.argsort(codes[starts], kind="stable")
    lengths = np.diff(bounds)[border]
    new_start = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    rows = np.repeat(starts[border] - new_start, lengths)
    rows += np.arange(n, dtype=np.int64)
    return rows


def argsort_within_blocks(values: np.ndarray, starts: np.ndarray) -> np.ndarray | None:
    """Per block, the rows of the block in ascending order of the uint32 ``values`` (ties: row order).

    Returns global row indices, block by block in row order; None when a block is too
    long for the packed sort (2**31 rows or more).

    >>> argsort_within_blocks(np.array([5, 1, 9, 3, 3], dtype=np.uint32), np.array([0, 3])).tolist()
    [1, 0, 2, 3, 4]
    """
    n = len(values)
    bounds = np.append(starts, n)
    lengths = np.diff(bounds)
    if len(lengths) == 0:
        return np.zeros(0, dtype=np.int64)
    if int(lengths.max()) >= 2**31:
        return None
    first = np.repeat(starts.astype(np.int64), lengths)  # each row's block start
    # value in the high half, position within the block in the low half: one sort orders both
    # (in place where numpy allows: these are the largest arrays of a qrels index while it is built)
    packed = values.astype(np.uint64)
    packed <<= np.uint64(32)
    local = np.arange(n, dtype=np.int64)
    local -= first
    packed |= local.view(np.uint64)
    del local
    srt = sort_segments(packed, bounds)
    del packed
    srt &= np.uint64(0xFFFFFFFF)
    rows = srt.view(np.int64)
    rows += first
    return rows
