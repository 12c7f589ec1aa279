"""The columnar core shared by :class:`Qrels` and :class:`Run`.

A table holds one row per (query, document) pair: integer query codes into
``query_ids`` (sorted strings), integer document codes into ``doc_ids`` (an
Arrow dictionary in first-seen order) and one numeric value per row.  Nothing
in the evaluation hot path touches Python dicts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from rankscope.data._columns import as_string_array, encode, encode_sorted
from rankscope.errors import DuplicateEntryError, RankscopeError

T = TypeVar("T", bound="IdTable")

__all__ = ["IdTable"]


class IdTable:
    """Rows of (query id, doc id, value) stored as integer-coded numpy/Arrow columns."""

    __slots__ = ("dcode", "doc_ids", "qcode", "query_ids", "values")
    _value_name = "value"

    query_ids: np.ndarray
    qcode: np.ndarray
    doc_ids: pa.Array
    dcode: np.ndarray
    values: np.ndarray

    def _init_columns(self, query: Any, doc: Any, values: np.ndarray) -> None:
        q = as_string_array(query, "query id")
        d = as_string_array(doc, "doc id")
        if not (len(q) == len(d) == len(values)):
            raise RankscopeError(
                f"columns differ in length: {len(q)} query ids, {len(d)} doc ids, "
                f"{len(values)} {self._value_name}s"
            )
        self.qcode, self.query_ids = encode_sorted(q)
        self.dcode, self.doc_ids = encode(d)
        self.values = values

    # -- duplicates ---------------------------------------------------------------
    def _pair_keys(self) -> np.ndarray:
        return self.qcode.astype(np.int64) * max(len(self.doc_ids), 1) + self.dcode

    def _block_keys(self) -> np.ndarray:
        """Keys equal exactly for equal (query, doc) pairs, cheap to sort for grouped tables.

        When every query occupies one contiguous block of rows (a run file or a
        DataFrame grouped by query), the key is ``block * n_docs + doc``: it is
        non-decreasing across blocks, so a stable (tim)sort only sorts within
        blocks.  Otherwise the (query, doc) pair key is used.
        """
        q = self.qcode
        starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))
        if len(np.unique(q[starts])) != len(starts):
            return self._pair_keys()
        block = np.repeat(np.arange(len(starts), dtype=np.int64), np.diff(np.append(starts, len(q))))
        return block * max(len(self.doc_ids), 1) + self.dcode

    def _duplicate_rows(self) -> np.ndarray:
        """Rows whose (query, doc) pair occurred in an earlier row."""
        if len(self.qcode) < 2:
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
        new = object.__new__(type(self))
        for slot in IdTable.__slots__:
            setattr(new, slot, getattr(self, slot))
        for slot in getattr(type(self), "__slots__", ()):
            if slot not in IdTable.__slots__:
                setattr(new, slot, getattr(self, slot))
        new.qcode = self.qcode[keep]
        new.dcode = self.dcode[keep]
        new.values = self.values[keep]
        return new

    # -- views ----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.values)

    @property
    def queries(self) -> list[str]:
        """The query ids that have at least one row, sorted."""
        present = np.unique(self.qcode)
        return [str(x) for x in self.query_ids[present]]

    def doc_column(self) -> pa.Array:
        """The doc id of every row as an Arrow string array."""
        return self.doc_ids.take(pa.array(self.dcode))

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
