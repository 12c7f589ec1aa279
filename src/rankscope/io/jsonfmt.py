"""JSON and JSON Lines qrels and runs.

JSON (one document):

* ``{"q1": {"d1": 2, "d2": 0}}``: query -> doc -> grade (qrels) or score (run);
* ``{"q1": ["d3", "d1"]}``: ranked lists (runs: list order is the ranking; qrels:
  every listed doc has grade 1);
* ``[{"query_id": ..., "doc_id": ..., "score": ...}, ...]``: a list of records.

JSON Lines: one record a line, ``{"query_id": "q1", "doc_id": "d1", "relevance": 1}``
or ``{..., "score": 12.5}`` (column aliases of :mod:`rankscope.io.tables`: ``qid``,
``docno``, ``corpus-id``, ``rel``, ``rank``...).  Blank lines are skipped.  Values
must be JSON numbers (ids: strings or integers); NaN and infinities are refused.

Errors name the file and, for JSON Lines, the line.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from rankscope.data import Qrels, Run
from rankscope.data.run import DuplicatePolicy
from rankscope.errors import (
    DuplicateEntryError,
    DuplicateLineError,
    EmptyInputError,
    Message,
    ParseError,
    RankscopeError,
)
from rankscope.i18n import _
from rankscope.io._source import decode, read_bytes, text_lines
from rankscope.io._trec_fast import line_numbers
from rankscope.io.tables import (
    DOC,
    GRADE,
    MUST_BE,
    QUERY,
    RANK,
    SCORE,
    duplicate_said,
    find_column,
    qrels_from_table,
    run_from_table,
    what_said,
)

__all__ = [
    "read_json_qrels",
    "read_json_run",
    "read_jsonl_qrels",
    "read_jsonl_run",
    "write_json",
    "write_jsonl",
    "load_json",
    "load_json_lines",
    "stream_json_run",
    "StreamedRun",
]


# -- JSON ---------------------------------------------------------------------------------------------
def load_json(path: str | Path, source: str | None = None) -> Any:
    """Parse the JSON document in ``path`` (``.gz`` aware); errors name ``source`` (default: the path) and the line.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.json")
    >>> _ = open(p, "w").write('{"q1": ["d1"]}')
    >>> load_json(p)
    {'q1': ['d1']}
    """
    source = source or str(path)
    text = decode(read_bytes(path), source)
    if not text.strip():
        raise EmptyInputError(_("{source}: no entries (empty file)", source=source))
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(_("invalid JSON: {reason} (column {column})", reason=exc.msg, column=exc.colno),
                         source=source,
                         line=exc.lineno) from None


def _error(said: Message, source: str, where: Message | int) -> ParseError:
    """The error ``said`` at ``where``: a line number, or a place such as "query 'q1', document 'd1'"."""
    if isinstance(where, int):
        return ParseError(said, source=source, line=where)
    return ParseError(_("{where}: {said}", where=where, said=said), source=source)


def _number(v: Any, what: str, where: Message | int, source: str, integer: bool) -> float | int:
    ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    if ok and integer and isinstance(v, float):
        ok = v.is_integer()
        v = int(v) if ok else v
    if not ok:
        kind = "integer" if integer else "number"
        raise _error(_(MUST_BE[kind], what=what_said(what), value=v), source, where)
    if not math.isfinite(v):
        raise _error(_("{what} must be a finite number, got {value!r}", what=what_said(what), value=v), source, where)
    return v


def _id(v: Any, what: str, where: Message | int, source: str) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    raise _error(_("{what} must be a string or an integer, got {value!r}", what=what_said(what), value=v), source,
                 where)


def _flatten(obj: dict[str, Any], source: str, kind: str) -> tuple[list[str], list[str], list[Any]]:
    qs: list[str] = []
    ds: list[str] = []
    vs: list[Any] = []
    what = "relevance" if kind == "qrels" else "score"
    for q, docs in obj.items():
        if isinstance(docs, dict):
            for d, v in docs.items():
                qs.append(q)
                ds.append(d)
                place = _("query {query!r}, document {doc!r}", query=q, doc=d)
                vs.append(_number(v, what, place, source, kind == "qrels"))
        elif isinstance(docs, list):
            n = len(docs)
            for i, d in enumerate(docs):
                qs.append(q)
                ds.append(_id(d, "doc id", _("query {query!r}, position {position}", query=q, position=i + 1),
                              source))
                vs.append(1 if kind == "qrels" else float(n - i))
        else:
            shape = f"{{doc: {what}}}"
            raise ParseError(_("query {query!r} maps to a {type}; expected {shape} or a list of doc ids", query=q,
                               type=type(docs).__name__, shape=shape),
                             source=source)
    if not qs:
        raise EmptyInputError(_("{source}: no entries", source=source))
    return qs, ds, vs


def _records_table(obj: list[Any], source: str, lines: list[int] | None, kind: str) -> pa.Table:
    """Normalise records to a (query_id, doc_id, value) table; errors name the line (or the record)."""
    if not obj:
        raise EmptyInputError(_("{source}: no entries", source=source))
    keys: dict[str, None] = {}
    for rec in obj:
        if isinstance(rec, dict):
            keys.update(dict.fromkeys(rec))
    cols = list(keys)
    q = find_column(cols, QUERY, "query id", source)
    d = find_column(cols, DOC, "doc id", source)
    if kind == "qrels":
        v, vname, integer = find_column(cols, GRADE, "relevance", source), "relevance", True
    else:
        v = next((c for c in cols if c.lower() in SCORE), None) or find_column(cols, SCORE + RANK, "score", source)
        vname, integer = ("rank" if v.lower() in RANK else "score"), False
    qs: list[str] = []
    ds: list[str] = []
    vs: list[Any] = []
    for i, rec in enumerate(obj):
        where: Message | int = lines[i] if lines is not None else _("record {n}", n=i + 1)
        if not isinstance(rec, dict):
            raise _error(_("expected a JSON object, got {type}", type=type(rec).__name__), source, where)
        for key in (q, d, v):
            if key not in rec:
                raise _error(_("missing {key!r} (keys: {keys})", key=key, keys=list(rec)), source, where)
        qs.append(_id(rec[q], "query id", where, source))
        ds.append(_id(rec[d], "doc id", where, source))
        vs.append(_number(rec[v], vname, where, source, integer))
    return pa.table({"query_id": pa.array(qs, pa.string()), "doc_id": pa.array(ds, pa.string()),
                     vname: pa.array(vs, pa.int64() if integer else pa.float64())})


def read_json_qrels(path: str | Path) -> Qrels:
    """Read qrels from a JSON file (see module doc)."""
    source = str(path)
    obj = load_json(path)
    if isinstance(obj, list):
        return qrels_from_table(_records_table(obj, source, None, "qrels"), source)
    if not isinstance(obj, dict):
        shape = "{query: {doc: grade}}"
        raise ParseError(_("expected a JSON object {shape} or a list, got {type}", shape=shape,
                           type=type(obj).__name__),
                         source=source)
    qs, ds, vs = _flatten(obj, source, "qrels")
    return _build(lambda: Qrels(qs, ds, np.asarray(vs, dtype=np.int64)), source, "qrels", qs, ds)


_NUMBERS = frozenset({int, float})
STREAM_BATCH = 1 << 16  # entries gathered in Python lists before they become Arrow / numpy chunks


@dataclass
class StreamedRun:
    """The columns of a ``{query: {doc: score}}`` / ``{query: [doc, ...]}`` document read by :func:`stream_json_run`;
    ``shapes``: ``"scores"`` and/or ``"ranked"``, the kinds of query values met."""

    query: pa.ChunkedArray
    doc: pa.ChunkedArray
    score: np.ndarray
    shapes: frozenset[str]

    def run(self, name: str, duplicates: DuplicatePolicy = "error") -> Run:
        return Run(self.query, self.doc, self.score, name, duplicates=duplicates)


def stream_json_run(path: str | Path) -> StreamedRun | None:
    """Read a JSON run object ``{query: {doc: score} | [doc, ...]}`` as a stream, one query at a time.

    The document is never held whole, nor as Python objects (a 250 MB run becomes its columns, not gigabytes of
    dicts); numbers are parsed as the whole-document reader parses them (C ``strtod``: correctly rounded, as
    Python's ``float``).  ``None`` when the file is anything but a clean such object — not an object, a repeated
    query, a value that is not a finite number, an id that is not a string, a syntax error, a number beyond
    64 bits: the whole-document reader then reads it and says exactly what is wrong, so that every answer and
    every message is the same as before.  Compressed files are inflated under the decompression limit.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.json")
    >>> _ = open(p, "w").write('{"q1": {"d1": 2.5, "d2": 1}, "q2": ["d3", "d1"]}')
    >>> got = stream_json_run(p)
    >>> got.query.to_pylist(), got.doc.to_pylist(), got.score.tolist(), sorted(got.shapes)
    (['q1', 'q1', 'q2', 'q2'], ['d1', 'd2', 'd3', 'd1'], [2.5, 1.0, 2.0, 1.0], ['ranked', 'scores'])
    >>> _ = open(p, "w").write('{"q1": {"d1": NaN}}')
    >>> stream_json_run(p) is None
    True
    """
    try:
        import ijson
    except ImportError:  # pragma: no cover - a dependency; without it the whole-document reader reads the file
        return None
    from rankscope.io._source import open_inflated

    qs: list[str] = []
    ds: list[str] = []
    vs: list[np.ndarray] = []
    q_chunks: list[pa.Array] = []
    d_chunks: list[pa.Array] = []
    v_chunks: list[np.ndarray] = []
    seen: set[str] = set()
    shapes: set[str] = set()

    def flush() -> None:
        if ds:
            sizes = np.fromiter((len(v) for v in vs), np.int64, len(vs))
            q_chunks.append(pa.array(qs, pa.string()).take(np.repeat(np.arange(len(qs)), sizes)))
            d_chunks.append(pa.array(ds, pa.string()))
            v_chunks.append(np.concatenate(vs))
            qs.clear()
            ds.clear()
            vs.clear()

    with open_inflated(path) as fh:
        head = fh.peek(64) if hasattr(fh, "peek") else b""  # type: ignore[attr-defined]
        if not head.lstrip(b" \t\r\n\xef\xbb\xbf").startswith(b"{"):
            return None
        try:
            for q, docs in ijson.kvitems(fh, "", use_float=True):
                if q in seen:
                    return None
                seen.add(q)
                if type(docs) is dict:
                    values = list(docs.values())
                    if not values or not set(map(type, values)) <= _NUMBERS:  # keys: JSON's are strings
                        return None
                    arr = np.fromiter(values, np.float64, len(values))
                    if not np.isfinite(arr).all():
                        return None
                    ds.extend(docs.keys())
                    shapes.add("scores")
                elif type(docs) is list:
                    if not docs or any(type(d) is not str for d in docs):
                        return None
                    arr = np.arange(len(docs), 0, -1, dtype=np.float64)
                    ds.extend(docs)
                    shapes.add("ranked")
                else:
                    return None
                qs.append(q)
                vs.append(arr)
                if len(ds) >= STREAM_BATCH:
                    flush()
        except (ijson.JSONError, ValueError, OverflowError):
            return None
    flush()
    if not q_chunks:
        return None
    return StreamedRun(pa.chunked_array(q_chunks, pa.string()), pa.chunked_array(d_chunks, pa.string()),
                       np.concatenate(v_chunks), frozenset(shapes))


def read_json_run(
    path: str | Path, name: str | None = None, *, duplicates: DuplicatePolicy = "error"
) -> Run:
    """Read a run from a JSON file (see module doc); the run is named ``name`` or after the file.

    An object ``{query: ...}`` is read as a stream (:func:`stream_json_run`); anything it does not read cleanly
    is read whole, with the same result.
    """
    source = str(path)
    name = name or _stem(path)
    streamed = stream_json_run(path)
    if streamed is not None:
        try:
            return streamed.run(name, duplicates)
        except RankscopeError:
            pass  # read whole: the error then names the query and document
    obj = load_json(path)
    if isinstance(obj, list):
        table = _records_table(obj, source, None, "run")
        return run_from_table(table, source, name=name, duplicates=duplicates)
    if not isinstance(obj, dict):
        shape = "{query: {doc: score}}"
        raise ParseError(_("expected a JSON object {shape} or a list, got {type}", shape=shape,
                           type=type(obj).__name__),
                         source=source)
    qs, ds, vs = _flatten(obj, source, "run")
    return _build(lambda: Run(qs, ds, np.asarray(vs, dtype=np.float64), name, duplicates=duplicates), source, "run",
                  qs, ds)


def _build(make: Any, source: str, kind: str, qs: list[str], ds: list[str]) -> Any:
    """``make()``, its errors naming ``source`` (a repeated pair of ``qs``, ``ds`` said as ``kind`` says it)."""
    try:
        return make()
    except DuplicateEntryError as exc:
        said: Any = exc if exc.rows is None else duplicate_said(kind, qs, ds, exc.rows[1])
        raise DuplicateLineError(_("{said}", said=said), source=source) from None
    except RankscopeError as exc:
        raise ParseError(_("{said}", said=exc), source=source) from None


def _stem(path: str | Path) -> str:
    name = Path(path).name
    for suffix in (".gz", ".jsonl", ".ndjson", ".json", ".csv", ".tsv", ".txt", ".parquet", ".arrow", ".feather",
                   ".trec", ".run"):
        name = name.removesuffix(suffix)
    return name or "run"


# -- JSON Lines ---------------------------------------------------------------------------------------
def _jsonl_table(path: str | Path, kind: str) -> tuple[pa.Table, Any]:
    source = str(path)
    data = read_bytes(path)
    table = _arrow_jsonl(data)
    if table is not None:
        return table, lambda: line_numbers(data)
    numbered = _json_lines(data, source)
    if not numbered:
        raise EmptyInputError(_("{source}: no entries (empty file)", source=source))
    lines = [i for i, __ in numbered]
    numbers = np.asarray(lines)
    return _records_table([rec for __, rec in numbered], source, lines, kind), lambda: numbers


def load_json_lines(path: str | Path, source: str | None = None) -> list[tuple[int, Any]]:
    """Parse a JSON Lines file (``.gz`` aware) into ``(line number, value)`` pairs; blank lines are skipped.

    Errors name ``source`` (default: the path) and the line.

    >>> import os, tempfile
    >>> p = os.path.join(tempfile.mkdtemp(), "x.jsonl")
    >>> _ = open(p, "w").write('{"id": 1}\\n\\n[2]\\n')
    >>> load_json_lines(p)
    [(1, {'id': 1}), (3, [2])]
    """
    source = source or str(path)
    return _json_lines(read_bytes(path), source)


def _json_lines(data: bytes, source: str) -> list[tuple[int, Any]]:
    out: list[tuple[int, Any]] = []
    for i, text in enumerate(text_lines(decode(data, source)), start=1):
        if not text.strip():
            continue
        try:
            out.append((i, json.loads(text)))
        except json.JSONDecodeError as exc:
            raise ParseError(_("invalid JSON: {reason} (column {column})", reason=exc.msg, column=exc.colno),
                             source=source,
                             line=i) from None
    return out


def _arrow_jsonl(data: bytes) -> pa.Table | None:
    """Arrow's JSON reader for the clean case: every value a number, ids of one type; else None."""
    import pyarrow.json as pjson

    if not data.strip() or b"\n\n" in data or data.startswith(b"\n") or b"\r" in data:
        return None
    try:
        table = pjson.read_json(pa.BufferReader(data))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    if table.num_rows == 0:
        return None
    for field in table.schema:
        t = field.type
        if field.name.lower() in GRADE + SCORE + RANK and not (pa.types.is_integer(t) or pa.types.is_floating(t)):
            return None  # strings, booleans, nulls: the line parser explains
        if field.name.lower() in QUERY + DOC and not (pa.types.is_integer(t) or pa.types.is_string(t)):
            return None
        used = field.name.lower() in QUERY + DOC + GRADE + SCORE + RANK
        if used and (t.num_fields or table.column(field.name).null_count):
            return None
    return table


def read_jsonl_qrels(path: str | Path) -> Qrels:
    """Read qrels from a JSON Lines file (see module doc)."""
    table, lines = _jsonl_table(path, "qrels")
    return qrels_from_table(table, str(path), lines)


def read_jsonl_run(path: str | Path, name: str | None = None, *, duplicates: DuplicatePolicy = "error") -> Run:
    """Read a run from a JSON Lines file (see module doc); the run is named ``name`` or after the file."""
    table, lines = _jsonl_table(path, "run")
    return run_from_table(table, str(path), lines, name=name or _stem(path), duplicates=duplicates)


# -- writers ------------------------------------------------------------------------------------------
def write_json(obj: Qrels | Run, path: str | Path) -> None:
    """Write ``{query: {doc: value}}`` (queries sorted, docs in row order)."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(obj.to_dict(), fh, ensure_ascii=False)
        fh.write("\n")


def write_jsonl(obj: Qrels | Run, path: str | Path) -> None:
    """Write one ``{"query_id", "doc_id", "relevance"|"score"}`` record a line."""
    import pyarrow.compute as pc

    table = obj.to_arrow()
    order = pc.sort_indices(table, [("query_id", "ascending")])
    key = "relevance" if isinstance(obj, Qrels) else "score"
    with open(path, "w", encoding="utf-8") as fh:
        for q, d, v in zip(*(table.column(c).take(order).to_pylist() for c in ("query_id", "doc_id", key))):
            fh.write(json.dumps({"query_id": q, "doc_id": d, key: v}, ensure_ascii=False) + "\n")
