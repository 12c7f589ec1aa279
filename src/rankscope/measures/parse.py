"""The one parser of metric names: every spelling, one grammar.

Three spellings map onto the same :class:`~rankscope.measures.Measure`:

* rankscope: ``ndcg@10``, ``precision@5``, ``mrr``, ``hit_rate@5``,
  ``precision(rel=2)@5``, and several cutoffs at once: ``ndcg@1,3,5``;
* ir_measures: ``nDCG@10``, ``P@5``, ``R@100``, ``RR``, ``AP``, ``Success@5``,
  ``P(rel=2)@5``, ``IPrec@0.1``;
* trec_eval: ``ndcg_cut_10``, ``P_5``, ``recall_100``, ``recip_rank``,
  ``map_cut_10``, ``Rprec``, ``iprec_at_recall_0.10`` and the parameter syntax
  ``P.5,10`` (expands to two measures), ``ndcg.1=3,2=9``, ``utility.2,-1,0,0``;
* ranx: ``hits@10``, ``hit_rate@5``, ``r-precision``, ``ndcg_burges@10``,
  ``dcg_burges@10``, ``rbp.95`` (persistence 0.95, ranx's graded gain) and a
  relevance level after ``-l`` (``precision@5-l2``, ``ndcg@10-l2``);
* ndeval: ``alpha-nDCG@20``, ``ERR-IA@20``, ``P-IA@10``, ``MAP-IA``, ``strec@10``
  (and ir_measures' ``α_nDCG@20``).

A trec_eval cutoff or value family named alone means every default, as ``trec_eval -m``
and ir_measures' ``parse_trec_measure`` read it: ``ndcg_cut`` is ``ndcg_cut_5``
... ``ndcg_cut_1000``, ``P`` is ``P_5`` ... ``P_1000``, ``iprec_at_recall`` the
11 levels, ``success`` ``success_1,5,10``.

ir_measures' parameters keep their meaning: ``cutoff=`` in the parentheses is the
cutoff (an ``@`` after them wins, as in ir_measures) and quoted values are read
without their quotes: ``nDCG(dcg="exp-log2", cutoff=20)@10`` is
``ndcg(dcg=exp-log2)@10``, ``nDCG(dcg="exp-log2", cutoff=20)`` is ``ndcg(dcg=exp-log2)@20``.

A text may hold a comma-separated list of names (``ndcg@10,map,P.5,10``): a
piece that is only a number (or ``grade=gain``) continues the previous name's
parameter list.  trec_eval's ``name.PARAMS`` grammar is declared by each metric
family (:class:`~rankscope.measures.base.TrecName`) and applied by
:func:`expand_trec`, which the ``rankscope trec_eval`` front end uses too (with
``trec_eval=True``: duplicate cutoffs are an error and parameters given to a
measure that takes none are ignored, as in trec_eval 9.0.8).

Names are matched case-insensitively.  Unknown or malformed names raise
:class:`~rankscope.errors.UnknownMetricError` listing close matches; a parameter
outside its range :class:`~rankscope.errors.InvalidParameterError` — never
another exception, whatever the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from rankscope.errors import InvalidParameterError, Message, RankscopeError, UnknownMetricError
from rankscope.i18n import _
from rankscope.measures.base import Measure, MeasureSpec, TrecName
from rankscope.measures.registry import generation, lookup_alias, suggest

__all__ = ["parse_metric", "parse_metrics", "ParsedMetric", "split_metric_list", "trec_form", "expand_trec"]

_PLAIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9_]*)(?:\((?P<params>[^()]*)\))?(?:@(?P<at>[^@]+))?$")
_TREC_SUFFIX = re.compile(r"^(?P<base>[A-Za-z0-9][A-Za-z0-9_]*?)_(?P<value>[0-9]*\.?[0-9]+)$")
_TREC_DOT = re.compile(r"^(?P<base>[A-Za-z0-9][A-Za-z0-9_]*?)\.(?P<params>.*)$")
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_CONTINUES = re.compile(rf"^\s*{_NUMBER}(?:\s*=\s*{_NUMBER})?\s*$")
_ATOL = re.compile(r"^\s*[+-]?\d+")


class ParsedMetric(tuple[str, Measure]):
    """``(label, measure)``: the name as the caller wrote it and what it means."""

    __slots__ = ()


def _unknown(text: str, reason: Message | RankscopeError | None = None) -> UnknownMetricError:
    """The error of a name that is no metric, with close matches; ``reason`` (said in the reader's language) says why,
    else it is an unknown name."""
    found = tuple(suggest(text))
    return UnknownMetricError(text, list(found), reason)


def split_metric_list(text: str) -> list[str]:
    """The names of a comma-separated list; numbers continue the previous name's parameters.

    >>> split_metric_list("ndcg@10,map, P.5,10,utility(a=2,b=-1)")
    ['ndcg@10', 'map', 'P.5,10', 'utility(a=2,b=-1)']
    >>> split_metric_list("ndcg@1,3,5"), split_metric_list("ndcg.1=3,2=9")
    (['ndcg@1,3,5'], ['ndcg.1=3,2=9'])
    """
    pieces: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    out: list[str] = []
    for piece in pieces:
        if out and _CONTINUES.match(piece):
            out[-1] += "," + piece.strip()
        elif piece.strip():
            out.append(piece.strip())
    return out


def _parse_params(spec: MeasureSpec, text: str, original: str) -> dict[str, str]:
    out: dict[str, str] = {}
    last: str | None = None
    for part in filter(None, (x.strip() for x in text.split(","))):
        k = part.split("=", 1)[0].strip()
        if (last is not None and k not in spec.param_index and k != "cutoff"  # ir_measures' cutoff= is no value
                and spec.param_index[last].type is str):
            # a list-valued parameter continues: ndcg(gains=1=3,2=9), iprec_11pt(levels=0.2,0.5)
            out[last] += "," + part
            continue
        if "=" not in part:
            raise _unknown(original, _("malformed parameter {part!r} in metric {metric!r} (expected name=value)",
                                       part=part, metric=original))
        k, v = (x.strip() for x in part.split("=", 1))
        out[k] = v
        last = k if k in spec.param_index else None
    return out


def _cutoff(text: str, original: str, name: str) -> int:
    try:
        value = float(text)
    except ValueError:
        value = 0.5
    if not value == value or value in (float("inf"), float("-inf")) or value != int(value) or value < 1:
        raise InvalidParameterError(_("the cutoff in {original!r} must be a positive integer, got {text!r} "
                                      "(several cutoffs are written {name}@1,3,5)", original=original, text=text,
                                      name=name))
    return int(value)


def _unquote(value: str) -> str:
    """A parameter value without the quotes ir_measures' syntax puts around strings (``dcg="exp-log2"``)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def _ir_measures_params(spec: MeasureSpec, params: dict[str, str], text: str) -> tuple[MeasureSpec, dict[str, str],
                                                                                        str | None]:
    """ir_measures' reading of the parameters: ``cutoff=`` is the cutoff; returns the family, the remaining
    parameters (without the quotes of ir_measures' strings) and the cutoff given in the parentheses (None when not
    given)."""
    params = {k: _unquote(v) for k, v in params.items()}
    cutoff = params.pop("cutoff", None) if "cutoff" not in spec.param_index else None
    return spec, params, cutoff


