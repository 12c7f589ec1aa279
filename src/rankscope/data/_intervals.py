"""Vectorised arithmetic on half-open character intervals ``[start, end)``.

Everything here works on flat numpy arrays and never loops over intervals in
Python.  Intervals belong to *groups* (a document, or a (query, document) pair);
intervals of different groups never meet.  Groups are laid on one number line by
:func:`on_line` (group ``g`` occupies ``[g * stride, (g + 1) * stride)``), so a
single sort handles every group at once.

>>> import numpy as np
>>> s, e = on_line(np.array([0, 0, 1]), np.array([0, 5, 0]), np.array([10, 12, 4]))
>>> union_length(s, e, np.array([0, 0, 1]), 2).tolist()
[12.0, 4.0]
"""

from __future__ import annotations

import numpy as np

__all__ = ["on_line", "merge", "union_length", "overlap_pairs", "intersect_disjoint", "range_min"]


def on_line(group: np.ndarray, start: np.ndarray, end: np.ndarray, stride: int | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """Global coordinates ``group * stride + position`` (``stride`` > every end, by default max end + 1)."""
    group = np.asarray(group, dtype=np.int64)
    start = np.asarray(start, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    if stride is None:
        stride = int(end.max()) + 1 if len(end) else 1
    if len(group) and (int(group.max()) + 1) * stride >= 2**62:
        raise OverflowError("too many groups x positions for 64-bit interval coordinates")
    base = group * np.int64(stride)
    return base + start, base + end


def merge(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of the intervals as sorted disjoint intervals: ``(starts, ends, first)``.

    ``first[i]`` is the position (in the input) of the first interval of merged
    block ``i``, so a per-interval label (owner, group) carries over as
    ``label[first]``.  Touching intervals (``[0, 5)`` and ``[5, 8)``) merge.

    >>> merge(np.array([5, 0, 20]), np.array([8, 5, 30]))[:2]
    (array([ 0, 20]), array([ 8, 30]))
    """
    start = np.asarray(start, dtype=np.int64)
    end = np.asarray(end, dtype=np.int64)
    keep = end > start
    if not keep.all():
        idx = np.flatnonzero(keep)
        start, end = start[idx], end[idx]
    else:
        idx = None
    if len(start) == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    order = np.argsort(start, kind="stable")
    s, e = start[order], end[order]
    reach = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    heads = np.flatnonzero(new)
    ends = np.maximum.reduceat(e, heads)
    first = order[heads]
    if idx is not None:
        first = idx[first]
    return s[heads], ends, first


def union_length(start: np.ndarray, end: np.ndarray, owner: np.ndarray, n: int,
                 weight: np.ndarray | None = None) -> np.ndarray:
    """Per owner (``0..n-1``): the length of the union of its intervals (float64).

    Coordinates must already separate owners (see :func:`on_line`); the owner of
    a merged block is the owner of its first interval.  ``weight`` (per owner)
    multiplies the lengths.

    >>> union_length(np.array([0, 3, 10]), np.array([5, 8, 11]), np.array([0, 0, 1]), 3).tolist()
    [8.0, 1.0, 0.0]
    """
    s, e, first = merge(start, end)
    own = np.asarray(owner, dtype=np.int64)[first] if len(first) else np.empty(0, dtype=np.int64)
    out = np.bincount(own, weights=(e - s).astype(np.float64), minlength=n)[:n]
    return out if weight is None else out * weight


def overlap_pairs(a_start: np.ndarray, a_end: np.ndarray, b_start: np.ndarray, b_end: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair (a, b) of intervals that overlap by at least one position: ``(ia, ib, overlap)``.

    Coordinates are global (groups kept apart by :func:`on_line`).  Pairs are
    found with one sort of ``b`` and binary searches: candidates of ``a`` are the
    ``b`` intervals starting in ``[a_start - longest b + 1, a_end)``, filtered by
    ``b_end > a_start``.  Output is ordered by ``ia``, then ``b`` start.

    >>> overlap_pairs(np.array([4]), np.array([9]), np.array([0, 5, 9]), np.array([5, 9, 12]))
    (array([0, 0]), array([0, 1]), array([1, 4]))
    """
    a_start = np.asarray(a_start, dtype=np.int64)
    a_end = np.asarray(a_end, dtype=np.int64)
    b_start = np.asarray(b_start, dtype=np.int64)
    b_end = np.asarray(b_end, dtype=np.int64)
    empty = np.empty(0, dtype=np.int64)
    if len(a_start) == 0 or len(b_start) == 0:
        return empty, empty, empty
    order = np.argsort(b_start, kind="stable")
    bs, be = b_start[order], b_end[order]
    longest = int((be - bs).max())
    lo = np.searchsorted(bs, a_start - longest + 1, side="left")
    hi = np.searchsorted(bs, a_end, side="left")
    counts = np.maximum(hi - lo, 0)
    total = int(counts.sum())
    if total == 0:
        return empty, empty, empty
    ia = np.repeat(np.arange(len(a_start), dtype=np.int64), counts)
    pos = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(lo, counts)
    ov = np.minimum(a_end[ia], be[pos]) - np.maximum(a_start[ia], bs[pos])
    keep = ov > 0
    return ia[keep], order[pos[keep]], ov[keep]


def intersect_disjoint(a_start: np.ndarray, a_end: np.ndarray, b_start: np.ndarray, b_end: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The intersection of two unions: ``(starts, ends, ia)`` of the pieces, sorted by start.

    ``ia`` is the index (in ``a``) each piece comes from.  Inputs are best given
    merged (:func:`merge`); overlapping inputs give overlapping pieces.

    >>> intersect_disjoint(np.array([0, 10]), np.array([6, 20]), np.array([4]), np.array([12]))
    (array([ 4, 10]), array([ 6, 12]), array([0, 1]))
    """
    ia, ib, _ = overlap_pairs(a_start, a_end, b_start, b_end)
    s = np.maximum(np.asarray(a_start, dtype=np.int64)[ia], np.asarray(b_start, dtype=np.int64)[ib])
    e = np.minimum(np.asarray(a_end, dtype=np.int64)[ia], np.asarray(b_end, dtype=np.int64)[ib])
    order = np.argsort(s, kind="stable")
    return s[order], e[order], ia[order]


def range_min(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``min(values[lo[i]:hi[i]])`` for every i (``inf`` for an empty range), with a sparse table.

    >>> range_min(np.array([5.0, 2.0, 7.0, 1.0]), np.array([0, 2, 1]), np.array([2, 3, 1])).tolist()
    [2.0, 7.0, inf]
    """
    values = np.asarray(values, dtype=np.float64)
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    out = np.full(len(lo), np.inf)
    ok = hi > lo
    if not ok.any() or len(values) == 0:
        return out
    table = [values]
    width = 1
    while 2 * width <= len(values):
        prev = table[-1]
        table.append(np.minimum(prev[:-width], prev[width:]))
        width *= 2
    length = (hi - lo)[ok]
    level = np.floor(np.log2(length)).astype(np.int64)
    # floating log2 may round at exact powers of two: fix level so that 2**level <= length < 2**(level+1)
    level -= (np.left_shift(1, level) > length).astype(np.int64)
    level += (np.left_shift(1, level + 1) <= length).astype(np.int64)
    res = np.empty(len(length))
    l_ok, h_ok = lo[ok], hi[ok]
    for lv in np.unique(level):  # one pass per power of two (at most log2 of the array size)
        sel = level == lv
        row = table[int(lv)]
        res[sel] = np.minimum(row[l_ok[sel]], row[h_ok[sel] - (1 << int(lv))])
    out[ok] = res
    return out
