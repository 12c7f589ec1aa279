"""The one-line message for a user mistake, shared by the typer commands and ``rankscope trec_eval``.

A user mistake is a :class:`~rankscope.errors.RankscopeError` or an operating
system error on a file the user named (missing, a folder, not writable...).
Anything else is a bug and is left to raise.  This module imports no typer, so
that ``rankscope trec_eval`` starts fast.

>>> user_error_message(FileNotFoundError(2, "No such file or directory", "runs.txt"))
'runs.txt: no such file'
>>> user_error_message(PermissionError(13, "Permission denied", "/etc/out.md"))
'/etc/out.md: Permission denied'
>>> user_error_message(KeyError("x")) is None
True
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rankscope.errors import RankscopeError
from rankscope.i18n import _

__all__ = ["user_error_message", "float32_notices", "print_lines"]


def print_lines(lines: Iterable[str], lang: str = "en", err: bool = False) -> None:
    """Print lines of prose wrapped to the terminal's width in display cells (:mod:`rankscope.report.wrap`: never
    inside a number, a name or ``p = 0.02``), continuation lines indented; the same in every language (``lang`` is
    the language the lines are in)."""
    from rich.console import Console

    from rankscope.report.wrap import print_prose

    console = Console(stderr=err, highlight=False)
    for line in lines:  # an indented line keeps its indentation, its continuation lines four more
        text = line.lstrip(" ")
        indent = line[:len(line) - len(text)]
        print_prose(console, text, first=indent, rest=indent + "    ")


def user_error_message(exc: BaseException, lang: str = "en") -> str | None:
    """The message to print after ``rankscope: error:`` for ``exc`` in ``lang``, or ``None`` when it is not a user
    mistake."""

    if isinstance(exc, RankscopeError):
        return exc.text(lang)
    if isinstance(exc, FileNotFoundError):
        folder = _missing_folder(exc.filename)
        if folder is None:
            return _("{path}: no such file", path=exc.filename).text(lang)
        return _("{path}: no such file (folder {folder} does not exist)", path=exc.filename, folder=folder).text(lang)
    if isinstance(exc, IsADirectoryError):
        return _("{path}: is a directory", path=exc.filename).text(lang)
    if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
        where = _("{source}: ", source=exc.filename).text(lang) if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    return None


def _missing_folder(filename: object) -> Path | None:
    """The folder of ``filename`` when it does not exist (why the file could not be opened or created)."""
    if not filename:
        return None
    parent = Path(str(filename)).parent
    return None if parent.is_dir() else parent


def float32_notices(results: Iterable[Any], lang: str = "en") -> list[str]:
    """One line per result whose ranking float32 rounding changed (``queries.float32_reordered > 0``)."""

    out = []
    for res in results:
        n = int(getattr(res.queries, "float32_reordered", 0))
        if n:
            out.append(_("note: {run}: float32 score rounding (trec_eval's rule) changed the ranking of {n} of "
                         "{total} queries: their scores equal as float32 tie and are ordered by doc id "
                         "(--score-precision float64 ranks by the full scores)", run=res.run_name, n=n,
                         total=res.queries.evaluated).text(lang))
    return out