def _bare_trec(text: str) -> list[ParsedMetric] | None:
    """A trec_eval name of a cutoff or value family alone (``ndcg_cut``, ``P``, ``iprec_at_recall``): every default
    cutoff or value, as ``trec_eval -m ndcg_cut`` and ir_measures' ``parse_trec_measure`` read it."""
    found = trec_form(text)
    if found is None or found[1].syntax not in ("cutoffs", "values"):
        return None
    return [ParsedMetric((label, m)) for label, m in expand_trec(*found, None)]


def _parse_plain(text: str) -> list[ParsedMetric] | None:
    m = _PLAIN.match(text)
    if not m:
        return None
    spec = lookup_alias(m.group("name"))
    if spec is None:
        return None
    spec, raw, inner = _ir_measures_params(spec, _parse_params(spec, m.group("params") or "", text), text)
    params: dict[str, object] = dict(raw)
    at = m.group("at")
    if at is None and inner is not None:  # nDCG(cutoff=20): ir_measures' cutoff (an @ after it wins, as there)
        if spec.at_param:
            raise InvalidParameterError(_("{metric!r}: {name} takes no cutoff=", metric=text, name=spec.name))
        return [ParsedMetric((text, spec.measure(_cutoff(inner, text, m.group("name")), **params)))]
    if at is None:
        return [ParsedMetric((text, spec.measure(None, **params)))]
    values = [v.strip() for v in at.split(",")]
    head = text[: m.start("at")]
    out = []
    for v in values:
        if spec.at_param:
            measure = spec.measure(None, **{**params, spec.at_param: v})
        else:
            measure = spec.measure(_cutoff(v, text, m.group("name")), **params)
        out.append(ParsedMetric((text if len(values) == 1 else head + v, measure)))
    return out


