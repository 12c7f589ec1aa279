"""The pieces the data readers' errors are said in: places in a file (:class:`Where`), phrases (:func:`said`), and
the error of a place (:func:`place_error`), so that every message of ``rankscope.data`` says itself in the reader's
language (messages ``error.data.*`` in ``interpret/messages/<lang>/data.json``).

>>> Where("record 3, evidence 2").text("zh"), Where("line 4").text("en")
('第 3 条记录，第 2 条证据', 'line 4')
>>> error = place_error("expected an object, got int", said("error.not_an_object", type="int"), "t.json", "record 0")
>>> print(error)
t.json: record 0: expected an object, got int
>>> print(error.text("zh"))
t.json：第 0 条记录：应为 JSON 对象，实际为 int
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rankscope.errors import Keyed, ParseError, Said

__all__ = ["Where", "said", "said_of", "place_error"]

#: a numbered place (``record 3``) -> its message, filled with ``n``
_NUMBERED = {"record": "warning.testset.where_record", "line": "warning.testset.where_line",
             "row": "error.data.where_row", "evidence": "error.data.where_evidence",
             "entry": "error.data.where_entry"}
#: a named place -> its message
_NAMED = {"corpus": "error.data.where_corpus", "the top-level object": "error.data.where_top"}


@dataclass(frozen=True)
class Where:
    """A place in an input (``record 3``, ``line 4``, ``row 2``, ``record 3, evidence 2``, ``corpus``) said in the
    reader's language; anything else (a caller's own label) is shown as it is.

    >>> Where("line 4").text("zh"), Where("record 0").text("en"), Where("entry 2").text("zh")
    ('第 4 行', 'record 0', '第 2 个条目')
    """

    where: str

    def text(self, lang: str = "en") -> str:
        if lang == "en":
            return self.where
        from rankscope.interpret.i18n import message

        parts = []
        for part in self.where.split(", "):
            kind, _, n = part.partition(" ")
            if kind in _NUMBERED and n.isdigit():
                parts.append(message(_NUMBERED[kind], lang, n=n))
            elif part in _NAMED:
                parts.append(message(_NAMED[part], lang))
            else:
                parts.append(part)
        return ("，" if lang == "zh" else ", ").join(parts)

    def __str__(self) -> str:
        return self.where


def said(key: str, /, **values: Any) -> Said:
    """The phrase ``key`` (a message id) filled with ``values``, said in the reader's language.

    >>> said("error.data.query", id="q1").text("zh")
    "查询 'q1'"
    """
    return Said(key, tuple(values.items()))


def said_of(error: Keyed) -> Said:
    """What a keyed error says, as a phrase another message can hold (an unkeyed one: its English text as it is).

    >>> from rankscope.errors import RankscopeError
    >>> said_of(RankscopeError("a bare message")).text("zh")
    'a bare message'
    """
    if error.key is None:
        return said("warning.testset.problem", said=str(error))
    return Said(f"{error.family}.{error.key}", tuple(error.values.items()))


def place_error(message: str, what: Said, source: str | None, where: str | None = None,
                line: int | None = None) -> ParseError:
    """The :class:`ParseError` of ``source`` (at ``line``) that says ``message`` (``what`` in other languages), after
    ``where`` (``record 3``) when given."""
    if where:
        return ParseError(f"{where}: {message}", source=source, line=line).keyed("at_place", where=Where(where),
                                                                                  said=what)
    return ParseError(message, source=source, line=line).keyed("said", said=what)
