"""Column normalisation shared by :class:`~rankscope.data.Qrels` and :class:`~rankscope.data.Run`.

IDs become Arrow string arrays (integers are converted with ``str``), then are
dictionary-encoded into integer codes.  Query codes follow the sorted order of
the query id strings so that every result lists queries in the same order as
trec_eval (``strcmp`` order, which equals code-point order for UTF-8).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.errors import Message, ParseError, RankscopeError
from rankscope.i18n import _

__all__ = ["take", "str_array", "all_distinct", "as_string_array", "block_starts", "encode_sorted", "encode",
           "as_float_array", "as_int_array", "to_numpy", "arrow_ints", "positions"]

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


def str_array(items: Sequence[Any]) -> pa.Array:
    """Python strings as an Arrow string array, built from their UTF-8 bytes.

    ``pa.array`` imports pandas (when installed) on its first call, half a second of a command's start;
    this does not.  Anything but strings (or more than 2 GiB of text) goes through ``pa.array``, which
    converts or refuses them as it always does.

    >>> str_array(["a", "été", ""]).to_pylist()
    ['a', 'été', '']
    """
    try:
        encoded = [s.encode("utf-8") for s in items]
    except (AttributeError, UnicodeEncodeError):
        return pa.array(list(items), type=pa.string())
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)), out=offsets[1:])
    if offsets[-1] >= 2**31:
        return pa.array(list(items), type=pa.string())
    return pa.Array.from_buffers(pa.string(), len(encoded),
                                 [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(encoded))])


def take(values: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """``values.take(rows)`` as one array; a chunked column is taken chunk by chunk.

    Arrow's ``take`` on a chunked array may first concatenate all its chunks (a
    copy of every string of a large column); here only the taken values are copied.

    >>> take(pa.chunked_array([["a", "b"], ["c"]]), np.array([2, 0])).to_pylist()
    ['c', 'a']
    """
    rows = np.asarray(rows, dtype=np.int64)
    if not isinstance(values, pa.ChunkedArray):
        return values.take(arrow_ints(rows))
    if values.num_chunks == 1:
        return values.chunk(0).take(arrow_ints(rows))
    bounds = np.cumsum([0] + [len(c) for c in values.chunks])
    order = np.argsort(rows, kind="stable")
    srt = rows[order]
    cut = np.searchsorted(srt, bounds)
    parts = [values.chunk(i).take(arrow_ints(srt[cut[i] : cut[i + 1]] - bounds[i]))
             for i in range(values.num_chunks) if cut[i + 1] > cut[i]]
    if not parts:
        return pa.array([], type=values.type)
    gathered = pa.concat_arrays(parts)
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = np.arange(len(order))
    return gathered.take(arrow_ints(inverse))


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


def as_string_array(values: Any, field: str | Message, keep_chunks: bool = False) -> Any:
    """Return ``values`` as an Arrow string array; integers are converted, nulls refused.

    With ``keep_chunks``, a chunked string column (what ``pa.array`` makes of a
    large numpy string array, or a CSV reader returns) stays a ``ChunkedArray``:
    combining the chunks would copy every string.  A pandas column backed by Arrow
    (``pd.ArrowDtype``, ``string[pyarrow]``) is used as it is, without a copy.  ``field`` names the column in
    errors (a :class:`~rankscope.i18n.Message` is said in the reader's language).
    """
    if type(values).__module__.startswith("pandas"):  # a Series, or a pandas array
        arr = getattr(values, "array", values)
        values = pa.array(arr) if hasattr(arr, "__arrow_array__") else values.to_numpy()
    if isinstance(values, pa.ChunkedArray):
        if keep_chunks and values.num_chunks > 1 and pa.types.is_string(values.type):
            if values.null_count:
                first = int(np.flatnonzero(to_numpy(values.is_null()))[0])
                raise ParseError(_("{field} is missing (null) in row {row}", field=field, row=first))
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
        raise RankscopeError(_("{field}: ids must be strings or integers, got Arrow type {type}", field=field,
                               type=str(values.type)))
    if values.null_count:
        first = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0])
        raise ParseError(_("{field} is missing (null) in row {row}", field=field, row=first))
    return values


def _id_text(value: Any, field: str | Message) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(value)
    raise RankscopeError(_("{field}: ids must be strings or integers, got {value!r}", field=field, value=value))


def encode(values: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, pa.Array]:
    """Dictionary-encode ``values``: ``(codes int32, dictionary)`` in first-seen order."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    enc = pc.dictionary_encode(values)
    codes = to_numpy(enc.indices).astype(np.int32, copy=False)
    return codes, enc.dictionary


def all_distinct(values: np.ndarray) -> bool:
    """Whether no value occurs twice (sort and compare neighbours: numpy 2's hash-based
    ``np.unique`` is many times slower on large integer arrays).

    >>> all_distinct(np.array([3, 1, 2])), all_distinct(np.array([3, 1, 3]))
    (True, False)
    """
    s = np.sort(values)
    return not bool((s[1:] == s[:-1]).any())


def block_starts(codes: np.ndarray) -> np.ndarray | None:
    """First row of each run of equal ``codes`` when every code occupies one contiguous run, else None.

    >>> block_starts(np.array([2, 2, 0, 1, 1])).tolist(), block_starts(np.array([0, 1, 0]))
    ([0, 2, 3], None)
    """
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.concatenate(([True], codes[1:] != codes[:-1])))
    if not all_distinct(codes[starts]):
        return None
    return starts