# -- trec_eval's name.PARAMS grammar ----------------------------------------------------
def trec_form(name: str, *, exact: bool = False) -> tuple[MeasureSpec, TrecName] | None:
    """The family and trec_eval name ``name`` denotes (case-insensitive unless ``exact``), or None.

    >>> spec, form = trec_form("ndcg_cut")
    >>> spec.name, form.syntax
    ('ndcg', 'cutoffs')
    """
    spec = lookup_alias(name)
    if spec is None:
        return None
    for form in spec.trec:
        if form.name == name or (not exact and form.name.lower() == name.lower()):
            return spec, form
    return None


def _numbers(form: TrecName, raw: str) -> list[float]:
    try:
        return [float(v) for v in raw.split(",")]
    except ValueError:
        raise InvalidParameterError(_("parameters of measure '{name}' must be comma-separated numbers, got {raw!r}",
                                      name=form.name, raw=raw)) from None


def _distinct(form: TrecName, values: list[Any], raw: str, trec_eval: bool) -> list[Any]:
    values = sorted(values)
    if len(set(values)) != len(values):
        if trec_eval:
            raise InvalidParameterError(_("measure '{name}': duplicate cutoffs in {raw!r}", name=form.name, raw=raw))
        values = sorted(set(values))
    return values


def expand_trec(
    spec: MeasureSpec,
    form: TrecName,
    raw: str | None,
    *,
    trec_eval: bool = False,
    options: Mapping[str, Any] | None = None,
) -> list[tuple[str, Measure]]:
    """trec_eval's reading of ``form.name.raw`` (``raw`` None: no parameters): ``(trec label, measure)`` pairs.

    With ``trec_eval`` the reading is trec_eval 9.0.8's exactly: duplicate cutoffs
    are an error (the library drops them) and parameters of a measure that takes
    none are ignored (the library refuses them).  ``options`` are trec_eval option
    values some parameters take (``-N``).

    >>> spec, form = trec_form("P")
    >>> [(label, str(m)) for label, m in expand_trec(spec, form, "10,5,23.4")]
    [('P_5', 'precision@5'), ('P_10', 'precision@10'), ('P_23', 'precision@23')]
    >>> [label for label, _ in expand_trec(*trec_form("iprec_at_recall"), ".1,.25")]
    ['iprec_at_recall_0.10', 'iprec_at_recall_0.25']
    >>> [(label, str(m)) for label, m in expand_trec(*trec_form("utility"), "2,-1,0,0")]
    [('utility_2,-1,0,0', 'utility(a=2.0)')]
    """
    fixed = {p: (options or {})[opt] for p, opt in form.options if opt in (options or {})}
    if raw is not None and not raw.strip():
        raise InvalidParameterError(_("improper measure '{name}.' (nothing after '.')", name=form.name))
    if raw is not None and form.syntax == "none" and not trec_eval:
        raise InvalidParameterError(_("measure '{name}' takes no parameters, got {raw!r}", name=form.name, raw=raw))
    if form.syntax == "cutoffs":
        if raw is None:
            cuts = [int(c) for c in form.default]
        else:
            cuts = []
            for part in raw.split(","):
                hit = _ATOL.match(part)
                if not hit:
                    raise InvalidParameterError(_("cutoff {part!r} of measure '{name}' is not an integer", part=part,
                                                  name=form.name))
                cuts.append(int(hit.group()))
            if min(cuts) <= 0:
                raise InvalidParameterError(_("measure '{name}': cutoffs must be positive, got {raw!r}",
                                              name=form.name, raw=raw))
            cuts = _distinct(form, cuts, raw, trec_eval)
        return [(f"{form.name}_{c}", spec.measure(c, **fixed)) for c in cuts]
    if form.syntax == "values":
        values = list(form.default) if raw is None else _distinct(form, _numbers(form, raw), raw, trec_eval)
        return [(f"{form.name}_{v:3.2f}", spec.measure(None, **{form.params[0]: v}, **fixed)) for v in values]
    label = form.name if raw is None else f"{form.name}_{raw}"
    if form.syntax == "list" and raw is not None:
        values = _numbers(form, raw)
        if form.arity is not None and len(values) != form.arity:
            raise InvalidParameterError(_("measure '{name}' needs exactly {arity} parameters ({params}), got "
                                          "{raw!r}", name=form.name, arity=form.arity, params=",".join(form.params),
                                          raw=raw))
        if len(values) > len(form.params):
            raise InvalidParameterError(_("measure '{name}' takes at most {n} parameters, got {raw!r}", name=form.name,
                                          n=len(form.params), raw=raw))
        return [(label, spec.measure(None, **dict(zip(form.params, values)), **fixed))]
    if form.syntax == "text" and raw is not None:
        return [(label, spec.measure(None, **{form.params[0]: raw}, **fixed))]
    return [(form.name, spec.measure(None, **fixed))]


