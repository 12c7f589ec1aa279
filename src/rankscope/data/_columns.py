"""Column normalisation shared by :class:`~rankscope.data.Qrels` and :class:`~rankscope.data.Run`.

IDs become Arrow string arrays (integers are converted with ``str``), then are
dictionary-encoded into integer codes.  Query codes follow the sorted order of
the query id strings so that every result lists queries in the same order as
trec_eval (``strcmp`` order, which equals code-point order for UTF-8).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.errors import ParseError, RankscopeError

__all__ = ["as_string_array", "encode_sorted", "encode", "as_float_array", "as_int_array", "fingerprint",
           "fingerprint_pieces", "to_numpy", "arrow_ints", "positions"]

_NUMPY_TYPES = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32, pa.uint64(): np.uint64,
    pa.float32(): np.float32, pa.float64(): np.float64,
}


def arrow_ints(values: np.ndarray) -> pa.Array:
    """A numpy integer array as an Arrow int32/int64 array sharing its memory.

    ``pa.array`` imports pandas (when installed) on its first call; this does not.

    >>> arrow_ints(np.array([3, 1], dtype=np.int32)).to_pylist()
    [3, 1]
    """
    if values.dtype not in (np.int32, np.int64):
        values = values.astype(np.int64)
    values = np.ascontiguousarray(values)
    typ = pa.int32() if values.dtype == np.int32 else pa.int64()
    return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(values)])


def positions(found: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The result of ``pc.index_in`` as int32 with -1 for "not found" (null), without importing pandas.

    >>> positions(pa.compute.index_in(pa.array(["b", "x", "a"]), value_set=pa.array(["a", "b"]))).tolist()
    [1, -1, 0]
    """
    if isinstance(found, pa.ChunkedArray):
        parts = [positions(chunk) for chunk in found.chunks]
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int32)
    n = len(found)
    if n == 0:
        return np.empty(0, dtype=np.int32)
    validity, data = found.buffers()[:2]
    vals = np.frombuffer(data, dtype=np.int32, count=n, offset=found.offset * 4)
    if not found.null_count or validity is None:
        return vals
    bits = np.frombuffer(validity, dtype=np.uint8)
    valid = np.unpackbits(bits, count=found.offset + n, bitorder="little")[found.offset :].view(bool)
    return np.where(valid, vals, np.int32(-1))


def to_numpy(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A numeric or boolean Arrow column as a numpy array, without importing pandas.

    pyarrow's own ``to_numpy`` imports pandas when it is installed (0.2 s or
    more in a fresh process, plus its memory); numeric columns without nulls are
    read straight from the Arrow buffer (zero-copy, read-only, like ``to_numpy``),
    booleans are unpacked from their bitmap.  Anything else uses ``to_numpy``.

    >>> to_numpy(pa.chunked_array([[1, 2], [3]])).tolist(), to_numpy(pa.array([True, False, True])[1:]).tolist()
    ([1, 2, 3], [False, True])
    """
    if isinstance(values, pa.ChunkedArray):
        parts = [to_numpy(chunk) for chunk in values.chunks]
        if len(parts) == 1:
            return parts[0]
        if not parts:
            return values.to_numpy()
        return np.concatenate(parts)
    n = len(values)
    dtype = _NUMPY_TYPES.get(values.type)
    if values.null_count or n == 0 or (dtype is None and not pa.types.is_boolean(values.type)):
        return values.to_numpy(zero_copy_only=False)
    buf = values.buffers()[1]
    if dtype is None:  # boolean: a bitmap
        bits = np.frombuffer(buf, dtype=np.uint8)
        return np.unpackbits(bits, count=values.offset + n, bitorder="little")[values.offset :].view(bool)
    itemsize = np.dtype(dtype).itemsize
    return np.frombuffer(buf, dtype=dtype, count=n, offset=values.offset * itemsize)


def as_string_array(values: Any, field: str, keep_chunks: bool = False) -> Any:
    """Return ``values`` as an Arrow string array; integers are converted, nulls refused.

    With ``keep_chunks``, a chunked string column (what ``pa.array`` makes of a
    large numpy string array, or a CSV reader returns) stays a ``ChunkedArray``:
    combining the chunks would copy every string.
    """
    if isinstance(values, pa.ChunkedArray):
        if keep_chunks and values.num_chunks > 1 and pa.types.is_string(values.type):
            if values.null_count:
                first = int(np.flatnonzero(to_numpy(values.is_null()))[0])
                raise ParseError(f"{field} is missing (null) in row {first}")
            return values
        values = values.combine_chunks()
    if not isinstance(values, pa.Array):
        if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
            values = pa.array(values).cast(pa.string())
        else:
            seq = values if isinstance(values, np.ndarray) else list(values)
            try:
                values = pa.array(seq)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                values = pa.array([_id_text(v, field) for v in seq], type=pa.string())
    if pa.types.is_dictionary(values.type):
        values = values.cast(values.type.value_type)
    if pa.types.is_integer(values.type) or pa.types.is_large_string(values.type):
        values = values.cast(pa.string())
    elif not pa.types.is_string(values.type):
        if pa.types.is_null(values.type) and len(values) == 0:
            return pa.array([], type=pa.string())
        raise RankscopeError(f"{field}: ids must be strings or integers, got Arrow type {values.type}")
    if values.null_count:
        first = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
        raise ParseError(f"{field} is missing (null) in row {first}")
    return values


def _id_text(value: Any, field: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(value)
    raise RankscopeError(f"{field}: ids must be strings or integers, got {value!r}")


def encode(values: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """Dictionary-encode ``values``: ``(codes int32, dictionary)`` in first-seen order."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    enc = pc.dictionary_encode(values)
    codes = to_numpy(enc.indices).astype(np.int32, copy=False)
    return codes, enc.dictionary


