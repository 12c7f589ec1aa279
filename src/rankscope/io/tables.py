"""Tables (Arrow tables, pandas DataFrames, CSV/JSONL/Parquet contents) to :class:`Qrels` / :class:`Run`.

Columns are found by name, case-insensitively, among common aliases:

========  ==========================================================================
column    accepted names (first match wins)
========  ==========================================================================
query     query_id, qid, query, q_id, topic, topic_id, query-id, queryid
doc       doc_id, docid, docno, doc, document, document_id, corpus-id, corpus_id,
          pid, passage_id, did
grade     relevance, rel, grade, label, judgment, judgement, score, relevance_score
score     score, sim, similarity, rank_score, relevance_score
rank      rank, position (a run without a score column is ranked by it: score = -rank)
========  ==========================================================================

Every problem (missing column, null id, non-numeric or non-finite value,
duplicate pair) raises a :class:`~rankscope.errors.ParseError` that names the
source and, when the table came from a text file, the line (otherwise the 1-based
row).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data import Qrels, Run
from rankscope.data.run import DuplicatePolicy
from rankscope.errors import DuplicateEntryError, DuplicateLineError, Message, ParseError, RankscopeError
from rankscope.i18n import N_, _

__all__ = [
    "QUERY",
    "DOC",
    "GRADE",
    "SCORE",
    "RANK",
    "find_column",
    "to_arrow",
    "qrels_from_table",
    "run_from_table",
]

QUERY = ("query_id", "qid", "query", "q_id", "topic", "topic_id", "query-id", "queryid")
DOC = (
    "doc_id", "docid", "docno", "doc", "document", "document_id", "corpus-id", "corpus_id", "pid", "passage_id",
    "did",
)  # fmt: skip
GRADE = ("relevance", "rel", "grade", "label", "judgment", "judgement", "score", "relevance_score")
SCORE = ("score", "sim", "similarity", "rank_score", "relevance_score")
RANK = ("rank", "position")

def find_column(columns: list[str], choices: tuple[str, ...], what: str, source: str | None = None) -> str:
    """The first column of ``columns`` whose lower-case name is one of ``choices``.

    >>> find_column(["QID", "docno", "rel"], QUERY, "query id")
    'QID'
    """
    col = _maybe_column(columns, choices)
    if col is None:
        raise ParseError(_("no {what} column among {columns}; expected one of {choices}", what=what_said(what),
                           columns=columns, choices=list(choices)),
                         source=source)
    return col


#: the names of a table's values, said in the reader's language (:func:`what_said`)
_WHAT = {"query id": N_("query id"), "doc id": N_("doc id"), "relevance": N_("relevance"), "score": N_("score"),
         "rank": N_("rank")}
#: a value that is not of its kind: kind -> message
MUST_BE = {"integer": N_("{what} must be an integer, got {value!r}"),
           "number": N_("{what} must be a number, got {value!r}"),
           "finite": N_("{what} must be a finite number, got {value!r}"),
           "id": N_("{what} must be a string or an integer, got {value!r}")}


def what_said(what: str) -> Message:
    """A value's name (``query id``, ``doc id``, ``relevance``, ``score``, ``rank``) in the reader's language.

    >>> what_said("doc id").text("zh")
    '文档编号'
    """
    return _(_WHAT[what])


def duplicate_said(kind: str, query: Any, doc: Any, row: int) -> Message:
    """The repeated (query, doc) pair at ``row`` of the columns ``query`` and ``doc`` of qrels or a run (``kind``),
    in the reader's language: "duplicate run entry for query 'q1', document 'd1'"."""

    def at(col: Any) -> Any:
        value = col[row]
        return value.as_py() if hasattr(value, "as_py") else value

    if kind == "qrels":
        return _("duplicate qrels entry for query {query!r}, document {doc!r}", query=at(query), doc=at(doc))
    return _("duplicate run entry for query {query!r}, document {doc!r}", query=at(query), doc=at(doc))


def place_said(where: dict[str, Any]) -> Message:
    """Where a row is, from a row locator: "line 3" of a file or "row 3" of a table."""
    if "line" in where:
        return _("line {n}", n=where["line"])
    return _("row {n}", n=where["row"])


