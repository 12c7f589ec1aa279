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
from typing import Any

from rankscope.errors import user_error_message
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
