"""Is the third column of a header-less ``qid, docid, value`` run a rank or a score?

MS MARCO's official run format is ``qid<TAB>docid<TAB>rank`` with no header; read
as a score, its third column reverses every ranking (rank 1 would be the worst
document).  :func:`third_column` looks at the values, query by query, in file order:

* non-integers: a score (as every score-column file is read);
* in every query the integers ``1..n`` (or, in every query, ``0..n-1``) increasing down the
  file: a rank (best = 1, or 0);
* in every query non-increasing down the file: a score (some tools write ``n - rank + 1``);
* anything else (integers in another order, ranks that skip or start elsewhere): ambiguous,
  a :class:`~rankscope.errors.ParseError` that names the first query and line that fits
  neither reading, and the explicit choice (``--columns qid,docid,rank`` on the command
  line, ``read_run(..., columns=...)`` in Python).

Vectorised: one stable sort of the query codes, no loop over queries or rows.

>>> import pyarrow as pa
>>> third_column(pa.array(["q1", "q1", "q2"]), np.array([1.0, 2.0, 1.0]), "run.tsv")
('rank', 1)
>>> third_column(pa.array(["q1", "q1", "q2"]), np.array([9.0, 3.0, 5.0]), "run.tsv")
('score', None)
>>> third_column(pa.array(["q1", "q1"]), np.array([0.2, 0.7]), "run.tsv")
('score', None)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.errors import InvalidParameterError, Items, ParseError
from rankscope.i18n import _

__all__ = ["third_column", "check_columns", "COLUMNS_HINT"]

#: how to say which the third column is (said in the reader's language)
COLUMNS_HINT = _("--columns qid,docid,rank (or qid,docid,score) / read_run(..., columns=['qid', 'docid', 'rank'])")


def _query_codes(query: pa.Array | pa.ChunkedArray) -> np.ndarray:
    enc = pc.dictionary_encode(query)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.combine_chunks()
    return np.asarray(enc.indices.to_numpy(zero_copy_only=False), dtype=np.int64)


def third_column(
    query: pa.Array | pa.ChunkedArray,
    values: np.ndarray,
    source: str | None,
    lines: Callable[[], np.ndarray] | None = None,
) -> tuple[Literal["rank", "score"], int | None]:
    """``("rank", best)`` (best = 1 or 0) or ``("score", None)`` for the third column ``values``; see module doc."""
    v = np.asarray(values, dtype=np.float64)
    if len(v) == 0 or not bool(np.all(v == np.round(v))):
        return "score", None
    codes = _query_codes(query)
    order = np.argsort(codes, kind="stable")  # each query's rows, in file order
    c, sv = codes[order], v[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    pos = np.arange(len(c)) - np.repeat(starts, np.diff(np.r_[starts, len(c)]))
    best = sv[0]
    base = best if best in (0.0, 1.0) else 1.0
    as_rank = np.logical_and.reduceat(sv == pos + base, starts)  # per query
    if best in (0.0, 1.0) and bool(as_rank.all()):
        return "rank", int(best)
    falls = np.r_[True, np.diff(sv) <= 0]
    falls[starts] = True  # a query's first row
    as_score = np.logical_and.reduceat(falls, starts)
    if bool(as_score.all()):
        return "score", None
    bad = ~as_rank & ~as_score
    if not bad.any():  # some queries read as ranks, others as scores
        bad = ~as_rank
    first_rows = order[starts]  # the first row (in file order) of each query
    q = int(np.flatnonzero(bad)[np.argmin(first_rows[bad])])
    row = int(first_rows[q])
    n_q = (starts[q + 1] if q + 1 < len(starts) else len(sv)) - starts[q]
    shown = sv[starts[q]:starts[q] + min(n_q, 6)]
    listed = Items((*(int(x) for x in shown), *(("…",) if n_q > 6 else ())))
    qid = (query if isinstance(query, pa.Array) else query.combine_chunks())[row].as_py()
    raise ParseError(_("column 3 holds integers that are neither ranks (1..n or 0..n-1 increasing down the file in "
                       "every query) nor scores (decreasing down the file): query {qid} has {listed}; say which it "
                       "is with {hint}", qid=repr(qid), listed=listed, hint=COLUMNS_HINT),
                     source=source,
                     line=int(lines()[row]) if lines is not None else None)


def check_columns(columns: str | Sequence[str], width: int | None = None) -> list[str]:
    """The column names of ``columns=`` (a list, or one comma-separated string), checked.

    Every name must be known (a query, a doc and a score or rank column, see :mod:`rankscope.io.tables`);
    ``width`` is the number of columns of the file.

    >>> check_columns("qid,docid,rank")
    ['qid', 'docid', 'rank']
    >>> check_columns(["qid", "pid", "rnk"])
    Traceback (most recent call last):
    ...
    rankscope.errors.InvalidParameterError: columns: 'rnk' is not a known column name; a run needs ...
    """
    from rankscope.io.tables import DOC, QUERY, RANK, SCORE

    names = [c.strip() for c in columns.split(",")] if isinstance(columns, str) else [str(c).strip() for c in columns]
    known = {c.lower() for c in QUERY + DOC + SCORE + RANK} | {"_"}
    hint = _("a run needs a query column (query_id, qid, ...), a doc column (doc_id, docid, pid, ...) and a score "
             "(score, ...) or rank (rank, position) column, e.g. columns='qid,docid,rank'")
    for name in names:
        if name.lower() not in known:
            raise InvalidParameterError(_("columns: {name!r} is not a known column name; {hint}", name=name, hint=hint))
    lower = [n.lower() for n in names]
    listed = ",".join(names)
    for group in (QUERY, DOC):
        if not any(n in group for n in lower):
            what = group[0].split("_")[0]  # query, doc
            raise InvalidParameterError(_("columns: {names} lacks a query column; {hint}", names=listed, hint=hint)
                                        if what == "query" else
                                        _("columns: {names} lacks a doc column; {hint}", names=listed, hint=hint))
    if not any(n in SCORE + RANK for n in lower):
        raise InvalidParameterError(_("columns: {names} names neither a score nor a rank column; {hint}", names=listed,
                                      hint=hint))
    if width is not None and len(names) != width:
        raise InvalidParameterError(_("columns: {n} names given ({names}), but the file has {width} columns (use _ "
                                      "for a column to skip)", n=len(names), names=listed, width=width))
    return names
