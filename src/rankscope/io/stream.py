"""A run file read in blocks of whole queries: :func:`run_blocks`.

The whole-file readers (:func:`rankscope.io.read_run`) hold the run in memory;
a :class:`BlockSource` hands it on in blocks of about ``block_rows`` rows, each
one a :class:`~rankscope.data.Run` holding **whole queries**, so that each block
can be scored and released (:mod:`rankscope.engine.stream`):

* **TREC** text (plain or gzip) is read in pieces of bytes cut at a line end;
  each piece is parsed exactly as the whole-file reader parses a file (Arrow's
  CSV reader when the bytes are clean, else the line parser), so values and
  errors are the same; an error names the line in the whole file (counted again
  from the start only when there is an error).
* **Parquet** is read in record batches (row group by row group), **Arrow IPC**
  (Feather) batch by batch; the columns are found and converted as
  :func:`~rankscope.io.tables.run_from_table` does, and an error names the row in
  the whole table.

Whole queries: the rows of the last query of a piece are held back and put in
front of the next piece (a query longer than a block makes its block longer).
That relies on the run being **grouped by query**, as run files are written.
A source cannot know in advance; the engine finds out (a query met in two blocks)
and then asks for :meth:`BlockSource.partitions`: one more pass writes every row
to one of N temporary Arrow IPC files chosen by a hash of its query id, so that
each file holds every row of its queries in file order; each file is then one
block.  Nothing is ever scored from a partial query.

Other formats (JSON, CSV, ...) and compressed Parquet / Arrow files have no block
reader: :func:`streamable` says so, and they are read whole.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data import Run
from rankscope.data._columns import to_numpy
from rankscope.data._strings import fingerprint
from rankscope.data.run import DuplicatePolicy
from rankscope.errors import DuplicateEntryError, EmptyInputError, ParseError
from rankscope.i18n import _
from rankscope.io._source import GZIP_MAGIC, UTF8_BOM, decode, open_inflated, text_lines
from rankscope.io._trec_fast import fast_columns
from rankscope.io._trec_lines import Columns, empty_error, parse_lines

__all__ = ["BlockSource", "run_blocks", "streamable", "STREAM_FORMATS"]

#: formats read in blocks
STREAM_FORMATS = ("trec", "parquet", "arrow")
_BYTES_PER_ROW = 40  # first guess for a TREC line; the first piece measures it
_MIN_PIECE = 1 << 10


def streamable(path: str | Path, fmt: str) -> bool:
    """Whether the run file at ``path`` (format ``fmt``) can be read in blocks.

    >>> streamable("run.json", "json")
    False
    """
    if fmt not in STREAM_FORMATS:
        return False
    if fmt == "trec":
        return Path(path).is_file() and _six_columns(path)
    try:  # Parquet and Arrow are read from the file itself: not when gzip-compressed
        with open(path, "rb") as fh:
            return fh.read(2) != GZIP_MAGIC
    except OSError:
        return False


def _six_columns(path: str | Path) -> bool:
    """Whether the first data line of a TREC file has trec_eval's six columns.  A header-less 3-column file
    (``qid docid rank``) is read whole: whether its third column is a rank or a score is decided from the whole
    file (:mod:`rankscope.io.rank_column`)."""
    try:
        stream, raw = _open_bytes(path)
        with raw, stream:
            head = stream.read(1 << 16)
    except (ParseError, OSError, EOFError):
        return True  # the block reader reports it with the file's name
    return next((len(line.split()) >= 6 for line in head.splitlines() if line.strip()), True)


def run_blocks(
    path: str | Path,
    fmt: str,
    *,
    block_rows: int,
    name: str | None = None,
    duplicates: DuplicatePolicy = "error",
) -> BlockSource:
    """A :class:`BlockSource` reading the run file at ``path`` (``fmt`` one of :data:`STREAM_FORMATS`).

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "run.trec")
    >>> _ = open(p, "w").write("".join(f"q{i // 3} Q0 d{i} 1 {9 - i % 3} tag\\n" for i in range(9)))
    >>> [b.queries for b in run_blocks(p, "trec", block_rows=4)]
    [['q0', 'q1'], ['q2']]
    """
    pieces: _Pieces = _TrecPieces(path) if fmt == "trec" else _TablePieces(path, fmt)
    return BlockSource(pieces, block_rows=block_rows, name=name, duplicates=duplicates)


class _Pieces:
    """Consecutive pieces of a run file as Arrow tables (rows in file order); how to make a Run of rows."""

    source: str
    tag: str | None = None

    def tables(self, rows: int) -> Iterator[pa.Table]:  # pragma: no cover - interface
        raise NotImplementedError

    def size_hint(self) -> int:
        """Rows in the file, estimated (used to choose the number of partitions)."""
        raise NotImplementedError  # pragma: no cover

    def query_column(self, table: pa.Table) -> pa.ChunkedArray:
        raise NotImplementedError  # pragma: no cover

    def to_run(self, table: pa.Table, rows: Callable[[], np.ndarray], name: str | None,
               duplicates: DuplicatePolicy) -> Run:
        raise NotImplementedError  # pragma: no cover


@dataclass
class BlockSource:
    """A run file handed on in blocks of whole queries (see module doc); iterate over it for the blocks.

    ``name`` is the run's name (the TREC tag of the first line, or the file stem), known
    once the first block was read; ``rows`` the rows handed on so far; ``blocks`` how many.
    """

    pieces: _Pieces
    block_rows: int
    name: str | None = None
    duplicates: DuplicatePolicy = "error"
    rows: int = 0
    blocks: int = 0
    exhausted: bool = False

    @property
    def source(self) -> str:
        return self.pieces.source

    def __iter__(self) -> Iterator[Run]:
        self.rows = self.blocks = 0
        self.exhausted = False
        carry: pa.Table | None = None
        for table in self.pieces.tables(self.block_rows):
            if self.name is None:
                self.name = self.pieces.tag
            table = table if carry is None else pa.concat_tables([carry, table])
            carry = None
            if table.num_rows < self.block_rows:
                carry = table
                continue
            head, carry = _split_last_query(table, self.pieces.query_column(table))
            if head.num_rows:
                yield self._run(head)
        self.exhausted = True
        if carry is not None and carry.num_rows:
            yield self._run(carry)
        if self.rows == 0:
            raise empty_error(self.source)

    def _run(self, table: pa.Table) -> Run:
        first = self.rows
        run = self.pieces.to_run(table, lambda: np.arange(first, first + table.num_rows), self.name, self.duplicates)
        self.rows += table.num_rows
        self.blocks += 1
        return run

    def partitions(self, parts: int | None = None) -> Iterator[Run]:
        """The run in blocks by a hash of the query id, through temporary Arrow IPC files (see module doc).

        Every query's rows are in one block, in file order; blocks hold about
        ``block_rows`` rows (``parts`` blocks, by default from the file's size).
        """
        n_parts = parts or max(2, -(-self.pieces.size_hint() * 5 // 4 // self.block_rows))
        schema: pa.Schema | None = None
        counts = np.zeros(n_parts, dtype=np.int64)
        with tempfile.TemporaryDirectory(prefix="rankscope-partitions-") as tmp:
            paths = [os.path.join(tmp, f"part-{p:05d}.arrow") for p in range(n_parts)]
            writers: list[Any] = [None] * n_parts
            try:
                first = 0
                for table in self.pieces.tables(self.block_rows):
                    if self.name is None:
                        self.name = self.pieces.tag
                    table = table.append_column("__row__", pa.array(np.arange(first, first + table.num_rows)))
                    first += table.num_rows
                    part = _partition_of(self.pieces.query_column(table), n_parts)
                    order = np.argsort(part, kind="stable")
                    per = np.bincount(part, minlength=n_parts)
                    counts += per
                    table = table.take(pa.array(order))
                    schema = table.schema
                    lo = 0
                    for p in np.flatnonzero(per).tolist():
                        if writers[p] is None:
                            writers[p] = pa.ipc.new_file(paths[p], schema)
                        writers[p].write_table(table.slice(lo, int(per[p])))
                        lo += int(per[p])
                    del table, order, part
            finally:
                for w in writers:
                    if w is not None:
                        w.close()
            if first == 0:
                raise empty_error(self.source)
            self.rows = self.blocks = 0
            for p in np.flatnonzero(counts).tolist():
                with pa.memory_map(paths[p]) as mm:
                    table = pa.ipc.open_file(mm).read_all()
                row = to_numpy(table.column("__row__"))
                table = table.drop_columns(["__row__"])
                run = self.pieces.to_run(table, _const(row), self.name, self.duplicates)
                self.rows += len(run)
                self.blocks += 1
                del table
                os.unlink(paths[p])
                yield run


def _const(values: np.ndarray) -> Callable[[], np.ndarray]:
    return lambda: values


def _split_last_query(table: pa.Table, query: pa.ChunkedArray) -> tuple[pa.Table, pa.Table]:
    """``(rows before the last query's trailing rows, those rows)``; looks back from the end in growing windows.

    >>> t = pa.table({"q": ["a", "b", "b"]})
    >>> [x.num_rows for x in _split_last_query(t, t.column("q"))]
    [1, 2]
    """
    n = table.num_rows
    last = query[n - 1]
    window = 1024
    while True:
        lo = max(n - window, 0)
        tail = query.slice(lo)  # a null id is another query (Kleene AND: no null left, no pa.scalar, no pandas)
        same = to_numpy(pc.and_kleene(pc.equal(tail, last), pc.is_valid(tail)))
        other = np.flatnonzero(~same)
        if len(other):
            cut = lo + int(other[-1]) + 1
            break
        if lo == 0:
            cut = 0
            break
        window *= 16
    return table.slice(0, cut), table.slice(cut)


def _partition_of(query: pa.ChunkedArray, n_parts: int) -> np.ndarray:
    """Partition of each row: a well-mixed hash of its query id modulo ``n_parts`` (int64)."""
    if not (pa.types.is_string(query.type) or pa.types.is_large_string(query.type)):
        if pa.types.is_dictionary(query.type):
            query = query.cast(query.type.value_type)
        if not pa.types.is_string(query.type):
            try:
                query = query.cast(pa.string())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                query = pc.cast(pc.fill_null(query.cast(pa.float64()), 0).cast(pa.int64()), pa.string())
    fp = fingerprint(pc.fill_null(query, ""))
    mixed = (fp * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(33)
    return (mixed % np.uint64(n_parts)).astype(np.int64)


# -- TREC ------------------------------------------------------------------------------------------------
def _open_bytes(path: str | Path) -> tuple[BinaryIO, BinaryIO]:
    """``(stream of the file's bytes, the raw file)``: gunzipped (:func:`~rankscope.io._source.open_inflated`) when the
    file starts with the gzip magic."""
    p = Path(path)
    try:
        raw = open(p, "rb")  # noqa: SIM115 - closed by the caller
    except FileNotFoundError:
        raise ParseError(_("no such file"), source=str(p)) from None
    except OSError as exc:
        reason = str(exc.strerror or exc)
        raise ParseError(_("cannot read file ({reason})", reason=reason), source=str(p)) from None
    head = raw.read(3)
    raw.seek(0)
    if head[:2] == GZIP_MAGIC:  # every layer, counted against the decompression limit
        return open_inflated(p, raw), raw
    if head == UTF8_BOM:
        raw.seek(3)
    return raw, raw


class _TrecPieces(_Pieces):
    """A TREC run file in pieces of bytes cut at line ends, each parsed like a whole file."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self.source = str(path)
        self.tag = None
        self.bytes_per_row = float(_BYTES_PER_ROW)
        self.file_size = os.path.getsize(path)
        self.compression = 1.0  # decompressed / compressed bytes, measured while reading

    def size_hint(self) -> int:
        return int(self.file_size * self.compression / self.bytes_per_row) + 1

    def _pieces(self, piece_bytes: int) -> Iterator[tuple[int, pa.Buffer]]:
        """``(offset of the piece in the file's bytes, piece)``; each piece ends at a line end (or the file's end)."""
        stream, raw = _open_bytes(self.path)
        with raw, stream:
            offset, tail = 0, b""
            size = piece_bytes
            while True:
                buf = np.empty(len(tail) + size, dtype=np.uint8)
                buf[: len(tail)] = np.frombuffer(tail, dtype=np.uint8)
                got = stream.readinto(memoryview(buf)[len(tail) :])  # type: ignore[attr-defined,arg-type]
                end = len(tail) + (got or 0)
                if end == 0:
                    return
                if got and raw is not stream:
                    self.compression = max(1.0, (offset + end) / max(raw.tell(), 1))
                data = pa.py_buffer(buf)
                if not got:  # the end of the file: the last line may lack its newline
                    yield offset, data.slice(0, end)
                    return
                cut = _last_newline(buf, end)
                if cut == 0:  # a line longer than the piece: read more
                    tail, size = buf[:end].tobytes(), size * 2
                    del buf, data  # held once (as the tail) while the larger buffer is made
                    continue
                tail = buf[cut:end].tobytes()
                yield offset, data.slice(0, cut)
                offset += cut
                size = piece_bytes

    def tables(self, rows: int) -> Iterator[pa.Table]:
        piece_bytes = max(int(rows * self.bytes_per_row), _MIN_PIECE)
        for offset, data in self._pieces(piece_bytes):
            if offset == 0 and memoryview(data)[:3].tobytes() == UTF8_BOM:  # a BOM inside gzip data
                data = data.slice(3)
            cols = self._parse(data, offset)
            if cols is None:
                continue
            if self.tag is None:
                self.tag = cols.tag
            n = len(cols.values)
            if offset == 0 and n:
                self.bytes_per_row = max(data.size / n, 8.0)
            yield pa.table({"query": _strings(cols.query), "doc": _strings(cols.doc), "score": _numbers(cols.values)})

    def _parse(self, data: pa.Buffer, offset: int) -> Columns | None:
        """The columns of one piece (None: no data line in it); errors name the line in the whole file."""
        cols = fast_columns(data, "run", self.source)
        if cols is not None:
            return cols
        try:
            return parse_lines(text_lines(decode(data.to_pybytes(), self.source)), "run", self.source)
        except EmptyInputError:
            return None
        except ParseError as exc:
            if exc.line is None:
                raise
            line = exc.line + self._lines_before(offset)
            raise ParseError(exc.reason, source=self.source, line=line) from None

    def _lines_before(self, offset: int) -> int:
        """Newlines in the file's bytes before ``offset`` (counted again from the start: errors only)."""
        stream, raw = _open_bytes(self.path)
        count, left = 0, offset
        with raw, stream:
            while left > 0:
                chunk = stream.read(min(left, 1 << 24))
                if not chunk:
                    break
                count += chunk.count(b"\n")
                left -= len(chunk)
        return count

    def lines_of(self, rows: np.ndarray) -> np.ndarray:
        """The file line (1-based) of each data row (0-based, in file order), read again from the start."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.zeros(len(rows), dtype=np.int64)
        first_row, lines_before = 0, 0
        for __, data in self._pieces(1 << 22):
            cols = self._parse(data, 0) if data.size else None
            n = len(cols.values) if cols is not None else 0
            inside = (rows >= first_row) & (rows < first_row + n)
            if inside.any() and cols is not None:
                out[inside] = cols.lines()[rows[inside] - first_row] + lines_before
            first_row += n
            lines_before += data.to_pybytes().count(b"\n")
            if first_row > rows.max(initial=-1):
                break
        return out

    def query_column(self, table: pa.Table) -> pa.ChunkedArray:
        return table.column("query")

    def to_run(self, table: pa.Table, rows: Callable[[], np.ndarray], name: str | None,
               duplicates: DuplicatePolicy) -> Run:
        from rankscope.io.trec import at_line

        try:
            return Run(table.column("query"), table.column("doc"), to_numpy(table.column("score")),
                       name or self.tag, duplicates=duplicates)
        except DuplicateEntryError as exc:
            if exc.rows is None:
                raise
            first, second = exc.rows
            numbers = np.zeros(second + 1, dtype=np.int64)
            numbers[[first, second]] = self.lines_of(rows()[[first, second]])
            raise at_line(exc, self.source, numbers, "run", table.column("query"), table.column("doc")) from None


def _last_newline(buf: np.ndarray, end: int) -> int:
    """Position just past the last ``\\n`` in ``buf[:end]``, 0 when there is none."""
    hi, step = end, 4096
    while hi > 0:
        lo = max(0, hi - step)
        at = buf[lo:hi].tobytes().rfind(b"\n")
        if at >= 0:
            return lo + at + 1
        hi, step = lo, step * 4
    return 0


def _numbers(values: Any) -> Any:
    """A float64 numpy column as an Arrow array sharing its memory (``pa.array`` on a numpy array imports
    pandas, half a second of a command's start, when it is installed); anything else as it is."""
    if isinstance(values, np.ndarray) and values.dtype == np.float64 and values.ndim == 1:
        values = np.ascontiguousarray(values)
        return pa.Array.from_buffers(pa.float64(), len(values), [None, pa.py_buffer(values)])
    return values


def _strings(values: Any) -> pa.ChunkedArray:
    if isinstance(values, pa.ChunkedArray):
        return values
    if isinstance(values, pa.Array):
        return pa.chunked_array([values])
    return pa.chunked_array([pa.array(values, type=pa.string())])


# -- Parquet and Arrow IPC ---------------------------------------------------------------------------------
class _TablePieces(_Pieces):
    """A Parquet or Arrow IPC file in record batches: only the query, doc and score (or rank) columns."""

    def __init__(self, path: str | Path, fmt: str) -> None:
        from rankscope.io.tables import DOC, QUERY, RANK, SCORE, _maybe_column, find_column

        self.path, self.fmt, self.source = path, fmt, str(path)
        self.tag = None
        schema = self._schema()
        names = list(schema.names)
        self.query = find_column(names, QUERY, "query id", self.source)
        doc = find_column(names, DOC, "doc id", self.source)
        value = _maybe_column(names, SCORE) or _maybe_column(names, RANK)
        self.columns = [self.query, doc] + ([value] if value is not None else [])
        from rankscope.io.jsonfmt import _stem

        self.tag = _stem(path)

    def _schema(self) -> pa.Schema:
        try:
            if self.fmt == "parquet":
                import pyarrow.parquet as pq

                return pq.read_schema(self.path)
            with pa.memory_map(str(self.path)) as mm:
                return self._ipc(mm).schema
        except (pa.ArrowInvalid, OSError) as exc:
            raise ParseError(_("not a readable Parquet file ({reason})", reason=str(exc)) if self.fmt == "parquet"
                             else _("not a readable Arrow IPC / Feather file ({reason})", reason=str(exc)),
                             source=self.source) from None

    @staticmethod
    def _ipc(mm: Any) -> Any:
        try:
            return pa.ipc.open_file(mm)
        except pa.ArrowInvalid:
            mm.seek(0)
            return pa.ipc.open_stream(mm)

    def size_hint(self) -> int:
        if self.fmt == "parquet":
            import pyarrow.parquet as pq

            return int(pq.ParquetFile(self.path).metadata.num_rows)
        with pa.memory_map(str(self.path)) as mm:
            reader = self._ipc(mm)
            if isinstance(reader, pa.ipc.RecordBatchFileReader):
                return sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
        return os.path.getsize(self.path) // 16 + 1

    def tables(self, rows: int) -> Iterator[pa.Table]:
        if self.fmt == "parquet":
            import pyarrow.parquet as pq

            with pq.ParquetFile(self.path) as pf:
                for batch in pf.iter_batches(batch_size=rows, columns=self.columns):
                    yield pa.Table.from_batches([batch])
            return
        with pa.memory_map(str(self.path)) as mm:
            reader = self._ipc(mm)
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches)) \
                if isinstance(reader, pa.ipc.RecordBatchFileReader) else reader
            for batch in batches:
                batch = batch.select(self.columns)
                for lo in range(0, batch.num_rows, rows):
                    yield pa.Table.from_batches([batch.slice(lo, rows)])

    def query_column(self, table: pa.Table) -> pa.ChunkedArray:
        q = table.column(self.query)
        return q.cast(q.type.value_type) if pa.types.is_dictionary(q.type) else q

    def to_run(self, table: pa.Table, rows: Callable[[], np.ndarray], name: str | None,
               duplicates: DuplicatePolicy) -> Run:
        from rankscope.io.tables import run_from_table

        return run_from_table(table, self.source, name=name or self.tag, duplicates=duplicates, rows=rows)
