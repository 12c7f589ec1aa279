"""Declared parameter constraints: one declaration drives the check and the error message.

A setting declares what it accepts as a tuple of constraints (any one may hold),
as scikit-learn's ``validate_params`` does; :func:`check` tests a value against
it, returns the value normalised (a numpy integer becomes an ``int``) or raises
:class:`~rankscope.errors.InvalidParameterError` with a message generated from
the same declaration.  The description is said in the reader's language too: every piece of it is a
:class:`~rankscope.i18n.Message` phrase (:func:`said`), so a setting checked here reads in Chinese in a Chinese
session.

>>> check("depth", 10, (Interval(int, 1, None), None), "evaluate")
10
>>> import numpy as np
>>> check("depth", np.int64(5), (Interval(int, 1, None), None), "evaluate")
5
>>> check("depth", 0, (Interval(int, 1, None), None), "evaluate")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankscope.errors.InvalidParameterError: the 'depth' parameter of evaluate must be an int ... or None; got 0
>>> check("missing", "none", (OneOf(("zero", "ignore")),), "evaluate")
Traceback (most recent call last):
...
rankscope.errors.InvalidParameterError: the 'missing' parameter of evaluate must be one of 'zero', 'ignore'; got 'none'
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, Union

from rankscope.errors import InvalidParameterError, Items, Message
from rankscope.i18n import N_, _

__all__ = ["Interval", "OneOf", "Kind", "Constraint", "check", "describe", "said"]


@dataclass(frozen=True)
class Interval:
    """A number of type ``kind`` (``int`` or ``float``) between ``left`` and ``right`` (None: unbounded).

    Integers accept numpy integers but not booleans; floats accept any real number but not booleans.
    """

    kind: type
    left: float | None
    right: float | None
    closed: Literal["both", "left", "right", "neither"] = "both"

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool):
            return False
        if self.kind is int:
            if not isinstance(value, numbers.Integral):
                return False
        elif not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
            return False
        v = float(value)
        if self.left is not None and (v < self.left or (v == self.left and self.closed in ("right", "neither"))):
            return False
        return not (self.right is not None and (v > self.right or (v == self.right and self.closed in ("left",
                                                                                                         "neither"))))

    def normalise(self, value: Any) -> Any:
        return int(value) if self.kind is int else float(value)

    def said(self) -> Message:
        """This interval in words, in the reader's language (``an int in the range [1, inf)``)."""
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        lo = "-inf" if self.left is None else f"{self.left:g}"
        hi = "inf" if self.right is None else f"{self.right:g}"
        span = f"{lb}{lo}, {hi}{rb}"
        return _("an int in the range {range}", range=span) if self.kind is int else \
            _("a float in the range {range}", range=span)

    def __str__(self) -> str:
        return str(self.said())


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of values (strings are compared exactly)."""

    values: tuple[Any, ...]

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.values  # a str enum member too

    def normalise(self, value: Any) -> Any:
        return value.value if isinstance(value, Enum) else value

    def said(self) -> Message:
        """These values in words, in the reader's language (``one of 'zero', 'ignore'``)."""
        return _("one of {values}", values=Items(tuple(repr(v) for v in self.values)))

    def __str__(self) -> str:
        return str(self.said())


#: the kinds of value a :class:`Kind` names, in words
KINDS: dict[str, str] = {
    "path": N_("a path (str or pathlib.Path)"),
    "bool": N_("True or False"),
    "str": N_("a string"),
    "chunk_to_doc": N_("a chunk id pattern (naming doc_id), 'metadata:KEY', a dict or a function"),
    "any": N_("any value"),
}


@dataclass(frozen=True)
class Kind:
    """A value of one of ``types`` (``bool`` only when listed; any callable too with ``call``), described by
    ``words`` (a key of :data:`KINDS`: ``a path``, ``True or False`` ...).

    >>> Kind((str,), "str").accepts("x"), Kind((int,), "str").accepts(True), Kind((), "any", call=True).accepts(len)
    (True, False, True)
    """

    types: tuple[type, ...]
    words: str
    call: bool = False

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) and bool not in self.types:
            return False
        return isinstance(value, self.types) or (self.call and callable(value))

    def normalise(self, value: Any) -> Any:
        return value

    def said(self) -> Message:
        return _(KINDS[self.words])

    def __str__(self) -> str:
        return str(self.said())


Constraint = Union[Interval, OneOf, Kind, None]


def said(constraints: tuple[Constraint, ...]) -> Message:
    """The declared constraints in words, said in the reader's language (``None`` reads "None").

    >>> said((Interval(int, 1, None), None)).text("zh")
    '[1, inf) 范围内的整数或 None'
    """
    parts = tuple(_("None") if c is None else c.said() for c in constraints)
    return parts[0] if len(parts) == 1 else _("{first} or {last}", first=Items(parts[:-1]), last=parts[-1])


def describe(constraints: tuple[Constraint, ...]) -> str:
    """The declared constraints in words, in English (``None`` reads "None").

    >>> describe((Interval(int, 1, None), None))
    'an int in the range [1, inf) or None'
    """
    return str(said(constraints))


def check(name: str, value: Any, constraints: tuple[Constraint, ...], where: str) -> Any:
    """``value`` normalised when one of ``constraints`` accepts it; else a clear error (see the module doc)."""
    for c in constraints:
        if c is None:
            if value is None:
                return None
        elif c.accepts(value):
            return c.normalise(value)
    allowed = said(constraints)
    raise InvalidParameterError(_("the {name!r} parameter of {where} must be {allowed}; got {value!r}", name=name,
                                  where=where, allowed=allowed, value=value))
