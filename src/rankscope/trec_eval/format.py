"""trec_eval's output: ``%-22s\\t%s\\t%6.4f`` lines, per query (``-q``) then ``all``.

Per-query lines come first, query by query (sorted query ids, only queries in
the run), each with every column that trec_eval prints per query; then one
summary line per column.  Summaries follow trec_eval 9.0.8 exactly:

* means are the sequential sum of the per-query values (in query order) divided
  by the number of queries — all qrels queries with ``-c`` (missing ones count 0);
* ``num_*`` counts are sums printed as integers; with ``-c`` the ``num_rel`` summary
  is instead the number of qrels entries with a positive grade over all qrels
  queries, ignoring ``-l`` (trec_eval 9.0.8's rule);
* a NaN (trec_eval's 0/0: ``iprec_at_recall`` of a query ``-J`` leaves empty) prints ``-nan`` and makes
  the summary ``-nan``, as the C sum does;
* ``gm_*`` are exp(Σ log(max(v, 1e-5)) / n), a missing query counting log(1e-5);
* ``relstring`` is printed per query only, ``runid`` / ``num_q`` / ``gm_*`` in the summary only.
"""

from __future__ import annotations

import math

import numpy as np

from rankscope.trec_eval.compute import Computed

__all__ = ["render", "MIN_GEO_MEAN"]

MIN_GEO_MEAN = 0.00001


def _seq_sum(values: np.ndarray) -> float:
    """Left-to-right sum (trec_eval accumulates query by query)."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0


def _cell(kind: str, value: object) -> str:
    if kind == "long":
        return str(int(value))  # type: ignore[call-overload]
    if kind == "str":
        return f"'{value}'"
    return _float(float(value))  # type: ignore[arg-type]


def _float(value: float) -> str:
    """``%6.4f`` as C prints it: glibc writes trec_eval's 0/0 (a NaN with the sign bit set) as ``-nan``."""
    return "  -nan" if math.isnan(value) else f"{value:6.4f}"


def render(result: Computed, *, per_query: bool, summary: bool, complete: bool) -> str:
    """The full trec_eval output text."""
    p = result.prepared
    in_run = np.asarray(p.in_run, dtype=bool)
    lines: list[str] = []
    if per_query:
        shown = [j for j, c in enumerate(result.columns) if c.per_query]
        labels = [f"{result.columns[j].label:<22}" for j in shown]
        kinds = [result.columns[j].printed for j in shown]
        cells = []
        for j, kind in zip(shown, kinds):
            vals = result.values[j]
            seq = vals if isinstance(vals, list) else vals.tolist()
            cells.append([_cell(kind, v) for v in seq])
        qids = [str(q) for q in p.query_ids]
        for i in np.flatnonzero(in_run).tolist():
            lines.extend(f"{lab}\t{qids[i]}\t{col[i]}" for lab, col in zip(labels, cells))
    if summary:
        n_eval = int(in_run.sum())
        n = p.n if complete else n_eval
        for col, vals in zip(result.columns, result.values):
            how = col.summary
            if how == "none":
                continue
            head = f"{col.label:<22}\tall\t"
            if how == "runid":
                lines.append(head + result.run_name)
                continue
            if how == "count":
                lines.append(head + str(n))
                continue
            v = np.asarray(vals, dtype=np.float64)
            if how == "sum":
                if complete and col.name == "num_rel":
                    # trec_eval 9 -c: every qrels entry with a positive grade, whatever -l says
                    lines.append(head + str(result.qrels_positive))
                else:
                    lines.append(head + str(int(_seq_sum(v[in_run]))))
            elif how == "gmean":
                logs = np.log(np.maximum(v[in_run], MIN_GEO_MEAN))
                s = _seq_sum(logs)
                if complete:
                    s += (n - n_eval) * math.log(MIN_GEO_MEAN)
                lines.append(head + f"{math.exp(s / n) if n else 0.0:6.4f}")
            else:
                lines.append(head + _float(_seq_sum(v[in_run]) / n if n else 0.0))
    return "\n".join(lines) + "\n" if lines else ""
