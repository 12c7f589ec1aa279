"""Read subtopic judgments in ndeval's format: ``topic subtopic docno judgment``, one per line.

The file looks like TREC qrels, but its second column is the subtopic (intent) the document is
judged for, not an unused iteration number: the TREC Web track's diversity qrels
(``qrels.diversity``) and what ``ndeval`` and ``pyndeval`` read.  Blank lines and lines starting
with ``#`` are skipped; a ``.gz`` file is read as gzip.  The judgment must be an integer.

>>> import os, tempfile
>>> p = os.path.join(tempfile.mkdtemp(), "qrels.diversity")
>>> _ = open(p, "w").write("1 1 d1 1\\n1 2 d1 0\\n1 2 d2 1\\n")
>>> read_subtopic_qrels(p)
SubtopicQrels(1 queries, 3 judgments)
"""

from __future__ import annotations

from pathlib import Path

from rankscope.data.subtopics import SubtopicQrels
from rankscope.errors import DuplicateEntryError, DuplicateLineError, ParseError
from rankscope.io._source import decode, read_bytes, text_lines

__all__ = ["read_subtopic_qrels"]


def read_subtopic_qrels(path: str | Path) -> SubtopicQrels:
    """The subtopic judgments of an ndeval qrels file (errors name the file and line)."""
    source = str(path)
    lines = text_lines(decode(read_bytes(path), source))
    rows: list[list[str]] = []
    numbers: list[int] = []
    for no, line in enumerate(lines, start=1):  # a qrels file: thousands of lines, read once
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            raise ParseError(f"expected 4 fields (topic subtopic docno judgment), got {len(fields)}",
                             source=source, line=no).keyed("io.subtopic_fields", n=len(fields))
        try:
            int(fields[3])
        except ValueError:
            raise ParseError(f"judgment must be an integer, got {fields[3]!r}", source=source, line=no).keyed(
                "io.subtopic_grade", token=fields[3]) from None
        rows.append(fields)
        numbers.append(no)
    if not rows:
        raise ParseError("no subtopic judgment in the file", source=source).keyed("io.subtopic_none")
    cols = list(zip(*rows))
    try:
        return SubtopicQrels(cols[0], cols[1], cols[2], [int(g) for g in cols[3]])
    except DuplicateEntryError as exc:
        first, second = exc.rows or (0, 0)
        raise DuplicateLineError(f"{cols[0][second]} {cols[1][second]} {cols[2][second]} is judged twice (first "
                                 f"at line {numbers[first]})", source=source, line=numbers[second]).keyed(
            "io.subtopic_twice", query=cols[0][second], subtopic=cols[1][second], doc=cols[2][second],
            first=numbers[first]) from None
