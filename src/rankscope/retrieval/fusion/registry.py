"""The declared fusion methods and score normalisations: one place for names, parameters and formulas.

Every user-facing list (``fuse``'s checks, ``rankscope fuse --method``, the grids of
:func:`rankscope.tune`, the tables of docs/fusion.md) is read from :data:`METHODS`
and :data:`NORMS`.  A method is a :class:`FusionSpec`: its name and ranx's, the
formula, its parameters (:class:`FusionParam`, with the grid ``tune`` searches
by default), whether it reads scores or only ranks, whether it takes one weight
per run, and whether it is trained on judgments (``supervised``).

>>> get_method("w_bordafuse").name, get_method("RRF").name
('weighted_borda', 'rrf')
>>> [p.name for p in get_method("logn_isr").params]
['sigma']
>>> get_norm("max-min").name
'min-max'
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import Any, Literal

from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _

__all__ = ["FusionParam", "FusionSpec", "NormSpec", "METHODS", "NORMS", "get_method", "get_norm", "method_names",
           "norm_names", "check_params"]

WeightsRule = Literal["none", "optional", "required"]


@dataclass(frozen=True)
class FusionParam:
    """A numeric parameter of a fusion method: name, type, default, bounds, doc and the grid ``tune`` tries."""

    name: str
    type: type
    default: float | int
    doc: str
    minimum: float | None = None
    maximum: float | None = None
    grid: tuple[float, ...] = ()

    def check(self, method: str, value: Any) -> float | int:
        """``value`` as this parameter's type, or a clear error."""
        ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
        if ok and self.type is int:
            ok = float(value) == int(value)
        if ok and self.minimum is not None:
            ok = value >= self.minimum
        if ok and self.maximum is not None:
            ok = value <= self.maximum
        if not ok:
            lo = "-inf" if self.minimum is None else f"{self.minimum:g}"
            hi = "inf" if self.maximum is None else f"{self.maximum:g}"
            kind = _("an integer") if self.type is int else _("a number")
            raise InvalidParameterError(_("{method}: {name} must be {kind} in [{lo}, {hi}], got {value!r}",
                                          method=method, name=self.name, kind=kind, lo=lo, hi=hi, value=value))
        return int(value) if self.type is int else float(value)


@dataclass(frozen=True)
class FusionSpec:
    """A fusion method: names, formula, parameters, and what it reads.

    ``scores``: it reads the (normalised) scores; otherwise only each run's ranks.
    ``weights``: ``"required"``, ``"optional"`` (default 1 per run) or ``"none"``.
    ``supervised``: it is trained on judgments (``fuse(..., qrels=...)``).
    ``ranx``: the method's name in ranx (``ranx.fuse(method=...)``).
    """

    name: str
    summary: str
    formula: str
    params: tuple[FusionParam, ...] = ()
    scores: bool = True
    weights: WeightsRule = "none"
    supervised: bool = False
    aliases: tuple[str, ...] = ()
    ranx: str | None = None
    reference: str = ""

    def param(self, name: str) -> FusionParam | None:
        """The parameter ``name``, or None."""
        return next((p for p in self.params if p.name == name), None)


@dataclass(frozen=True)
class NormSpec:
    """A per-run, per-query score normalisation: names, formula, and what a degenerate list becomes."""

    name: str
    formula: str
    degenerate: str
    aliases: tuple[str, ...] = ()
    ranx: str | None = None


_FOX = "Fox & Shaw, TREC-2 1994"
_MOURAO = "Mourão, Martins & Magalhães, CMIG 2015"
_LILLIS = "Lillis et al."

