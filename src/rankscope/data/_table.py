"""The columnar core shared by :class:`Qrels` and :class:`Run`.

A table holds one row per (query, document) pair: integer query codes into
``query_ids`` (sorted strings), the doc id strings of the rows, integer
document codes into ``doc_ids`` (an Arrow dictionary in first-seen order, built
on first use) and one numeric value per row.  Nothing in the evaluation hot
path touches Python dicts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data._columns import (
    arrow_ints,
    as_string_array,
    encode,
    encode_sorted,
    fingerprint,
    fingerprint_pieces,
    positions,
)
from rankscope.errors import DuplicateEntryError, RankscopeError

T = TypeVar("T", bound="IdTable")

__all__ = ["IdTable"]

_FILTER_MIN_ROWS = 1 << 16  # below this, one exact lookup of every row is cheap enough


def _high32(fp: np.ndarray) -> np.ndarray:
    return (fp >> np.uint64(32)).astype(np.uint32)


class IdTable:
    """Rows of (query id, doc id, value) stored as integer-coded numpy/Arrow columns.

    The doc id column is kept as given (an Arrow string array, one entry a row);
    the doc dictionary (``doc_ids``, ``dcode``) is built on first use.  Evaluation
    never needs it: it joins the row strings with the qrels directly, which
    saves hashing millions of run doc ids.
    """

    __slots__ = ("_dcode", "_doc_ids", "_docs", "_fph", "qcode", "query_ids", "values")
    _value_name = "value"

    query_ids: np.ndarray
    qcode: np.ndarray
    values: np.ndarray
    _docs: pa.Array | pa.ChunkedArray | None
    _dcode: np.ndarray | None
    _doc_ids: pa.Array | None
    _fph: np.ndarray | None

    def _init_columns(self, query: Any, doc: Any, values: np.ndarray) -> None:
        q = as_string_array(query, "query id", keep_chunks=True)
        d = as_string_array(doc, "doc id", keep_chunks=True)
        if not (len(q) == len(d) == len(values)):
            raise RankscopeError(
                f"columns differ in length: {len(q)} query ids, {len(d)} doc ids, "
                f"{len(values)} {self._value_name}s"
            )
        self.qcode, self.query_ids = encode_sorted(q)
        self._docs, self._dcode, self._doc_ids, self._fph = d, None, None, None
        self.values = values

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
        """The high 32 bits of the 64-bit fingerprint of every row's doc id (uint32, computed once)."""
        if self._fph is None:
            fph = np.empty(len(self), dtype=np.uint32)
            for lo, h in fingerprint_pieces(self.doc_column()):
                fph[lo : lo + len(h)] = h >> np.uint64(32)
            self._fph = fph
        return self._fph

    def doc_matches(self, value_set: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """Rows whose doc id is in ``value_set`` and its position there: ``(rows int64, positions int32)``.

        Exact.  For a large table without a doc dictionary, a bit table of the
        ``value_set`` fingerprints first keeps only the candidate rows (the few
        percent of a deep run that can be judged, plus fingerprint collisions);
        only those go through the exact string lookup.  The row fingerprints
        (kept from the duplicate check, or computed here) are released afterwards.

        >>> t = IdTable.__new__(IdTable)
        >>> t._init_columns(["q"] * 3, ["a", "b", "c"], np.zeros(3))
        >>> rows, pos = t.doc_matches(pa.array(["c", "x", "a"]))
        >>> rows.tolist(), pos.tolist()
        ([0, 2], [2, 0])
        """
        if self._dcode is not None or self._docs is None or len(self._docs) < _FILTER_MIN_ROWS:
            pos = self.doc_lookup(value_set)
            rows = np.flatnonzero(pos >= 0)
            return rows, pos[rows]
        bits = min(max((16 * len(value_set)).bit_length(), 16), 24)
        shift = np.uint32(32 - bits)
        table = np.zeros(1 << bits, dtype=bool)
        table[_high32(fingerprint(value_set)) >> shift] = True
        cand = np.flatnonzero(table[self.doc_fingerprints() >> shift])
        # dropped after the join: 4 bytes a row held for the whole evaluation otherwise
        # (joining the same run again recomputes them, ~35 ms per million rows)
        self._fph = None
        del table
        pos = pc.index_in(self._docs.take(arrow_ints(cand)), value_set=value_set)
        pos_np = positions(pos).astype(np.int32, copy=False)
        hit = pos_np >= 0
        return cand[hit], pos_np[hit]

    # -- duplicates ---------------------------------------------------------------
    def _pair_keys(self) -> np.ndarray:
        return self.qcode.astype(np.int64) * max(len(self.doc_ids), 1) + self.dcode

    def _blocks(self) -> np.ndarray | None:
        """Block number of every row when each query is one contiguous block of rows, else None."""
        q = self.qcode
        starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
        if len(np.unique(q[starts])) != len(starts):
            return None
        return np.repeat(np.arange(len(starts), dtype=np.int64), np.diff(np.append(starts, len(q))))

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

        For a table grouped by query: sort ``block | fingerprint(doc)`` keys (a
        cheap within-block timsort); distinct keys prove distinct pairs.  Any
        equal keys (a duplicate or a fingerprint collision) send the caller to
        the exact check.
        """
        if self._docs is None or self._dcode is not None or len(self.qcode) < 4096:
            return True
        block = self._blocks()
        if block is None:
            return True
        bits = max(int(block[-1]).bit_length(), 1)
        keys = block.view(np.uint64)  # in place: this runs on the largest inputs
        keys <<= np.uint64(64 - bits)
        # folded in piece by piece (no row-sized temporary); the high 32 bits are kept:
        # evaluation reuses them to pre-filter the qrels lookup
        fph = np.empty(len(keys), dtype=np.uint32)
        for lo, h in fingerprint_pieces(self._docs):
            hi = lo + len(h)
            fph[lo:hi] = h >> np.uint64(32)
            h >>= np.uint64(bits)
            keys[lo:hi] |= h
        self._fph = fph
        keys.sort(kind="stable")
        return bool((keys[1:] == keys[:-1]).any())

    def _duplicate_rows(self) -> np.ndarray:
        """Rows whose (query, doc) pair occurred in an earlier row."""
        if len(self.qcode) < 2 or not self._maybe_duplicates():
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
        raise DuplicateEntryError(
            f"duplicate {kind} entry for query {qid!r}, document {did!r} (rows {first} and {row})",
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
        if self._dcode is not None:
            new._dcode = self._dcode[keep]
        if self._fph is not None:
            new._fph = self._fph[keep]
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
