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

__all__ = ["user_error_message", "float32_notices"]


def user_error_message(exc: BaseException) -> str | None:
    """The message to print after ``rankscope: error:`` for ``exc``, or ``None`` when it is not a user mistake."""
    if isinstance(exc, RankscopeError):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return f"{exc.filename}: no such file{_missing_folder(exc.filename)}"
    if isinstance(exc, IsADirectoryError):
        return f"{exc.filename}: is a directory"
    if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    return None


def _missing_folder(filename: object) -> str:
    """`` (folder X does not exist)`` when that is why ``filename`` could not be opened or created."""
    if not filename:
        return ""
    parent = Path(str(filename)).parent
    return "" if parent.is_dir() else f" (folder {parent} does not exist)"


def float32_notices(results: Iterable[Any], lang: str = "en") -> list[str]:
    """One line per result whose ranking float32 rounding changed (``queries.float32_reordered > 0``)."""
    from rankscope.interpret.i18n import message

    out = []
    for res in results:
        n = int(getattr(res.queries, "float32_reordered", 0))
        if n:
            out.append(message("notice.float32_reordered", lang, run=res.run_name, n=n, total=res.queries.evaluated))
    return out