def encode_sorted(values: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Encode ``values`` with codes that follow the sorted order of the unique strings.

    Returns ``(codes int32, unique ids as a numpy object array sorted ascending,
    block starts)``; the block starts (see :func:`block_starts`) are None unless
    every id occupies one contiguous run of rows.  Runs of equal neighbours (a
    run or qrels grouped by query) are encoded once: only the first value of
    each run is hashed, the codes are then repeated.

    >>> codes, ids, starts = encode_sorted(pa.array(["b", "b", "a"]))
    >>> codes.tolist(), ids.tolist(), starts.tolist()
    ([1, 1, 0], ['a', 'b'], [0, 2])
    """
    n = len(values)
    if n >= 4096:  # not worth it for small inputs
        change = to_numpy(pc.not_equal(values.slice(1), values.slice(0, n - 1)))
        starts = np.flatnonzero(np.concatenate(([True], change)))
        if len(starts) < n // 2:
            head_codes, uniq_sorted, __ = encode_sorted(values.take(arrow_ints(starts)))
            lengths = np.diff(np.append(starts, n))
            grouped = len(uniq_sorted) == len(starts)
            return np.repeat(head_codes, lengths), uniq_sorted, starts if grouped else None
    codes, dictionary = encode(values)
    uniq = np.asarray(dictionary.to_pylist(), dtype=object)
    if len(uniq) == 0:
        return codes, uniq, np.zeros(0, dtype=np.int64)
    order = np.argsort(uniq, kind="stable")
    remap = np.empty(len(order), dtype=np.int32)
    remap[order] = np.arange(len(order), dtype=np.int32)
    codes = remap[codes]
    return codes, uniq[order], block_starts(codes)


def as_float_array(values: Any, field: str | Message) -> np.ndarray:
    """Return ``values`` as float64, refusing NaN and infinities."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        if values.null_count:
            raise ParseError(_("{field} is missing (null)", field=field))
        values = to_numpy(values)
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise RankscopeError(_("{field} must be numeric ({reason})", field=field, reason=str(exc))) from None
    if arr.ndim != 1:
        raise RankscopeError(_("{field} must be one-dimensional, got shape {shape}", field=field, shape=arr.shape))
    bad = ~np.isfinite(arr)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ParseError(_("{field} is not a finite number ({value!r}) in row {row}", field=field, value=arr[row],
                           row=row))
    return arr


def as_int_array(values: Any, field: str | Message) -> np.ndarray:
    """Return ``values`` as int64, refusing fractional values."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        if values.null_count:
            raise ParseError(_("{field} is missing (null)", field=field))
        values = to_numpy(values)
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)
    try:
        f = arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise RankscopeError(_("{field} must be integers ({reason})", field=field, reason=str(exc))) from None
    if f.size and (not np.isfinite(f).all() or (f != np.round(f)).any()):
        bad = int(np.flatnonzero(~np.isfinite(f) | (f != np.round(f)))[0])
        raise ParseError(_("{field} must be an integer, got {value!r} in row {row}", field=field, value=arr[bad],
                           row=bad))
    return f.astype(np.int64)
