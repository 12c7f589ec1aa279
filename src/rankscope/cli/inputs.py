"""Reading a command's qrels and run files, and saying what to type when they are swapped.

A run given as ``--qrels`` (or qrels given as a run) fails in the reader with a
:class:`~rankscope.errors.WrongKindError`; :func:`swapped_inputs` turns it into one line
that names both files and the command to type instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from rankscope.errors import RankscopeError, WrongKindError
from rankscope.i18n import _

__all__ = ["swapped_inputs"]


def _holds_qrels(path: Path) -> bool:
    from rankscope.io import read_qrels

    try:
        read_qrels(path)
    except (RankscopeError, OSError):
        return False
    return True


def _holds_run(path: Path) -> bool:
    from rankscope.io import read_run

    try:
        read_run(path)
    except (RankscopeError, OSError):
        return False
    return True


def _same(source: str | None, path: Path) -> bool:
    return source is not None and (source == str(path) or Path(source) == path)


@contextmanager
def swapped_inputs(qrels: Path | None, runs: Sequence[Path], retype: Callable[[Path, Path], str]) -> Iterator[None]:
    """Turn a run read as qrels, or qrels read as a run, into an error saying what to type.

    ``retype(qrels, run)`` is the command line with the two files in their places.
    """
    try:
        yield
    except WrongKindError as exc:
        if qrels is not None and exc.looks_like == "run" and _same(exc.source, qrels):
            judgments = next((r for r in runs if _holds_qrels(r)), None)
            if judgments is not None:
                raise RankscopeError(_("the qrels and the run are swapped: {run} is a run and {qrels} holds "
                                       "judgments; type: {retype}", run=qrels, qrels=judgments,
                                       retype=retype(judgments, qrels))) from None
            raise RankscopeError(_("{run} is a run (query Q0 doc rank score tag), not qrels; give the judgments as "
                                   "qrels: {retype}", run=qrels, retype=retype(Path("QRELS"), qrels))) from None
        run = next((r for r in runs if _same(exc.source, r)), None)
        if exc.looks_like == "qrels" and run is not None:
            if qrels is not None and _holds_run(qrels):
                raise RankscopeError(_("the qrels and the run are swapped: {run} is a run and {qrels} holds "
                                       "judgments; type: {retype}", run=qrels, qrels=run,
                                       retype=retype(run, qrels))) from None
            raise RankscopeError(_("{qrels} holds judgments (query iter doc relevance), not a run; give them as "
                                   "qrels: {retype}", qrels=run, retype=retype(run, Path("RUN")))) from None
        raise
