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
from rankscope.i18n import _
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
            raise ParseError(_("expected 4 fields (topic subtopic docno judgment), got {n}", n=len(fields)),
                             source=source,
                             line=no)
        try:
            int(fields[3])
        except ValueError:
            raise ParseError(_("judgment must be an integer, got {token!r}", token=fields[3]), source=source,
                             line=no) from None
        rows.append(fields)
        numbers.append(no)
    if not rows:
        raise ParseError(_("no subtopic judgment in the file"), source=source)
    cols = list(zip(*rows))
    try:
        return SubtopicQrels(cols[0], cols[1], cols[2], [int(g) for g in cols[3]])
    except DuplicateEntryError as exc:
        first, second = exc.rows or (0, 0)
        raise DuplicateLineError(_("{query} {subtopic} {doc} is judged twice (first at line {first})",
                                   query=cols[0][second], subtopic=cols[1][second], doc=cols[2][second],
                                   first=numbers[first]),
                                 source=source,
                                 line=numbers[second]) from None
