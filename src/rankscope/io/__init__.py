"""Readers and writers of qrels and runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rankscope.data import Qrels, Run
from rankscope.io.convert import as_qrels, as_run
from rankscope.io.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run

__all__ = ["read_qrels", "read_run", "as_qrels", "as_run", "write_trec_qrels", "write_trec_run"]


def read_qrels(path: str | Path, format: str | None = None, **options: Any) -> Qrels:
    """Read qrels from ``path``; ``format`` defaults to ``trec``."""
    return read_trec_qrels(path, **options)


def read_run(path: str | Path, format: str | None = None, **options: Any) -> Run:
    """Read a run from ``path``; ``format`` defaults to ``trec``."""
    return read_trec_run(path, **options)
