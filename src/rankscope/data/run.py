"""Ranked results: :class:`Run`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np

from rankscope.data._columns import as_float_array, block_starts
from rankscope.data._table import IdTable, MappingColumns
from rankscope.data.notices import InputNotice
from rankscope.errors import RankscopeError
from rankscope.i18n import N_, _

__all__ = ["Run", "DuplicatePolicy"]

DuplicatePolicy = Literal["error", "keep_best"]


def _check_policy(duplicates: str) -> None:
    if duplicates not in ("error", "keep_best"):
        raise RankscopeError(_("duplicates must be 'error' or 'keep_best', got {value!r}", value=duplicates))


def _scores(cols: MappingColumns) -> np.ndarray:
    """The scores of ``cols`` as float64 (what :func:`~rankscope.data._columns.as_float_array` accepts and refuses,
    with its errors)."""
    try:
        arr = np.fromiter(cols.values(), dtype=np.float64, count=cols.rows)
    except (TypeError, ValueError):
        arr = None
    if arr is None or not np.isfinite(arr).all():
        return as_float_array(list(cols.values()), _("score"))
    return arr


class Run(IdTable):
    """Ranked results: query id -> doc id -> score, with an optional name.

    The ranking of a query is by score descending, ties broken by doc id
    descending (string order), exactly as trec_eval sorts.  A run built from
    ranked lists (:meth:`from_ranked_lists`) keeps the list order: its scores are
    ``n, n-1, ..., 1``.

    ``duplicates`` decides what a repeated (query, doc) pair does: ``"error"``
    (default) raises :class:`~rankscope.errors.DuplicateEntryError` naming the
    first repeat, ``"keep_best"`` keeps the best-ranked occurrence.

    Examples
    --------
    >>> run = Run.from_dict({"q1": {"d1": 0.9, "d2": 0.5}}, name="bm25")
    >>> run.name, len(run)
    ('bm25', 2)
    >>> Run.from_ranked_lists({"q1": ["d3", "d1"]}).to_dict()
    {'q1': {'d3': 2.0, 'd1': 1.0}}
    """

    __slots__ = ("_notices", "name")
    _value_name = "score"
    _value_words = N_("scores")
    name: str

    def __init__(
        self,
        query: Any,
        doc: Any,
        score: Any,
        name: str | None = None,
        *,
        duplicates: DuplicatePolicy = "error",
    ) -> None:
        _check_policy(duplicates)
        self._init_columns(query, doc, as_float_array(score, _("score")))
        self.name = name or "run"
        self._notices: tuple[InputNotice, ...] = ()
        self._settle_duplicates(duplicates)

    def _settle_duplicates(self, duplicates: DuplicatePolicy) -> None:
        """Raise on a repeated (query, doc) pair, or keep its best-ranked row (``duplicates``)."""
        dups = self._duplicate_rows()
        if len(dups):
            if duplicates == "error":
                self._raise_duplicate(int(dups[0]), "run")
            self._drop_worse_duplicates()

    @staticmethod
    def _named(run: Run, name: str | None) -> Run:
        run.name = name or "run"
        run._notices = ()
        return run

    def _drop_worse_duplicates(self) -> None:
        keys = self._pair_keys()
        # best score first within each key; stable so the earlier row wins a tie
        order = np.lexsort((-self.values, keys))
        sk = keys[order]
        first = np.ones(len(sk), dtype=bool)
        first[1:] = sk[1:] != sk[:-1]
        keep = np.sort(order[first])
        self.qcode, self._dcode, self.values = self.qcode[keep], self.dcode[keep], self.values[keep]
        self._starts = block_starts(self.qcode)
        self._docs, self._fp = None, None  # the dictionary and codes now describe the rows

    @property
    def notices(self) -> tuple[InputNotice, ...]:
        """What the reader decided about the file this run came from (e.g. a third column read as a rank)."""
        return self._notices

    @notices.setter
    def notices(self, value: tuple[InputNotice, ...]) -> None:
        self._notices = tuple(value)

    @property
    def scores(self) -> np.ndarray:
        """The score of every row (float64)."""
        return self.values

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def from_arrays(
        cls, query: Any, doc: Any, score: Any, name: str | None = None, *, duplicates: DuplicatePolicy = "error"
    ) -> Run:
        """Build from three equally long columns (lists, numpy or Arrow arrays)."""
        return cls(query, doc, score, name, duplicates=duplicates)

    @classmethod
    def from_dict(
        cls,
        data: Mapping[Any, Mapping[Any, Any] | Sequence[Any]],
        name: str | None = None,
        *,
        duplicates: DuplicatePolicy = "error",
    ) -> Run:
        """Build from ``{query: {doc: score}}`` or from ranked lists ``{query: [doc, ...]}``."""
        cols = MappingColumns.of(data)
        if cols is not None:  # plain dicts of plain ids: no pair can repeat
            _check_policy(duplicates)
            return cls._named(cls._from_columns(cols, _scores(cols)), name)
        if data and all(not isinstance(v, Mapping) for v in data.values()):
            return cls.from_ranked_lists(data, name, duplicates=duplicates)  # type: ignore[arg-type]
        if any(not isinstance(v, Mapping) for v in data.values()):
            shape = "{doc: score}"
            raise RankscopeError(_("run: every query must map to either {shape} or a ranked list, not a mix",
                                   shape=shape))
        qs, ds, vs = cls._flatten_mapping(data)  # type: ignore[arg-type]
        return cls(qs, ds, vs, name, duplicates=duplicates)

    @classmethod
    def from_ranked_lists(
        cls, data: Mapping[Any, Sequence[Any]], name: str | None = None, *, duplicates: DuplicatePolicy = "error"
    ) -> Run:
        """Build from ``{query: [doc, ...]}``; the list order is the ranking."""
        cols = MappingColumns.of(data, lists=True)
        if cols is not None:  # lists of plain ids
            _check_policy(duplicates)
            run = cls._named(cls._from_columns(cols, cols.ranked_scores(), distinct=False), name)
            run._settle_duplicates(duplicates)
            return run
        qs: list[Any] = []
        ds: list[Any] = []
        vs: list[float] = []
        for q, docs in data.items():
            if isinstance(docs, (str, bytes)):
                raise RankscopeError(_("run: query {query!r} maps to a string, expected a list of doc ids", query=q))
            n = len(docs)
            qs.extend([q] * n)
            ds.extend(docs)
            vs.extend(range(n, 0, -1))
        return cls(qs, ds, np.asarray(vs, dtype=np.float64), name, duplicates=duplicates)

    @classmethod
    def from_pandas(
        cls, df: Any, query: str = "query_id", doc: str = "doc_id", score: str = "score", name: str | None = None
    ) -> Run:
        """Build from a pandas DataFrame with the given column names."""
        return cls(df[query], df[doc], df[score].to_numpy(), name)

    def __repr__(self) -> str:
        return f"Run({self.name!r}, {len(self.query_ids)} queries, {len(self)} rows)"
