"""The one registry of metric families.

Built-in families register themselves when their module is imported; the
registry imports them on first use, so ``import rankscope`` stays light.  Users
add their own with :func:`register_metric`.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections.abc import Iterable
from typing import Any

from rankscope.errors import InvalidParameterError, UnknownMetricError
from rankscope.i18n import _
from rankscope.measures import base
from rankscope.measures.base import Aggregate, CutoffRule, Kernel, MeasureSpec, Param

__all__ = ["register", "register_metric", "get_spec", "all_specs", "lookup_alias", "unregister_metric"]

_BUILTIN_MODULES = (
    "rankscope.measures.counts",
    "rankscope.measures.set_based",
    "rankscope.measures.rank_based",
    "rankscope.measures.gain_based",
    "rankscope.measures.bpref",
    "rankscope.measures.interpolated",
    "rankscope.measures.gain_extra",
    "rankscope.measures.utility",
    "rankscope.measures.span_based",
    "rankscope.measures.browsing",
    "rankscope.measures.cwl",
    "rankscope.measures.diversity",
)

_SPECS: dict[str, MeasureSpec] = {}
_ALIASES: dict[str, str] = {}  # lower-case alias -> spec name
_loaded = False
_loading = threading.RLock()
_generation = 0  # bumped whenever the registry changes, so parse caches stay valid


def generation() -> int:
    """A number that changes whenever a metric is registered or removed (built-ins loaded first)."""
    _ensure_loaded()
    return _generation


def _ensure_loaded() -> None:
    """Import the built-in families once; other threads wait until they are all registered."""
    global _loaded
    if _loaded:
        return
    with _loading:  # re-entrant: a family module that parses a metric at import time gets in
        if _loaded:
            return
        for mod in _BUILTIN_MODULES:
            importlib.import_module(mod)
        _loaded = True


def register(spec: MeasureSpec) -> MeasureSpec:
    """Add ``spec`` to the registry; a name or alias may be registered only once."""
    names = {spec.name.lower(), *(a.lower() for a in spec.aliases)}
    for extra in (spec.ir_measures, *(t.name for t in spec.trec)):
        if extra:
            names.add(extra.lower())
    clash = sorted(n for n in names if n in _ALIASES)
    if spec.name in _SPECS or clash:
        raise InvalidParameterError(_("metric {name!r} is already registered (names taken: {clash})", name=spec.name,
                                      clash=clash))
    global _generation
    _SPECS[spec.name] = spec
    for n in names:
        _ALIASES[n] = spec.name
    _generation += 1
    return spec


def register_metric(
    name: str,
    func: Kernel,
    *,
    summary: str = "",
    cutoff: CutoffRule = "optional",
    params: Iterable[Param] | dict[str, Any] = (),
    bounds: tuple[float, float] | None = (0.0, 1.0),
    higher_is_better: bool = True,
    aggregate: Aggregate = "mean",
    aliases: Iterable[str] = (),
    judged_rows_only: bool = False,
) -> MeasureSpec:
    """Register a custom metric that then works like a built-in one.

    ``func(data, measure)`` receives the :class:`~rankscope.measures.kernel_input.KernelInput`
    arrays of all evaluated queries and the :class:`~rankscope.measures.Measure`
    being computed (``measure.cutoff``, ``measure.param(name)``), and returns one
    float per query (a numpy array of length ``prepared.n``).  ``params`` may be
    :class:`Param` objects or a ``{name: default}`` dict (the type is the default's).
    By default ``data`` holds every retrieved row; a kernel that only reads rows
    with a qrels entry (``judged`` or a nonzero ``grade``), their ``rank`` and
    per-query counts may say ``judged_rows_only=True`` and is then given only those
    rows (faster on deep runs).

    >>> import numpy as np
    >>> from rankscope.measures import register_metric, parse_metric
    >>> def rel_at_1(p, m):
    ...     return p.sum(p.is_rel().astype(float), p.rank < 1)
    >>> spec = register_metric("rel_at_1", rel_at_1, cutoff="none", summary="relevant at rank 1")
    >>> parse_metric("rel_at_1")
    Measure('rel_at_1')
    >>> unregister_metric("rel_at_1")
    """
    if not name or not name.replace("_", "").isalnum() or not name[0].isalpha():
        raise InvalidParameterError(_("metric name must start with a letter and hold only letters, digits and '_', "
                                      "got {name!r}", name=name))
    if isinstance(params, dict):
        plist = tuple(Param(k, type(v), v, "") for k, v in params.items())
    else:
        plist = tuple(params)
    _ensure_loaded()
    spec = MeasureSpec(
        name=name,
        summary=summary or (func.__doc__ or name).strip().splitlines()[0],
        kernel=func,
        cutoff=cutoff,
        params=plist,
        aliases=tuple(aliases),
        bounds=bounds,
        aggregate=aggregate,
        higher_is_better=higher_is_better,
        family="custom",
        doc=func.__doc__ or "",
        builtin=False,
        judged_view=bool(judged_rows_only),
    )
    return register(spec)


def unregister_metric(name: str) -> None:
    """Remove a custom metric (built-in ones cannot be removed)."""
    spec = _SPECS.get(name)
    if spec is None or spec.builtin:
        raise InvalidParameterError(_("{name!r} is not a registered custom metric", name=name))
    global _generation
    del _SPECS[name]
    _generation += 1
    for alias in [a for a, n in _ALIASES.items() if n == name]:
        del _ALIASES[alias]


def registered_specs() -> dict[str, MeasureSpec]:
    """The registry's own ``{name: spec}`` dict (read-only for callers; changed in place by (un)registering)."""
    return _SPECS


def get_spec(name: str) -> MeasureSpec:
    """The spec registered under ``name`` (its canonical name)."""
    _ensure_loaded()
    try:
        return _SPECS[name]
    except KeyError:
        found = tuple(suggest(name))
        raise UnknownMetricError(name, list(found)) from None


def lookup_alias(name: str) -> MeasureSpec | None:
    """The spec any spelling ``name`` (case-insensitive) refers to, or None."""
    _ensure_loaded()
    target = _ALIASES.get(name.lower())
    return _SPECS[target] if target else None


def all_specs() -> list[MeasureSpec]:
    """Every registered spec, built-ins first, in registration order."""
    _ensure_loaded()
    return list(_SPECS.values())


def suggest(name: str, n: int = 5) -> list[str]:
    """Registered metrics whose names are close to ``name``, spelled with the caller's cutoff.

    A name that runs a metric into its cutoff (``recall5``, ``ndcg_10``) is first
    offered the cutoff syntax.

    >>> suggest("ndgc@10")[0], suggest("recall5")[0], suggest("P10")[0]
    ('ndcg@10', 'recall@5', 'P@10')
    """
    import difflib

    _ensure_loaded()
    out: list[str] = []
    glued = _GLUED_CUTOFF.match(name.strip())
    if glued:
        spec = lookup_alias(glued.group("base"))
        if spec is not None and spec.cutoff != "none" and not spec.at_param:
            out.append(f"{glued.group('base')}@{int(glued.group('k'))}")
    base = name.split("@")[0].split("(")[0]
    cut = name[len(base):].split("@", 1)
    at = "@" + cut[1] if len(cut) == 2 and cut[1].strip().isdigit() else None
    hits = difflib.get_close_matches(base.lower(), sorted(_ALIASES), n=n, cutoff=0.6)
    for h in hits:
        spec = _SPECS[_ALIASES[h]]
        if spec.cutoff == "none":
            label = spec.name
        else:
            label = spec.name + (at or ("@10" if spec.cutoff == "required" else ""))
        if label not in out:
            out.append(label)
    return out[:n]


_GLUED_CUTOFF = re.compile(r"^(?P<base>[A-Za-z](?:[A-Za-z0-9_]*?[A-Za-z])?)_?(?P<k>[0-9]+)$")


def _loaded_registry() -> tuple[dict[str, MeasureSpec], Any]:
    _ensure_loaded()
    return _SPECS, get_spec


base.attach_registry(_loaded_registry)  # Measure.spec finds its entry here (base cannot import this module)