def encode_sorted(values: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """Encode ``values`` with codes that follow the sorted order of the unique strings.

    Returns ``(codes int32, unique ids as a numpy object array sorted ascending)``.
    Runs of equal neighbours (a run or qrels grouped by query) are encoded once:
    only the first value of each run is hashed, the codes are then repeated.
    """
    n = len(values)
    if n >= 4096:  # not worth it for small inputs
        change = to_numpy(pc.not_equal(values.slice(1), values.slice(0, n - 1)))
        starts = np.flatnonzero(np.concatenate(([True], change)))
        if len(starts) < n // 2:
            head_codes, uniq_sorted = encode_sorted(values.take(arrow_ints(starts)))
            lengths = np.diff(np.append(starts, n))
            return np.repeat(head_codes, lengths), uniq_sorted
    codes, dictionary = encode(values)
    uniq = np.asarray(dictionary.to_pylist(), dtype=object)
    if len(uniq) == 0:
        return codes, uniq
    order = np.argsort(uniq, kind="stable")
    remap = np.empty(len(order), dtype=np.int32)
    remap[order] = np.arange(len(order), dtype=np.int32)
    return remap[codes], uniq[order]


def as_float_array(values: Any, field: str) -> np.ndarray:
    """Return ``values`` as float64, refusing NaN and infinities."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        if values.null_count:
            raise ParseError(f"{field} is missing (null)")
        values = to_numpy(values)
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise RankscopeError(f"{field} must be numeric ({exc})") from None
    if arr.ndim != 1:
        raise RankscopeError(f"{field} must be one-dimensional, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ParseError(f"{field} is not a finite number ({arr[row]!r}) in row {row}")
    return arr


def as_int_array(values: Any, field: str) -> np.ndarray:
    """Return ``values`` as int64, refusing fractional values."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        if values.null_count:
            raise ParseError(f"{field} is missing (null)")
        values = to_numpy(values)
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    try:
        f = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise RankscopeError(f"{field} must be integers ({exc})") from None
    if f.size and (not np.isfinite(f).all() or (f != np.round(f)).any()):
        bad = int(np.flatnonzero(~np.isfinite(f) | (f != np.round(f)))[0])
        raise ParseError(f"{field} must be an integer, got {arr[bad]!r} in row {bad}")
    return f.astype(np.int64)


_K = tuple(np.uint64(k) for k in (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                                  0xFF51AFD7ED558CCD))
_CHUNK = 1 << 20
_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [0xFFFFFFFFFFFFFFFF], dtype=np.uint64)


def fingerprint(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A 64-bit fingerprint of every string: equal strings get equal fingerprints.

    A hash of the length and the first, middle and last 8 bytes of each string
    (read straight from the Arrow buffers, no per-string Python objects).  Distinct
    strings may collide, so callers confirm equal fingerprints with an exact
    comparison.  Works in chunks to keep the temporaries small.

    >>> fp = fingerprint(pa.array(["d1", "d2", "d1", "a-much-longer-document-id-42"]))
    >>> bool(fp[0] == fp[2]), bool(fp[0] == fp[1])
    (True, False)
    """
    out = np.empty(len(values), dtype=np.uint64)
    for lo, h in fingerprint_pieces(values):
        out[lo : lo + len(h)] = h
    return out


def fingerprint_pieces(values: pa.Array | pa.ChunkedArray) -> Iterator[tuple[int, np.ndarray]]:
    """:func:`fingerprint` piece by piece: ``(first row, fingerprints)`` of at most 2**20 rows each.

    Lets a caller fold the fingerprints into its own arrays without a row-sized temporary.
    """
    row = 0
    for chunk in values.chunks if isinstance(values, pa.ChunkedArray) else [values]:
        n = len(chunk)
        if n == 0:
            continue
        if pa.types.is_large_string(chunk.type):
            chunk = chunk.cast(pa.string())
        bufs = chunk.buffers()
        offs_all = np.frombuffer(bufs[1], dtype=np.int32)[chunk.offset : chunk.offset + n + 1]
        data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, dtype=np.uint8)
        for lo_row in range(0, n, _CHUNK):
            offs = offs_all[lo_row : min(lo_row + _CHUNK, n) + 1].astype(np.int64)
            yield row + lo_row, _fingerprint_chunk(data, offs, offs[1:] - offs[:-1])
        row += n


def _fingerprint_chunk(data: np.ndarray, offs: np.ndarray, length: np.ndarray) -> np.ndarray:
    if len(data) >= 8 and int(length.min()) >= 8:
        # every 8-byte window of the buffer (unaligned little-endian reads, no copy)
        words = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
        start = offs[:-1]
        h = words[start] * _K[0]
        h ^= words[start + length - 8] * _K[2]
        h ^= words[start + length // 2 - 4] * _K[1]
    else:
        lo, hi = int(offs[0]), int(offs[-1])
        padded = np.zeros(hi - lo + 16, dtype=np.uint8)
        padded[8 : 8 + hi - lo] = data[lo:hi]
        words = np.ndarray(shape=(len(padded) - 7,), dtype="<u8", buffer=padded, strides=(1,))
        start = offs[:-1] - lo + 8
        short = length < 8
        first = words[start] & _MASKS[np.minimum(length, 8)]  # bytes past a short string zeroed
        # a short string is all in ``first``; its other windows would see other strings' bytes
        h = first * _K[0]
        h ^= np.where(short, first, words[start + length - 8]) * _K[2]
        h ^= np.where(short, first, words[start + length // 2 - 4]) * _K[1]
    h ^= length.astype(np.uint64) * _K[3]
    h ^= h >> np.uint64(33)
    h *= _K[4]
    h ^= h >> np.uint64(29)
    return h
