"""Resolve trec_eval measure requests into rankscope metrics and compute them.

A request (``-m P.5,10``, ``-m all_trec``) marks catalogue entries; each marked
entry expands into output *columns* (``P_5``, ``P_10``), each backed by one
rankscope :class:`~rankscope.measures.Measure` computed by the shared vectorized
kernels on one :class:`~rankscope.engine.prepare.Prepared` bundle.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from rankscope.data import Qrels, Run
from rankscope.engine.prepare import MissingPolicy, Prepared, QrelsIndex, prepare
from rankscope.measures.base import Measure
from rankscope.measures.registry import get_spec
from rankscope.measures.utility import relstrings
from rankscope.trec_eval.catalog import BY_NAME, CATALOG, NICKNAMES, UNSUPPORTED, TrecMeasure
from rankscope.trec_eval.flags import TrecOptions, TrecUsageError

__all__ = ["Column", "resolve", "Computed", "compute"]

_ATOL = re.compile(r"^\s*[+-]?\d+")


@dataclass(frozen=True)
class Column:
    """One printed measure: its trec_eval label, catalogue entry and rankscope measure."""

    label: str
    entry: TrecMeasure
    measure: Measure | None


def _mark(requests: list[str]) -> tuple[set[str], dict[str, str]]:
    marked: set[str] = set()
    params: dict[str, str] = {}
    for req in requests or ["official"]:
        name, dot, raw = req.partition(".")
        if dot:
            if not raw:
                raise TrecUsageError(f"improper measure in parameter '{req}' (nothing after '.')")
            params.setdefault(name, raw)  # trec_eval uses the first parameter list given for a measure
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in BY_NAME:
            marked.add(name)
        elif name in UNSUPPORTED:
            raise TrecUsageError(f"measure '{name}' needs a preference / judgment-group rel_info format (-R), "
                                 "which is not supported")
        else:
            raise TrecUsageError(f"illegal measure '{req}'")
    return marked, params


def _long_cuts(name: str, raw: str) -> list[int]:
    cuts = []
    for part in raw.split(","):
        m = _ATOL.match(part)
        if not m:
            raise TrecUsageError(f"cutoff {part!r} of measure '{name}' is not an integer")
        cuts.append(int(m.group()))
    cuts.sort()
    if cuts[0] <= 0:
        raise TrecUsageError(f"measure '{name}': cutoffs must be positive, got {raw!r}")
    if len(set(cuts)) != len(cuts):
        raise TrecUsageError(f"measure '{name}': duplicate cutoffs in {raw!r}")
    return cuts


def _floats(name: str, raw: str) -> list[float]:
    try:
        return [float(v) for v in raw.split(",")]
    except ValueError:
        raise TrecUsageError(f"parameters of measure '{name}' must be comma-separated numbers, got {raw!r}") from None


def _columns_of(entry: TrecMeasure, raw: str | None, opts: TrecOptions) -> list[Column]:
    if not entry.metric or entry.name == "num_q":
        return [Column(entry.name, entry, None if not entry.metric else get_spec(entry.metric).measure())]
    spec = get_spec(entry.metric)
    if entry.syntax == "cuts":
        cuts = _long_cuts(entry.name, raw) if raw is not None else [int(c) for c in entry.default]
        return [Column(f"{entry.name}_{c}", entry, spec.measure(c)) for c in cuts]
    if entry.syntax == "fractions":
        vals = sorted(_floats(entry.name, raw)) if raw is not None else list(entry.default)
        if len(set(vals)) != len(vals):
            raise TrecUsageError(f"measure '{entry.name}': duplicate cutoffs in {raw!r}")
        return [Column(f"{entry.name}_{v:3.2f}", entry, spec.measure(None, **{entry.param: v})) for v in vals]
    label = entry.name if raw is None else f"{entry.name}_{raw}"
    if entry.syntax == "gains":
        return [Column(label, entry, spec.measure(None, gains=raw or ""))]
    if entry.syntax == "floats":
        vals = _floats(entry.name, raw) if raw is not None else list(entry.default)
        if entry.name == "utility":
            if len(vals) != 4:
                raise TrecUsageError(f"utility needs exactly 4 coefficients a,b,c,d, got {raw!r}")
            coef = dict(zip("abcd", vals))
            return [Column(label, entry, spec.measure(None, **coef, n_docs=max(opts.num_docs, 0)))]
        if entry.name == "11pt_avg":
            return [Column(label, entry, spec.measure(None, levels=",".join(repr(v) for v in vals)))]
        if entry.name == "relstring":
            return [Column(label, entry, spec.measure(None, length=max(int(vals[0]), 0)))]
        return [Column(label, entry, spec.measure(None, **{entry.param: vals[0]}))]
    return [Column(entry.name, entry, spec.measure())]


def resolve(opts: TrecOptions) -> list[Column]:
    """The output columns of a command line, in trec_eval's order."""
    marked, params = _mark(opts.measures)
    cols: list[Column] = []
    for entry in CATALOG:
        if entry.name in marked:
            cols.extend(_columns_of(entry, params.get(entry.name), opts))
    return cols


@dataclass
class Computed:
    """Per-query values of every column plus what the summary needs."""

    prepared: Prepared
    columns: list[Column]
    values: list[np.ndarray | list[str]]
    run_name: str
    qrels_positive: int = 0  # qrels entries with grade > 0 (trec_eval's -c num_rel summary)


def _judged_only(prepared: Prepared) -> Run:
    """The retrieved rows that carry a judgment (grade >= 0), keeping their order."""
    keep = prepared.judged & (prepared.grade >= 0)
    docs = prepared.doc_ids.take(prepared.dcode[keep].astype(np.int64))
    return Run(prepared.query_ids[prepared.qidx[keep]], docs, prepared.score[keep])


def compute(opts: TrecOptions, qrels: Qrels, run: Run, columns: list[Column]) -> Computed:
    """Join, rank and score every column (no Python loop over queries)."""
    index = QrelsIndex(qrels)
    missing: MissingPolicy = "zero" if opts.complete or opts.judged_only else "ignore"
    prepared, _ = prepare(index, run, relevance_level=opts.relevance_level, missing=missing, depth=opts.depth)
    if opts.judged_only:
        # trec_eval cuts at -M first, then drops unjudged documents and re-ranks the rest; a query
        # left with no document is still evaluated (as an empty ranking) because it was in the run
        in_run = prepared.in_run
        prepared, _ = prepare(index, _judged_only(prepared), relevance_level=opts.relevance_level, missing="zero")
        prepared.in_run = in_run
    cache: dict[Measure, np.ndarray] = {}
    values: list[np.ndarray | list[str]] = []
    for col in columns:
        if col.measure is None:
            values.append(np.zeros(prepared.n))
        elif col.entry.name == "relstring":
            values.append(relstrings(prepared, int(col.measure.param("length"))))
        else:
            if col.measure not in cache:
                view = prepared if col.measure.spec.judged_view else prepared.complete_view()
                cache[col.measure] = np.asarray(col.measure.spec.kernel(view, col.measure), dtype=np.float64)
            values.append(cache[col.measure])
    return Computed(prepared, columns, values, run.name, int((qrels.grades > 0).sum()))

