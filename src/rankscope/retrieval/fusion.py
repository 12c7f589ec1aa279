"""Rank fusion of several runs or retrievers: RRF, CombSUM, CombMNZ, weighted sums.

For each query, every run ``r`` (weight ``w_r``, default 1) contributes to
each document ``d`` it retrieved:

``"rrf"`` — reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009)::

    score(d) = Σ_r  w_r / (k + rank_r(d))          rank from 1, k = 60 by default

``"combsum"`` (Fox & Shaw, TREC-2 1994)::

    score(d) = Σ_r  w_r · norm_r(s_r(d))

``"combmnz"``::

    score(d) = n(d) · Σ_r  w_r · norm_r(s_r(d))     n(d) = number of runs that retrieved d

``"weighted"`` — CombSUM with explicit ``weights`` (required), e.g. ``α·dense + (1-α)·bm25``.

A run that did not retrieve ``d`` contributes 0.  Ranks follow trec_eval's
order (score descending, ties by doc id descending).  Score normalisation
(``norm``, per run and per query; not used by ``"rrf"``):

``"minmax"`` (default)
    ``(s - min) / (max - min)``; when all scores of the query are equal every one becomes ``1``.
``"zscore"``
    ``(s - mean) / std`` (population std); when ``std == 0`` every one becomes ``0``.
``None``
    raw scores (only sensible when the runs share a score scale).

``depth`` keeps only each run's top ``depth`` documents per query before fusing.
The work is vectorized over all rows of all runs (one Arrow group-by).

>>> from rankscope.data import Run
>>> a = Run.from_ranked_lists({"q": ["d1", "d2", "d3"]}, name="a")
>>> b = Run.from_ranked_lists({"q": ["d3", "d1"]}, name="b")
>>> fused = fuse([a, b], method="rrf")
>>> {d: round(s, 5) for d, s in fused.to_dict()["q"].items()}
{'d1': 0.03252, 'd2': 0.01613, 'd3': 0.03227}
>>> fused.name
'rrf(a,b)'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from rankscope.data.run import Run
from rankscope.engine.ranking import trec_order
from rankscope.errors import EmptyInputError, InvalidParameterError, Items
from rankscope.i18n import _

__all__ = ["fuse", "FUSION_METHODS", "NORMALIZATIONS", "normalize_scores", "ranked_lists"]

FUSION_METHODS = ("rrf", "combsum", "combmnz", "weighted")
NORMALIZATIONS = ("minmax", "zscore", None)


def _check_options(method: str, norm: str | None, k: float, weights: Any, n_runs: int, depth: Any) -> list[float]:
    if method not in FUSION_METHODS:
        choices = Items(FUSION_METHODS)
        raise InvalidParameterError(_("fusion method must be one of {choices}; got {value!r}", choices=choices,
                                      value=method))
    if norm not in NORMALIZATIONS:
        raise InvalidParameterError(_("norm must be 'minmax', 'zscore' or None; got {value!r}", value=norm))
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k) or k < 0:
        raise InvalidParameterError(_("the RRF constant k must be a number >= 0, got {value!r}", value=k))
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise InvalidParameterError(_("depth must be a positive integer or None, got {value!r}", value=depth))
    if weights is None:
        if method == "weighted":
            raise InvalidParameterError(_("method='weighted' needs weights, one per run"))
        return [1.0] * n_runs
    w = list(weights)
    if len(w) != n_runs:
        raise InvalidParameterError(_("weights: expected one weight per run ({n}), got {got}", n=n_runs, got=len(w)))
    for x in w:
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x < 0:
            raise InvalidParameterError(_("weights must be finite numbers >= 0, got {value!r}", value=x))
    return [float(x) for x in w]


def _ranked_rows(run: Run) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(row order, query code, score, 0-based rank)`` with rows grouped by query, best first."""
    order = trec_order(run)
    q = run.qcode[order]
    counts = np.bincount(q, minlength=len(run.query_ids))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(len(q)) - np.repeat(starts, counts)
    return order, q, run.scores[order], rank


def normalize_scores(scores: np.ndarray, groups: np.ndarray, norm: str | None) -> np.ndarray:
    """Normalise ``scores`` within each group id of ``groups`` (``"minmax"``, ``"zscore"`` or ``None``).

    >>> normalize_scores(np.array([3.0, 1.0, 2.0, 5.0]), np.array([0, 0, 0, 1]), "minmax").tolist()
    [1.0, 0.0, 0.5, 1.0]
    >>> normalize_scores(np.array([3.0, 1.0, 2.0]), np.array([0, 0, 0]), "zscore").round(4).tolist()
    [1.2247, -1.2247, 0.0]
    """
    if norm is None or len(scores) == 0:
        return scores.astype(np.float64, copy=True)
    n = int(groups.max()) + 1
    if norm == "minmax":
        lo = np.full(n, np.inf)
        hi = np.full(n, -np.inf)
        np.minimum.at(lo, groups, scores)
        np.maximum.at(hi, groups, scores)
        span = (hi - lo)[groups]
        out = np.ones(len(scores))
        np.divide(scores - lo[groups], span, out=out, where=span > 0)
        return out
    if norm == "zscore":
        counts = np.bincount(groups, minlength=n).astype(np.float64)
        mean = np.bincount(groups, weights=scores, minlength=n) / np.maximum(counts, 1)
        dev = scores - mean[groups]
        std = np.sqrt(np.bincount(groups, weights=dev * dev, minlength=n) / np.maximum(counts, 1))[groups]
        out = np.zeros(len(scores))
        np.divide(dev, std, out=out, where=std > 0)
        return out
    raise InvalidParameterError(_("norm must be 'minmax', 'zscore' or None; got {value!r}", value=norm))


