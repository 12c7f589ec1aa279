"""Readers and writers of qrels and runs.

:func:`read_qrels` / :func:`read_run` read TREC, JSON, JSON Lines, CSV/TSV,
Parquet, Arrow IPC / Feather files and BEIR folders (format from the file name
or content, or ``format=``); :func:`as_qrels` / :func:`as_run` convert in-memory
objects (dicts, ranked lists, DataFrames, Arrow tables, ranx objects,
ir_measures records); :func:`write_qrels` / :func:`write_run` write them back;
:func:`read_subtopic_qrels` reads ndeval's subtopic judgments (diversity measures).
See ``docs/io.md``.
"""

from __future__ import annotations

from rankscope.io.convert import as_qrels, as_run
from rankscope.io.formats import (
    QRELS_FORMATS,
    RUN_FORMATS,
    detect_format,
    read_qrels,
    read_run,
    write_qrels,
    write_run,
)
from rankscope.io.subtopics import read_subtopic_qrels
from rankscope.io.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run

__all__ = [
    "QRELS_FORMATS",
    "RUN_FORMATS",
    "as_qrels",
    "as_run",
    "detect_format",
    "read_qrels",
    "read_run",
    "read_subtopic_qrels",
    "read_trec_qrels",
    "read_trec_run",
    "write_qrels",
    "write_run",
    "write_trec_qrels",
    "write_trec_run",
]