def _maybe_column(columns: list[str], choices: tuple[str, ...]) -> str | None:
    lower = {c.lower(): c for c in reversed(columns)}
    for c in choices:
        if c in lower:
            return lower[c]
    return None


def to_arrow(obj: Any) -> pa.Table:
    """An Arrow table from an Arrow table or a pandas DataFrame (its index is dropped)."""
    if isinstance(obj, pa.Table):
        return obj
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    names = list(obj.columns)
    if all(type(n) is str for n in names) and len(set(names)) == len(names):
        # column by column: Table.from_pandas spends a millisecond on pandas metadata a small frame does not need
        return pa.Table.from_arrays([_pandas_column(col) for __, col in obj.items()], names=names)
    return pa.Table.from_pandas(obj, preserve_index=False)


def _pandas_column(col: Any) -> pa.Array | pa.ChunkedArray:
    """A pandas column as Arrow: an Arrow-backed one as it is, a numpy one from its values (NaN and None: null)."""
    values = col.array
    if hasattr(values, "__arrow_array__"):
        return pa.array(values)
    return pa.array(col.to_numpy(), from_pandas=True)


def _row_locator(
    source: str | None, lines: Callable[[], np.ndarray] | None, rows: Callable[[], np.ndarray] | None = None
) -> Callable[[int], dict[str, Any]]:
    def locate(row: int) -> dict[str, Any]:
        if lines is not None:
            return {"source": source, "line": int(lines()[row])}
        if rows is not None:  # a block of a larger table: its rows' 0-based numbers in the whole table
            row = int(rows()[row])
        return {"source": source, "row": row + 1}

    return locate


def _error(said: Message, where: dict[str, Any], cls: type[ParseError] = ParseError) -> ParseError:
    """The error ``said`` at a row of a table: at its file line, or after "row N: " (a table without lines)."""
    if "row" in where:
        return cls(_("row {row}: {said}", row=where["row"], said=said), source=where["source"])
    return cls(said, source=where["source"], line=where.get("line"))


def _ids(col: pa.ChunkedArray | pa.Array, what: str, locate: Callable[[int], dict[str, Any]]) -> pa.Array:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_dictionary(arr.type):
        arr = arr.cast(arr.type.value_type)
    if arr.null_count:
        row = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise _error(_("{what} is missing", what=what_said(what)), locate(row))
    if pa.types.is_floating(arr.type):
        vals = arr.to_numpy(zero_copy_only=False)
        frac = np.flatnonzero(vals != np.round(vals))
        if len(frac):
            raise _error(_("{what} must be a string or an integer, got {value!r}", what=what_said(what),
                           value=float(vals[frac[0]])),
                         locate(int(frac[0])))
        arr = pa.array(vals.astype(np.int64))
    if pa.types.is_integer(arr.type) or pa.types.is_large_string(arr.type) or str(arr.type) == "string_view":
        arr = arr.cast(pa.string())
    if not pa.types.is_string(arr.type):
        raise ParseError(_("{what} column must hold strings or integers, got {type}", what=what_said(what),
                           type=str(arr.type)),
                         source=locate(0)["source"])
    return arr


def _numbers(
    col: pa.ChunkedArray | pa.Array, what: str, integer: bool, locate: Callable[[int], dict[str, Any]]
) -> np.ndarray:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if arr.null_count:
        row = int(np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False))[0])
        raise _error(_("{what} is missing", what=what_said(what)), locate(row))
    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        arr = _parse_strings(arr, what, integer, locate)
    if not (pa.types.is_integer(arr.type) or pa.types.is_floating(arr.type) or pa.types.is_boolean(arr.type)):
        raise ParseError(_("{what} column must be numeric, got {type}", what=what_said(what), type=str(arr.type)),
                         source=locate(0)["source"])
    vals = arr.to_numpy(zero_copy_only=False)
    if integer:
        if vals.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(vals) | (vals != np.round(vals)))
            if len(bad):
                bad_value = float(vals[bad[0]])
                raise _error(_("{what} must be an integer, got {value!r}", what=what_said(what), value=bad_value),
                             locate(int(bad[0])))
        return vals.astype(np.int64)
    vals = vals.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(vals))
    if len(bad):
        raise _error(_("{what} must be a finite number, got {value!r}", what=what_said(what),
                       value=float(vals[bad[0]])),
                     locate(int(bad[0])))
    return vals