def _parse_trec(text: str) -> list[Measure] | None:
    m = _TREC_SUFFIX.match(text)
    if m:
        found = trec_form(m.group("base"))
        value = m.group("value")
        if found is not None and (found[1].syntax == "values" or (found[1].syntax == "cutoffs" and value.isdigit())):
            return [measure for __, measure in expand_trec(*found, value)]
    m = _TREC_DOT.match(text)
    if m:
        found = trec_form(m.group("base"))
        if found is None:
            return None
        try:
            return [measure for __, measure in expand_trec(*found, m.group("params"))]
        except InvalidParameterError as exc:
            raise _unknown(text, exc) from None
    return None


# -- the public parser ------------------------------------------------------------------
def parse_metrics(names: str | Measure | Iterable[str | Measure]) -> list[ParsedMetric]:
    """Parse metric names into ``(label, Measure)`` pairs, in the given order.

    A trec_eval parameter list (``P.5,10``) yields one pair per measure, labelled
    with the canonical name; a cutoff list (``nDCG@5,10``) one per cutoff, labelled
    as written (``nDCG@5``, ``nDCG@10``); a comma-separated list one per name.
    Duplicates (same measure and label) are dropped.

    >>> [str(m) for _, m in parse_metrics(["P.5,10", "RR", "map_cut_10"])]
    ['precision@5', 'precision@10', 'mrr', 'map@10']
    >>> [label for label, _ in parse_metrics("nDCG@5,10,map")]
    ['nDCG@5', 'nDCG@10', 'map']
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
        __ = item.spec  # validates the name
        return (ParsedMetric((str(item), item)),)
    if not isinstance(item, str):
        raise UnknownMetricError(repr(item), [], _("a metric name must be a string, got {type}",
                                                   type=type(item).__name__))
    return _parse_text(item, generation())


@lru_cache(maxsize=1024)
def _parse_text(item: str, _generation: int) -> tuple[ParsedMetric, ...]:
    """Parse one text (a name or a comma-separated list); cached per registry generation."""
    parts = split_metric_list(item)
    if not parts:
        raise UnknownMetricError(item, [], _("empty metric name"))
    return tuple(pair for part in parts for pair in _parse_name(part))


# -- ranx's and ndeval's spellings --------------------------------------------------------
_RANX_LEVEL = re.compile(r"^(?P<base>[^()]+?|.*\))-l(?P<level>[0-9]+)$")
_RANX_RBP = re.compile(r"^rbp[.@](?P<p>[0-9]+)$", re.IGNORECASE)
_RANX_NAMES = {"dcg_burges": "dcg(dcg=exp-log2)"}


def _parse_peer(text: str) -> list[ParsedMetric] | None:
    """The measures of a ranx or ndeval spelling that the grammars above do not read, or None.

    >>> [str(m) for _, m in _parse_peer("rbp.95")], [str(m) for _, m in _parse_peer("precision@5-l2")]
    (['rbp(gain=grade,p=0.95)'], ['precision(rel=2)@5'])
    >>> [str(m) for _, m in _parse_peer("alpha-nDCG@20")], [str(m) for _, m in _parse_peer("ndcg@10-l3")]
    (['alpha_ndcg@20'], ['ndcg(gains=1=0,2=0)@10'])
    """
    level = _RANX_LEVEL.match(text)
    if level:
        return [ParsedMetric((text if len(inner) == 1 else lab, _at_level(m, int(level.group("level")), text)))
                for inner in [_parse_name(level.group("base"))] for lab, m in inner]
    rbp = _RANX_RBP.match(text)
    if rbp:
        spec = lookup_alias("rbp")
        if spec is not None:
            return [ParsedMetric((text, spec.measure(None, p=float("0." + rbp.group("p")), gain="grade")))]
    head = text.split("(")[0].split("@")[0]
    renamed = _RANX_NAMES.get(head.lower())
    if renamed is not None:
        return [ParsedMetric((text, m)) for __, m in _parse_plain(renamed + text[len(head):]) or []] or None
    if "-" in head or "α" in head:
        plain = _parse_plain(head.replace("α", "alpha").replace("-", "_") + text[len(head):])
        if plain is not None:
            return [ParsedMetric((text if len(plain) == 1 else label, m)) for label, m in plain]
    return None


def _at_level(m: Measure, level: int, text: str) -> Measure:
    """``m`` with ranx's relevance level ``-lN``: grades below N are not relevant (nDCG: they gain nothing)."""
    spec = m.spec
    params = dict(m.params)
    if "rel" in spec.param_index:
        params["rel"] = level
    elif "gains" in spec.param_index and not params.get("gains"):
        params["gains"] = ",".join(f"{g}=0" for g in range(1, level))
    else:
        raise _unknown(text, _("metric {metric!r} takes no relevance level (ranx's -lN)", metric=spec.name))
    return spec.measure(m.cutoff, **params)


def _parse_name(text: str) -> list[ParsedMetric]:
    bare = _bare_trec(text)
    if bare is not None:
        return bare
    peer = _parse_peer(text)
    if peer is not None:
        return peer
    plain = _parse_plain(text)
    if plain is not None:
        return plain
    measures = _parse_trec(text)
    if measures is None:
        raise _unknown(text)
    if len(measures) == 1:
        return [ParsedMetric((text, measures[0]))]
    return [ParsedMetric((str(m), m)) for m in measures]


def parse_metric(name: str | Measure) -> Measure:
    """Parse one metric name (that denotes exactly one measure).

    >>> parse_metric("P@5") == parse_metric("precision@5") == parse_metric("P_5")
    True
    >>> parse_metric("ndcg@ten")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankscope.errors.InvalidParameterError: the cutoff in 'ndcg@ten' must be a positive integer, got 'ten' (...)
    """
    pairs = _parse_one(name)
    if len(pairs) != 1:
        raise InvalidParameterError(_("{name!r} denotes {n} metrics; use parse_metrics", name=name, n=len(pairs)))
    return pairs[0][1]
