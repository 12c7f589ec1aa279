"""TREC text formats: qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Whitespace separated (spaces and tabs, mixed, repeated), one entry a line;
gzip files are decompressed; blank lines and lines starting with ``#`` are
skipped (a ``#`` inside a doc id is kept).  Like trec_eval, the rank column of
a run is ignored (documents are ranked by score) and extra trailing columns are
allowed in a run.  A malformed line raises :class:`~rankscope.errors.ParseError`
naming the file and line number; a duplicate (query, doc) pair names the line
of the repeat and of the first occurrence.

Clean files are parsed by Arrow's CSV reader (:mod:`rankscope.io._trec_fast`);
anything unusual goes through the exact line parser
(:mod:`rankscope.io._trec_lines`); both give identical results and errors.

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "run.trec")
>>> _ = open(p, "w").write("q1 Q0 d1 1 0.9 bm25\\nq1 Q0 d2 2 0.5 bm25\\n")
>>> read_trec_run(p)
Run('bm25', 1 queries, 2 rows)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from rankscope.data import Qrels, Run
from rankscope.data.run import DuplicatePolicy
from rankscope.errors import DuplicateEntryError, DuplicateLineError, InvalidParameterError
from rankscope.i18n import _
from rankscope.io._trec_fast import read_columns
from rankscope.io.tables import duplicate_said

__all__ = ["read_trec_qrels", "read_trec_run", "write_trec_qrels", "write_trec_run"]


def read_trec_qrels(path: str | Path, *, fast: bool = True) -> Qrels:
    """Read a 4-column TREC qrels file (``query iter doc grade``, grade an integer)."""
    source = str(path)
    cols = read_columns(path, "qrels", fast=fast)  # a memory map, no copy of the file into Python
    try:
        return Qrels(cols.query, cols.doc, cols.values)
    except DuplicateEntryError as exc:
        raise at_line(exc, source, cols.lines(), "qrels", cols.query, cols.doc) from None


def read_trec_run(
    path: str | Path, name: str | None = None, *, duplicates: DuplicatePolicy = "error", fast: bool = True
) -> Run:
    """Read a TREC run file (``query Q0 doc rank score tag``); the run is named after the first tag.

    ``duplicates="keep_best"`` keeps the best-scored line of a repeated (query, doc)
    pair instead of raising.
    """
    source = str(path)
    cols = read_columns(path, "run", fast=fast)
    try:
        return Run(cols.query, cols.doc, cols.values, name or cols.tag, duplicates=duplicates)
    except DuplicateEntryError as exc:
        raise at_line(exc, source, cols.lines(), "run", cols.query, cols.doc) from None


def at_line(exc: DuplicateEntryError, source: str, line_no: np.ndarray | None, kind: str, query: Any,
            doc: Any) -> DuplicateLineError:
    """Turn the row numbers of a :class:`DuplicateEntryError` into file lines (``line_no=None``: row i is line i+1).

    ``kind`` (``qrels`` or ``run``) and the ``query`` and ``doc`` columns the rows index say the repeated pair.
    """
    if exc.rows is None:
        return DuplicateLineError(_("{said}", said=exc), source=source)
    first, second = exc.rows
    numbers = np.arange(1, second + 2) if line_no is None else line_no
    first_line, second_line = int(numbers[first]), int(numbers[second])
    said = duplicate_said(kind, query, doc, second)
    first_at = _("line {n}", n=first_line)
    return DuplicateLineError(_("{said} (first at {first})", said=said, first=first_at),
                              source=source,
                              line=second_line).with_rows(first, second)


def write_trec_qrels(qrels: Qrels, path: str | Path) -> None:
    """Write ``qrels`` as a 4-column TREC file (queries sorted, docs in row order)."""
    order = np.argsort(qrels.qcode, kind="stable")
    qs = qrels.query_column()[order]
    ds = np.asarray(qrels.doc_column().to_pylist(), dtype=object)[order]
    gs = qrels.grades[order]
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(f"{q} 0 {d} {g}\n" for q, d, g in zip(qs, ds, gs.tolist()))


def write_trec_run(run: Run, path: str | Path, tag: str | None = None) -> None:
    """Write ``run`` as a 6-column TREC file, ranked by score (ties: doc id descending, as trec_eval ranks).

    Scores are written with ``repr`` so that reading the file back gives the same floats.
    """
    docs = np.asarray(run.doc_column().to_pylist(), dtype=object)
    __, doc_rank = np.unique(docs, return_inverse=True) if len(docs) else (None, np.empty(0, dtype=np.int64))
    order = np.lexsort((-doc_rank.ravel(), -run.scores, run.qcode))
    qs = run.query_column()[order]
    starts = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]]) if len(qs) else np.empty(0, dtype=np.int64)
    rank = np.arange(len(qs)) - np.repeat(starts, np.diff(np.r_[starts, len(qs)])) + 1
    name = tag or run.name or "rankscope"
    if any(c.isspace() for c in name) or not name:
        raise InvalidParameterError(_("a TREC run tag must be a non-empty word without whitespace, got {tag!r}",
                                      tag=name))
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(
            f"{q} Q0 {d} {r} {s!r} {name}\n"
            for q, d, r, s in zip(qs, docs[order], rank.tolist(), run.scores[order].tolist())
        )
