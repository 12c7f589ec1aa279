"""The fast TREC reader: Arrow's multi-threaded CSV parser on a memory map of the file.

It accepts exactly what :mod:`rankscope.io._trec_lines` accepts and returns the
same values, or returns ``None`` ("not sure") and lets the caller use the exact
line parser, which then produces the error message.  The steps:

1. the file is memory-mapped (no copy into Python ``bytes``; gzip files and
   anything that cannot be mapped are read into memory instead);
2. one vectorised scan (:func:`scan`) decides whether the bytes are the clean
   case: ASCII, no control characters besides ``\\n``, exactly one space
   between tokens (no repeated spaces, no space at a line start or end), and no
   line starting with ``#`` (comment lines go to the line parser);
3. otherwise (tabs, ``\\r``, padding, non-ASCII text...) the bytes are copied and
   whitespace-normalised (:func:`normalise_whitespace`: tabs etc. become
   spaces, runs of spaces collapse to one, spaces at line starts and ends are
   removed; newlines are never touched, so line numbers survive);
4. files with ``#`` comment lines are handed to the line parser (in normalised
   data, a comment line is seen as a first column starting with ``#``); blank
   lines are skipped by Arrow, and line numbers are recovered (only for an error message)
   by :func:`line_numbers`;
5. Arrow reads the bytes as space-delimited CSV (no quoting, no escapes, no null
   values).  It checks the column count of every line even for the columns it
   does not convert, so ASCII files convert only query, doc and value; other
   files convert every column as UTF-8 text, which validates every byte.  A
   ragged file (a line with another column count than the first), a value Arrow
   cannot convert or invalid UTF-8 raise inside Arrow, and the line parser takes
   over;
6. the value column is checked (grades: ``[+-]digits``; scores: finite) and a
   non-finite score is reported with the same message as the line parser.

A memory-mapped file must not be truncated by another process while it is read.
"""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from rankscope.data._columns import to_numpy
from rankscope.io._source import GZIP_MAGIC, UTF8_BOM, decode, read_bytes, text_lines
from rankscope.io._trec_lines import WIDTH, Columns, Kind, parse_lines, parse_score

__all__ = ["read_columns", "fast_columns", "scan", "normalise_whitespace", "line_numbers"]

#: bytes-like input: ``bytes`` or an Arrow buffer (a memory map)
Data: TypeAlias = "bytes | pa.Buffer"

_FIRST_LINE = re.compile(rb"[^\n]+")
_TO_SPACE = bytes.maketrans(b"\t\r\v\f", b"    ")
_BLOCK = 1 << 20  # bytes per step of the scan: the temporary stays in the CPU cache
_ARROW_BLOCK = 1 << 24  # bytes per block of Arrow's parser, at most (a longer line goes to the line parser)
_MIN_ARROW_BLOCK = 1 << 20
# ``byte ^ 0x6A`` maps \n (10) to 96, printable ASCII (32..127) onto 0..95 and every other byte
# (control characters, non-ASCII) above 96, so one maximum tells whether a block is plain text
_XOR, _PLAIN_MAX = 0x6A, 96
_PARALLEL_MIN = 1 << 24  # bytes per thread of the scan, at least

Scan: TypeAlias = Literal["clean", "dirty", "comment"]


