"""The columnar core shared by :class:`Qrels` and :class:`Run`.

A table holds one row per (query, document) pair: integer query codes into
``query_ids`` (sorted strings), the doc id strings of the rows, integer
document codes into ``doc_ids`` (an Arrow dictionary in first-seen order, built
on first use) and one numeric value per row.  Nothing in the evaluation hot
path touches Python dicts.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope._threads import thread_map
from rankscope.data._columns import arrow_ints, as_string_array, block_starts, encode, encode_sorted, positions
from rankscope.data._segments import sort_segments
from rankscope.data._strings import fingerprint, fingerprint_alongside
from rankscope.errors import DuplicateEntryError, RankscopeError
from rankscope.i18n import N_, _

T = TypeVar("T", bound="IdTable")

__all__ = ["IdTable"]


_FINGERPRINT_MIN_ROWS = 4096  # below this the exact duplicate check is as cheap
_SMALL_ROWS = 64  # up to this many rows, duplicates are looked for with a Python set


def _high_half(fp: np.ndarray) -> np.ndarray:
    """The high 32 bits of 64-bit values, as a (strided, zero-copy) uint32 view."""
    return fp.view(np.uint32)[1::2] if np.little_endian else fp.view(np.uint32)[0::2]


def _repeats_within(values: np.ndarray, bounds: np.ndarray) -> bool:
    """Whether any segment ``values[bounds[i]:bounds[i+1]]`` holds a value twice.

    >>> _repeats_within(np.array([3, 1, 2, 1, 5], dtype=np.uint64), np.array([0, 3, 5]))
    False
    >>> _repeats_within(np.array([3, 1, 3, 1, 5], dtype=np.uint64), np.array([0, 3, 5]))
    True
    """
    s = sort_segments(values, bounds)
    same = s[1:] == s[:-1]
    same[bounds[1:-1] - 1] = False  # neighbours across a segment boundary
    return bool(same.any())


def plain_ids(keys: list[Any]) -> pa.Array | None:
    """``keys`` as an Arrow string array when they are all ``str`` or all ``int`` (written as ``str`` writes them),
    without nulls; None for anything else (mixed, bytes, floats, ...: the general conversion decides).

    Distinct keys (a dict's) stay distinct: ``str`` is one-to-one on ints.

    >>> plain_ids(["a", "b"]).to_pylist(), plain_ids([3, 1]).to_pylist(), plain_ids([1, "1"])
    (['a', 'b'], ['3', '1'], None)
    """
    try:
        arr = pa.array(keys)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
        return None
    if arr.null_count:
        return None
    if pa.types.is_string(arr.type):
        return arr
    if pa.types.is_int64(arr.type):
        return arr.cast(pa.string())
    return None


class MappingColumns:
    """The columns of ``{query: {doc: value}}`` read without a Python loop per row (:meth:`of`).

    ``qcode`` follows the sorted query ids (``query_ids``, queries with at least one row), every
    query is one block of rows (``starts``), rows in the mapping's order; ``docs`` holds the doc ids
    (Arrow strings), :meth:`values` the raw values in row order.
    """

    __slots__ = ("counts", "docs", "inner", "qcode", "query_ids", "rows", "starts")

    def __init__(self, qcode: np.ndarray, query_ids: np.ndarray, starts: np.ndarray, counts: np.ndarray,
                 docs: pa.Array, inner: list[Any]) -> None:
        self.qcode, self.query_ids, self.starts, self.docs, self.inner = qcode, query_ids, starts, docs, inner
        self.counts = counts
        self.rows = len(docs)

    def values(self) -> Iterator[Any]:
        """The value of every row, in row order (dicts)."""
        return itertools.chain.from_iterable(map(dict.values, self.inner))

    def ranked_scores(self) -> np.ndarray:
        """``n, n-1, ..., 1`` for each query's ``n`` rows (ranked lists), float64."""
        down = np.repeat(self.counts + self.starts, self.counts)
        down -= np.arange(self.rows, dtype=np.int64)
        return down.astype(np.float64)

    @classmethod
    def of(cls, data: Mapping[Any, Any], lists: bool = False) -> MappingColumns | None:
        """The columns of ``data`` when every id is plain, else None.

        Plain: ``data`` is a non-empty mapping of plain dicts (with ``lists``: of lists or tuples
        of doc ids), every query key is a ``str`` (or every one an ``int``) and so is every doc id.
        A dict's keys are distinct and so are their strings: no (query, doc) pair of a mapping of
        dicts can repeat, while a list may repeat a doc (the caller checks).  Anything else (mixed
        key types, 1 and "1" side by side, ...) is left to the general conversion, which checks
        every row.

        >>> c = MappingColumns.of({"q2": {"a": 1}, "q1": {"b": 2, "c": 3}})
        >>> c.qcode.tolist(), c.query_ids.tolist(), c.starts.tolist(), c.docs.to_pylist(), list(c.values())
        ([1, 0, 0], ['q1', 'q2'], [0, 1], ['a', 'b', 'c'], [1, 2, 3])
        """
        if not data:
            return None
        inner = list(data.values())
        types = set(map(type, inner))
        if not (types <= {list, tuple} if lists else types == {dict}):
            return None
        queries = list(data)
        counts = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
        total = int(counts.sum())
        if total == 0:
            return None
        if set(map(type, queries)) == {str}:
            qstr = queries
        else:
            qarr = plain_ids(queries)
            if qarr is None:
                return None
            qstr = qarr.to_pylist()
        docs = plain_ids(list(itertools.chain.from_iterable(inner)))
        if docs is None:
            return None
        if len(qstr) == 1:
            query_ids = np.array(qstr, dtype=object)
            qcode = np.zeros(total, dtype=np.int32)
            starts = np.zeros(1, dtype=np.int64)
            return cls(qcode, query_ids, starts, counts, docs, inner)
        has = counts > 0
        present = np.array(qstr, dtype=object)
        if not has.all():
            present, counts = present[has], counts[has]
        order = np.argsort(present, kind="stable")
        code = np.empty(len(order), dtype=np.int32)
        code[order] = np.arange(len(order), dtype=np.int32)
        starts = np.zeros(len(counts), dtype=np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        return cls(np.repeat(code, counts), present[order], starts, counts, docs, inner)


class IdTable:
    """Rows of (query id, doc id, value) stored as integer-coded numpy/Arrow columns.

    The doc id column is kept as given (an Arrow string array, one entry a row);
    the doc dictionary (``doc_ids``, ``dcode``) is built on first use.  Evaluation
    never needs it: it joins the row strings with the qrels directly, which
    saves hashing millions of run doc ids.
    """

    __slots__ = ("_dcode", "_doc_ids", "_docs", "_fp", "_starts", "qcode", "query_ids", "values")
    _value_name = "value"
    _value_words = N_("values")

    query_ids: np.ndarray
    qcode: np.ndarray
    values: np.ndarray
    _docs: pa.Array | pa.ChunkedArray | None
    _dcode: np.ndarray | None
    _doc_ids: pa.Array | None
    _fp: np.ndarray | None
    _starts: np.ndarray | None

    @classmethod
    def _from_columns(cls: type[T], cols: MappingColumns, values: np.ndarray, distinct: bool = True) -> T:
        """A table of already encoded columns; unless ``distinct`` (its (query, doc) pairs known to be distinct),
        the caller checks for duplicates (the doc fingerprints that check reads are computed here)."""
        new = object.__new__(cls)
        new.qcode, new.query_ids, new._starts = cols.qcode, cols.query_ids, cols.starts
        new._docs, new._dcode, new._doc_ids, new._fp = cols.docs, None, None, None
        new.values = values
        if not distinct and cols.rows >= _FINGERPRINT_MIN_ROWS:
            new._fp = fingerprint(cols.docs)
        return new

    def _init_columns(self, query: Any, doc: Any, values: np.ndarray) -> None:
        q = as_string_array(query, _("query id"), keep_chunks=True)
        d = as_string_array(doc, _("doc id"), keep_chunks=True)
        if not (len(q) == len(d) == len(values)):
            raise RankscopeError(_("columns differ in length: {queries} query ids, {docs} doc ids, {values} {what}",
                                   queries=len(q), docs=len(d), values=len(values),
                                   what=_(self._value_words)))
        self._docs, self._dcode, self._doc_ids, self._fp = d, None, None, None
        self.values = values
        if len(d) < _FINGERPRINT_MIN_ROWS:
            self.qcode, self.query_ids, self._starts = encode_sorted(q)
            return
        # the doc fingerprints (for the duplicate check and the qrels join) are computed on
        # worker threads while one of them encodes the query ids
        self._fp, (self.qcode, self.query_ids, self._starts) = fingerprint_alongside(d, lambda: encode_sorted(q))

    # -- doc dictionary (lazy) ----------------------------------------------------
    @property
    def doc_ids(self) -> pa.Array:
        """The distinct doc ids (Arrow string array, first-seen order)."""
        if self._doc_ids is None:
            self._dcode, self._doc_ids = encode(self._docs)
        return self._doc_ids

    @property
    def dcode(self) -> np.ndarray:
        """The doc code of every row: an index into :attr:`doc_ids` (int32)."""
        if self._dcode is None:
            self._dcode, self._doc_ids = encode(self._docs)
        return self._dcode

    @property
    def docs_encoded(self) -> bool:
        """Whether the doc dictionary has been built."""
        return self._dcode is not None

    def doc_lookup(self, value_set: pa.Array) -> np.ndarray:
        """Per row: the position of its doc id in ``value_set``, or -1 (int32)."""
        if self._dcode is not None or self._docs is None:
            pos = pc.index_in(self.doc_ids, value_set=value_set)
            return positions(pos).astype(np.int32)[self.dcode]
        pos = pc.index_in(self._docs, value_set=value_set)
        return positions(pos).astype(np.int32, copy=False)

    def doc_fingerprints(self) -> np.ndarray:
        """The high 32 bits of the 64-bit fingerprint of every row's doc id (a uint32 view, computed once)."""
        return _high_half(self.doc_fingerprints64())

    def doc_fingerprints64(self) -> np.ndarray:
        """The 64-bit fingerprint of every row's doc id (see :mod:`rankscope.data._strings`, computed once)."""
        if self._fp is None:
            self._fp = fingerprint(self.doc_column())
        return self._fp

    @property
    def block_starts(self) -> np.ndarray | None:
        """First row of each query's block when every query is one contiguous block of rows, else None."""
        return self._starts

    # -- duplicates ---------------------------------------------------------------
    def _pair_keys(self) -> np.ndarray:
        return self.qcode.astype(np.int64) * max(len(self.doc_ids), 1) + self.dcode

    def _blocks(self) -> np.ndarray | None:
        """Block number of every row when each query is one contiguous block of rows, else None."""
        if self._starts is None:
            return None
        return np.repeat(np.arange(len(self._starts), dtype=np.int64), np.diff(np.append(self._starts, len(self))))

    def _block_keys(self) -> np.ndarray:
        """Keys equal exactly for equal (query, doc) pairs, cheap to sort for grouped tables.

        When every query occupies one contiguous block of rows (a run file or a
        DataFrame grouped by query), the key is ``block * n_docs + doc``: it is
        non-decreasing across blocks, so a stable (tim)sort only sorts within
        blocks.  Otherwise the (query, doc) pair key is used.
        """
        block = self._blocks()
        if block is None:
            return self._pair_keys()
        return block * max(len(self.doc_ids), 1) + self.dcode

    def _maybe_duplicates(self) -> bool:
        """False only when no (query, doc) pair can repeat, decided without the doc dictionary.

        For a table grouped by query: the 64-bit fingerprints of each block's doc
        ids (computed with the columns) are sorted within the block (blocks of one
        length side by side in a matrix, sorted along its rows), on a few threads;
        distinct neighbours prove distinct pairs.  Any equal fingerprints (a
        duplicate or a collision) send the caller to the exact check.  The
        fingerprints are kept: evaluation uses their high 32 bits in the qrels join.
        """
        starts, fp = self._starts, self._fp
        if self._docs is None or self._dcode is not None or starts is None or fp is None:
            return True
        n = len(self.qcode)
        bounds = np.append(starts, n)
        # pieces of about 2**20 rows made of whole blocks
        cuts = np.unique(np.searchsorted(starts, np.arange(0, n, 1 << 20)))
        pieces = list(zip(cuts.tolist(), np.append(cuts[1:], len(starts)).tolist()))

        def piece(blocks: tuple[int, int]) -> bool:
            lo, hi = int(bounds[blocks[0]]), int(bounds[blocks[1]])
            return _repeats_within(fp[lo:hi], bounds[blocks[0] : blocks[1] + 1] - lo)

        return any(thread_map(piece, pieces))

    def _duplicate_rows(self) -> np.ndarray:
        """Rows whose (query, doc) pair occurred in an earlier row."""
        if len(self.qcode) < 2 or not self._maybe_duplicates():
            return np.empty(0, dtype=np.int64)
        if len(self.qcode) <= _SMALL_ROWS and self._docs is not None and self._dcode is None:
            # a handful of rows: a Python set is cheaper than building the doc dictionary
            pairs = list(zip(self.qcode.tolist(), self._docs.to_pylist()))
            if len(set(pairs)) == len(pairs):
                return np.empty(0, dtype=np.int64)
        keys = self._block_keys() if len(self.qcode) >= 4096 else self._pair_keys()
        sk = np.sort(keys, kind="stable")
        if not bool((sk[1:] == sk[:-1]).any()):
            return np.empty(0, dtype=np.int64)
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
        dup = np.flatnonzero(sk[1:] == sk[:-1]) + 1
        return np.sort(order[dup])

    def _raise_duplicate(self, row: int, kind: str) -> None:
        keys = self._pair_keys()
        first = int(np.flatnonzero(keys == keys[row])[0])
        qid, did = self.query_ids[self.qcode[row]], self.doc_ids[int(self.dcode[row])].as_py()
        values = {"query": qid, "doc": did, "first": first, "row": row}
        raise DuplicateEntryError(
            _("duplicate run entry for query {query!r}, document {doc!r} (rows {first} and {row})", **values)
            if kind == "run" else
            _("duplicate qrels entry for query {query!r}, document {doc!r} (rows {first} and {row})", **values)
        ).with_rows(first, row)

    def _keep_rows(self: T, keep: np.ndarray) -> T:
        """A copy holding only the rows ``keep`` (a boolean mask or row indices)."""
        new = object.__new__(type(self))
        for slot in IdTable.__slots__:
            setattr(new, slot, getattr(self, slot))
        for slot in getattr(type(self), "__slots__", ()):
            if slot not in IdTable.__slots__:
                setattr(new, slot, getattr(self, slot))
        new.qcode = self.qcode[keep]
        new.values = self.values[keep]
        new._starts = block_starts(new.qcode)
        if self._dcode is not None:
            new._dcode = self._dcode[keep]
        if self._fp is not None:
            new._fp = self._fp[keep]
        if self._docs is not None:
            idx = np.flatnonzero(keep) if keep.dtype == bool else keep
            new._docs = self._docs.take(arrow_ints(idx))
        return new

    # -- views ----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.values)

    @property
    def queries(self) -> list[str]:
        """The query ids that have at least one row, sorted."""
        present = np.unique(self.qcode)
        return [str(x) for x in self.query_ids[present]]

    def doc_column(self) -> pa.Array | pa.ChunkedArray:
        """The doc id of every row as an Arrow string array (chunked when the input column was)."""
        if self._docs is not None:
            return self._docs
        return self.doc_ids.take(arrow_ints(self.dcode))

    def query_column(self) -> np.ndarray:
        """The query id of every row as a numpy object array."""
        return self.query_ids[self.qcode]

    def to_arrow(self) -> pa.Table:
        """Return the rows as an Arrow table ``(query_id, doc_id, <value>)``."""
        return pa.table(
            {
                "query_id": pa.array(self.query_column(), type=pa.string()),
                "doc_id": self.doc_column(),
                self._value_name: pa.array(self.values),
            }
        )

    def to_dataframe(self) -> Any:
        """Return the rows as a pandas DataFrame ``(query_id, doc_id, <value>)``."""
        return self.to_arrow().to_pandas()

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Return ``{query_id: {doc_id: value}}`` (queries sorted, docs in row order)."""
        out: dict[str, dict[str, Any]] = {}
        docs = self.doc_column().to_pylist()
        qs = self.query_column()
        vals = self.values.tolist()
        order = np.argsort(self.qcode, kind="stable")
        for i in order.tolist():
            out.setdefault(qs[i], {})[docs[i]] = vals[i]
        return out

    def items(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Iterate over ``(query_id, {doc_id: value})`` in query order."""
        return iter(self.to_dict().items())

    @staticmethod
    def _flatten_mapping(data: Mapping[Any, Mapping[Any, Any]]) -> tuple[list[Any], list[Any], list[Any]]:
        qs: list[Any] = []
        ds: list[Any] = []
        vs: list[Any] = []
        for q, docs in data.items():
            n = len(docs)
            qs.extend([q] * n)
            ds.extend(docs.keys())
            vs.extend(docs.values())
        return qs, ds, vs
