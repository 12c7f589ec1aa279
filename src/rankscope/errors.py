"""Exception types raised by rankscope.

Every error a user can cause derives from :class:`RankscopeError`, itself a
``ValueError``, so callers can catch either.  Messages name the offending
parameter, file or line, say what is allowed and what was given.

An error or a warning holds its message as a :class:`~rankscope.i18n.Message` (``_("...", **values)``): ``str(error)``
is the English, :meth:`RankscopeError.text` says it in a language (the command line, the service and the reports print
``error.text(lang)``).  A plain ``str`` message is English only.

This module imports only :mod:`rankscope.i18n`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from rankscope.i18n import Items, Message, _, say

__all__ = [
    "user_error_message",
    "RankscopeError",
    "RankscopeWarning",
    "Items",
    "Message",
    "ParseError",
    "UnknownMetricError",
    "MissingExtraError",
    "InvalidParameterError",
    "DuplicateEntryError",
    "DuplicateLineError",
    "WrongKindError",
    "EmptyInputError",
    "NoOverlapError",
    "NotFoundError",
    "MetricNotFoundError",
]


_D = TypeVar("_D", bound="DuplicateEntryError")


class _Said:
    """What an error and a warning share: the message they hold, said in a language."""

    message: Message | str = ""

    def _where(self, lang: str) -> str:
        """Where it is (file, line) as a prefix of the message in ``lang``; none here."""
        return ""

    def text(self, lang: str = "en") -> str:
        """The message in ``lang`` (a value that can say itself, one with a ``text(lang)`` method, is said in ``lang``
        too); English where the catalog has no translation."""
        return self._where(lang) + str(say(self.message, lang))


class RankscopeError(_Said, ValueError):
    """Base class of every error caused by user input.

    ``message`` is a :class:`~rankscope.i18n.Message` (said in every language) or an English ``str``; ``str(error)``
    is the English.

    >>> error = RankscopeError(_("metric {name!r} takes no cutoff, got @{cutoff}", name="map", cutoff=5))
    >>> str(error), error.text("zh")
    ("metric 'map' takes no cutoff, got @5", "指标 'map' 不接受截断值，实际给了 @5")
    """

    def __init__(self, message: Message | str = "", *args: Any) -> None:
        self.message = message
        super().__init__(str(message), *args)


class RankscopeWarning(_Said, UserWarning):
    """Base class of the warnings rankscope issues (something in the input changed what is measured); said in the
    user's language as errors are:

    >>> from rankscope.i18n import ngettext
    >>> w = RankscopeWarning(ngettext("{n} query has no judgment", "{n} queries have no judgment", 2))
    >>> w.text("zh")
    '2 个查询没有任何标注'
    """

    def __init__(self, message: Message | str = "", *args: Any) -> None:
        self.message = message
        super().__init__(str(message), *args)


class ParseError(RankscopeError):
    """A malformed input file or record; carries the source and line number (said before the message:
    ``runs.txt:3: ...``)."""

    def __init__(self, message: Message | str, *, source: str | None = None, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.reason = message
        super().__init__(message)
        self.args = (self._where("en") + str(message),)

    def _where(self, lang: str) -> str:
        if self.source is not None and self.line is not None:
            return _("{source}:{line}: ", source=self.source, line=self.line).text(lang)
        if self.source is not None:
            return _("{source}: ", source=self.source).text(lang)
        return "" if self.line is None else _("line {line}: ", line=self.line).text(lang)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class UnknownMetricError(RankscopeError):
    """A metric name that the registry does not know, with close matches."""

    def __init__(self, name: str, suggestions: list[str] | None = None,
                 reason: Message | RankscopeError | str | None = None) -> None:
        self.name = name
        self.suggestions = list(suggestions or [])
        found = Items(self.suggestions)
        if reason is None:
            message = _("unknown metric {name!r}; did you mean: {suggestions}?", name=name, suggestions=found) \
                if self.suggestions else \
                _("unknown metric {name!r}; run `rankscope metrics` to list the known metrics", name=name)
        else:
            message = _("{reason}; did you mean: {suggestions}?", reason=reason, suggestions=found) \
                if self.suggestions else _("{reason}; run `rankscope metrics` to list the known metrics", reason=reason)
        super().__init__(message)


class MissingExtraError(RankscopeError):
    """A feature needs an optional dependency that is not installed; the message names the extra to install."""


class InvalidParameterError(RankscopeError):
    """A parameter outside its allowed range or of the wrong type."""


class DuplicateEntryError(RankscopeError):
    """A (query, document) pair that occurs twice in a run or qrels.

    ``rows`` holds the 0-based row numbers of the first and the repeated entry, so
    that a file reader can turn them into line numbers.
    """

    rows: tuple[int, int] | None = None

    def with_rows(self: _D, first: int, second: int) -> _D:
        self.rows = (first, second)
        return self


class DuplicateLineError(ParseError, DuplicateEntryError):
    """A duplicate (query, document) pair in a file: a :class:`ParseError` naming the file and line of the repeat."""


class WrongKindError(ParseError):
    """A file of the other kind: a run where qrels are expected, or qrels where a run is (``looks_like``)."""

    def __init__(self, message: Message | str, *, looks_like: str, source: str | None = None,
                 line: int | None = None) -> None:
        super().__init__(message, source=source, line=line)
        self.looks_like = looks_like


class EmptyInputError(RankscopeError):
    """An input that holds no entries at all."""


class NoOverlapError(RankscopeError):
    """A run and qrels that share no query."""


class NotFoundError(RankscopeError, KeyError):
    """A key (metric, query) asked of a result that does not hold it.

    Also a ``KeyError``, so code that looked results up in a dict keeps working.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class MetricNotFoundError(NotFoundError):
    """A metric asked of a result that does not hold it; names the metrics it holds."""

    def __init__(self, metric: object, present: tuple[str, ...] | list[str]) -> None:
        self.metric = metric
        self.present = tuple(present)
        held: Items | Message = Items(self.present) if self.present else _("none")
        super().__init__(_("no metric {metric!r} in this result (it holds: {held})", metric=str(metric), held=held))


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
