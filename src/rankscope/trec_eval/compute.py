"""Resolve trec_eval measure requests into rankscope measures and compute them.

A request (``-m P.5,10``, ``-m all_trec``) marks trec_eval names; each marked
name expands into output *columns* (``P_5``, ``P_10``) through the metric
grammar the families declare (:func:`rankscope.measures.parse.expand_trec`,
read as trec_eval 9.0.8 reads it), each backed by one rankscope
:class:`~rankscope.measures.Measure`.  All columns are computed by one call of
:func:`rankscope.engine.score` on one prepared run.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

import numpy as np

from rankscope.data import Qrels, Run
from rankscope.engine.policies import Policies
from rankscope.engine.prepare import Prepared, QrelsIndex, prepare
from rankscope.engine.scoring import score
from rankscope.errors import RankscopeError
from rankscope.measures.base import Measure
from rankscope.measures.parse import expand_trec, parse_metric, trec_form
from rankscope.trec_eval.catalog import NICKNAMES, ORDER, RUNID, UNSUPPORTED
from rankscope.trec_eval.flags import TrecOptions, TrecUsageError

__all__ = ["Column", "resolve", "Computed", "compute"]


@dataclass(frozen=True)
class Column:
    """One printed measure: its trec_eval label and name, and the rankscope measure behind it."""

    label: str
    name: str
    measure: Measure | None  # None: runid

    @property
    def summary(self) -> str:
        """How the ``all`` line is made: the measure's aggregate (``runid``: the run's tag)."""
        return RUNID if self.measure is None else self.measure.spec.aggregate

    @property
    def printed(self) -> str:
        """``float`` (``%6.4f``), ``long`` (counts) or ``str`` (relstring, runid)."""
        if self.measure is None or self.measure.spec.text:
            return "str"
        return "long" if self.summary in ("sum", "count") else "float"

    @property
    def per_query(self) -> bool:
        """Whether ``-q`` prints it per query (not runid, num_q or the geometric means)."""
        return self.measure is not None and self.summary not in ("count", "gmean")


def _illegal(request: str) -> TrecUsageError:
    """'illegal measure', with the trec_eval spelling of a metric given in another one, or close names."""
    hint: list[str] = []
    try:
        m = parse_metric(request)
    except RankscopeError:
        m = None
    if m is not None and not m.params:
        for form in m.spec.trec:
            if m.cutoff is not None and form.syntax == "cutoffs":
                hint = [f"{form.name}.{m.cutoff}"]
            elif m.cutoff is None and form.syntax in ("none", "text", "list"):
                hint = [form.name]
    if m is not None and m.cutoff is None and len(m.params) == 1 and not hint:
        (key, value), = m.params
        hint = [f"{f.name}.{value:g}" for f in m.spec.trec if f.syntax == "values" and f.params == (key,)]
    if not hint:
        hint = difflib.get_close_matches(request, [*ORDER, *NICKNAMES], n=3, cutoff=0.6)
    extra = f"; did you mean {' or '.join(hint)}?" if hint else ""
    return TrecUsageError(f"illegal measure '{request}'{extra}")


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
        elif name == RUNID or trec_form(name, exact=True) is not None:
            marked.add(name)
        elif name in UNSUPPORTED:
            raise TrecUsageError(f"measure '{name}' needs a preference / judgment-group rel_info format (-R), "
                                 "which is not supported")
        else:
            raise _illegal(req)
    return marked, params


def resolve(opts: TrecOptions) -> list[Column]:
    """The output columns of a command line, in trec_eval's order."""
    marked, params = _mark(opts.measures)
    options = {"num_docs": max(opts.num_docs, 0)}
    cols: list[Column] = []
    for name in ORDER:
        if name not in marked:
            continue
        if name == RUNID:
            cols.append(Column(RUNID, RUNID, None))
            continue
        found = trec_form(name, exact=True)
        assert found is not None, name  # every name of ORDER is declared by a metric family
        try:
            pairs = expand_trec(*found, params.get(name), trec_eval=True, options=options)
        except RankscopeError as exc:
            raise TrecUsageError(str(exc)) from None
        cols.extend(Column(label, name, m) for label, m in pairs)
    return cols


@dataclass
class Computed:
    """Per-query values of every column plus what the summary needs."""

    prepared: Prepared
    columns: list[Column]
    values: list[np.ndarray | list[str]]
    run_name: str
    qrels_positive: int = 0  # qrels entries with grade > 0 (trec_eval's -c num_rel summary)


def compute(opts: TrecOptions, qrels: Qrels, run: Run, columns: list[Column]) -> Computed:
    """Join, rank (scores as float32, as trec_eval) and score every column (no Python loop over queries)."""
    index = QrelsIndex(qrels)
    # -J: trec_eval cuts at -M first, then drops unjudged documents and re-ranks the rest (the engine's
    # condensed lists); a query left with no document is still evaluated (as an empty ranking)
    policies = Policies(relevance_level=opts.relevance_level, depth=opts.depth,
                        missing="zero" if opts.complete or opts.judged_only else "ignore",
                        unjudged="condense" if opts.judged_only else "keep")
    prepared, _ = prepare(index, run, policies)
    measures = [c.measure for c in columns if c.measure is not None]
    matrix = score(prepared.data, measures)
    values: list[np.ndarray | list[str]] = []
    j = 0
    for col in columns:
        if col.measure is None:
            values.append(np.zeros(prepared.n))
            continue
        column = matrix[:, j]
        values.append(column.tolist() if col.printed == "str" else column.astype(np.float64))
        j += 1
    return Computed(prepared, columns, values, run.name, int((qrels.grades > 0).sum()))
