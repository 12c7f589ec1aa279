"""Declared parameter constraints: one declaration drives the check and the error message.

A setting declares what it accepts as a tuple of constraints (any one may hold),
as scikit-learn's ``validate_params`` does; :func:`check` tests a value against
it, returns the value normalised (a numpy integer becomes an ``int``) or raises
:class:`~rankscope.errors.InvalidParameterError` with a message generated from
the same declaration.

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

from rankscope.errors import InvalidParameterError

__all__ = ["Interval", "OneOf", "Constraint", "check", "describe"]


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

    def __str__(self) -> str:
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        lo = "-inf" if self.left is None else f"{self.left:g}"
        hi = "inf" if self.right is None else f"{self.right:g}"
        return f"{'an int' if self.kind is int else 'a float'} in the range {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of values (strings are compared exactly)."""

    values: tuple[Any, ...]

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.values  # a str enum member too

    def normalise(self, value: Any) -> Any:
        return value.value if isinstance(value, Enum) else value

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


Constraint = Union[Interval, OneOf, None]


def describe(constraints: tuple[Constraint, ...]) -> str:
    """The declared constraints in words (``None`` reads "None").

    >>> describe((Interval(int, 1, None), None))
    'an int in the range [1, inf) or None'
    """
    parts = ["None" if c is None else str(c) for c in constraints]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def check(name: str, value: Any, constraints: tuple[Constraint, ...], where: str) -> Any:
    """``value`` normalised when one of ``constraints`` accepts it; else a clear error (see the module doc)."""
    for c in constraints:
        if c is None:
            if value is None:
                return None
        elif c.accepts(value):
            return c.normalise(value)
    raise InvalidParameterError(f"the {name!r} parameter of {where} must be {describe(constraints)}; got {value!r}")