def _parse_strings(arr: pa.Array, what: str, integer: bool, locate: Callable[[int], dict[str, Any]]) -> pa.Array:
    target = pa.int64() if integer else pa.float64()
    try:
        return pc.cast(pc.utf8_trim_whitespace(arr), target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    kind = "integer" if integer else "number"
    for row, text in enumerate(arr.to_pylist()):
        try:
            pc.cast(pa.array([text.strip()]), target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise _error(_(MUST_BE[kind], what=what_said(what), value=text), locate(row)) from None
    raise ParseError(_("{what} column cannot be read as an integer",
                       what=what_said(what)) if integer  # pragma: no cover
                     else _("{what} column cannot be read as a number", what=what_said(what)),
                     source=locate(0)["source"])


def qrels_from_table(
    table: Any, source: str | None = None, lines: Callable[[], np.ndarray] | None = None
) -> Qrels:
    """Qrels from a table with query, doc and grade columns (see module doc for the names).

    ``lines()`` gives the file line of every row, for error messages.

    >>> qrels_from_table(pa.table({"qid": ["q1", "q1"], "docno": ["d1", "d2"], "rel": [1, 0]}))
    Qrels(1 queries, 2 judgments)
    """
    table = to_arrow(table)
    cols = list(table.column_names)
    q = find_column(cols, QUERY, "query id", source)
    d = find_column(cols, DOC, "doc id", source)
    g = find_column(cols, GRADE, "relevance", source)
    locate = _row_locator(source, lines)
    grades = _numbers(table.column(g), "relevance", True, locate)
    qs, ds = _ids(table.column(q), "query id", locate), _ids(table.column(d), "doc id", locate)
    try:
        return Qrels(qs, ds, grades)
    except DuplicateEntryError as exc:
        raise _duplicate(exc, locate, "qrels", qs, ds) from None


def run_from_table(
    table: Any,
    source: str | None = None,
    lines: Callable[[], np.ndarray] | None = None,
    *,
    name: str | None = None,
    duplicates: DuplicatePolicy = "error",
    rows: Callable[[], np.ndarray] | None = None,
) -> Run:
    """A run from a table with query, doc and score (or rank) columns.

    ``rows()`` (a block of a larger table, see :mod:`rankscope.io.stream`) gives the
    0-based number of every row in the whole table, for error messages.

    >>> run_from_table(pa.table({"qid": ["q1", "q1"], "pid": ["d1", "d2"], "rank": [2, 1]})).to_dict()
    {'q1': {'d1': -2.0, 'd2': -1.0}}
    """
    table = to_arrow(table)
    cols = list(table.column_names)
    q = find_column(cols, QUERY, "query id", source)
    d = find_column(cols, DOC, "doc id", source)
    locate = _row_locator(source, lines, rows)
    s = _maybe_column(cols, SCORE)
    if s is not None:
        scores = _numbers(table.column(s), "score", False, locate)
    else:
        r = _maybe_column(cols, RANK)
        if r is None:
            raise ParseError(_("no score column among {columns}; expected one of {scores} (or a rank column: "
                               "{ranks})", columns=cols, scores=list(SCORE), ranks=list(RANK)),
                             source=source)
        scores = -_numbers(table.column(r), "rank", False, locate)
    qs, ds = _ids(table.column(q), "query id", locate), _ids(table.column(d), "doc id", locate)
    try:
        return Run(qs, ds, scores, name, duplicates=duplicates)
    except DuplicateEntryError as exc:
        raise _duplicate(exc, locate, "run", qs, ds) from None


def _duplicate(exc: DuplicateEntryError, locate: Callable[[int], dict[str, Any]], kind: str, query: Any,
               doc: Any) -> RankscopeError:
    """The repeated pair of ``exc`` at its line (or row), naming where it first occurs."""
    if exc.rows is None:
        return exc
    first, second = exc.rows
    said = _("{said} (first at {first})", said=duplicate_said(kind, query, doc, second),
             first=place_said(locate(first)))
    return cast(DuplicateLineError, _error(said, locate(second), DuplicateLineError)).with_rows(first, second)
