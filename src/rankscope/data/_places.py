"""The pieces the data readers' errors are said in: places in a file (:class:`Where`) and the error of a place
(:func:`place_error`), so that every message of ``rankscope.data`` says itself in the reader's language.

>>> Where("record 3, evidence 2").text("zh"), Where("line 4").text("en")
('第 3 条记录，第 2 条证据', 'line 4')
>>> error = place_error(_("expected an object, got {type}", type="int"), "t.json", "record 0")
>>> print(error)
t.json: record 0: expected an object, got int
>>> print(error.text("zh"))
t.json：第 0 条记录：应为 JSON 对象，实际为 int
"""

from __future__ import annotations

from dataclasses import dataclass

from rankscope.errors import ParseError
from rankscope.i18n import N_, Message, _

__all__ = ["Where", "place_error"]

#: a numbered place (``record 3``) -> its message, filled with ``n``
_NUMBERED = {"record": N_("record {n}"), "line": N_("line {n}"), "row": N_("row {n}"), "evidence": N_("evidence {n}"),
             "entry": N_("entry {n}")}
#: a named place -> its message
_NAMED = {"corpus": N_("corpus"), "the top-level object": N_("the top-level object")}


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
        parts = []
        for part in self.where.split(", "):
            kind, __, n = part.partition(" ")
            if kind in _NUMBERED and n.isdigit():
                parts.append(_(_NUMBERED[kind], n=n).text(lang))
            elif part in _NAMED:
                parts.append(_(_NAMED[part]).text(lang))
            else:
                parts.append(part)
        return ("，" if lang == "zh" else ", ").join(parts)

    def __str__(self) -> str:
        return self.where


def place_error(what: Message | str, source: str | None, where: str | None = None, line: int | None = None
                ) -> ParseError:
    """The :class:`ParseError` of ``source`` (at ``line``) that says ``what``, after ``where`` (``record 3``) when
    given."""
    if where:
        return ParseError(_("{where}: {said}", where=Where(where), said=what), source=source, line=line)
    return ParseError(what, source=source, line=line)
