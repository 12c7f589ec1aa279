"""Column normalisation shared by :class:`~rankscope.data.Qrels` and :class:`~rankscope.data.Run`.

IDs become Arrow string arrays (integers are converted with ``str``), then are
dictionary-encoded into integer codes.  Query codes follow the sorted order of
the query id strings so that every result lists queries in the same order as
trec_eval (``strcmp`` order, which equals code-point order for UTF-8).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.errors import ParseError, RankscopeError

__all__ = ["as_string_array", "encode_sorted", "encode", "as_float_array", "as_int_array"]


def as_string_array(values: Any, field: str) -> pa.Array:
    """Return ``values`` as an Arrow string array; integers are converted, nulls refused."""
    if isinstance(values, pa.ChunkedArray):
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


def encode(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Dictionary-encode ``values``: ``(codes int32, dictionary)`` in first-seen order."""
    enc = pc.dictionary_encode(values)
    codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int32, copy=False)
    return codes, enc.dictionary


def encode_sorted(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Encode ``values`` with codes that follow the sorted order of the unique strings.

    Returns ``(codes int32, unique ids as a numpy object array sorted ascending)``.
    Runs of equal neighbours (a run or qrels grouped by query) are encoded once:
    only the first value of each run is hashed, the codes are then repeated.
    """
    n = len(values)
    if n >= 4096:  # not worth it for small inputs
        change = pc.not_equal(values.slice(1), values.slice(0, n - 1)).to_numpy(zero_copy_only=False)
        starts = np.flatnonzero(np.concatenate(([True], change)))
        if len(starts) < n // 2:
            head_codes, uniq_sorted = encode_sorted(values.take(pa.array(starts)))
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
        values = values.to_numpy(zero_copy_only=False)
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
        values = values.to_numpy(zero_copy_only=False)
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
