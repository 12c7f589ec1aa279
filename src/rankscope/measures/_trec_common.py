"""Vectorized building blocks shared by the trec_eval-specific kernels.

trec_eval computes every measure with plain sequential double arithmetic; to
reproduce its printed digits exactly these helpers keep the same order of
operations: per-query running sums are true restarting cumulative sums (not a
global cumsum minus an offset), and ``log2`` of integer arguments comes from the
C library (:func:`math.log2`) rather than numpy's SIMD approximation.

trec_eval distinguishes three kinds of retrieved documents that carry no
positive relevance: *not in the pool* (absent from the qrels), *pooled but
unjudged* (a negative grade in the qrels, used by infAP) and *judged
non-relevant* (``0 <= grade < relevance level``).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from rankscope.measures.gain_based import parse_gains
from rankscope.measures.kernel_input import KernelInput

__all__ = [
    "log2_int",
    "segmented_cumsum",
    "segmented_cumprod",
    "suffix_max",
    "judged_rel",
    "judged_nonrel",
    "pool_unjudged",
    "num_judged_nonrel",
    "row_gains",
    "ideal_gains",
]

_PADDED_LIMIT = 20_000_000  # cells of the padded (query x rank) matrix before falling back


@lru_cache(maxsize=8)
def _log2_table(size: int) -> np.ndarray:
    return np.array([math.log2(i) if i > 0 else -math.inf for i in range(size)], dtype=np.float64)


def log2_int(values: np.ndarray) -> np.ndarray:
    """``log2`` of non-negative integers, bit-identical to C's ``log2``.

    >>> log2_int(np.array([1, 2, 8])).tolist()
    [0.0, 1.0, 3.0]
    """
    v = np.asarray(values, dtype=np.int64)
    if len(v) == 0:
        return np.zeros(0)
    top = int(v.max()) + 1
    size = 1 << max(10, (top - 1).bit_length())  # power of two: few distinct cached tables
    return _log2_table(size)[v]


def segmented_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Running sum of ``values`` restarting at each segment ``offsets[i]:offsets[i+1]``.

    Summed left to right within each segment, exactly as a sequential loop would.

    >>> segmented_cumsum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 2, 4])).tolist()
    [1.0, 3.0, 3.0, 7.0]
    """
    return _segmented(values, offsets, np.cumsum, 0.0)


def segmented_cumprod(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Running product of ``values`` restarting at each segment, multiplied left to right (as a loop would).

    >>> segmented_cumprod(np.array([0.5, 0.5, 3.0, 2.0]), np.array([0, 2, 4])).tolist()
    [0.5, 0.25, 3.0, 6.0]
    """
    return _segmented(values, offsets, np.cumprod, 1.0)


def _segmented(values: np.ndarray, offsets: np.ndarray, scan: Any, fill: float) -> np.ndarray:
    values = np.asarray(values, dtype=np.float64)
    counts = np.diff(offsets)
    if len(values) == 0:
        return values.copy()
    if len(counts) * int(counts.max()) <= _PADDED_LIMIT:
        return _padded_scan(values, offsets, scan, fill)
    # very ragged input: blocks of segments whose padded matrix stays bounded (one long segment alone)
    out = np.empty_like(values)
    start = 0
    while start < len(counts):
        stop, widest = start + 1, int(counts[start])
        while stop < len(counts) and (stop + 1 - start) * max(widest, int(counts[stop])) <= _PADDED_LIMIT:
            widest = max(widest, int(counts[stop]))
            stop += 1
        lo, hi = int(offsets[start]), int(offsets[stop])
        if stop == start + 1:
            out[lo:hi] = scan(values[lo:hi])
        else:
            out[lo:hi] = _padded_scan(values[lo:hi], offsets[start : stop + 1] - lo, scan, fill)
        start = stop
    return out


def _padded_scan(values: np.ndarray, offsets: np.ndarray, scan: Any, fill: float) -> np.ndarray:
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(len(counts)), counts)
    pos = np.arange(len(values)) - np.repeat(offsets[:-1], counts)
    mat = np.full((len(counts), int(counts.max())), fill)
    mat[seg, pos] = values
    return scan(mat, axis=1)[seg, pos]


def suffix_max(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per element: the maximum of ``values`` from it to the end of its segment.

    Exact (comparisons on ranks of the distinct values, no float offsets).

    >>> suffix_max(np.array([0.5, 1.0, 0.2, 0.1, 0.3]), np.array([0, 3, 5])).tolist()
    [1.0, 1.0, 0.2, 0.3, 0.3]
    """
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return values.copy()
    uniq, code = np.unique(values, return_inverse=True)
    code = code.ravel().astype(np.int64)
    counts = np.diff(offsets)
    seg = np.repeat(np.arange(len(counts), dtype=np.int64), counts)
    # reversed order: later segments first, so a larger segment number must dominate
    key = (len(counts) - 1 - seg) * len(uniq) + code
    rev = np.maximum.accumulate(key[::-1])[::-1]
    return uniq[rev - (len(counts) - 1 - seg) * len(uniq)]


def judged_rel(p: KernelInput, rel: int | None = None) -> np.ndarray:
    """Rows judged relevant: in the qrels with ``grade >= max(level, 0)``."""
    return p.judged & (p.grade >= 0) & (p.grade >= p.level(rel))


def judged_nonrel(p: KernelInput, rel: int | None = None) -> np.ndarray:
    """Rows judged non-relevant: in the qrels with ``0 <= grade < level``."""
    return p.judged & (p.grade >= 0) & (p.grade < p.level(rel))


def pool_unjudged(p: KernelInput) -> np.ndarray:
    """Rows in the qrels with a negative grade (pooled but not judged)."""
    return p.grade < 0


def num_judged_nonrel(p: KernelInput, rel: int | None = None) -> np.ndarray:
    """Per query: judged non-relevant documents in the qrels (``0 <= grade < level``)."""
    g = p.ideal_grade
    return p.ideal_sum(((g >= 0) & (g < p.level(rel))).astype(np.float64)).astype(np.int64)


def _gain_map(grades: np.ndarray, gains: str) -> np.ndarray:
    """trec_eval gains of judged grades >= 0: the grade, unless remapped by ``gains``."""
    out = grades.astype(np.float64)
    for grade, gain in parse_gains(gains):
        out = np.where(grades == grade, gain, out)
    return np.where(grades >= 0, out, 0.0)


def row_gains(p: KernelInput, gains: str = "") -> np.ndarray:
    """Gain of each retrieved row (0 when not judged or pooled-unjudged)."""
    return np.where(p.judged & (p.grade >= 0), _gain_map(p.grade, gains), 0.0)


def ideal_gains(p: KernelInput, gains: str = "") -> tuple[np.ndarray, np.ndarray]:
    """The ideal gain list of each query: positive gains sorted descending.

    Returns ``(gain, offsets)``: query i's ideal list is ``gain[offsets[i]:offsets[i+1]]``.
    """
    g = _gain_map(p.ideal_grade, gains)
    qi = p.ideal_qidx()
    keep = g > 0
    g, qi = g[keep], qi[keep]
    order = np.lexsort((-g, qi))
    counts = np.bincount(qi, minlength=p.n)
    return g[order], np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
