"""Reading a command's qrels and run files, and saying what to type when they are swapped.

A run given as ``--qrels`` (or qrels given as a run) fails in the reader with a
:class:`~rankscope.errors.WrongKindError`; :func:`swapped_inputs` turns it into one line
that names both files and the command to type instead.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence
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


def _typed(path: Path) -> str | None:
    """How ``path`` was typed on the command line running (None when it is not there, e.g. a glob's expansion)."""
    from rankscope.cli.app import COMMAND_LINE

    for token in COMMAND_LINE:
        value = token.split("=", 1)[1] if token.startswith("--") and "=" in token else token
        if _same(value, path):
            return value
    return None


def _swapped(a: Path, b: Path) -> str | None:
    """The command line running with the files ``a`` and ``b`` in each other's place (None: not both typed)."""
    from rankscope.cli.app import COMMAND_LINE

    ta, tb = _typed(a), _typed(b)
    if ta is None or tb is None:
        return None

    def fix(token: str) -> str:
        head, eq, value = token.partition("=") if token.startswith("--") and "=" in token else ("", "", token)
        value = tb if value == ta else ta if value == tb else value
        return f"{head}{eq}{value}"

    return shlex.join(["rankscope", *map(fix, COMMAND_LINE)])


def _moved_to_qrels(path: Path, runs_left: int, min_runs: int) -> str | None:
    """The command line running with ``path`` moved from the runs to ``--qrels`` (None when the runs left are too
    few for the command, or it was not typed)."""
    from rankscope.cli.app import COMMAND_LINE

    typed = _typed(path)
    if typed is None or runs_left < min_runs:
        return None
    rest = [t for t in COMMAND_LINE if t != typed]
    return shlex.join(["rankscope", *rest, "--qrels", typed])


@contextmanager
def swapped_inputs(qrels: Path | None, runs: Sequence[Path], *, min_runs: int = 1) -> Iterator[None]:
    """Turn a run read as qrels, or qrels read as a run, into an error saying what to type.

    The command suggested is the one typed, with the files in their places (and every other option as typed), so
    that it runs; when no such command exists (no judgments given, too few runs left) the error says what to give
    in words.  ``min_runs``: the runs the command needs.
    """
    try:
        yield
    except WrongKindError as exc:
        if qrels is not None and exc.looks_like == "run" and _same(exc.source, qrels):
            judgments = next((r for r in runs if _holds_qrels(r)), None)
            fixed = None if judgments is None else _swapped(qrels, judgments)
            if judgments is not None and fixed is not None:
                raise RankscopeError(_("the qrels and the run are swapped: {run} is a run and {qrels} holds "
                                       "judgments; type: {retype}", run=qrels, qrels=judgments, retype=fixed)) from None
            raise RankscopeError(_("{run} is a run (query Q0 doc rank score tag), not qrels; give the judgments "
                                   "(query iter doc relevance) as qrels", run=qrels)) from None
        run = next((r for r in runs if _same(exc.source, r)), None)
        if exc.looks_like == "qrels" and run is not None:
            if qrels is not None and _holds_run(qrels):
                fixed = _swapped(qrels, run)
                if fixed is not None:
                    raise RankscopeError(_("the qrels and the run are swapped: {run} is a run and {qrels} holds "
                                           "judgments; type: {retype}", run=qrels, qrels=run, retype=fixed)) from None
            fixed = None if qrels is not None else _moved_to_qrels(run, len(runs) - 1, min_runs)
            if fixed is not None:
                raise RankscopeError(_("{qrels} holds judgments (query iter doc relevance), not a run; give them "
                                       "as qrels: {retype}", qrels=run, retype=fixed)) from None
            raise RankscopeError(_("{qrels} holds judgments (query iter doc relevance), not a run; give a run file "
                                   "(query Q0 doc rank score tag) in its place", qrels=run)) from None
        raise
