"""What a metric is: the :class:`Measure` value and its :class:`MeasureSpec`.

A :class:`Measure` is an immutable, hashable value: a registry name, an optional
rank cutoff and typed parameters (only non-default values are stored, sorted by
name), so ``parse(str(m)) == m`` and two spellings of one metric are equal.
A :class:`MeasureSpec` describes a metric family once: its parameters, cutoff
rule, bounds, aggregation, trec_eval / ir_measures names (with trec_eval's
``name.PARAMS`` grammar, :class:`TrecName`) and the vectorized kernel that
computes it.  Everything user-facing (parser, trec_eval front end, CLI choices,
API validation, docs, report labels) is derived from the specs in the registry.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from rankscope.errors import InvalidParameterError, Items, Message
from rankscope.i18n import NC_, _, gettext, pgettext
from rankscope.measures.kernel_input import KernelInput

__all__ = ["Measure", "MeasureSpec", "Param", "Kernel", "CutoffRule", "Aggregate", "TrecName", "TrecSyntax",
           "STD_CUTS", "TENTHS"]

Kernel = Callable[[KernelInput, "Measure"], np.ndarray]
"""A metric kernel: the kernel input of every evaluated query and the measure -> one value per query."""
CutoffRule = Literal["none", "optional", "required"]
Aggregate = Literal["mean", "sum", "gmean", "count", "median_found", "none"]
TrecSyntax = Literal["none", "cutoffs", "values", "list", "text"]

STD_CUTS: tuple[float, ...] = (5, 10, 15, 20, 30, 100, 200, 500, 1000)  # trec_eval's default cutoffs
TENTHS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class TrecName:
    """A trec_eval name of a metric family and its ``-m name.PARAMS`` grammar (trec_eval 9.0.8).

    ``syntax`` says what the text after the dot means and how trec_eval labels the result:

    * ``none``: no parameter (``map``); a given one is ignored, as trec_eval does;
    * ``cutoffs``: integer cutoffs read like C's ``atol`` (``ndcg_cut.10,23.4`` -> 10, 23),
      one measure per cutoff, labelled ``name_k``; ``name_k`` is also a name (``P_5``);
    * ``values``: numbers given to parameter ``params[0]``, one measure per value,
      labelled ``name_%3.2f`` (``iprec_at_recall..1,.2`` -> ``iprec_at_recall_0.10``, ``_0.20``);
    * ``list``: up to ``len(params)`` numbers given to ``params`` in order (exactly ``arity``
      when set), one measure labelled ``name_PARAMS`` verbatim (``utility.2,-1,0,0``);
    * ``text``: the whole text is parameter ``params[0]`` (``ndcg.1=3,2=9``), labelled verbatim.

    ``default`` are trec_eval's cutoffs / values when none is given (``P`` -> ``P_5 ... P_1000``);
    ``options`` maps a parameter to the trec_eval option that sets it (``n_docs`` <- ``-N``).
    """

    name: str
    syntax: TrecSyntax = "none"
    params: tuple[str, ...] = ()
    default: tuple[float, ...] = ()
    arity: int | None = None
    options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Param:
    """A typed metric parameter: name, type (int / float / str / bool), default and doc.

    A ``bool`` is written ``True`` / ``False`` (any case), ``1`` / ``0`` or ``yes`` / ``no``
    (ir_measures' ``P(judged_only=True)@5``); a ``str`` may be quoted (``nDCG(dcg='exp-log2')``).

    >>> Param("judged_only", bool, False, "").coerce("P", "True"), Param("d", str, "", "").coerce("nDCG", "'exp-log2'")
    (True, 'exp-log2')
    """

    name: str
    type: type
    default: Any
    doc: str
    minimum: float | None = None
    validate: Callable[[Any], object] | None = None  # raises InvalidParameterError on a malformed value

    def coerce(self, metric: str, value: Any) -> Any:
        """Convert ``value`` to this parameter's type or raise a clear error."""
        try:
            if self.type is int:
                if isinstance(value, str):
                    value = value.strip()
                    f = float(value)
                    if f != int(f):
                        raise ValueError
                    out: Any = int(f)
                elif isinstance(value, bool):
                    raise ValueError
                else:
                    out = int(value)
                    if out != value:
                        raise ValueError
            elif self.type is float:
                out = float(value)
            elif self.type is bool:
                out = _boolean(value)
            else:
                out = str(value)
                if len(out) >= 2 and out[0] == out[-1] and out[0] in "'\"":
                    out = out[1:-1]
        except (TypeError, ValueError, OverflowError):  # int("1e400"), int("inf")
            raise InvalidParameterError(_("parameter {name!r} of metric {metric!r} must be {type}, got {value!r}",
                                          name=self.name, metric=metric, type=_type_said(self.type),
                                          value=value)) from None
        if self.minimum is not None and out < self.minimum:
            raise InvalidParameterError(_("parameter {name!r} of metric {metric!r} must be >= {minimum:g}, got "
                                          "{value!r}", name=self.name, metric=metric, minimum=self.minimum,
                                          value=value))
        if self.validate is not None:
            self.validate(out)
        return out


@dataclass(frozen=True)
class MeasureSpec:
    """A metric family: its names, parameters, cutoff rule, bounds and kernel.

    ``trec`` are its trec_eval names with their parameter grammar (``ndcg`` takes
    gains, ``ndcg_cut`` cutoffs); ``ir_measures`` is the ir_measures name.
    ``at_param`` names a parameter that ``@x`` sets instead of the cutoff
    (``IPrec@0.1``).  ``judged_view`` says the kernel reads only rows that have
    a qrels entry (plus per-query counts such as ``num_ret``): it is given the
    judged rows alone, a few percent of a deep run; otherwise it gets every
    retrieved row (:meth:`~rankscope.measures.kernel_input.KernelInput.complete_view`).
    ``text`` marks a string-valued measure (its kernel returns one ``str`` per
    query; trec_eval's ``relstring``): it has no numeric score.
    """

    name: str
    summary: str
    kernel: Kernel
    cutoff: CutoffRule = "none"
    params: tuple[Param, ...] = ()
    aliases: tuple[str, ...] = ()
    ir_measures: str | None = None
    trec: tuple[TrecName, ...] = ()
    bounds: tuple[float, float] | None = (0.0, 1.0)
    aggregate: Aggregate = "mean"
    higher_is_better: bool = True
    family: str = "other"
    doc: str = ""
    builtin: bool = True
    at_param: str | None = None
    judged_view: bool = False
    text: bool = False
    param_index: dict[str, Param] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.param_index.update({p.name: p for p in self.params})

    def summary_in(self, lang: str = "en") -> str:
        """What this metric measures, said in ``lang``: a built-in metric's summary (English written once where the
        metric is declared, marked with ``N_``) translated by the catalog, else :attr:`summary` (a plugin metric's own
        words, in any language).

        >>> from rankscope.measures import get_spec
        >>> get_spec("mrr").summary_in("en"), get_spec("mrr").summary_in("zh")
        ('reciprocal rank of the first relevant document', '第一个相关文档名次的倒数（倒数排名）')
        """
        return gettext(self.summary, lang) if self.builtin else self.summary

    def trec_spellings(self) -> tuple[str, ...]:
        """Short trec_eval spellings of this family: ``map``, ``map_cut_k``, ``iprec_at_recall_x``, ``ndcg.gains``."""
        out = []
        for t in self.trec:
            if t.syntax == "none":
                out.append(t.name)
            elif t.syntax in ("cutoffs", "values"):
                out.append(f"{t.name}_{'k' if t.syntax == 'cutoffs' else 'x'}")
            else:
                out.append(f"{t.name}.{','.join(t.params)}")
        return tuple(out)

    def measure(self, cutoff: int | None = None, **params: Any) -> Measure:
        """Build a validated :class:`Measure` of this family."""
        return Measure.build(self, cutoff, params)


_specs: dict[str, MeasureSpec] | None = None  # the registry's own dict, once its built-in metrics are loaded
# the registry sits above this module (it imports MeasureSpec) and hands its lookup down when it is imported, which
# the package rankscope.measures does before any of its modules is used
_lookup: Callable[[], tuple[dict[str, MeasureSpec], Callable[[str], MeasureSpec]]] | None = None


def attach_registry(lookup: Callable[[], tuple[dict[str, MeasureSpec], Callable[[str], MeasureSpec]]]) -> None:
    """Called by :mod:`rankscope.measures.registry`: ``lookup()`` loads the built-in metrics and returns the
    registry's own ``{name: spec}`` dict and its ``get_spec``."""
    global _lookup
    _lookup = lookup


def _registry_lookup() -> Callable[[str], MeasureSpec]:
    """The registry's ``get_spec``, its dict kept for the fast path of :attr:`Measure.spec`."""
    global _specs
    assert _lookup is not None, "rankscope.measures.registry is imported with the package rankscope.measures"
    _specs, get_spec = _lookup()
    return get_spec


@dataclass(frozen=True, eq=True, order=False)
class Measure:
    """A metric: registry name + optional cutoff + non-default parameters.

    Hashable and comparable by value; ``str(m)`` is the canonical rankscope
    spelling (``ndcg@10``, ``precision(rel=2)@5``) and parses back to ``m``.

    >>> from rankscope.measures import parse_metric
    >>> m = parse_metric("nDCG@10")
    >>> m == parse_metric("ndcg_cut_10") == parse_metric("ndcg@10"), str(m)
    (True, 'ndcg@10')
    """

    name: str
    cutoff: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def build(cls, spec: MeasureSpec, cutoff: int | None, params: dict[str, Any]) -> Measure:
        """Validate ``cutoff`` and ``params`` against ``spec``."""
        if cutoff is not None:
            if spec.cutoff == "none":
                raise InvalidParameterError(_("metric {name!r} takes no cutoff, got @{cutoff}", name=spec.name,
                                              cutoff=cutoff))
            if isinstance(cutoff, bool) or not isinstance(cutoff, numbers.Integral):
                raise InvalidParameterError(_("the cutoff of {name!r} must be a positive integer, got {cutoff!r}",
                                              name=spec.name, cutoff=cutoff))
            cutoff = int(cutoff)  # numpy integers too
            if cutoff < 1:
                raise InvalidParameterError(_("the cutoff of {name!r} must be a positive integer, got {cutoff!r}",
                                              name=spec.name, cutoff=cutoff))
        elif spec.cutoff == "required":
            raise InvalidParameterError(_("metric {name!r} needs a cutoff, e.g. {name}@10", name=spec.name))
        kept: dict[str, Any] = {}
        for key, value in params.items():
            p = spec.param_index.get(key)
            if p is None:
                allowed = Items(tuple(spec.param_index)) if spec.param_index else _("none")
                raise InvalidParameterError(_("metric {name!r} has no parameter {key!r} (allowed: {allowed})",
                                              name=spec.name, key=key, allowed=allowed))
            v = p.coerce(spec.name, value)
            if v != p.default:
                kept[key] = v
        return cls(spec.name, cutoff, tuple(sorted(kept.items())))

    @property
    def spec(self) -> MeasureSpec:
        """The registry entry of this metric."""
        if _specs is not None:
            found = _specs.get(self.name)
            if found is not None:
                return found
        return _registry_lookup()(self.name)  # loads the registry, or raises for an unknown name

    def param(self, key: str) -> Any:
        """The value of parameter ``key`` (its default when not set)."""
        for k, v in self.params:
            if k == key:
                return v
        return self.spec.param_index[key].default

    def __str__(self) -> str:
        out = self.name
        if self.params:
            out += "(" + ",".join(f"{k}={_fmt(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            out += f"@{self.cutoff}"
        return out

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


#: a parameter's type as a reader's word
_TYPES = {int: NC_("type", "int"), float: NC_("type", "float"), str: NC_("type", "str"),
          bool: NC_("type", "bool (True or False)")}


def _type_said(kind: type) -> Message | str:
    """A parameter's type as a reader's word (``int``: 整数 in Chinese); a plugin's other types by their name."""
    return pgettext("type", _TYPES[kind]) if kind in _TYPES else kind.__name__


_TRUE = {"true", "1", "yes"}
_FALSE = {"false", "0", "no"}


def _boolean(value: Any) -> bool:
    """``True`` / ``False`` from a bool, 0 / 1, or the words true / false / yes / no (any case); else ValueError."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and int(value) in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ValueError(value)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)
