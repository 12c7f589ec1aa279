"""Turn whatever the caller holds into :class:`Qrels` / :class:`Run`.

Accepted: the objects themselves; ``{q: {d: value}}`` dicts; ranked lists
``{q: [d, ...]}`` (runs); pandas DataFrames and Arrow tables with
``query_id, doc_id, relevance|score`` columns (common aliases accepted); ranx
``Qrels`` / ``Run`` objects; iterables of ir_measures-style records (named
tuples with ``query_id, doc_id, relevance|score``); and file paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rankscope.data import Qrels, Run
from rankscope.errors import RankscopeError

__all__ = ["as_qrels", "as_run", "find_column"]

_QUERY = ("query_id", "qid", "query", "q_id", "topic", "query-id")
_DOC = ("doc_id", "docid", "docno", "doc", "document", "corpus-id", "corpus_id", "pid", "passage_id")
_GRADE = ("relevance", "rel", "grade", "label", "score", "judgment")
_SCORE = ("score", "sim", "similarity", "rank_score")


def find_column(columns: list[str], choices: tuple[str, ...], what: str) -> str:
    """The first column of ``columns`` whose lower-case name is one of ``choices``."""
    lower = {c.lower(): c for c in columns}
    for c in choices:
        if c in lower:
            return lower[c]
    raise RankscopeError(f"no {what} column among {columns}; expected one of {list(choices)}")


def _is_dataframe(obj: Any) -> bool:
    return type(obj).__name__ == "DataFrame" and hasattr(obj, "columns")


def _is_arrow_table(obj: Any) -> bool:
    return type(obj).__module__.startswith("pyarrow") and type(obj).__name__ == "Table"


def _table_columns(obj: Any) -> tuple[list[str], Any]:
    if _is_dataframe(obj):
        return [str(c) for c in obj.columns], lambda c: obj[c].to_numpy()
    return list(obj.column_names), lambda c: obj.column(c)


def as_qrels(obj: Any) -> Qrels:
    """Convert ``obj`` to :class:`Qrels` (see module doc for what is accepted)."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, (str, Path)):
        from rankscope.io import read_qrels

        return read_qrels(obj)
    if _is_dataframe(obj) or _is_arrow_table(obj):
        cols, get = _table_columns(obj)
        q, d = find_column(cols, _QUERY, "query id"), find_column(cols, _DOC, "doc id")
        g = find_column(cols, _GRADE, "relevance")
        return Qrels(get(q), get(d), get(g))
    if type(obj).__name__ == "Qrels" and hasattr(obj, "to_dict"):  # ranx.Qrels
        return Qrels.from_dict(obj.to_dict())
    if isinstance(obj, Mapping):
        return Qrels.from_dict(obj)
    if hasattr(obj, "__iter__"):
        rows = list(obj)
        if rows and all(hasattr(r, "query_id") and hasattr(r, "doc_id") and hasattr(r, "relevance") for r in rows):
            return Qrels([r.query_id for r in rows], [r.doc_id for r in rows], [r.relevance for r in rows])
        if not rows:
            return Qrels([], [], [])
    raise RankscopeError(f"cannot use a {type(obj).__name__} as qrels")


def as_run(obj: Any, name: str | None = None) -> Run:
    """Convert ``obj`` to :class:`Run` (see module doc for what is accepted)."""
    if isinstance(obj, Run):
        if name and name != obj.name:
            import copy

            obj = copy.copy(obj)
            obj.name = name
        return obj
    if isinstance(obj, (str, Path)):
        from rankscope.io import read_run

        run = read_run(obj)
        if name:
            run.name = name
        return run
    if _is_dataframe(obj) or _is_arrow_table(obj):
        cols, get = _table_columns(obj)
        q, d = find_column(cols, _QUERY, "query id"), find_column(cols, _DOC, "doc id")
        s = find_column(cols, _SCORE, "score")
        return Run(get(q), get(d), get(s), name)
    if type(obj).__name__ == "Run" and hasattr(obj, "to_dict"):  # ranx.Run
        return Run.from_dict(obj.to_dict(), name or getattr(obj, "name", None))
    if isinstance(obj, Mapping):
        return Run.from_dict(obj, name)
    if hasattr(obj, "__iter__"):
        rows = list(obj)
        if rows and all(hasattr(r, "query_id") and hasattr(r, "doc_id") and hasattr(r, "score") for r in rows):
            return Run([r.query_id for r in rows], [r.doc_id for r in rows], [r.score for r in rows], name)
        if not rows:
            return Run([], [], [], name)
    raise RankscopeError(f"cannot use a {type(obj).__name__} as a run")
