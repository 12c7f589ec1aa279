"""Turn whatever the caller holds into :class:`Qrels` / :class:`Run`.

Accepted: the objects themselves; ``{q: {d: value}}`` dicts; ranked lists
``{q: [d, ...]}`` (runs; for qrels every listed doc gets grade 1); pandas
DataFrames and Arrow tables (column names: see :mod:`rankscope.io.tables`);
ranx ``Qrels`` / ``Run`` objects; iterables of ir_measures-style records (named
tuples with ``query_id, doc_id, relevance|score``); and file paths (read with
:func:`rankscope.io.read_qrels` / :func:`rankscope.io.read_run`).

>>> from collections import namedtuple
>>> ScoredDoc = namedtuple("ScoredDoc", "query_id doc_id score")
>>> as_run([ScoredDoc("q1", "d1", 2.0), ScoredDoc("q1", "d2", 1.0)], name="x")
Run('x', 1 queries, 2 rows)
>>> as_qrels({"q1": ["d1", "d2"]}).to_dict()
{'q1': {'d1': 1, 'd2': 1}}
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rankscope.data import Qrels, Run
from rankscope.data.run import DuplicatePolicy
from rankscope.errors import RankscopeError
from rankscope.i18n import _
from rankscope.io.tables import find_column, qrels_from_table, run_from_table

__all__ = ["as_qrels", "as_run", "find_column"]


def _is_table(obj: Any) -> bool:
    t = type(obj)
    if t.__module__.startswith("pyarrow") and t.__name__ in ("Table", "RecordBatch"):
        return True
    return t.__name__ == "DataFrame" and t.__module__.startswith("pandas")


def _is_ranx(obj: Any, kind: str) -> bool:
    t = type(obj)
    return t.__name__ == kind and t.__module__.startswith("ranx") and hasattr(obj, "to_dict")


def as_qrels(obj: Any) -> Qrels:
    """Convert ``obj`` to :class:`Qrels` (see module doc for what is accepted)."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, Run):
        raise RankscopeError(_("got the run {name!r} where qrels are expected: are the qrels and the run swapped? "
                               "The judgments come first: evaluate(qrels, run)", name=obj.name))
    if isinstance(obj, (str, Path)):
        from rankscope.io.formats import read_qrels

        return read_qrels(obj)
    if _is_table(obj):
        return qrels_from_table(obj)
    if _is_ranx(obj, "Qrels"):
        return Qrels.from_dict(obj.to_dict())
    if isinstance(obj, Mapping):
        if obj and all(not isinstance(v, Mapping) for v in obj.values()):
            return _qrels_from_lists(obj)
        return Qrels.from_dict(obj)
    if hasattr(obj, "__iter__"):
        rows = list(obj)
        if all(hasattr(r, "query_id") and hasattr(r, "doc_id") and hasattr(r, "relevance") for r in rows):
            return Qrels([r.query_id for r in rows], [r.doc_id for r in rows], [r.relevance for r in rows])
    shape = "{query: {doc: grade}}"
    raise RankscopeError(_("cannot use a {type} as qrels; expected Qrels, a path, {shape}, a DataFrame/Arrow "
                           "table, a ranx Qrels or ir_measures Qrel records", type=type(obj).__name__, shape=shape))


def _qrels_from_lists(obj: Mapping[Any, Any]) -> Qrels:
    qs: list[Any] = []
    ds: list[Any] = []
    for q, docs in obj.items():
        if isinstance(docs, (str, bytes)) or not hasattr(docs, "__iter__"):
            shape = "{doc: grade}"
            raise RankscopeError(_("qrels: query {query!r} maps to {docs!r}; expected {shape} or a list of docs",
                                   query=q, docs=docs, shape=shape))
        docs = list(docs)
        qs.extend([q] * len(docs))
        ds.extend(docs)
    return Qrels(qs, ds, [1] * len(qs))


def as_run(obj: Any, name: str | None = None, *, duplicates: DuplicatePolicy = "error") -> Run:
    """Convert ``obj`` to :class:`Run` (see module doc for what is accepted); ``name`` renames it."""
    if isinstance(obj, Run):
        if name and name != obj.name:
            obj = copy.copy(obj)
            obj.name = name
        return obj
    if isinstance(obj, Qrels):
        raise RankscopeError(_("got qrels where a run is expected: are the qrels and the run swapped? The "
                               "judgments come first: evaluate(qrels, run)"))
    if isinstance(obj, (str, Path)):
        from rankscope.io.formats import read_run

        return read_run(obj, name=name, duplicates=duplicates)
    if _is_table(obj):
        return run_from_table(obj, name=name, duplicates=duplicates)
    if _is_ranx(obj, "Run"):
        return Run.from_dict(obj.to_dict(), name or getattr(obj, "name", None), duplicates=duplicates)
    if isinstance(obj, Mapping):
        return Run.from_dict(obj, name, duplicates=duplicates)
    if hasattr(obj, "__iter__"):
        rows = list(obj)
        if all(hasattr(r, "query_id") and hasattr(r, "doc_id") and hasattr(r, "score") for r in rows):
            scores = [r.score for r in rows]
            return Run([r.query_id for r in rows], [r.doc_id for r in rows], scores, name, duplicates=duplicates)
    shapes = ("{query: {doc: score}}", "{query: [doc, ...]}")
    raise RankscopeError(_("cannot use a {type} as a run; expected Run, a path, {shape}, {lists}, a "
                           "DataFrame/Arrow table, a ranx Run or ir_measures ScoredDoc records",
                           type=type(obj).__name__, shape=shapes[0], lists=shapes[1]))
