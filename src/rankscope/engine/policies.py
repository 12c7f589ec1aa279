"""How an evaluation treats its input: the :class:`Policies` value.

Every choice that changes what is measured is one field here, declared once
with its allowed values (:data:`CONSTRAINTS`), validated when the value is
built, and carried by every :class:`~rankscope.engine.EvaluationResult`:

* ``relevance_level`` — minimum grade that counts as relevant for binary metrics;
* ``missing`` — a qrels query absent from the run scores as an empty ranking
  (``"zero"``, trec_eval ``-c``) or is left out (``"ignore"``);
* ``depth`` — every ranking is cut after this many documents (trec_eval ``-M``);
* ``score_precision`` — ``"float32"`` ranks by the scores rounded to single
  precision, as trec_eval 9.0.8 does (it stores each score in a C ``float``):
  scores equal as float32 tie and are ordered by doc id; ``"float64"`` ranks by
  the full double-precision scores;
* ``duplicates`` — a (query, doc) pair given twice in a run given as a table or
  file: an error, or the best-ranked occurrence is kept (a :class:`~rankscope.data.Run`
  already built keeps the choice it was built with);
* ``ties`` — equal scores are ordered by doc id descending in byte order (trec_eval's rule);
* ``unjudged`` — a retrieved document without a judgment (absent from the qrels, or a
  negative grade) is non-relevant and keeps its rank (``"keep"``), or is removed before
  ranking (``"condense"``: Sakai's condensed lists, trec_eval ``-J``; after the ``depth`` cut).

>>> Policies(depth=10).to_dict()  # doctest: +NORMALIZE_WHITESPACE
{'relevance_level': 1, 'missing': 'zero', 'depth': 10, 'score_precision': 'float32', 'duplicates': 'error',
 'ties': 'doc_id_desc', 'unjudged': 'keep'}
>>> Policies(depth=0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankscope.errors.InvalidParameterError: the 'depth' parameter of evaluate must be an int in ... or None; got 0
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, TypedDict

from rankscope.choices import (
    DUPLICATE_POLICIES,
    MISSING_POLICIES,
    SCORE_PRECISIONS,
    TIE_BREAKS,
    UNJUDGED_POLICIES,
    DuplicatePolicy,
    MissingPolicy,
    ScorePrecisionValue,
    TieBreakValue,
    UnjudgedPolicy,
)
from rankscope.constraints import Constraint, Interval, OneOf, check

__all__ = ["Policies", "PolicyValues", "CONSTRAINTS"]

CONSTRAINTS: dict[str, tuple[Constraint, ...]] = {
    "relevance_level": (Interval(int, None, None),),
    "missing": (OneOf(MISSING_POLICIES),),
    "depth": (Interval(int, 1, None), None),
    "score_precision": (OneOf(SCORE_PRECISIONS),),
    "duplicates": (OneOf(DUPLICATE_POLICIES),),
    "ties": (OneOf(TIE_BREAKS),),
    "unjudged": (OneOf(UNJUDGED_POLICIES),),
}


_KNOWN: dict[tuple[Any, ...], Policies] = {}


class PolicyValues(TypedDict, total=False):
    """The fields of :class:`Policies` as keyword arguments (``**values: Unpack[PolicyValues]``)."""

    relevance_level: int
    missing: MissingPolicy
    depth: int | None
    score_precision: ScorePrecisionValue
    duplicates: DuplicatePolicy
    ties: TieBreakValue
    unjudged: UnjudgedPolicy


@dataclass(frozen=True)
class Policies(Mapping[str, Any]):
    """The evaluation policies (see the module doc); validated on construction.

    Read as attributes (``p.depth``); it is also a read-only mapping of its fields
    (``dict(p)``, JSON).
    """

    relevance_level: int = 1
    missing: MissingPolicy = "zero"
    depth: int | None = None
    score_precision: ScorePrecisionValue = "float32"
    duplicates: DuplicatePolicy = "error"
    ties: TieBreakValue = "doc_id_desc"
    unjudged: UnjudgedPolicy = "keep"

    def __post_init__(self) -> None:
        for f in fields(self):
            object.__setattr__(self, f.name, check(f.name, getattr(self, f.name), CONSTRAINTS[f.name], "evaluate"))

    @classmethod
    def of(cls, where: str, **values: Any) -> Policies:
        """Build from keyword values, naming ``where`` (a function) in the error message.

        The values of an evaluation are few and repeat from call to call: a valid combination is
        kept (by type and value) and its value reused.
        """
        key: tuple[Any, ...] | None = (where, *((k, type(v), v) for k, v in values.items()))
        try:
            known = _KNOWN.get(key)  # type: ignore[arg-type]
        except TypeError:  # an unhashable value: checked below, and refused
            key, known = None, None
        if known is not None:
            return known
        for name, value in values.items():
            if name not in CONSTRAINTS:
                raise TypeError(f"{where}() got an unexpected policy {name!r}")
            values[name] = check(name, value, CONSTRAINTS[name], where)
        made = cls(**values)
        if key is not None and len(_KNOWN) < 256:
            _KNOWN[key] = made
        return made

    @classmethod
    def coerce(cls, value: Policies | Mapping[str, Any] | None, where: str = "evaluate") -> Policies:
        """``value`` as :class:`Policies`: itself; the policy fields of a mapping (a result's ``to_dict()``, a job's
        stored settings: other keys are not policies and are left out, absent fields take their default); None:
        the defaults.

        >>> Policies.coerce({"metrics": ["mrr"], "unjudged": "condense"}).unjudged
        'condense'
        >>> Policies.coerce(None) == Policies()
        True
        """
        if isinstance(value, Policies):
            return value
        if value is None:
            return cls.of(where)
        return cls.of(where, **{k: value[k] for k in CONSTRAINTS if k in value})

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return asdict(self)

    # read-only mapping of the fields
    def __getitem__(self, key: str) -> Any:
        if key not in CONSTRAINTS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(CONSTRAINTS)

    def __len__(self) -> int:
        return len(CONSTRAINTS)
