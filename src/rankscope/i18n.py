"""What rankscope says to a user, in English or in the reader's language (gettext).

English is written once, in the code, as the message id: ``_("test set {name}", name="dev")`` makes a
:class:`Message`, a value (template + values) that stays English for ``str()`` (a library exception's text, a log)
and is said in another language when it is shown (:meth:`Message.text`).  Plural forms go through
:func:`ngettext`; the same English meaning two things takes a context (:func:`pgettext`).  Strings in data tables
are marked with :func:`N_` and looked up with :func:`gettext`.

The translations are one gettext catalog per language, ``locale/<lang>/LC_MESSAGES/rankscope.po`` beside this module
(compiled to ``.mo``; ``make catalog`` extracts, updates and compiles it with Babel).  A message without a
translation, or whose translation is fuzzy (its English changed since it was translated), is said in English.

This module imports nothing of rankscope: everything else may import it.

>>> str(_("test set {name}", name="dev")), _("test set {name}", name="dev").text("zh")
('test set dev', '测试集 dev')
>>> ngettext("{n} query has no judgment", "{n} queries have no judgment", 3).text("zh")
'3 个查询没有任何标注'
>>> [str(ngettext("{n} query", "{n} queries", n)) for n in (1, 2)]
['1 query', '2 queries']
>>> Items(("ndcg@10", "map"), quote=True).text("zh")
"'ndcg@10'、'map'"
"""

from __future__ import annotations

import gettext as _gettext
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any, Protocol, runtime_checkable

__all__ = ["DOMAIN", "LANGS", "Items", "Message", "Saying", "NC_", "N_", "_", "catalog", "colon", "gettext",
           "install_gettext", "ngettext", "paren", "pgettext", "say", "template_callables"]

#: the languages rankscope speaks; English is the code's own
LANGS: tuple[str, ...] = ("en", "zh")
#: the gettext domain of rankscope's catalog
DOMAIN = "rankscope"


@runtime_checkable
class Saying(Protocol):
    """Something that can say itself in a language: a :class:`Message`, :class:`Items`, a rankscope error."""

    def text(self, lang: str = "en") -> str: ...


@cache
def catalog(lang: str) -> _gettext.NullTranslations:
    """The compiled catalog of ``lang`` (English, or a language without one: the messages as written)."""
    if lang == "en":
        return _gettext.NullTranslations()
    path = resources.files(__name__.rpartition(".")[0] or "rankscope").joinpath(
        "locale", lang, "LC_MESSAGES", f"{DOMAIN}.mo")
    if not path.is_file():
        return _gettext.NullTranslations()
    with path.open("rb") as handle:
        return _gettext.GNUTranslations(handle)


def say(value: Any, lang: str = "en") -> Any:
    """``value`` said in ``lang`` if it can say itself (a ``text(lang)`` method), else ``value`` unchanged."""
    return value.text(lang) if isinstance(value, Saying) and not isinstance(value, type) else value


class Message:
    """A sentence said to a user: its English template (the message id) and the values that fill it.

    ``str(message)`` is the English; :meth:`text` says it in a language, each value that can say itself said in
    that language too.  Two messages are equal when they say the same thing (same template, same values).
    """

    __slots__ = ("context", "msgid", "n", "plural", "values")

    def __init__(self, msgid: str, values: Mapping[str, Any] | None = None, *, plural: str | None = None,
                 n: int | None = None, context: str | None = None) -> None:
        self.msgid = msgid
        self.plural = plural
        self.n = n
        self.context = context
        self.values = dict(values or {})

    def template(self, lang: str = "en") -> str:
        """The template in ``lang`` (the English one where the catalog has no translation)."""
        table = catalog(lang)
        if self.plural is not None:
            count = 1 if self.n is None else self.n
            if self.context is not None:
                return table.npgettext(self.context, self.msgid, self.plural, count)
            return table.ngettext(self.msgid, self.plural, count)
        if self.context is not None:
            return table.pgettext(self.context, self.msgid)
        return table.gettext(self.msgid)

    def text(self, lang: str = "en") -> str:
        """The message in ``lang``, filled."""
        template = self.template(lang)
        if not self.values:
            return template
        return template.format(**{key: say(value, lang) for key, value in self.values.items()})

    def __str__(self) -> str:
        return self.text("en")

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"Message({str(self)!r})"

    def to_dict(self) -> dict[str, Any]:
        """JSON data from which :meth:`from_dict` makes the message again (to be said later in any language).

        >>> m = ngettext("{n} attempt", "{n} attempts", 3)
        >>> Message.from_dict(m.to_dict()).text("zh"), Message.from_dict(m.to_dict()) == m
        ('3 次尝试', True)
        """
        out: dict[str, Any] = {"msgid": self.msgid, "values": {k: _plain(v) for k, v in self.values.items()}}
        out.update({k: v for k, v in (("plural", self.plural), ("n", self.n), ("context", self.context))
                    if v is not None})
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        """The message :meth:`to_dict` wrote."""
        return cls(str(data["msgid"]), {k: _unplain(v) for k, v in (data.get("values") or {}).items()},
                   plural=data.get("plural"), n=data.get("n"), context=data.get("context"))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return (self.msgid, self.plural, self.n, self.context, self.values) == \
            (other.msgid, other.plural, other.n, other.context, other.values)

    __hash__ = None  # type: ignore[assignment]  # values may be lists