METHODS: tuple[FusionSpec, ...] = (
    FusionSpec("rrf", "reciprocal rank fusion", "Σ_r w_r / (k + rank_r(d))",
               (FusionParam("k", float, 60, "the constant added to each rank", 0.0, None,
                            (1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100)),),
               scores=False, weights="optional", ranx="rrf", reference="Cormack, Clarke & Büttcher, SIGIR 2009"),
    FusionSpec("combsum", "sum of the normalised scores", "Σ_r w_r · s_r(d)", weights="optional",
               aliases=("sum", "comb_sum"), ranx="sum", reference=_FOX),
    FusionSpec("combmnz", "sum times the number of runs that retrieved d", "n(d) · Σ_r w_r · s_r(d)",
               weights="optional", aliases=("mnz", "comb_mnz"), ranx="mnz", reference=_FOX),
    FusionSpec("combmax", "largest normalised score", "max_{r ∋ d} s_r(d)", aliases=("max", "comb_max"),
               ranx="max", reference=_FOX),
    FusionSpec("combmin", "smallest normalised score", "min_{r ∋ d} s_r(d)", aliases=("min", "comb_min"),
               ranx="min", reference=_FOX),
    FusionSpec("combmed", "median normalised score", "median_{r ∋ d} s_r(d)", aliases=("med", "comb_med"),
               ranx="med", reference=_FOX),
    FusionSpec("combanz", "mean normalised score over the runs that retrieved d", "Σ_r s_r(d) / n(d)",
               aliases=("anz", "comb_anz"), ranx="anz", reference=_FOX),
    FusionSpec("combgmnz", "sum times n(d) to the power gamma", "Σ_r s_r(d) · n(d)^γ",
               (FusionParam("gamma", float, 1.0, "the exponent of n(d)", 0.0, None,
                            (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),),
               aliases=("gmnz", "comb_gmnz"), ranx="gmnz", reference="Lee, SIGIR 1997"),
    FusionSpec("wsum", "weighted sum of the normalised scores", "Σ_r w_r · s_r(d)", weights="required",
               aliases=("weighted", "w_sum"), ranx="wsum"),
    FusionSpec("wmnz", "sum of scores times the sum of the weights of the runs that retrieved d",
               "(Σ_{r ∋ d} s_r(d)) · (Σ_{r ∋ d} w_r)", weights="required", ranx="wmnz",
               reference="Wu & Crestani, CIKM 2002"),
    FusionSpec("mixed", "weighted sum times the square root of n(d)", "(Σ_{r ∋ d} w_r · s_r(d)) · √n(d)",
               weights="required", ranx="mixed", reference="Wu & Crestani, CIKM 2002"),
    FusionSpec("isr", "inverse square rank", "n(d) · Σ_r 1 / rank_r(d)²", scores=False, ranx="isr",
               reference=_MOURAO),
    FusionSpec("log_isr", "inverse square rank times log n(d)", "ln n(d) · Σ_r 1 / rank_r(d)²", scores=False,
               ranx="log_isr", reference=_MOURAO),
    FusionSpec("logn_isr", "inverse square rank times log(n(d) + sigma)", "ln(n(d) + σ) · Σ_r 1 / rank_r(d)²",
               (FusionParam("sigma", float, 0.01, "added to n(d) inside the logarithm", 0.0, 1.0,
                            (0.01, 0.05, 0.1, 0.2, 0.5, 1.0)),),
               scores=False, ranx="logn_isr", reference=_MOURAO),
    FusionSpec("rbc", "rank-biased centroid", "Σ_r (1 - φ) · φ^(rank_r(d) - 1)",
               (FusionParam("phi", float, 0.8, "persistence (the chance of looking one rank further)", 0.0, 1.0,
                            (*tuple(round(0.05 * i, 2) for i in range(1, 20)), 0.99)),),
               scores=False, ranx="rbc", reference="Bailey, Moffat, Scholer & Thomas, SIGIR 2017"),
    FusionSpec("borda", "Borda count", "Σ_r (C - rank_r(d) + 1), or (C - |r| + 1) / 2 when r missed d",
               scores=False, aliases=("bordafuse",), ranx="bordafuse", reference="Aslam & Montague, SIGIR 2001"),
    FusionSpec("weighted_borda", "weighted Borda count", "Σ_r w_r · borda_r(d)", scores=False, weights="required",
               aliases=("w_bordafuse", "weighted_bordafuse"), ranx="w_bordafuse",
               reference="Aslam & Montague, SIGIR 2001"),
    FusionSpec("condorcet", "Condorcet fusion (Copeland score of the pairwise majority)",
               "1 + #{d': d beats d'} + ½ #{d': tie}; d beats d' when more runs rank d above d'",
               scores=False, ranx="condorcet", reference="Montague & Aslam, CIKM 2002"),
    FusionSpec("weighted_condorcet", "weighted Condorcet fusion", "as condorcet, votes weighted by w_r",
               scores=False, weights="required", aliases=("w_condorcet",), ranx="w_condorcet",
               reference="Montague & Aslam, CIKM 2002"),
    FusionSpec("bayesfuse", "sum of the log-odds of relevance at each run's rank segment",
               "Σ_r log(p_r / (1 - p_r)) at the segment of rank_r(d); log(0.001 / 0.999) when r missed d",
               scores=False, supervised=True, ranx="bayesfuse", reference="Aslam & Montague, SIGIR 2001"),
    FusionSpec("posfuse", "sum of the probability of relevance at each run's rank", "Σ_r P_r(rel | rank_r(d))",
               scores=False, supervised=True, ranx="posfuse", reference=f"{_LILLIS}, SIGIR 2010"),
    FusionSpec("probfuse", "sum of segment probabilities of relevance, divided by the segment number",
               "Σ_r P_r(rel | segment k) / k, the list cut into n_segments equal segments",
               (FusionParam("n_segments", int, 10, "segments each ranked list is cut into", 1, None,
                            (1, 2, 3, 5, 10, 20, 25, 50, 100)),),
               scores=False, supervised=True, ranx="probfuse", reference=f"{_LILLIS}, SIGIR 2006"),
    FusionSpec("segfuse", "segment probability of relevance times (normalised score + 1)",
               "Σ_r P_r(rel | segment of rank_r(d)) · (s_r(d) + 1), segments of 5, 10, 20, 40, ... ranks",
               supervised=True, ranx="segfuse", reference="Shokouhi, ECIR 2007"),
    FusionSpec("slidefuse", "probability of relevance averaged over a window of ranks",
               "Σ_r mean of P_r(rel | rank) over ranks rank_r(d) ± w",
               (FusionParam("w", int, 2, "half-width of the window of ranks", 0, None, (0, 1, 2, 3, 5, 10, 20, 50)),),
               scores=False, supervised=True, ranx="slidefuse", reference=f"{_LILLIS}, ECIR 2008"),
    FusionSpec("mapfuse", "each run's MAP divided by the rank", "Σ_r MAP_r / rank_r(d)", scores=False,
               supervised=True, ranx="mapfuse", reference=f"{_LILLIS}, SIGIR 2010"),
)

NORMS: tuple[NormSpec, ...] = (
    NormSpec("minmax", "(s - min) / (max - min)", "every score 1 when max = min"),
    NormSpec("min-max", "(s - min) / max(max - min, 1e-9)", "every score 0 when max = min",
             aliases=("min_max", "max-min"), ranx="min-max"),
    NormSpec("min-max-inverted", "(max - s) / max(max - min, 1e-9); the run's order is reversed",
             "every score 0 when max = min", aliases=("min_max_inverted",), ranx="min-max-inverted"),
    NormSpec("max", "s / max(max, 1e-9)", "divided by 1e-9 when the largest score is <= 1e-9", ranx="max"),
    NormSpec("sum", "(s - min) / max(Σ s - n · min, 1e-9)", "every score 0 when max = min", ranx="sum"),
    NormSpec("zscore", "(s - mean) / std (population std)", "every score 0 when std = 0", aliases=("z-score",)),
    NormSpec("zmuv", "(s - mean) / max(std, 1e-9)", "every score 0 when std = 0", ranx="zmuv"),
    NormSpec("rank", "1 - (rank - 1) / n", "n = the run's list length for the query", ranx="rank"),
    NormSpec("borda", "1 - (rank - 1) / C; (1 - (n - 1) / C) / 2 for the candidates the run missed",
             "C = the documents any run retrieved for the query; every run then holds every candidate",
             ranx="borda"),
)

_METHOD_INDEX = {name: spec for spec in METHODS for name in (spec.name, *spec.aliases)}
_NORM_INDEX = {name: spec for spec in NORMS for name in (spec.name, *spec.aliases)}


def method_names() -> tuple[str, ...]:
    """The canonical method names, in declaration order."""
    return tuple(s.name for s in METHODS)


def norm_names() -> tuple[str, ...]:
    """The canonical normalisation names (``None``: raw scores)."""
    return tuple(s.name for s in NORMS)


def _close(name: str, names: list[str]) -> tuple[str, ...]:
    return tuple(difflib.get_close_matches(name, names, n=3, cutoff=0.6))


def get_method(name: str) -> FusionSpec:
    """The method ``name`` (canonical, alias or ranx name; case-insensitive), or an error with close matches."""
    spec = _METHOD_INDEX.get(str(name).strip().lower()) if isinstance(name, str) else None
    if spec is None:
        choices = Items(method_names())
        close = Items(_close(str(name).lower(), list(_METHOD_INDEX)))
        if close.items:
            raise InvalidParameterError(_("unknown fusion method {value!r}; did you mean: {close}? (methods: "
                                          "{choices})", value=name, close=close, choices=choices))
        raise InvalidParameterError(_("fusion method must be one of {choices}; got {value!r}", choices=choices,
                                      value=name))
    return spec


def get_norm(name: str | None) -> NormSpec | None:
    """The normalisation ``name`` (None or ``"none"``: raw scores), or an error with close matches."""
    if name is None or (isinstance(name, str) and name.strip().lower() == "none"):
        return None
    spec = _NORM_INDEX.get(str(name).strip().lower()) if isinstance(name, str) else None
    if spec is None:
        choices = Items((*norm_names(), "none"))
        close = Items(_close(str(name).lower(), list(_NORM_INDEX)))
        if close.items:
            raise InvalidParameterError(_("unknown normalisation {value!r}; did you mean: {close}? "
                                          "(normalisations: {choices})", value=name, close=close, choices=choices))
        raise InvalidParameterError(_("norm must be one of {choices}; got {value!r}", choices=choices, value=name))
    return spec


def check_params(spec: FusionSpec, params: dict[str, Any]) -> dict[str, float | int]:
    """``params`` checked against ``spec``: unknown names refused, values typed, defaults filled in."""
    known = {p.name for p in spec.params}
    for key in params:
        if key not in known:
            allowed = Items(tuple(sorted(known))) if known else Items(("none",))
            raise InvalidParameterError(_("{method} takes no parameter {name!r} (its parameters: {allowed})",
                                          method=spec.name, name=key, allowed=allowed))
    return {p.name: p.check(spec.name, params.get(p.name, p.default)) for p in spec.params}
