"""Shared pieces of :class:`~rankscope.data.spans.SpanQrels` and :class:`~rankscope.data.chunking.Chunking`:
field names, record reading and offset validation with the record and field of the first problem.

A problem is reported as a :class:`~rankscope.errors.ParseError` naming the source
(when known) and either the line of a file or the record number (1-based), the
field and what is wrong, e.g. ``spans.jsonl:7: field 'end': 640 is past the end of
document 'd1' (512 characters)``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from rankscope.data._places import Where
from rankscope.errors import EmptyInputError, Items, Message, ParseError
from rankscope.i18n import _

__all__ = ["FIELDS", "Locator", "record_columns", "check_offsets", "doc_lengths", "int_column", "str_column"]

# accepted names of each field (first match wins, case-insensitive)
FIELDS: dict[str, tuple[str, ...]] = {
    "query_id": ("query_id", "qid", "query-id", "queryid", "topic_id"),
    "doc_id": ("doc_id", "docid", "doc", "document_id", "corpus_id", "corpus-id", "ref_doc_id", "source_id"),
    "chunk_id": ("chunk_id", "id", "node_id", "chunk", "_id"),
    "start": ("start", "start_char", "start_char_idx", "start_index", "begin", "char_start"),
    "end": ("end", "end_char", "end_char_idx", "stop", "char_end"),
    "grade": ("grade", "relevance", "rel", "label", "score"),
}


class Locator:
    """Names where row ``i`` came from: a line of a text file (``lines``), else a record (or a table row).

    ``source`` is a file, or a name said in the reader's language (a :class:`~rankscope.i18n.Message`:
    ``LlamaIndex nodes``).

    >>> bad = _("must be an integer, got {value!r}", value="x")
    >>> str(Locator("spans.csv", [2, 3]).error(1, "end", bad))
    "spans.csv:3: field 'end': must be an integer, got 'x'"
    >>> error = Locator(None).error(0, "start", bad, more=2)
    >>> print(error)
    record 1, field 'start': must be an integer, got 'x' (and 2 more)
    >>> print(error.text("zh"))
    第 1 条记录，字段 'start'：必须是整数，实际为 'x'（另有 2 个）
    """

    def __init__(self, source: str | Message | None = None, lines: np.ndarray | Sequence[int] | None = None,
                 unit: str = "record", labels: Sequence[str] | None = None) -> None:
        self.source = source
        self.lines = None if lines is None else np.asarray(lines)
        self.unit = unit
        self.labels = labels

    def where(self, row: int) -> str:
        """``line N``, the row's label, or ``record N`` / ``row N`` (1-based)."""
        if self.lines is not None:
            return f"line {int(self.lines[row])}"
        return self.labels[row] if self.labels is not None else f"{self.unit} {row + 1}"

    def error(self, row: int, field: str | None, what: Message, more: int = 0) -> ParseError:
        """The error of row ``row`` (0-based), field ``field``: ``what``; ``more`` other rows have the same
        problem."""
        prefix = self.labels[row] if self.labels is not None else None
        if self.lines is None and prefix is None:
            prefix = f"{self.unit} {row + 1}"
        line = int(self.lines[row]) if self.lines is not None else None
        values: dict[str, Any] = {"said": what, "more": _(" (and {n} more)", n=more) if more else ""}
        if field:
            values["field"] = repr(field)
        if prefix:
            values["where"] = Where(prefix)
            said = _("{where}, field {field}: {said}{more}", **values) if field else _("{where}: {said}{more}",
                                                                                       **values)
        else:
            said = _("field {field}: {said}{more}", **values) if field else _("{said}{more}", **values)
        if isinstance(self.source, Message):  # a name, not a file: said with the message
            return ParseError(_("{source}: {said}", source=self.source, said=said), line=line)
        return ParseError(said, source=self.source, line=line)


def _key(record: Mapping[str, Any], field: str) -> str | None:
    lower = {str(k).lower(): k for k in record}
    for name in FIELDS[field]:
        if name in lower:
            return str(lower[name])
    return None


def record_columns(records: Iterable[Any], required: Sequence[str], optional: Mapping[str, Any],
                   locate: Locator) -> dict[str, list[Any]]:
    """Columns of the given fields from a sequence of mappings (every problem names record and field)."""
    cols: dict[str, list[Any]] = {f: [] for f in (*required, *optional)}
    n = 0
    for i, rec in enumerate(records):
        n += 1
        if not isinstance(rec, Mapping):
            fields = Items(tuple(required))
            raise locate.error(i, None, _("expected an object with fields {fields}, got {type}", fields=fields,
                                 type=type(rec).__name__))
        for field in required:
            key = _key(rec, field)
            if key is None or rec[key] is None:
                names, here = Items(FIELDS[field]), Items(tuple(map(str, rec)))
                raise locate.error(i, None, _("no {field} field (accepted names: {names}; keys here: {keys})",
                                     field=repr(field), names=names, keys=here))
            cols[field].append(rec[key])
        for field, default in optional.items():
            key = _key(rec, field)
            cols[field].append(default if key is None or rec[key] is None else rec[key])
    if n == 0:
        if locate.source:
            raise EmptyInputError(_("{source}: no records", source=locate.source))
        raise EmptyInputError(_("no records"))
    return cols