def _plain(value: Any) -> Any:
    """A message's value as JSON data (a message or a list of items tagged, so that it says itself again)."""
    if isinstance(value, Message):
        return {"message": value.to_dict()}
    if isinstance(value, Items):
        return {"items": [_plain(v) for v in value.items], "quote": value.quote}
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _unplain(value: Any) -> Any:
    if isinstance(value, Mapping) and "message" in value:
        return Message.from_dict(value["message"])
    if isinstance(value, Mapping) and "items" in value:
        return Items((_unplain(v) for v in value["items"]), quote=bool(value.get("quote")))
    return value


def _(msgid: str, /, **values: Any) -> Message:
    """The message ``msgid`` (its English template) filled with ``values``."""
    return Message(msgid, values)


def ngettext(singular: str, plural: str, n: int, /, **values: Any) -> Message:
    """The message in the plural form ``n`` takes (``n`` also fills ``{n}``).

    >>> str(ngettext("{n} record", "{n} records", 1)), ngettext("{n} record", "{n} records", 3).text("zh")
    ('1 record', '3 条记录')
    """
    return Message(singular, {"n": n, **values}, plural=plural, n=n)


def pgettext(context: str, msgid: str, /, **values: Any) -> Message:
    """The message ``msgid`` in ``context``: the same English meaning something else elsewhere (a column header
    ``retrieved`` and the level ``retrieved``) can be translated apart."""
    return Message(msgid, values, context=context)


def N_(msgid: str, /) -> str:
    """Mark ``msgid`` for the catalog without translating it (a string in a data table, said later by
    :func:`gettext`)."""
    return msgid


def NC_(context: str, msgid: str, /) -> str:
    """Mark ``msgid`` in ``context`` for the catalog without translating it (said later by :func:`gettext` with that
    context)."""
    return msgid


def gettext(msgid: str, lang: str = "en", /, context: str | None = None) -> str:
    """The translation of ``msgid`` (a string marked with :func:`N_`, or a data file's text) in ``lang``.

    >>> gettext("best", "zh")
    '最佳'
    """
    table = catalog(lang)
    return table.pgettext(context, msgid) if context is not None else table.gettext(msgid)


def template_callables(lang: str) -> dict[str, Any]:
    """``gettext`` (also ``_``), ``ngettext`` and ``pgettext`` that say a template's messages in ``lang``.  The
    template writes ``{{ _("{n} runs", n=3) }}``: the English is the message id, as in the code.

    >>> template_callables("zh")["_"]("best")
    '最佳'
    """
    from jinja2 import Undefined

    def defined(values: dict[str, Any]) -> dict[str, Any]:
        # a value the template does not have (a missing key) is said as nothing, as Jinja prints it
        return {k: "" if isinstance(v, Undefined) else v for k, v in values.items()}

    def say_gettext(msgid: str, **values: Any) -> str:
        return _(msgid, **defined(values)).text(lang)

    return {"_": say_gettext, "gettext": say_gettext,
            "ngettext": lambda one, other, n, **values: ngettext(one, other, n, **defined(values)).text(lang),
            "pgettext": lambda context, msgid, **values: pgettext(context, msgid, **defined(values)).text(lang)}


def install_gettext(env: Any, lang: str) -> Any:
    """Jinja's i18n extension on ``env`` (a ``jinja2.Environment`` of one language) with the callables of ``lang``
    (:func:`template_callables`); returns ``env``.  One environment per language: a request never changes the
    callables another is rendering with.

    >>> import jinja2
    >>> install_gettext(jinja2.Environment(), "zh").from_string('{{ _("best") }}').render()
    '最佳'
    """
    env.add_extension("jinja2.ext.i18n")
    said = template_callables(lang)
    env.install_gettext_callables(said["gettext"], said["ngettext"], newstyle=False, pgettext=said["pgettext"])
    return env


class Items:
    """Values listed in the reader's language: ``a, b, c`` in English, ``a、b、c`` in Chinese; ``quote`` shows each
    as Python shows a string (``'a'``).  A message takes one as a value; in an English f-string it reads as
    ``str(items)``.

    >>> names = Items(("ndcg@10", "map"), quote=True)
    >>> f"{names}", names.text("zh")
    ("'ndcg@10', 'map'", "'ndcg@10'、'map'")
    """

    __slots__ = ("items", "quote")

    def __init__(self, items: Iterable[Any], quote: bool = False) -> None:
        self.items = tuple(items)
        self.quote = quote

    def text(self, lang: str = "en") -> str:
        shown = [repr(str(value)) if self.quote else str(say(value, lang)) for value in self.items]
        return ("、" if lang == "zh" else ", ").join(shown)

    def __str__(self) -> str:
        return self.text("en")

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"Items({self.items!r}, quote={self.quote})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Items) and (self.items, self.quote) == (other.items, other.quote)

    def __hash__(self) -> int:
        return hash((self.items, self.quote))


def paren(text: str, lang: str = "en") -> str:
    """``text`` as an aside after a word: `` (text)`` in English, ``（text）`` (full width, no space) in Chinese.

    >>> "bm25" + paren("baseline"), "bm25" + paren("基线", "zh")
    ('bm25 (baseline)', 'bm25（基线）')
    """
    return f"（{text}）" if lang == "zh" else f" ({text})"


def colon(lang: str = "en") -> str:
    """The colon after a label: ``": "`` in English, ``"："`` (full width) in Chinese."""
    return "：" if lang == "zh" else ": "
