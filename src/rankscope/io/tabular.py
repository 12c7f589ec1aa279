"""CSV / TSV, Parquet, Arrow IPC (Feather) and BEIR qrels.

CSV/TSV: a header naming the columns (aliases of :mod:`rankscope.io.tables`,
e.g. BEIR's ``query-id corpus-id score``), names given with ``columns=``, or no
header and exactly three columns ``query, doc, value``: for qrels the third column
is the grade; for a run it is a rank when, in every query, it holds 1..n (or 0..n-1)
increasing down the file (MS MARCO's ``qid<TAB>docid<TAB>rank``; the run keeps a
notice saying so), a score when it holds non-integers or decreases, and any other
order is an error asking for ``columns=`` (:mod:`rankscope.io.rank_column`).  A
headerless TSV laid out like TREC (4 columns for qrels, as MS MARCO's
``qrels.dev.tsv``; 6 or more for a run) is read as TREC.  The header is detected by its names
(``header=True/False`` forces it).  Ids are read as strings (``007`` stays
``007``).  Errors name the file and line.

Parquet and Arrow IPC / Feather: a table with the same column names; errors name
the file and the 1-based row.

BEIR: a dataset folder holding ``qrels/<split>.tsv`` (``split="test"`` by
default), or the qrels ``.tsv`` file itself.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from rankscope.data import Qrels, Run
from rankscope.data.notices import InputNotice
from rankscope.data.run import DuplicatePolicy
from rankscope.errors import EmptyInputError, InvalidParameterError, Items, ParseError, WrongKindError
from rankscope.i18n import _
from rankscope.io._source import decode, read_bytes, text_lines
from rankscope.io._trec_lines import KIND_HINT, other_kind
from rankscope.io.jsonfmt import _stem
from rankscope.io.rank_column import check_columns, third_column
from rankscope.io.tables import DOC, GRADE, QUERY, RANK, SCORE, _numbers, _row_locator, qrels_from_table, run_from_table
from rankscope.io.trec import read_trec_qrels, read_trec_run

__all__ = [
    "read_csv_qrels",
    "read_csv_run",
    "read_parquet_qrels",
    "read_parquet_run",
    "read_arrow_qrels",
    "read_arrow_run",
    "read_beir_qrels",
    "write_csv",
    "write_parquet",
    "write_arrow",
]

_KNOWN = {c.lower() for c in QUERY + DOC + GRADE + SCORE + RANK}


def _delimiter(path: str | Path, delimiter: str | None) -> str:
    if delimiter is not None:
        return delimiter
    name = str(path).lower().removesuffix(".gz")
    return "\t" if name.endswith(".tsv") else ","


class _TrecLayout(Exception):
    """A headerless TSV whose columns are the TREC layout: read it as TREC."""


def _csv_table(
    path: str | Path, kind: str, delimiter: str | None, header: bool | None, columns: Any = None
) -> tuple[pa.Table, Any, bool]:
    """The table of a CSV/TSV file, the line of every row, and whether its names were guessed (no header, 3 columns)."""
    source = str(path)
    delim = _delimiter(path, delimiter)
    data = read_bytes(path)
    text = decode(data, source)
    lines = text_lines(text)
    first_no = next((i for i, s in enumerate(lines) if s.strip()), None)
    if first_no is None:
        raise EmptyInputError(_("{source}: no entries (empty file)", source=source))
    first = next(csv.reader([lines[first_no]], delimiter=delim))
    has_header = header if header is not None else any(c.strip().lower() in _KNOWN for c in first)
    value = "relevance" if kind == "qrels" else "score"
    guessed = False
    if columns is not None:  # the caller names the columns (a header line, if any, is skipped)
        given = check_columns(columns, len(first))
        names = [f"_skip{i}" if c == "_" else c for i, c in enumerate(given)]
    elif has_header:
        names = [c.strip() for c in first]
    elif delim == "\t" and (len(first) == 4 if kind == "qrels" else len(first) >= 6):
        raise _TrecLayout  # e.g. MS MARCO's qrels.dev.tsv: TREC columns separated by tabs
    elif len(first) == 3:
        names, guessed = ["query_id", "doc_id", value], True
    else:
        values = {"value": value, "got": len(first), "header": f"query_id{delim}doc_id{delim}{value}"}
        said = _("a CSV/TSV file without a header must have 3 columns (query, doc, {value}), got {got}; add a header "
                 "such as {header} or read it with format='trec'", **values) if len(first) in (4, 6) else \
            _("a CSV/TSV file without a header must have 3 columns (query, doc, {value}), got {got}; add a header "
              "such as {header}", **values)
        # a CSV/TSV file without a header must have 3 columns (query, doc, score), got 4; add a header such as ...
        other = other_kind(kind, [c.strip() for c in first])
        if other is not None:
            raise WrongKindError(_("{said}; {hint}", said=said, hint=KIND_HINT[other]),
                                 looks_like=other,
                                 source=source,
                                 line=first_no + 1)
        raise ParseError(_("{said}", said=said), source=source, line=first_no + 1)
    try:
        table = pcsv.read_csv(
            pa.BufferReader(data),
            read_options=pcsv.ReadOptions(column_names=names, skip_rows=first_no + (1 if has_header else 0)),
            parse_options=pcsv.ParseOptions(delimiter=delim, ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(
                column_types=dict.fromkeys(names, pa.string()), null_values=[""], strings_can_be_null=True
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise _ragged(lines, delim, len(names), source, first_no, exc) from None
    skip = 1 if has_header else 0

    def row_lines() -> np.ndarray:
        return _nonblank(lines)[skip:]

    if table.num_rows == 0:
        raise EmptyInputError(_("{source}: no entries (only a header)", source=source))
    return table, row_lines, guessed


def _nonblank(lines: list[str]) -> np.ndarray:
    return np.asarray([i for i, s in enumerate(lines, start=1) if s.strip()], dtype=np.int64)


def _ragged(lines: list[str], delim: str, width: int, source: str, start: int, exc: Exception) -> ParseError:
    for i, s in enumerate(lines[start:], start=start + 1):
        if not s.strip():
            continue
        fields = next(csv.reader([s], delimiter=delim))
        if len(fields) != width:
            text = repr(s.strip()[:80])
            return ParseError(_("expected {want} columns, got {got}: {text}", want=width, got=len(fields), text=text),
                              source=source,
                              line=i)
    return ParseError(_("cannot parse as CSV ({reason})", reason=str(exc)), source=source)


def read_csv_qrels(path: str | Path, *, delimiter: str | None = None, header: bool | None = None) -> Qrels:
    """Read qrels from CSV (``delimiter=","``) or TSV (``.tsv``: tab); see module doc."""
    try:
        table, lines, __ = _csv_table(path, "qrels", delimiter, header)
    except _TrecLayout:
        return read_trec_qrels(path)
    return qrels_from_table(table, str(path), lines)


def read_csv_run(
    path: str | Path,
    name: str | None = None,
    *,
    delimiter: str | None = None,
    header: bool | None = None,
    duplicates: DuplicatePolicy = "error",
    columns: str | Sequence[str] | None = None,
) -> Run:
    """Read a run from CSV/TSV; see module doc.  The run is named ``name`` or after the file.

    ``columns`` names the columns (``"qid,docid,rank"``, ``_`` skips one) instead of a header; without it,
    a header-less 3-column file's third column is a rank or a score as :func:`~rankscope.io.rank_column.third_column`
    decides, and the run keeps an :class:`~rankscope.data.notices.InputNotice` when it is a rank.
    """
    source = str(path)
    try:
        table, lines, guessed = _csv_table(path, "run", delimiter, header, columns)
    except _TrecLayout:
        if columns is not None:
            raise InvalidParameterError(_("{path}: columns= is for 3-column runs (qid, docid, rank|score); a "
                                          "6-column TREC run is read as trec_eval reads it (score column)",
                                          path=source)) from None
        return read_trec_run(path, name, duplicates=duplicates)
    notices: tuple[InputNotice, ...] = ()
    if guessed:
        third = table.column("score")
        values = _numbers(third, "score", False, _row_locator(source, lines))
        meaning, best = third_column(table.column("query_id"), values, source, lines)
        if meaning == "rank":
            table = table.rename_columns(["query_id", "doc_id", "rank"])
            notices = (InputNotice("rank_column", source, (("column", 3), ("best", best))),)
    run = run_from_table(table, source, lines, name=name or _stem(path), duplicates=duplicates)
    run.notices = notices
    return run


# -- binary tables ------------------------------------------------------------------------------------
def _parquet(path: str | Path) -> pa.Table:
    import pyarrow.parquet as pq

    data = read_bytes(path)
    try:
        return pq.read_table(pa.BufferReader(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise ParseError(_("not a readable Parquet file ({reason})", reason=str(exc)), source=str(path)) from None


def _arrow(path: str | Path) -> pa.Table:
    import pyarrow.ipc as ipc

    data = read_bytes(path)
    try:
        return ipc.open_file(pa.BufferReader(data)).read_all()
    except (pa.ArrowInvalid, OSError):
        pass
    try:
        return ipc.open_stream(pa.BufferReader(data)).read_all()
    except (pa.ArrowInvalid, OSError) as exc:
        raise ParseError(_("not a readable Arrow IPC / Feather file ({reason})", reason=str(exc)),
                         source=str(path)) from None


def _nonempty(table: pa.Table, path: str | Path) -> pa.Table:
    if table.num_rows == 0:
        raise EmptyInputError(_("{path}: no entries (empty table)", path=str(path)))
    return table


def read_parquet_qrels(path: str | Path) -> Qrels:
    """Read qrels from a Parquet file."""
    return qrels_from_table(_nonempty(_parquet(path), path), str(path))


def read_parquet_run(path: str | Path, name: str | None = None, *, duplicates: DuplicatePolicy = "error") -> Run:
    """Read a run from a Parquet file."""
    table = _nonempty(_parquet(path), path)
    return run_from_table(table, str(path), name=name or _stem(path), duplicates=duplicates)


def read_arrow_qrels(path: str | Path) -> Qrels:
    """Read qrels from an Arrow IPC file or stream (Feather v2)."""
    return qrels_from_table(_nonempty(_arrow(path), path), str(path))


def read_arrow_run(path: str | Path, name: str | None = None, *, duplicates: DuplicatePolicy = "error") -> Run:
    """Read a run from an Arrow IPC file or stream (Feather v2)."""
    table = _nonempty(_arrow(path), path)
    return run_from_table(table, str(path), name=name or _stem(path), duplicates=duplicates)


# -- BEIR ---------------------------------------------------------------------------------------------
def beir_qrels_path(path: str | Path, split: str = "test") -> Path:
    """The qrels file of a BEIR dataset folder (``qrels/<split>.tsv``), or ``path`` itself when it is a file."""
    p = Path(path)
    if not p.is_dir():
        return p
    for folder in (p / "qrels", p):
        candidate = folder / f"{split}.tsv"
        if candidate.is_file():
            return candidate
    splits = sorted({f.stem for folder in (p / "qrels", p) if folder.is_dir() for f in folder.glob("*.tsv")})
    if splits:
        listed = Items(tuple(splits))
        raise ParseError(_("no qrels for split {split!r}; available splits: {splits}", split=split, splits=listed),
                         source=str(p))
    raise ParseError(_("no qrels for split {split!r}; no qrels/*.tsv found (is this a BEIR folder?)", split=split),
                     source=str(p))


def read_beir_qrels(path: str | Path, *, split: str = "test") -> Qrels:
    """Read BEIR qrels (tab-separated, header ``query-id corpus-id score``) from a folder or a .tsv file."""
    return read_csv_qrels(beir_qrels_path(path, split), delimiter="\t", header=True)


# -- writers ------------------------------------------------------------------------------------------
def _sorted_table(obj: Qrels | Run) -> pa.Table:
    order = np.argsort(obj.qcode, kind="stable")
    return obj.to_arrow().take(pa.array(order))


def write_parquet(obj: Qrels | Run, path: str | Path) -> None:
    """Write ``(query_id, doc_id, relevance|score)`` as Parquet (queries sorted)."""
    import pyarrow.parquet as pq

    pq.write_table(_sorted_table(obj), str(path))


def write_arrow(obj: Qrels | Run, path: str | Path) -> None:
    """Write ``(query_id, doc_id, relevance|score)`` as an Arrow IPC (Feather v2) file."""
    import pyarrow.feather as feather

    feather.write_feather(_sorted_table(obj), str(path))


def write_csv(obj: Qrels | Run, path: str | Path, *, delimiter: str | None = None) -> None:
    """Write ``query_id, doc_id, relevance|score`` with a header (``.tsv``: tab-separated)."""
    delim = _delimiter(path, delimiter)
    buf = io.BytesIO()
    pcsv.write_csv(_sorted_table(obj), buf, write_options=pcsv.WriteOptions(delimiter=delim))
    Path(path).write_bytes(buf.getvalue())
