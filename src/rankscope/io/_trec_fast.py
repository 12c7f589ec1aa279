"""The fast TREC reader: Arrow's multi-threaded CSV parser on whitespace-normalised bytes.

It accepts exactly what :mod:`rankscope.io._trec_lines` accepts and returns the
same values, or returns ``None`` ("not sure") and lets the caller use the exact
line parser, which then produces the error message.  The steps:

1. whitespace normalisation, only when needed (the file holds tabs, ``\\r``,
   ``\\v``, ``\\f``, or Arrow finds an empty field: repeated spaces or a space at a
   line end): tabs etc. become spaces, runs of spaces collapse to one, spaces at
   the start and end of a line are removed.  Newlines are never touched, so line
   numbers survive;
2. files with ``#`` comment lines are handed to the line parser; blank lines are
   skipped by Arrow, and line numbers are recovered (only for an error message)
   by :func:`line_numbers`;
3. Arrow reads the bytes as space-delimited CSV (no quoting, no escapes, no null
   values); a ragged file (a line with another column count than the first), a
   value Arrow cannot convert or invalid UTF-8 raise inside Arrow, and the line
   parser takes over;
4. the value column is checked (grades: ``[+-]digits``; scores: finite) and a
   non-finite score is reported with the same message as the line parser.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from rankscope.data._columns import to_numpy
from rankscope.io._trec_lines import WIDTH, Columns, Kind, parse_score

__all__ = ["fast_columns", "normalise_whitespace", "line_numbers"]

_NOT_NEWLINE = re.compile(rb"[^\n]")
_TO_SPACE = bytes.maketrans(b"\t\r\v\f", b"    ")


def normalise_whitespace(data: bytes) -> bytes:
    """One space between tokens, none at line ends; newlines kept.

    >>> normalise_whitespace(b"  q1\\t0 \\t d1   1 \\r\\n\\n")
    b'q1 0 d1 1\\n\\n'
    """
    if any(c in data for c in (b"\t", b"\r", b"\v", b"\f")):
        data = data.translate(_TO_SPACE)
    while b"  " in data:
        data = data.replace(b"  ", b" ")
    if b" \n" in data:
        data = data.replace(b" \n", b"\n")
    if b"\n " in data:
        data = data.replace(b"\n ", b"\n")
    if data.startswith(b" "):
        data = data[1:]
    if data.endswith(b" "):
        data = data[:-1]
    return data


def line_numbers(data: bytes) -> np.ndarray:
    """1-based numbers of the non-empty lines of normalised ``data`` (row ``i`` of the CSV is on line ``[i]``)."""
    nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    starts = np.r_[0, nl + 1]
    ends = np.r_[nl, len(data)]
    return np.flatnonzero(ends > starts) + 1


def _as_string(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """View a binary column of ASCII bytes as strings (same memory layout, no copy, no validation)."""
    return pa.chunked_array([chunk.view(pa.string()) for chunk in col.chunks], type=pa.string())


def _line_text(data: bytes, line: int) -> str:
    start = 0
    if line > 1:
        nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
        start = int(nl[line - 2]) + 1
    end = data.find(b"\n", start)
    return data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")


def fast_columns(data: bytes, kind: Kind, source: str) -> Columns | None:
    """Parse ``data`` (a whole TREC file) with Arrow, or return ``None`` when the line parser must decide."""
    cols = _NOT_CLEAN
    if not any(c in data for c in (b"\t", b"\r", b"\v", b"\f")):
        cols = _attempt(data, kind, source)
    if cols is _NOT_CLEAN:  # tabs, repeated / leading / trailing spaces
        cols = _attempt(normalise_whitespace(data), kind, source)
    return None if cols is _NOT_CLEAN else cols


_NOT_CLEAN: Any = object()


def _attempt(data: bytes, kind: Kind, source: str) -> Columns | None:
    """Arrow on ``data``; ``_NOT_CLEAN`` when whitespace normalisation might help, ``None`` when it cannot."""
    m = _NOT_NEWLINE.search(data)
    if m is None or data.startswith(b"#"):
        return None
    lo, hi, vcol = WIDTH[kind]
    end = data.find(b"\n", m.start())
    first = data[m.start() : end if end >= 0 else len(data)].split(b" ")
    if b"" in first:
        return _NOT_CLEAN
    if len(first) < lo or (hi is not None and len(first) > hi):
        return None
    value_col = f"f{vcol}"
    # ASCII needs no UTF-8 validation: read raw bytes and view the id columns as strings (no copy)
    ascii_only = data.isascii()
    text = pa.binary() if ascii_only else pa.string()
    types = {f"f{i}": text for i in range(len(first))}
    types[value_col] = pa.float64() if kind == "run" else pa.string()
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            read_options=pcsv.ReadOptions(autogenerate_column_names=True, block_size=1 << 24),
            parse_options=pcsv.ParseOptions(
                delimiter=" ", quote_char=False, escape_char=False, double_quote=False, ignore_empty_lines=True
            ),
            convert_options=pcsv.ConvertOptions(
                column_types=types, null_values=[], strings_can_be_null=False, check_utf8=not ascii_only
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return _NOT_CLEAN
    # an empty field means two spaces in a row, or a space at a line end: not the clean case
    for name in table.column_names:
        if name != value_col and pc.min(pc.binary_length(table.column(name))).as_py() == 0:
            return _NOT_CLEAN
    query, doc = table.column("f0"), table.column("f2")
    if ascii_only:
        query, doc = _as_string(query), _as_string(doc)
    if pc.any(pc.starts_with(query, "#")).as_py():
        return None  # comment lines with as many words as a data line
    raw = table.column(value_col)
    if kind == "qrels":
        if not pc.all(pc.match_substring_regex(raw, r"^-?[0-9]+$")).as_py():
            return None  # "+1", "1.0", "x"...: the line parser accepts or explains
        try:
            values = to_numpy(pc.cast(raw, pa.int64()))
        except pa.ArrowInvalid:  # out of range
            return None
    else:
        values = to_numpy(raw)
        bad = ~np.isfinite(values)
        if bad.any():
            line = int(line_numbers(data)[np.flatnonzero(bad)[0]])
            parse_score(_line_text(data, line).split(" ")[vcol], source, line)  # raises
    tag = table.column("f5")[0].as_py() if kind == "run" else ""
    if isinstance(tag, bytes):
        tag = tag.decode("ascii")
    return Columns(query, doc, values, lambda: line_numbers(data), tag)