def scan(data: Data) -> Scan:
    """``"clean"``: ASCII, no control character but ``\\n``, one space between tokens; ``"comment"``: a line
    starts with ``#``; else ``"dirty"`` (whitespace to normalise, or non-ASCII text).

    Vectorised, block by block, without a copy of ``data`` (large inputs on several
    threads): in plain text, the larger byte of two neighbours is at most 35 only
    for ``"  "``, ``" \\n"``, ``"\\n "`` (32), blank lines (10) and pairs of ``\\n``,
    space, ``!``, ``"``, ``#``, which are then looked at closely.

    >>> scan(b"q1 0 d1 1\\n\\nq2 0 d1 0\\n"), scan(b"q1 0 d1  1\\n"), scan(b"q1\\t0 d1 1\\n")
    ('clean', 'dirty', 'dirty')
    >>> scan(b"q1 0 d1 1 \\n"), scan(b" q1 0 d1 1"), scan("q1 0 d\\u00e9 1".encode()), scan(b"a\\n# c\\n")
    ('dirty', 'dirty', 'dirty', 'comment')
    """
    b = np.frombuffer(data, dtype=np.uint8)
    n = len(b)
    if n == 0:
        return "clean"
    if b[0] == 35:
        return "comment"
    if b[0] == 32 or b[-1] == 32:
        return "dirty"
    workers = min(os.cpu_count() or 1, 4, n // _PARALLEL_MIN + 1)
    if workers == 1:
        return _scan_range(b, 0, n)
    step = -(-n // (workers * _BLOCK)) * _BLOCK
    with ThreadPoolExecutor(workers) as pool:  # numpy releases the GIL inside each step
        found = set(pool.map(lambda lo: _scan_range(b, lo, min(lo + step, n)), range(0, n, step)))
    return "comment" if "comment" in found else "dirty" if "dirty" in found else "clean"


def _scan_range(b: np.ndarray, lo: int, hi: int) -> Scan:
    """:func:`scan` of the bytes ``b[lo:hi]`` (and of the pair ``b[hi - 1], b[hi]``)."""
    tmp = np.empty(min(hi - lo, _BLOCK), dtype=np.uint8)
    for start in range(lo, hi, _BLOCK):
        block = b[start : min(start + _BLOCK, hi)]
        t = tmp[: len(block)]
        np.bitwise_xor(block, _XOR, out=t)
        if t.max() > _PLAIN_MAX:
            return "dirty"
        pairs = b[start : min(start + _BLOCK, hi) + 1]  # one byte of overlap: pairs across the block end
        t = tmp[: len(pairs) - 1]
        np.maximum(pairs[:-1], pairs[1:], out=t)
        if len(t) and t.min() <= 35:
            if bool((t == 32).any()):
                return "dirty"
            if bool(((pairs[:-1] == 10) & (pairs[1:] == 35)).any()):
                return "comment"
    return "clean"


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


def line_numbers(data: Data) -> np.ndarray:
    """1-based numbers of the non-empty lines of normalised ``data`` (row ``i`` of the CSV is on line ``[i]``)."""
    nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    starts = np.r_[0, nl + 1]
    ends = np.r_[nl, len(data) if isinstance(data, bytes) else data.size]
    return np.flatnonzero(ends > starts) + 1


def _as_string(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """View a binary column of ASCII bytes as strings (same memory layout, no copy, no validation)."""
    return pa.chunked_array([chunk.view(pa.string()) for chunk in col.chunks], type=pa.string())


def _line_text(data: Data, line: int) -> str:
    b = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(b == 10)
    start = int(nl[line - 2]) + 1 if line > 1 else 0
    end = int(nl[line - 1]) if line - 1 < len(nl) else len(b)
    return memoryview(data)[start:end].tobytes().decode("utf-8", "replace")


def _map_file(path: str | Path) -> pa.Buffer | None:
    """A read-only memory map of an uncompressed file (without a UTF-8 BOM), else ``None``.

    ``None`` for gzip data and for anything that cannot be mapped (a missing file,
    a folder, a pipe...): :func:`~rankscope.io._source.read_bytes` then reads the
    file or raises the error naming it.
    """
    try:
        with pa.memory_map(str(path)) as mm:
            buf = mm.read_buffer()  # stays valid after close: the buffer holds the mapping
    except (OSError, pa.ArrowException):
        return None
    head = memoryview(buf)[:3].tobytes()
    if head[:2] == GZIP_MAGIC:
        return None
    return buf.slice(3) if head == UTF8_BOM else buf


def read_columns(path: str | Path, kind: Kind, *, fast: bool = True) -> Columns:
    """The columns of the TREC ``kind`` file at ``path``: Arrow on a memory map when it can, else the line parser.

    ``fast=False`` forces the exact line parser; both give the same values and errors.
    """
    source = str(path)
    data: Data | None = _map_file(path) if fast else None
    if data is None:
        data = read_bytes(path)
    cols = fast_columns(data, kind, source) if fast else None
    if cols is None:
        raw = data if isinstance(data, bytes) else data.to_pybytes()
        cols = parse_lines(text_lines(decode(raw, source)), kind, source)
    return cols


def fast_columns(data: Data, kind: Kind, source: str) -> Columns | None:
    """Parse ``data`` (a whole TREC file) with Arrow, or return ``None`` when the line parser must decide."""
    state = scan(data)
    if state == "comment":
        return None
    if state == "clean":
        return _attempt(data, kind, source, clean=True)
    raw = data if isinstance(data, bytes) else data.to_pybytes()
    return _attempt(normalise_whitespace(raw), kind, source, clean=False)


def _block_size(data: Data) -> int:
    """Bytes per block of Arrow's parser: at most :data:`_ARROW_BLOCK`, and small enough that every core parses
    two blocks of ``data`` (a piece of a streamed run is a few MB: one block would be parsed by one thread)."""
    size = len(data) if isinstance(data, bytes) else data.size
    return min(_ARROW_BLOCK, max(_MIN_ARROW_BLOCK, size // (2 * (os.cpu_count() or 1)) + 1))


def _attempt(data: Data, kind: Kind, source: str, *, clean: bool) -> Columns | None:
    """Arrow on whitespace-clean ``data`` (``clean``: found clean by :func:`scan`); ``None``: ask the line parser."""
    ascii_only = clean or (isinstance(data, bytes) and data.isascii())
    m = _FIRST_LINE.search(data)  # type: ignore[call-overload]
    if m is None or m.group().startswith(b"#"):
        return None
    first = m.group().split(b" ")
    lo, hi, vcol = WIDTH[kind]
    if len(first) < lo or (hi is not None and len(first) > hi):
        return None
    value_col = f"f{vcol}"
    # ASCII needs no UTF-8 validation: read raw bytes of the three needed columns and view the ids as
    # strings (no copy); otherwise every column is read as text, which validates every byte as UTF-8
    text = pa.binary() if ascii_only else pa.string()
    names = ["f0", "f2", value_col] if ascii_only else [f"f{i}" for i in range(len(first))]
    types: dict[str, Any] = {name: text for name in names}
    types[value_col] = pa.float64() if kind == "run" else pa.string()
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            read_options=pcsv.ReadOptions(autogenerate_column_names=True, block_size=_block_size(data)),
            parse_options=pcsv.ParseOptions(
                delimiter=" ", quote_char=False, escape_char=False, double_quote=False, ignore_empty_lines=True
            ),
            convert_options=pcsv.ConvertOptions(
                column_types=types,
                include_columns=names,
                null_values=[],
                strings_can_be_null=False,
                check_utf8=not ascii_only,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None  # ragged, not a number, not UTF-8, a line longer than a block...
    query, doc = table.column("f0"), table.column("f2")
    if ascii_only:
        query, doc = _as_string(query), _as_string(doc)
    if not clean and pc.any(pc.starts_with(query, "#")).as_py():
        return None  # comment lines with as many words as a data line (clean data: found by the scan)
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
        # NaN and infinities make the sum non-finite (no temporary array); an overflow only costs the exact check
        with np.errstate(over="ignore", invalid="ignore"):
            total = values.sum()
        finite = np.isfinite(values) if not np.isfinite(total) else None
        if finite is not None and not finite.all():
            line = int(line_numbers(data)[np.argmin(finite)])
            parse_score(_line_text(data, line).split(" ")[vcol], source, line)  # raises
    tag = first[5].decode("utf-8") if kind == "run" else ""
    return Columns(query, doc, values, lambda: line_numbers(data), tag)