def str_column(values: Sequence[Any], field: str, locate: Locator) -> np.ndarray:
    """Ids as a numpy object array of str (integers become their decimal text)."""
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        if isinstance(v, str):
            out[i] = v
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            out[i] = str(int(v))
        else:
            raise locate.error(i, field, _("must be a string or an integer, got {value!r}", value=v))
    return out


def int_column(values: Any, field: str, locate: Locator) -> np.ndarray:
    """Integers (int64); floats with a fractional part, booleans and text that is not an integer are refused."""
    if not isinstance(values, np.ndarray):
        flags = [i for i, v in enumerate(values) if isinstance(v, (bool, np.bool_))]
        if flags:
            value = values[flags[0]]
            raise locate.error(flags[0], field, _("must be an integer, got {value!r}", value=value), len(flags) - 1)
    arr = np.asarray(values)
    if arr.dtype.kind == "b":
        raise locate.error(0, field, _("must be an integer, got {value!r}", value=bool(arr[0])))
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))
        if len(bad):
            value = float(arr[bad[0]])
            raise locate.error(int(bad[0]), field, _("must be an integer, got {value!r}", value=value), len(bad) - 1)
        return arr.astype(np.int64)
    out = np.empty(len(arr), dtype=np.int64)
    for i, v in enumerate(arr.tolist()):
        if isinstance(v, bool):
            raise locate.error(i, field, _("must be an integer, got {value!r}",
                                                                             value=v))
        if isinstance(v, int):
            out[i] = v
            continue
        if isinstance(v, float) and v.is_integer():
            out[i] = int(v)
            continue
        if isinstance(v, str):
            try:
                out[i] = int(v.strip())
                continue
            except ValueError:
                pass
        raise locate.error(i, field, _("must be an integer, got {value!r}", value=v))
    return out


def doc_lengths(corpus: Mapping[str, Any]) -> dict[str, int]:
    """``{doc_id: length}`` from ``{doc_id: text}`` or ``{doc_id: length}``."""
    return {str(d): (v if isinstance(v, int) else len(v)) for d, v in corpus.items()}


def check_offsets(doc: np.ndarray, start: np.ndarray, end: np.ndarray, locate: Locator,
                  lengths: Mapping[str, int] | None = None, what: str = "span") -> None:
    """``0 <= start < end`` and, given document lengths, a known document and ``end <= length``."""
    bad = np.flatnonzero(start < 0)
    if len(bad):
        value = int(start[bad[0]])
        raise locate.error(int(bad[0]), "start", _("must be >= 0, got {value}", value=value), len(bad) - 1)
    bad = np.flatnonzero(end <= start)
    if len(bad):
        i = int(bad[0])
        s, e = int(start[i]), int(end[i])
        said = _("a span needs start < end (end exclusive), got start {start}, end {end}", start=s, end=e) \
            if what == "span" else \
            _("a chunk needs start < end (end exclusive), got start {start}, end {end}", start=s, end=e)
        raise locate.error(i, "end", said, len(bad) - 1)
    if lengths is None:
        return
    known = np.fromiter((d in lengths for d in doc.tolist()), dtype=bool, count=len(doc))
    bad = np.flatnonzero(~known)
    if len(bad):
        i = int(bad[0])
        name = str(doc[i])
        close = Items(tuple(difflib.get_close_matches(name, list(lengths), n=3, cutoff=0.6)), quote=True)
        said = _("unknown document {doc!r} (not in the corpus); did you mean {close}?", doc=name, close=close) \
            if close.items else _("unknown document {doc!r} (not in the corpus)", doc=name)
        raise locate.error(i, "doc_id", said, len(bad) - 1)
    size = np.fromiter((lengths[d] for d in doc.tolist()), dtype=np.int64, count=len(doc))
    bad = np.flatnonzero(end > size)
    if len(bad):
        i = int(bad[0])
        e, name, n = int(end[i]), str(doc[i]), int(size[i])
        raise locate.error(i, "end", _("{end} is past the end of document {doc!r} ({size} characters)", end=e, doc=name,
                                       size=n), len(bad) - 1)


def sort_rows(*keys: np.ndarray) -> np.ndarray:
    """Row order by the keys (first key most significant)."""
    return np.lexsort(tuple(reversed(keys)))


def codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct sorted values, code of each value)``."""
    uniq, inv = np.unique(values.astype(str), return_inverse=True) if len(values) else (
        np.empty(0, dtype=object), np.empty(0, dtype=np.int64))
    return np.asarray(uniq, dtype=object), inv.astype(np.int64)


Check = Callable[[np.ndarray, np.ndarray, np.ndarray, Locator], None]
