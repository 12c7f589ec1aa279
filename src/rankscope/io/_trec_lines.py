"""The exact, line-by-line TREC parser: the definition of what a valid TREC file is.

A TREC file is UTF-8 text; lines are separated by ``\\n``; tokens by runs of
ASCII whitespace (space, tab, ``\\r``, ``\\v``, ``\\f``).  Lines without tokens
and lines whose first token starts with ``#`` are skipped.

* qrels: exactly 4 tokens ``query iter doc grade``; ``grade`` an integer
  (``[+-]digits``).
* run: at least 6 tokens ``query Q0 doc rank score tag [ignored...]``; ``score``
  a finite decimal number; ``rank`` is ignored, as in trec_eval.

Every error names the file and line.  The fast reader
(:mod:`rankscope.io._trec_fast`) must accept exactly the same files and produce
the same values; whenever it is unsure it hands the file to this parser.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rankscope.errors import EmptyInputError, ParseError, WrongKindError
from rankscope.i18n import _

__all__ = ["Kind", "Columns", "parse_lines", "parse_score", "parse_grade", "empty_error", "WIDTH"]

Kind = Literal["qrels", "run"]

_TOKEN = re.compile(r"[^ \t\r\v\f]+")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT_CHARS = re.compile(r"[+-]?([0-9.eE+-]+|(?i:nan|inf|infinity))")

#: (minimum, maximum or None) number of tokens a data line holds, and the index of the value token
WIDTH: dict[str, tuple[int, int | None, int]] = {"qrels": (4, 4, 3), "run": (6, None, 4)}


@dataclass
class Columns:
    """Parsed columns of a TREC file; ``lines()`` gives the 1-based line number of every row (computed on demand)."""

    query: Any
    doc: Any
    values: np.ndarray
    lines: Callable[[], np.ndarray]
    tag: str


def empty_error(source: str) -> EmptyInputError:
    """The error for a file without a single data line."""
    return EmptyInputError(_("{source}: no entries (empty file)", source=source))


def width_error(kind: str, parts: list[str], text: str, source: str, line: int) -> ParseError:
    """The error for a line with the wrong number of columns (a line of the other kind says so)."""
    lo, hi, __ = WIDTH[kind]
    layout = "query iter doc relevance" if kind == "qrels" else "query Q0 doc rank score tag"
    values = {"want": lo, "layout": layout, "got": len(parts), "text": repr(text.strip()[:80])}
    said = _("expected {want} whitespace-separated columns ({layout}), got {got}: {text}", **values) if hi == lo \
        else _("expected at least {want} whitespace-separated columns ({layout}), got {got}: {text}", **values)
    other = other_kind(kind, parts)
    if other is not None:
        return WrongKindError(_("{said}; {hint}", said=said, hint=KIND_HINT[other]),
                              looks_like=other,
                              source=source,
                              line=line)
    return ParseError(said, source=source, line=line)


#: what a line of the other kind looks like, said in the error
KIND_HINT = {"run": _("this looks like a run (query Q0 doc rank score tag), not qrels: are the qrels and the run "
                      "swapped?"),
             "qrels": _("this looks like qrels (query iter doc relevance), not a run: are the qrels and the run "
                        "swapped?")}


def other_kind(kind: str, parts: list[str]) -> str | None:
    """``"run"`` when a qrels line has a run's 6+ columns, ``"qrels"`` when a run line has 4 with an integer grade.

    >>> other_kind("qrels", "q1 Q0 d1 1 2.5 bm25".split()), other_kind("run", "q1 0 d1 1".split())
    ('run', 'qrels')
    """
    if kind == "qrels" and len(parts) >= 6:
        return "run"
    if kind == "run" and len(parts) == 4 and _INT.fullmatch(parts[3]):
        return "qrels"
    return None


def parse_score(token: str, source: str, line: int) -> float:
    """A run score: a finite decimal number (``1.5``, ``-2e-3``); NaN and infinities are refused.

    >>> parse_score("2.5e-1", "run.txt", 3)
    0.25
    >>> parse_score("nan", "run.txt", 3)
    Traceback (most recent call last):
    ...
    rankscope.errors.ParseError: run.txt:3: score must be a finite number, got 'nan'
    """
    value = None
    if _FLOAT_CHARS.fullmatch(token):
        try:
            value = float(token)
        except ValueError:
            value = None
    if value is None:
        raise ParseError(_("score must be a number, got {value}", value=repr(token)), source=source, line=line)
    if not np.isfinite(value):
        raise ParseError(_("score must be a finite number, got {value}", value=repr(token)), source=source, line=line)
    return value


def parse_grade(token: str, source: str, line: int) -> int:
    """A qrels grade: an integer that fits in 64 bits.

    >>> parse_grade("-1", "qrels.txt", 1)
    -1
    """
    if not _INT.fullmatch(token):
        raise ParseError(_("relevance must be an integer, got {value}", value=repr(token)), source=source, line=line)
    value = int(token)
    if not -(2**63) <= value < 2**63:
        raise ParseError(_("relevance out of the 64-bit range, got {value}", value=repr(token)),
                         source=source,
                         line=line)
    return value


def parse_lines(lines: list[str], kind: Kind, source: str) -> Columns:
    """Parse TREC ``lines`` (see module doc); raises on the first malformed line (in file order)."""
    lo, hi, vcol = WIDTH[kind]
    parse = parse_score if kind == "run" else parse_grade
    qs: list[str] = []
    ds: list[str] = []
    vals: list[float | int] = []
    line_no: list[int] = []
    tag = ""
    for i, text in enumerate(lines, start=1):
        parts = _TOKEN.findall(text)
        if not parts or parts[0].startswith("#"):
            continue
        if len(parts) < lo or (hi is not None and len(parts) > hi):
            raise width_error(kind, parts, text, source, i)
        if not line_no and kind == "run":
            tag = parts[5]
        qs.append(parts[0])
        ds.append(parts[2])
        vals.append(parse(parts[vcol], source, i))
        line_no.append(i)
    if not line_no:
        raise empty_error(source)
    values = np.asarray(vals, dtype=np.float64 if kind == "run" else np.int64)
    numbers = np.asarray(line_no, dtype=np.int64)
    return Columns(qs, ds, values, lambda: numbers, tag)
