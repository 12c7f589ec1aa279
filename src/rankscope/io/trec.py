"""TREC text formats: qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``).

Whitespace separated, one entry a line; ``.gz`` files are decompressed; blank
lines and lines starting with ``#`` are skipped.  Like trec_eval, the rank
column of a run is ignored (documents are ranked by score) and extra trailing
columns are allowed in a run.  A malformed line raises
:class:`~rankscope.errors.ParseError` naming the file and line number.
"""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import numpy as np

from rankscope.data import Qrels, Run
from rankscope.data.run import DuplicatePolicy
from rankscope.errors import DuplicateEntryError, EmptyInputError, ParseError

__all__ = ["read_trec_qrels", "read_trec_run", "write_trec_qrels", "write_trec_run"]


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
            return fh.read().splitlines()
    except UnicodeDecodeError as exc:
        raise ParseError(f"not UTF-8 text ({exc.reason})", source=str(path)) from None
    except OSError as exc:
        raise ParseError(f"cannot read file ({exc.strerror or exc})", source=str(path)) from None


def _rows(path: Path, min_cols: int, max_cols: int | None) -> tuple[list[list[str]], list[int]]:
    rows: list[list[str]] = []
    line_no: list[int] = []
    for i, line in enumerate(_lines(path), start=1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split()
        if len(parts) < min_cols or (max_cols is not None and len(parts) > max_cols):
            want = f"{min_cols}" if max_cols == min_cols else f"at least {min_cols}"
            raise ParseError(f"expected {want} whitespace-separated columns, got {len(parts)}: {s[:80]!r}",
                             source=str(path), line=i)
        rows.append(parts)
        line_no.append(i)
    if not rows:
        raise EmptyInputError(f"{path}: no entries (empty file)")
    return rows, line_no


def read_trec_qrels(path: str | Path) -> Qrels:
    """Read a 4-column TREC qrels file."""
    path = Path(path)
    rows, line_no = _rows(path, 4, 4)
    grades = []
    for parts, ln in zip(rows, line_no):
        try:
            grades.append(int(parts[3]))
        except ValueError:
            raise ParseError(f"relevance must be an integer, got {parts[3]!r}", source=str(path), line=ln) from None
    try:
        return Qrels([r[0] for r in rows], [r[2] for r in rows], np.asarray(grades, dtype=np.int64))
    except DuplicateEntryError as exc:
        raise _at_line(exc, path, line_no) from None


def read_trec_run(path: str | Path, name: str | None = None, *, duplicates: DuplicatePolicy = "error") -> Run:
    """Read a 6-column TREC run file; the run is named after the tag column."""
    path = Path(path)
    rows, line_no = _rows(path, 6, None)
    scores = np.empty(len(rows), dtype=np.float64)
    for i, (parts, ln) in enumerate(zip(rows, line_no)):
        try:
            v = float(parts[4])
        except ValueError:
            raise ParseError(f"score must be a number, got {parts[4]!r}", source=str(path), line=ln) from None
        if not math.isfinite(v):
            raise ParseError(f"score must be finite, got {parts[4]!r}", source=str(path), line=ln)
        scores[i] = v
    try:
        return Run([r[0] for r in rows], [r[2] for r in rows], scores, name or rows[0][5], duplicates=duplicates)
    except DuplicateEntryError as exc:
        raise _at_line(exc, path, line_no) from None


def _at_line(exc: DuplicateEntryError, path: Path, line_no: list[int]) -> ParseError:
    if exc.rows is None:
        return ParseError(str(exc), source=str(path))
    first, second = exc.rows
    msg = str(exc).split(" (rows")[0] + f" (first at line {line_no[first]})"
    return ParseError(msg, source=str(path), line=line_no[second])


def write_trec_qrels(qrels: Qrels, path: str | Path) -> None:
    """Write ``qrels`` as a 4-column TREC file (queries sorted)."""
    order = np.lexsort((qrels.dcode, qrels.qcode))
    qs = qrels.query_column()[order]
    ds = np.asarray(qrels.doc_column().to_pylist(), dtype=object)[order]
    gs = qrels.grades[order]
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(f"{q} 0 {d} {g}\n" for q, d, g in zip(qs, ds, gs.tolist()))


def write_trec_run(run: Run, path: str | Path, tag: str | None = None) -> None:
    """Write ``run`` as a 6-column TREC file, ranked by score (ties: doc id descending)."""
    docs = np.asarray(run.doc_column().to_pylist(), dtype=object)
    _, doc_rank = np.unique(docs, return_inverse=True) if len(docs) else (None, np.empty(0, dtype=np.int64))
    order = np.lexsort((-doc_rank.ravel(), -run.scores, run.qcode))
    qs = run.query_column()[order]
    starts = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]]) if len(qs) else np.empty(0, dtype=np.int64)
    rank = np.arange(len(qs)) - np.repeat(starts, np.diff(np.r_[starts, len(qs)])) + 1
    name = tag or run.name or "rankscope"
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(
            f"{q} Q0 {d} {r} {s!r} {name}\n"
            for q, d, r, s in zip(qs, docs[order], rank.tolist(), run.scores[order].tolist())
        )
