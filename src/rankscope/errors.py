"""Exception types raised by rankscope.

Every error a user can cause derives from :class:`RankscopeError`, itself a
``ValueError``, so callers can catch either.  Messages name the offending
parameter, file or line, say what is allowed and what was given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = [
    "RankscopeError",
    "RankscopeWarning",
    "Said",
    "Items",
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


K = TypeVar("K", bound="Keyed")


class Keyed:
    """Something said to the user that can say itself in every language: an error or a warning.

    ``str(self)`` is the English message.  :meth:`keyed` attaches the id of its message in
    ``interpret/messages/*.json`` (``<family>.<key>``: ``error.`` for errors, ``warning.`` for warnings) and the
    values that fill it, so that :meth:`text` can say it in another language (the command line prints
    ``text(lang)``).
    """

    family = "error"
    key: str | None = None
    values: dict[str, Any] = {}

    def keyed(self: K, key: str, /, **values: Any) -> K:
        """This error or warning, able to say itself in every language: message ``<family>.<key>`` filled with
        ``values``.

        With ``RANKSCOPE_CHECK_MESSAGES=1`` (set for the test suite) the English message file must say exactly
        what the code says (``text("en") == str(self)`` through the message file): the two sources of one sentence
        are checked equal wherever a test reaches them.
        """
        self.key, self.values = key, values
        if os.environ.get("RANKSCOPE_CHECK_MESSAGES") == "1":
            said = self._said("en")
            if said != str(self):
                raise AssertionError(f"message {self.family}.{key} in messages/en says {said!r}; "
                                     f"the code says {str(self)!r}")
        return self

    def _where(self, lang: str) -> str:
        """Where it is (file, line) as a prefix of the message in ``lang``; none here."""
        return ""

    def text(self, lang: str = "en") -> str:
        """The message in ``lang``: the English ``str(self)``, or the keyed message's translation (a value that can
        say itself, one with a ``text(lang)`` method, is said in ``lang`` too)."""
        if lang == "en" or self.key is None:
            return str(self)
        return self._said(lang)

    def _said(self, lang: str) -> str:
        """The keyed message in ``lang``, from the message files."""
        from rankscope.interpret.i18n import message

        return self._where(lang) + message(f"{self.family}.{self.key}", lang, **self.values)


@dataclass(frozen=True)
class Said:
    """A phrase said in the reader's language: message ``key`` (``error.no_query_text``) filled with ``values`` (a
    value that can say itself, with a ``text(lang)`` method, is said in that language too).  A keyed error or
    warning takes one as a value to be said in pieces (``{where}: {said}``).

    >>> Said("warning.testset.where_line", (("n", 4),)).text("zh")
    '第 4 行'
    """

    key: str
    values: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def counted(cls, key: str, n: int) -> Said:
        """``n`` things, in the plural form ``n`` takes: message ``<key>.one`` for 1, else ``<key>.other``, filled with
        ``n``.

        >>> Said.counted("n_records", 1).text("en"), Said.counted("n_records", 3).text("en")
        ('1 record', '3 records')
        >>> Said.counted("n_records", 3).text("zh")
        '3 条记录'
        """
        return cls(f"{key}.{'one' if n == 1 else 'other'}", (("n", n),))

    def text(self, lang: str = "en") -> str:
        from rankscope.interpret.i18n import message

        return message(self.key, lang, **dict(self.values))

    def __str__(self) -> str:
        return self.text("en")


@dataclass(frozen=True)
class Items:
    """Values listed in the reader's language: ``a, b, c`` in English, ``a、b、c`` in Chinese; ``quote`` shows each
    as Python shows a string (``'a'``).  A keyed message takes one as a value; in an English f-string it reads as
    ``str(items)``.

    >>> names = Items(("ndcg@10", "map"), quote=True)
    >>> f"{names}", names.text("zh")
    ("'ndcg@10', 'map'", "'ndcg@10'、'map'")
    """

    items: tuple[Any, ...]
    quote: bool = False

    def text(self, lang: str = "en") -> str:
        shown = [repr(str(v)) if self.quote else (v.text(lang) if callable(getattr(v, "text", None)) else str(v))
                 for v in self.items]
        return ("、" if lang == "zh" else ", ").join(shown)

    def __str__(self) -> str:
        return self.text("en")

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


class RankscopeError(Keyed, ValueError):
    """Base class of every error caused by user input.

    ``str(error)`` is the English message.  An error raised with :meth:`keyed` also carries the id of its message
    in ``interpret/messages/*.json`` (``error.<key>``) and the values that fill it, so that :meth:`text` can say it in
    another language (the command line prints ``error.text(lang)``).
    """


class RankscopeWarning(Keyed, UserWarning):
    """Base class of the warnings rankscope issues (something in the input changed what is measured).

    Keyed as errors are (message ``warning.<key>``), so that the command line says them in the user's language:

    >>> w = RankscopeWarning("the retriever returned repeated ids in 2 queries (3 duplicates dropped, the first "
    ...                      "occurrence kept)").keyed("retriever.duplicates", n=2, dropped=3)
    >>> w.text("zh")
    '检索器在 2 个查询中返回了重复的编号（丢弃 3 个重复项，保留首次出现）'
    """

    family = "warning"


class ParseError(RankscopeError):
    """A malformed input file or record; carries the source and line number."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.reason = message
        where = ""
        if source is not None and line is not None:
            where = f"{source}:{line}: "
        elif source is not None:
            where = f"{source}: "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(f"{where}{message}")

    def _where(self, lang: str) -> str:
        from rankscope.interpret.i18n import message

        if self.source is not None and self.line is not None:
            return message("error.where_line", lang, source=self.source, line=self.line)
        if self.source is not None:
            return message("error.where", lang, source=self.source)
        return "" if self.line is None else message("error.where_line", lang, source="", line=self.line).lstrip()


class UnknownMetricError(RankscopeError):
    """A metric name that the registry does not know, with close matches."""

    def __init__(self, name: str, suggestions: list[str] | None = None, reason: str | None = None) -> None:
        self.name = name
        self.suggestions = list(suggestions or [])
        msg = reason or f"unknown metric {name!r}"
        if self.suggestions:
            msg += "; did you mean: " + ", ".join(self.suggestions) + "?"
        else:
            msg += "; run `rankscope metrics` to list the known metrics"
        super().__init__(msg)
        if reason is None:
            self.keyed("unknown_metric_suggest" if self.suggestions else "unknown_metric", name=name,
                       suggestions=", ".join(self.suggestions))


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

    def with_rows(self, first: int, second: int) -> DuplicateEntryError:
        self.rows = (first, second)
        return self


class DuplicateLineError(ParseError, DuplicateEntryError):
    """A duplicate (query, document) pair in a file: a :class:`ParseError` naming the file and line of the repeat."""


class WrongKindError(ParseError):
    """A file of the other kind: a run where qrels are expected, or qrels where a run is (``looks_like``)."""

    def __init__(self, message: str, *, looks_like: str, source: str | None = None, line: int | None = None) -> None:
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
        have = ", ".join(self.present) or "none"
        super().__init__(f"no metric {str(metric)!r} in this result (it holds: {have})")
