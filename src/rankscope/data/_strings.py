"""Vectorized reads of Arrow string columns: fingerprints and exact equality without Python strings.

A doc id column of a deep run holds millions of strings; hashing them into a
dictionary costs seconds.  These helpers read the Arrow buffers directly with
numpy: a string is seen through 8-byte little-endian windows (first, middle and
last 8 bytes) and its length.

* :meth:`StringBuffers.fingerprint` / :func:`fingerprint`: a 64-bit hash of the
  windows and the length.  Equal strings get equal fingerprints; distinct ones
  may collide, so callers confirm with an exact comparison.
* :meth:`StringBuffers.equal_rows`: exact equality of pairs of strings.  Up to
  24 bytes the three windows cover every byte, so comparing them and the
  length is exact; longer strings are compared by Arrow.
* Strings of equal length up to 8 bytes are equal exactly when their
  fingerprints are: the fingerprint is a bijection of (bytes, length) there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope._threads import thread_map
from rankscope.data._columns import take, to_numpy

__all__ = ["StringBuffers", "fingerprint", "fingerprint_alongside", "row_ranges"]

T = TypeVar("T")

_K = tuple(np.uint64(k) for k in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                                  0xFF51AFD7ED558CCD))
_CHUNK = 1 << 20
_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
_EXACT_WINDOWS = 24  # up to this length the three windows cover every byte
_PARALLEL_ROWS = 1 << 18  # fewer rows: fingerprints computed in the calling thread


def row_ranges(n: int, size: int = _CHUNK) -> list[tuple[int, int]]:
    """``[(lo, hi), ...]`` splitting ``range(n)`` into pieces of at most ``size`` rows.

    >>> row_ranges(5, 2)
    [(0, 2), (2, 4), (4, 5)]
    """
    return [(lo, min(lo + size, n)) for lo in range(0, n, size)]


class _Chunk:
    """One Arrow string chunk: its bytes, offsets (int32, not copied) and 8-byte windows."""

    __slots__ = ("data", "offs", "row0", "words")

    def __init__(self, row0: int, chunk: pa.Array) -> None:
        if pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type):
            chunk = chunk.cast(pa.string())
        n = len(chunk)
        bufs = chunk.buffers()
        self.row0 = row0
        self.offs = np.frombuffer(bufs[1], dtype=np.int32)[chunk.offset : chunk.offset + n + 1]
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, dtype=np.uint8)
        if len(data) < 8:  # a tiny buffer: pad it so that one 8-byte window fits
            data = np.concatenate((data, np.zeros(8, dtype=np.uint8)))
        self.data = data
        # every 8-byte window of the buffer (unaligned little-endian reads, no copy)
        self.words = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))

    def first(self, start: np.ndarray, length: np.ndarray) -> np.ndarray:
        """The first ``min(length, 8)`` bytes of each string as a little-endian word (the rest zeroed)."""
        last_window = len(self.data) - 8
        late = np.flatnonzero(start > last_window)  # the last few short strings of the buffer
        if len(late):
            first = self.words[np.minimum(start, last_window)]
            first[late] >>= ((start[late] - last_window) * 8).astype(np.uint64)
        else:
            first = self.words[start]
        # keep the low min(length, 8) bytes: shift the others out and back (a shift by 64 gives 0)
        drop = (64 - 8 * np.minimum(length, 8)).astype(np.uint64)
        first <<= drop
        first >>= drop
        return first

    def tail(self, start: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Middle and last 8-byte windows of strings longer than 8 bytes."""
        return self.words[start + length // 2 - 4], self.words[start + length - 8]

    def fingerprint(self, start: np.ndarray, length: np.ndarray) -> np.ndarray:
        """See :func:`fingerprint`."""
        value = self.first(start, length)
        value ^= length.astype(np.uint64) << np.uint64(56)  # exact up to 7 bytes: the top byte is free
        long = np.flatnonzero(length > 8)
        if len(long):
            mid, last = self.tail(start[long], length[long])
            mid *= _K[1]
            mid ^= last * _K[2]
            mid ^= mid >> np.uint64(29)
            value[long] ^= mid
        value *= _K[0]  # odd multiplier: a bijection that moves every byte into the high half
        return value


class StringBuffers:
    """The raw buffers of a (chunked) Arrow string column, read by row range or row list without copies."""

    __slots__ = ("bounds", "chunks", "rows", "values")

    def __init__(self, values: pa.Array | pa.ChunkedArray) -> None:
        self.values = values
        self.chunks: list[_Chunk] = []
        row = 0
        for chunk in values.chunks if isinstance(values, pa.ChunkedArray) else [values]:
            if len(chunk):
                self.chunks.append(_Chunk(row, chunk))
                row += len(chunk)
        self.rows = row
        self.bounds = np.array([c.row0 for c in self.chunks] + [row], dtype=np.int64)

    def _by_chunk(self, rows: np.ndarray) -> Iterator[tuple[_Chunk, np.ndarray, np.ndarray]]:
        """``rows`` (any order) grouped by chunk: ``(chunk, positions in rows, rows within the chunk)``."""
        chunk_of = np.searchsorted(self.bounds, rows, side="right") - 1 if len(self.chunks) > 1 else None
        for i, c in enumerate(self.chunks):
            at = np.arange(len(rows)) if chunk_of is None else np.flatnonzero(chunk_of == i)
            if len(at):
                yield c, at, rows[at] - c.row0

    def fingerprint(self, lo: int, hi: int) -> np.ndarray:
        """The :func:`fingerprint` of rows ``lo:hi``."""
        out = np.empty(hi - lo, dtype=np.uint64)
        for c in self.chunks:
            a, b = max(lo, c.row0), min(hi, c.row0 + len(c.offs) - 1)
            if a < b:
                o = c.offs[a - c.row0 : b - c.row0 + 1]
                out[a - lo : b - lo] = c.fingerprint(o[:-1], np.diff(o))
        return out

    def lengths(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Byte length of the given rows (any order; all rows when None), int64."""
        if rows is None:
            parts = [np.diff(c.offs).astype(np.int64) for c in self.chunks]
            return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        out = np.empty(len(rows), dtype=np.int64)
        for c, at, local in self._by_chunk(rows):
            out[at] = c.offs[local + 1] - c.offs[local]
        return out

    def _parts(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(length, first, middle, last)`` of the given rows (any order); middle/last 0 up to 8 bytes."""
        n = len(rows)
        length = np.empty(n, dtype=np.int64)
        first, mid, last = (np.zeros(n, dtype=np.uint64) for _ in range(3))
        for c, at, local in self._by_chunk(rows):
            start = c.offs[local]
            ln = c.offs[local + 1] - start
            length[at] = ln
            first[at] = c.first(start, ln)
            long = np.flatnonzero(ln > 8)
            m, t = c.tail(start[long], ln[long])
            mid[at[long]] = m
            last[at[long]] = t
        return length, first, mid, last

    def equal_rows(self, rows: np.ndarray, other: StringBuffers, other_rows: np.ndarray) -> np.ndarray:
        """Per pair: whether string ``rows[i]`` here equals string ``other_rows[i]`` of ``other`` (exact).

        >>> a, b = StringBuffers(pa.array(["x", "long-identifier-0001", "y"])), StringBuffers(pa.array(["x", "z"]))
        >>> a.equal_rows(np.array([0, 2, 1]), b, np.array([0, 1, 1])).tolist()
        [True, False, False]
        """
        la, fa, ma, ta = self._parts(rows)
        lb, fb, mb, tb = other._parts(other_rows)
        same = (la == lb) & (fa == fb) & (ma == mb) & (ta == tb)
        longer = np.flatnonzero(same & (la > _EXACT_WINDOWS))
        if len(longer):
            x = take(self.values, rows[longer])
            y = take(other.values, other_rows[longer])
            same[longer] = to_numpy(pc.equal(x, y))
        return same


def fingerprint(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit fingerprint of every string: equal strings get equal fingerprints.

    A string's first 8 bytes (one little-endian word, bytes past its end
    zeroed), its length in the top byte, and for a longer string a hash of its
    middle and last 8 bytes, times an odd constant (a bijection, so strings of
    at most 7 bytes never collide).  Computed in pieces of 2**20 rows on a few threads.
    Distinct strings may collide, so callers confirm equal fingerprints with an
    exact comparison.

    >>> fp = fingerprint(pa.array(["d1", "d2", "d1", "a-much-longer-document-id-42"]))
    >>> bool(fp[0] == fp[2]), bool(fp[0] == fp[1])
    (True, False)
    """
    return fingerprint_alongside(values, lambda: None)[0]


def fingerprint_alongside(values: pa.Array | pa.ChunkedArray, task: Callable[[], T]) -> tuple[np.ndarray, T]:
    """:func:`fingerprint` of ``values``, computed on worker threads while one of them runs ``task()``.

    >>> fp, n = fingerprint_alongside(pa.array(["a", "b"]), lambda: 2)
    >>> len(fp), n
    (2, 2)
    """
    bufs = StringBuffers(values)
    out = np.empty(bufs.rows, dtype=np.uint64)
    if bufs.rows < _PARALLEL_ROWS:  # threads do not pay
        out[:] = bufs.fingerprint(0, bufs.rows)
        return out, task()

    def piece(rows: tuple[int, int] | None) -> T | None:
        if rows is None:
            return task()
        out[rows[0] : rows[1]] = bufs.fingerprint(*rows)
        return None

    result = thread_map(piece, [None, *row_ranges(bufs.rows)])[0]
    return out, result  # type: ignore[return-value]
