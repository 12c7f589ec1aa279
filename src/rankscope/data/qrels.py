"""Relevance judgments: :class:`Qrels`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rankscope.data._columns import as_int_array
from rankscope.data._table import IdTable, MappingColumns
from rankscope.i18n import N_, _

__all__ = ["Qrels"]


class Qrels(IdTable):
    """Relevance judgments: query id -> doc id -> integer grade.

    Grades are integers; ``grade >= relevance_level`` (default 1) makes a document
    relevant for binary measures, a grade below it (0 or negative) marks it as
    judged non-relevant.  Graded measures (nDCG) use the raw grade as gain.
    Documents that do not appear are *unjudged*.

    Examples
    --------
    >>> qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}})
    >>> len(qrels), qrels.queries
    (3, ['q1', 'q2'])
    >>> qrels.to_dict()["q1"]
    {'d1': 2, 'd2': 0}
    """

    __slots__ = ()
    _value_name = "relevance"
    _value_words = N_("relevances")

    def __init__(self, query: Any, doc: Any, grade: Any) -> None:
        self._init_columns(query, doc, as_int_array(grade, _("relevance grade")))
        dups = self._duplicate_rows()
        if len(dups):
            self._raise_duplicate(int(dups[0]), "qrels")

    @property
    def grades(self) -> np.ndarray:
        """The grade of every row (int64)."""
        return self.values

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def from_arrays(cls, query: Any, doc: Any, grade: Any) -> Qrels:
        """Build from three equally long columns (lists, numpy or Arrow arrays)."""
        return cls(query, doc, grade)

    @classmethod
    def from_dict(cls, data: Mapping[Any, Mapping[Any, Any]]) -> Qrels:
        """Build from ``{query_id: {doc_id: grade}}``."""
        cols = MappingColumns.of(data)
        if cols is not None:  # plain dicts of plain ids: no pair can repeat
            return cls._from_columns(cols, as_int_array(list(cols.values()), _("relevance grade")))
        qs, ds, vs = cls._flatten_mapping(data)
        return cls(qs, ds, vs)

    @classmethod
    def from_pandas(cls, df: Any, query: str = "query_id", doc: str = "doc_id", grade: str = "relevance") -> Qrels:
        """Build from a pandas DataFrame with the given column names."""
        return cls(df[query], df[doc], df[grade].to_numpy())

    def __repr__(self) -> str:
        return f"Qrels({len(self.query_ids)} queries, {len(self)} judgments)"