def _as_runs(runs: Any) -> list[Run]:
    from rankscope.io import as_run

    mapping = "{name: run}"
    if isinstance(runs, Run):
        raise InvalidParameterError(_("fuse needs a list (or {mapping} mapping) of at least one run, got one Run",
                                      mapping=mapping))
    if isinstance(runs, Mapping):
        return [as_run(r, str(name)) for name, r in runs.items()]
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence):
        raise InvalidParameterError(_("fuse needs a list or {mapping} mapping of runs, got {type}", mapping=mapping,
                                      type=type(runs).__name__))
    return [as_run(r, f"run{i + 1}" if not isinstance(r, Run) else None) for i, r in enumerate(runs)]


def fuse(
    runs: Sequence[Any] | Mapping[str, Any],
    method: str = "rrf",
    *,
    norm: str | None = "minmax",
    k: float = 60,
    weights: Sequence[float] | None = None,
    depth: int | None = None,
    name: str | None = None,
) -> Run:
    """Fuse several runs into one (see the module docstring for the formulas).

    Parameters
    ----------
    runs:
        A list of runs, or ``{name: run}``; anything :func:`rankscope.io.as_run` accepts.
    method:
        ``"rrf"`` (default), ``"combsum"``, ``"combmnz"`` or ``"weighted"``.
    norm:
        ``"minmax"`` (default), ``"zscore"`` or ``None``; ignored by ``"rrf"``.
    k:
        The RRF constant (default 60).
    weights:
        One non-negative weight per run (required for ``"weighted"``).
    depth:
        Use only each run's top ``depth`` documents per query.
    name:
        Name of the fused run (default ``"<method>(<run names>)"``).

    Returns
    -------
    Run
        One row per (query, document) retrieved by any run; queries are the union of the runs' queries.

    >>> from rankscope.data import Run
    >>> bm25 = Run.from_dict({"q": {"d1": 12.0, "d2": 8.0}}, name="bm25")
    >>> dense = Run.from_dict({"q": {"d2": 0.9, "d3": 0.5}}, name="dense")
    >>> fuse([bm25, dense], "combsum").to_dict()
    {'q': {'d1': 1.0, 'd2': 1.0, 'd3': 0.0}}
    >>> fuse([bm25, dense], "combmnz").to_dict()
    {'q': {'d1': 1.0, 'd2': 2.0, 'd3': 0.0}}
    >>> fuse([bm25, dense], "weighted", weights=[0.3, 0.7]).to_dict()
    {'q': {'d1': 0.3, 'd2': 0.7, 'd3': 0.0}}
    """
    run_list = _as_runs(runs)
    if not run_list:
        raise EmptyInputError(_("fuse needs at least one run"))
    w = _check_options(method, norm, k, weights, len(run_list), depth)
    queries: list[pa.Array] = []
    docs: list[pa.Array] = []
    contrib: list[np.ndarray] = []
    for run, weight in zip(run_list, w):
        if len(run) == 0:
            continue
        order, q, s, rank = _ranked_rows(run)
        if depth is not None:
            keep = rank < depth
            order, q, s, rank = order[keep], q[keep], s[keep], rank[keep]
        if method == "rrf":
            c = weight / (k + rank + 1.0)
        else:
            c = weight * normalize_scores(s, q, norm)
        queries.append(pa.array(run.query_ids[q], type=pa.string()))
        docs.append(run.doc_ids.take(pa.array(run.dcode[order])).cast(pa.string()))
        contrib.append(c)
    fused_name = name or f"{method}({','.join(r.name for r in run_list)})"
    if not contrib:
        return Run([], [], [], fused_name)
    table = pa.table(
        {
            "query": pa.concat_arrays(queries),
            "doc": pa.concat_arrays(docs),
            "c": pa.array(np.concatenate(contrib)),
        }
    )
    grouped = table.group_by(["query", "doc"], use_threads=False).aggregate([("c", "sum"), ("c", "count")])
    score = grouped.column("c_sum").to_numpy()
    if method == "combmnz":
        score = score * grouped.column("c_count").to_numpy()
    return Run(grouped.column("query"), grouped.column("doc"), score, fused_name)


def ranked_lists(run: Run, k: int | None = None) -> dict[str, list[tuple[str, float]]]:
    """``{query: [(doc, score), ...]}`` best first in trec_eval order, cut at ``k``.

    >>> from rankscope.data import Run
    >>> ranked_lists(Run.from_dict({"q": {"a": 1.0, "b": 1.0, "c": 2.0}}), k=2)
    {'q': [('c', 2.0), ('b', 1.0)]}
    """
    if len(run) == 0:
        return {}
    order, q, s, rank = _ranked_rows(run)
    if k is not None:
        keep = rank < k
        order, q, s = order[keep], q[keep], s[keep]
    doc = run.doc_ids.take(pa.array(run.dcode[order])).to_pylist()
    qs = run.query_ids[q].tolist()
    out: dict[str, list[tuple[str, float]]] = {}
    for qi, di, si in zip(qs, doc, s.tolist()):
        out.setdefault(qi, []).append((di, si))
    return out

