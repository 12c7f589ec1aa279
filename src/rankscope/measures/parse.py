"""The one parser of metric names.

Three spellings map onto the same :class:`~rankscope.measures.Measure`:

* rankscope: ``ndcg@10``, ``precision@5``, ``mrr``, ``hit_rate@5``,
  ``precision(rel=2)@5``;
* ir_measures: ``nDCG@10``, ``P@5``, ``R@100``, ``RR``, ``AP``, ``Success@5``,
  ``P(rel=2)@5``, ``IPrec@0.1``;
* trec_eval: ``ndcg_cut_10``, ``P_5``, ``recall_100``, ``recip_rank``,
  ``map_cut_10``, ``Rprec``, ``iprec_at_recall_0.10`` and the parameter syntax
  ``P.5,10`` (expands to two measures), ``ndcg.1=3,2=9``, ``utility.2,-1,0,0``.

Names are matched case-insensitively.  Unknown or malformed names raise
:class:`~rankscope.errors.UnknownMetricError` listing close matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from rankscope.errors import InvalidParameterError, UnknownMetricError
from rankscope.measures.base import Measure, MeasureSpec
from rankscope.measures.registry import generation, lookup_alias, suggest

__all__ = ["parse_metric", "parse_metrics", "ParsedMetric"]

_PLAIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<at>[^@]+))?$")
_TREC_SUFFIX = re.compile(r"^(?P<base>[A-Za-z0-9][A-Za-z0-9_]*?)_(?P<value>[0-9]*\.?[0-9]+)$")
_TREC_DOT = re.compile(r"^(?P<base>[A-Za-z0-9][A-Za-z0-9_]*?)\.(?P<params>.+)$")


class ParsedMetric(tuple[str, Measure]):
    """``(label, measure)``: the name as the caller wrote it and what it means."""

    __slots__ = ()


def _unknown(text: str, reason: str | None = None) -> UnknownMetricError:
    return UnknownMetricError(text, suggest(text), reason)


def _parse_params(spec: MeasureSpec, text: str, original: str) -> dict[str, str]:
    out: dict[str, str] = {}
    last: str | None = None
    for part in filter(None, (x.strip() for x in text.split(","))):
        k = part.split("=", 1)[0].strip()
        if last is not None and k not in spec.param_index and spec.param_index[last].type is str:
            # a list-valued parameter continues: ndcg(gains=1=3,2=9), iprec_11pt(levels=0.2,0.5)
            out[last] += "," + part
            continue
        if "=" not in part:
            raise _unknown(original, f"malformed parameter {part!r} in metric {original!r} (expected name=value)")
        k, v = (x.strip() for x in part.split("=", 1))
        out[k] = v
        last = k if k in spec.param_index else None
    return out


def _cutoff(text: str, original: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise InvalidParameterError(
            f"the cutoff in {original!r} must be a positive integer, got {text!r}"
        ) from None
    if value != int(value) or value < 1:
        raise InvalidParameterError(f"the cutoff in {original!r} must be a positive integer, got {text!r}")
    return int(value)


def _parse_plain(text: str) -> Measure | None:
    m = _PLAIN.match(text)
    if not m:
        return None
    spec = lookup_alias(m.group("name"))
    if spec is None:
        return None
    params: dict[str, object] = dict(_parse_params(spec, m.group("params") or "", text))
    at = m.group("at")
    cutoff = None
    if at is not None:
        at = at.strip()
        if spec.at_param:
            params[spec.at_param] = at
        else:
            cutoff = _cutoff(at, text)
    return spec.measure(cutoff, **params)


def _trec_kind(spec: MeasureSpec, base: str) -> tuple[str, str] | None:
    """How trec_eval parameters of ``base`` map onto ``spec``: (kind, param name)."""
    if spec.trec_cut and base.lower() == spec.trec_cut.lower():
        return ("cutoffs", "")
    if spec.trec_params and spec.trec and base.lower() == spec.trec.lower():
        kind, _, pname = spec.trec_params.partition(":")
        return (kind, pname)
    return None


def _parse_trec(text: str) -> list[Measure] | None:
    m = _TREC_SUFFIX.match(text)
    if m:
        spec = lookup_alias(m.group("base"))
        how = _trec_kind(spec, m.group("base")) if spec else None
        if spec is not None and how is not None:
            if how[0] == "cutoffs":
                return [spec.measure(_cutoff(m.group("value"), text))]
            if how[0] == "values":
                return [spec.measure(None, **{how[1]: m.group("value")})]
    m = _TREC_DOT.match(text)
    if m:
        spec = lookup_alias(m.group("base"))
        how = _trec_kind(spec, m.group("base")) if spec else None
        if spec is None or how is None:
            return None
        kind, pname = how
        raw = m.group("params")
        if kind == "whole":
            return [spec.measure(None, **{pname: raw})]
        values = [v.strip() for v in raw.split(",") if v.strip()]
        if not values:
            raise _unknown(text, f"no parameters after '.' in {text!r}")
        if kind == "cutoffs":
            # trec_eval reads cutoffs as integers (23.4 -> 23) and sorts them
            cuts = sorted({int(float(_check_number(v, text))) for v in values})
            return [spec.measure(c) for c in cuts]
        if kind == "values":
            nums = sorted({float(_check_number(v, text)) for v in values})
            return [spec.measure(None, **{pname: v}) for v in nums]
        if kind == "ordered":
            names = pname.split(",")
            if len(values) > len(names):
                raise _unknown(text, f"{text!r}: {spec.name} takes at most {len(names)} parameters")
            return [spec.measure(None, **dict(zip(names, values)))]
    return None


def _check_number(value: str, original: str) -> str:
    try:
        float(value)
    except ValueError:
        raise InvalidParameterError(f"parameter {value!r} in {original!r} is not a number") from None
    return value


def parse_metrics(names: str | Measure | Iterable[str | Measure]) -> list[ParsedMetric]:
    """Parse metric names into ``(label, Measure)`` pairs, in the given order.

    A trec_eval parameter list (``P.5,10``) yields one pair per measure, labelled
    with the canonical name.  Duplicates (same measure and label) are dropped.

    >>> [str(m) for _, m in parse_metrics(["P.5,10", "RR", "map_cut_10"])]
    ['precision@5', 'precision@10', 'mrr', 'map@10']
    """
    if isinstance(names, (str, Measure)):
        names = [names]
    out: list[ParsedMetric] = []
    seen: set[tuple[str, Measure]] = set()
    for item in names:
        for pair in _parse_one(item):
            if (pair[0], pair[1]) not in seen:
                seen.add((pair[0], pair[1]))
                out.append(pair)
    return out


def _parse_one(item: str | Measure) -> tuple[ParsedMetric, ...]:
    if isinstance(item, Measure):
        _ = item.spec  # validates the name
        return (ParsedMetric((str(item), item)),)
    if not isinstance(item, str):
        raise UnknownMetricError(repr(item), [], f"a metric name must be a string, got {type(item).__name__}")
    return _parse_text(item, generation())


@lru_cache(maxsize=1024)
def _parse_text(item: str, _generation: int) -> tuple[ParsedMetric, ...]:
    """Parse one name; cached per registry generation (a new registration invalidates it)."""
    text = item.strip()
    if not text:
        raise UnknownMetricError(item, [], "empty metric name")
    measure = _parse_plain(text)
    if measure is not None:
        return (ParsedMetric((text, measure)),)
    measures = _parse_trec(text)
    if measures is None:
        raise _unknown(text)
    if len(measures) == 1:
        return (ParsedMetric((text, measures[0])),)
    return tuple(ParsedMetric((str(m), m)) for m in measures)


def parse_metric(name: str | Measure) -> Measure:
    """Parse one metric name (that denotes exactly one measure).

    >>> parse_metric("P@5") == parse_metric("precision@5") == parse_metric("P_5")
    True
    >>> parse_metric("ndcg@ten")
    Traceback (most recent call last):
    ...
    rankscope.errors.InvalidParameterError: the cutoff in 'ndcg@ten' must be a positive integer, got 'ten'
    """
    pairs = _parse_one(name)
    if len(pairs) != 1:
        raise InvalidParameterError(f"{name!r} denotes {len(pairs)} metrics; use parse_metrics")
    return pairs[0][1]
