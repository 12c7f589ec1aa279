"""Files and tables of span judgments and chunkings: JSON Lines, JSON, CSV / TSV, Parquet, DataFrames.

Both are plain tables, one row a span or a chunk:

* span judgments: ``query_id, doc_id, start, end[, grade]`` (grade 1 when absent);
* chunkings: ``chunk_id, doc_id, start, end``.

Column names are matched case-insensitively among the aliases of
:data:`rankscope.data._spantable.FIELDS` (``qid``, ``docid``, ``node_id``,
``ref_doc_id``, ``start_char_idx`` ...).  The format comes from the file name
(``.jsonl``/``.ndjson``, ``.json``, ``.csv``, ``.tsv``, ``.parquet``, optionally
``.gz``) or ``format=``.  Errors name the file and line (text files) or row
(Parquet), and the field.

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "spans.jsonl")
>>> _ = open(p, "w").write('{"query_id": "q1", "doc_id": "d1", "start": 0, "end": 5}\\n'
...                        '{"query_id": "q1", "doc_id": "d1", "start": 9, "end": 7}\\n')
>>> read_span_qrels(p)
Traceback (most recent call last):
...
rankscope.errors.ParseError: ...spans.jsonl:2: field 'end': a span needs start < end (end exclusive), got start 9, end 7
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.data._spantable import Locator
from rankscope.errors import EmptyInputError, InvalidParameterError, Items, ParseError
from rankscope.i18n import _
from rankscope.io._source import decode, read_bytes, text_lines

if TYPE_CHECKING:
    from rankscope.data.chunking import Chunking
    from rankscope.data.spans import SpanQrels

__all__ = ["read_span_qrels", "read_chunking", "spans_from_table", "chunking_from_table", "write_table",
           "table_format"]

_FORMATS = ("jsonl", "json", "csv", "tsv", "parquet")


def table_format(path: str | Path, format: str | None = None) -> str:
    """The format of a span / chunk table from ``format`` or the file name."""
    if format is not None:
        if format not in _FORMATS:
            formats = Items(_FORMATS)
            raise InvalidParameterError(_("format must be one of {formats}, got {format!r}", formats=formats,
                                          format=format))
        return format
    name = str(path).lower().removesuffix(".gz")
    for suffix, fmt in ((".jsonl", "jsonl"), (".ndjson", "jsonl"), (".json", "json"), (".csv", "csv"),
                        (".tsv", "tsv"), (".parquet", "parquet")):
        if name.endswith(suffix):
            return fmt
    raise InvalidParameterError(_("cannot tell the format of {path!r} from its name; use a .jsonl, .json, .csv, "
                                  ".tsv or .parquet file or pass format=", path=str(path)))


def _records(path: str | Path, format: str | None) -> tuple[list[Any], Locator]:
    """The rows of a file as mappings, and where each came from."""
    source = str(path)
    fmt = table_format(path, format)
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(pa.BufferReader(read_bytes(path)))
        except (pa.ArrowInvalid, OSError) as exc:
            raise ParseError(_("not a readable Parquet file ({reason})", reason=str(exc)), source=source) from None
        return table.to_pylist(), Locator(source, unit="row")
    text = decode(read_bytes(path), source)
    if fmt == "json":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(_("invalid JSON: {reason}", reason=exc.msg), source=source, line=exc.lineno) from None
        if not isinstance(obj, list):
            raise ParseError(_("expected a JSON list of records, got {type}", type=type(obj).__name__), source=source)
        return obj, Locator(source)
    if fmt == "jsonl":
        recs, lines = [], []
        for i, line in enumerate(text_lines(text), start=1):
            if not line.strip():
                continue
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ParseError(_("invalid JSON: {reason} (column {column})", reason=exc.msg, column=exc.colno),
                                 source=source,
                                 line=i) from None
            lines.append(i)
        return recs, Locator(source, np.asarray(lines, dtype=np.int64))
    reader = csv.reader(io.StringIO(text), delimiter="\t" if fmt == "tsv" else ",")
    rows = [(reader.line_num, r) for r in reader if any(c.strip() for c in r)]
    if not rows:
        raise EmptyInputError(_("{source}: no entries (empty file)", source=source))
    header = [h.strip() for h in rows[0][1]]
    recs, lines = [], []
    for line_no, r in rows[1:]:
        if len(r) != len(header):
            names = Items(tuple(header))
            raise ParseError(_("expected {want} columns ({names}), got {got}", want=len(header), names=names,
                               got=len(r)),
                             source=source,
                             line=line_no)
        recs.append({h: _cell(v) for h, v in zip(header, r)})
        lines.append(line_no)
    return recs, Locator(source, np.asarray(lines, dtype=np.int64))


def _cell(value: str) -> Any:
    value = value.strip()
    return None if value == "" else value


def _table_records(table: Any) -> list[dict[str, Any]]:
    import pyarrow as pa

    if isinstance(table, pa.Table):
        return table.to_pylist()
    if hasattr(table, "to_dict"):  # pandas
        return list(table.to_dict(orient="records"))
    raise InvalidParameterError(_("expected a pandas DataFrame or an Arrow table, got {type}",
                                  type=type(table).__name__))


def read_span_qrels(path: str | Path, *, corpus: Mapping[str, Any] | None = None,
                    format: str | None = None) -> SpanQrels:
    """Read span judgments from a file (see the module doc)."""
    from rankscope.data._spantable import record_columns
    from rankscope.data.spans import SpanQrels

    recs, loc = _records(path, format)
    cols = record_columns(recs, ("query_id", "doc_id", "start", "end"), {"grade": 1}, loc)
    return SpanQrels(cols["query_id"], cols["doc_id"], cols["start"], cols["end"], cols["grade"], corpus=corpus,
                     _locate=loc)


def read_chunking(path: str | Path, *, corpus: Mapping[str, str] | None = None, name: str | None = None,
                  format: str | None = None) -> Chunking:
    """Read a chunking from a file (see the module doc); named after the file unless ``name`` is given."""
    from rankscope.data._spantable import record_columns
    from rankscope.data.chunking import Chunking

    recs, loc = _records(path, format)
    cols = record_columns(recs, ("chunk_id", "doc_id", "start", "end"), {}, loc)
    stem = Path(path).name.split(".")[0]
    return Chunking(cols["chunk_id"], cols["doc_id"], cols["start"], cols["end"], corpus=corpus,
                    name=name or stem, _locate=loc)


def spans_from_table(table: Any, *, corpus: Mapping[str, Any] | None = None) -> SpanQrels:
    """Span judgments from a pandas DataFrame or an Arrow table."""
    from rankscope.data.spans import SpanQrels

    return SpanQrels.from_records(_table_records(table), corpus=corpus, source="table")


def chunking_from_table(table: Any, *, corpus: Mapping[str, str] | None = None, name: str | None = None) -> Chunking:
    """A chunking from a pandas DataFrame or an Arrow table."""
    from rankscope.data.chunking import Chunking

    return Chunking.from_records(_table_records(table), corpus=corpus, name=name, source="table")


def write_table(records: list[dict[str, Any]], path: str | Path, format: str | None = None) -> None:
    """Write records as JSON Lines, JSON, CSV / TSV or Parquet (by file name or ``format``)."""
    try:
        fmt = table_format(path, format)
    except InvalidParameterError:
        fmt = "jsonl"
    if str(path).lower().endswith(".gz"):
        raise InvalidParameterError(_("writing .gz span / chunk files is not supported; write the plain file"))
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.Table.from_pylist(records), str(path))
        return
    with open(path, "w", encoding="utf-8", newline="") as fh:
        if fmt == "jsonl":
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        elif fmt == "json":
            json.dump(records, fh, ensure_ascii=False, indent=1)
            fh.write("\n")
        else:
            fields = list(records[0]) if records else []
            writer = csv.DictWriter(fh, fieldnames=fields, delimiter="\t" if fmt == "tsv" else ",",
                                    lineterminator="\n")
            writer.writeheader()
            writer.writerows(records)

