"""Rank fusion of several runs: every method ranx offers, exact, vectorised.

For each query, every run ``r`` (weight ``w_r``) contributes to each document
``d`` it retrieved.  ``rank_r(d)`` counts from 1 in ``r``'s trec_eval order
(score descending, scores compared as float32, ties by doc id descending),
``s_r(d)`` is the score after the normalisation ``norm`` (per run and per
query), ``n(d)`` the number of runs that retrieved ``d`` and ``C`` the number of
documents any run retrieved for the query.  The methods (declared in
:mod:`rankscope.retrieval.fusion.registry`, with their formulas; docs/fusion.md
lists them all) are RRF, CombSUM, CombMNZ, CombMAX, CombMIN, CombMED, CombANZ,
CombGMNZ, W-Sum, WMNZ, Mixed, ISR, log-ISR, logN-ISR, RBC, Borda, weighted
Borda, Condorcet, weighted Condorcet, and, trained on judgments (``qrels=``),
BayesFuse, PosFuse, ProbFuse, SegFuse, SlideFuse and MAPFuse.  For example:

``"rrf"`` — reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009)::

    score(d) = Σ_r  w_r / (k + rank_r(d))          k = 60 by default

``"combsum"`` / ``"combmnz"`` (Fox & Shaw, TREC-2 1994)::

    score(d) = Σ_r  w_r · s_r(d)        and        n(d) · Σ_r  w_r · s_r(d)

``"wsum"`` (also ``"weighted"``) — CombSUM with explicit ``weights``, e.g. ``α·dense + (1-α)·bm25``.

A run that did not retrieve ``d`` contributes 0 (BayesFuse: the log-odds
``log(0.001/0.999)``; Borda: half the points left).  The fused run holds every
document any run retrieved.  Normalisations (``norm``; rank-only methods ignore
it, except ``"borda"``, which gives every run every candidate, and
``"min-max-inverted"``, which reverses each run's order):

``"minmax"`` (default)
    ``(s - min) / (max - min)``; when all scores of the query are equal every one becomes ``1``.
``"zscore"``
    ``(s - mean) / std`` (population std); when ``std == 0`` every one becomes ``0``.
``"min-max"``, ``"min-max-inverted"``, ``"max"``, ``"sum"``, ``"zmuv"``, ``"rank"``, ``"borda"``
    ranx's normalisations, with ranx's 1e-9 floor on the denominators (see the registry).
``None``
    raw scores (only sensible when the runs share a score scale).

``depth`` keeps only each run's top ``depth`` documents per query before fusing.
The work is numpy over all rows of all runs (:mod:`rankscope.retrieval.fusion.pool`).

>>> from rankscope.data import Run
>>> a = Run.from_ranked_lists({"q": ["d1", "d2", "d3"]}, name="a")
>>> b = Run.from_ranked_lists({"q": ["d3", "d1"]}, name="b")
>>> fused = fuse([a, b], method="rrf")
>>> {d: round(s, 5) for d, s in fused.to_dict()["q"].items()}
{'d1': 0.03252, 'd2': 0.01613, 'd3': 0.03227}
>>> fused.name
'rrf(a,b)'
>>> fuse([a, b], "borda").to_dict()
{'q': {'d1': 5.0, 'd2': 3.0, 'd3': 4.0}}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from rankscope.data.run import Run
from rankscope.errors import EmptyInputError, InvalidParameterError
from rankscope.i18n import _
from rankscope.retrieval.fusion.pool import Features, Pool, normalize_scores
from rankscope.retrieval.fusion.registry import (
    METHODS,
    NORMS,
    FusionSpec,
    check_params,
    get_method,
    get_norm,
    method_names,
    norm_names,
)

__all__ = ["fuse", "train_fusion", "TrainedFusion", "FUSION_METHODS", "NORMALIZATIONS", "normalize_scores",
           "ranked_lists", "METHODS", "NORMS", "get_method", "get_norm"]

FUSION_METHODS: tuple[str, ...] = method_names()
NORMALIZATIONS: tuple[str | None, ...] = (*norm_names(), None)


def _check_k(k: Any) -> float:
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not math.isfinite(k) or k < 0:
        raise InvalidParameterError(_("the RRF constant k must be a number >= 0, got {value!r}", value=k))
    return float(k)


def _check_depth(depth: Any) -> None:
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
        raise InvalidParameterError(_("depth must be a positive integer or None, got {value!r}", value=depth))


def check_weights(spec: FusionSpec, weights: Any, n_runs: int) -> np.ndarray:
    """One finite weight >= 0 per run, as ``spec`` asks (all 1 for a method that takes none)."""
    if weights is None:
        if spec.weights == "required":
            raise InvalidParameterError(_("method={method!r} needs weights, one per run", method=spec.name))
        return np.ones(n_runs)
    if spec.weights == "none":
        raise InvalidParameterError(_("{method} takes no weights", method=spec.name))
    w = list(weights)
    if len(w) != n_runs:
        raise InvalidParameterError(_("weights: expected one weight per run ({n}), got {got}", n=n_runs, got=len(w)))
    for x in w:
        if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)) or not math.isfinite(x) \
                or x < 0:
            raise InvalidParameterError(_("weights must be finite numbers >= 0, got {value!r}", value=x))
    return np.asarray(w, dtype=np.float64)


def _check_options(method: str, norm: str | None, k: float, weights: Any, n_runs: int, depth: Any) -> list[float]:
    """Validate fusion options before any run is fused (as :class:`~rankscope.retrieval.hybrid.HybridRetriever`
    does on construction); the weights, one per run."""
    spec = get_method(method)
    get_norm(norm)
    _check_k(k)
    _check_depth(depth)
    if spec.supervised:
        raise InvalidParameterError(_("{method} is trained on judgments: use fuse(..., qrels=...) on runs",
                                      method=spec.name))
    return [float(x) for x in check_weights(spec, weights, n_runs)]


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


def _norm_name(norm: str | None) -> str | None:
    spec = get_norm(norm)
    return None if spec is None else spec.name


@dataclass(frozen=True)
class TrainedFusion:
    """A supervised fusion method trained on judgments: what it learned for each run (:func:`train_fusion`).

    ``tables[r]`` is run ``r``'s table: ``P(rel | rank)`` (posfuse, slidefuse), segment probabilities
    (probfuse, segfuse), log-odds per rank (bayesfuse) or its MAP (mapfuse, one value).
    ``queries`` is the number of training queries.
    """

    method: str
    norm: str | None
    params: dict[str, float | int]
    tables: tuple[np.ndarray, ...]
    run_names: tuple[str, ...]
    queries: int
    relevance_level: int = 1
    depth: int | None = None

    def fuse(self, runs: Sequence[Any] | Mapping[str, Any], name: str | None = None) -> Run:
        """Fuse ``runs`` (the same number, in the same order as trained) with what was learned."""
        params: dict[str, Any] = dict(self.params)
        return fuse(runs, self.method, norm=self.norm, depth=self.depth, name=name, trained=self, **params)


def _relevant_rows(feat: Features, evaluator: Any, scorer: Any = None) -> tuple[Any, np.ndarray]:
    """The pool scorer (its metric: ``map``) and, per pool row, whether the qrels judge it relevant."""
    from rankscope.retrieval.fusion.scoring import PoolScorer

    if scorer is None or scorer.pool is not feat.pool:
        scorer = PoolScorer(feat.pool, evaluator)
    rel = np.zeros(feat.pool.n_rows, dtype=bool)
    rel[scorer.rows] = scorer.data.grade >= evaluator.policies.relevance_level
    return scorer, rel


def learn(spec: FusionSpec, feat: Features, params: dict[str, float | int], evaluator: Any,
          train_eval: np.ndarray | None = None, scorer: Any = None) -> tuple[list[np.ndarray], int]:
    """Train ``spec`` on ``feat``'s runs: the tables and the number of training queries.

    ``evaluator`` holds the qrels (with the ``map`` metric first); ``train_eval`` (bool per qrels query)
    picks the training queries (default: every qrels query); ``scorer``: a
    :class:`~rankscope.retrieval.fusion.scoring.PoolScorer` of the pool with the ``map`` metric, kept by the caller.
    """
    from rankscope.retrieval.fusion.train import train_tables

    scorer, rel = _relevant_rows(feat, evaluator, scorer)
    mask = np.ones(scorer.n_eval, dtype=bool) if train_eval is None else np.asarray(train_eval, dtype=bool)
    n_train = int(mask.sum())
    to_eval = scorer.pool_to_eval
    train_q = np.zeros(len(to_eval), dtype=bool)
    train_q[to_eval >= 0] = mask[to_eval[to_eval >= 0]]

    def ap(r: int) -> np.ndarray:
        vals = scorer.run_values(feat.rank[r], feat.present[r], feat.length[r])[:, 0]
        return scorer.pool_query_values(vals)

    relevant = feat.present & rel[None, :]
    return train_tables(spec.name, feat, relevant, train_q, n_train, params, ap), n_train


def train_fusion(qrels: Any, runs: Sequence[Any] | Mapping[str, Any], method: str, *, norm: str | None = "minmax",
                 depth: int | None = None, relevance_level: int = 1, **params: Any) -> TrainedFusion:
    """Train a supervised fusion method (``bayesfuse``, ``posfuse``, ``probfuse``, ``segfuse``, ``slidefuse``,
    ``mapfuse``) on ``qrels`` (every qrels query trains; one a run did not answer is an empty list for it).

    >>> from rankscope import Qrels
    >>> qrels = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d1": 1}})
    >>> a = Run.from_dict({"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2}}, name="a")
    >>> b = Run.from_dict({"q1": {"d1": 3, "d2": 2}, "q2": {"d1": 1, "d3": 3}}, name="b")
    >>> t = train_fusion(qrels, [a, b], "posfuse")
    >>> [x.tolist() for x in t.tables]
    [[0.0, 0.5, 1.0], [0.5, 0.5]]
    >>> t.fuse([a, b]).to_dict()["q1"]
    {'d3': 0.0, 'd2': 1.0, 'd1': 1.5}
    """
    from rankscope.engine.evaluator import Evaluator

    spec = get_method(method)
    if not spec.supervised:
        raise InvalidParameterError(_("{method} learns nothing from judgments; call fuse() without qrels",
                                      method=spec.name))
    run_list = _as_runs(runs)
    if not run_list:
        raise EmptyInputError(_("fuse needs at least one run"))
    _check_depth(depth)
    checked = check_params(spec, params)
    norm_name = _norm_name(norm)
    pool = Pool.build(run_list, depth)
    feat = pool.features(norm_name)
    ev = Evaluator(qrels, ["map"], relevance_level=relevance_level)
    tables, n_train = learn(spec, feat, checked, ev)
    return TrainedFusion(spec.name, norm_name, checked, tuple(tables), tuple(r.name for r in run_list), n_train,
                         relevance_level, depth)


def fuse(
    runs: Sequence[Any] | Mapping[str, Any],
    method: str = "rrf",
    *,
    norm: str | None = "minmax",
    k: float = 60,
    weights: Sequence[float] | None = None,
    depth: int | None = None,
    name: str | None = None,
    qrels: Any = None,
    relevance_level: int = 1,
    trained: TrainedFusion | None = None,
    **params: Any,
) -> Run:
    """Fuse several runs into one (see the module docstring and docs/fusion.md for every method).

    Parameters
    ----------
    runs:
        A list of runs, or ``{name: run}``; anything :func:`rankscope.io.as_run` accepts.
    method:
        A method name (``"rrf"`` by default; ranx's names work too, e.g. ``"mnz"``, ``"w_bordafuse"``).
    norm:
        The score normalisation: ``"minmax"`` (default), ``"zscore"``, ranx's ``"min-max"``,
        ``"min-max-inverted"``, ``"max"``, ``"sum"``, ``"zmuv"``, ``"rank"``, ``"borda"``, or ``None``.
    k:
        The RRF constant (default 60; only ``"rrf"`` reads it).
    weights:
        One weight >= 0 per run: required by ``wsum``, ``wmnz``, ``mixed``, ``weighted_borda``,
        ``weighted_condorcet``; optional (default 1) for ``rrf``, ``combsum``, ``combmnz``.
    depth:
        Use only each run's top ``depth`` documents per query.
    name:
        Name of the fused run (default ``"<method>(<run names>)"``).
    qrels, relevance_level:
        Judgments the supervised methods are trained on (documents of grade >= ``relevance_level`` are relevant).
    trained:
        A :class:`TrainedFusion` (from :func:`train_fusion`) to apply instead of training on ``qrels``.
    params:
        The method's other parameters: ``phi`` (rbc), ``gamma`` (combgmnz), ``sigma`` (logn_isr),
        ``n_segments`` (probfuse), ``w`` (slidefuse).

    Returns
    -------
    Run
        One row per (query, document) retrieved by any run; queries are the union of the runs' queries.

    >>> bm25 = Run.from_dict({"q": {"d1": 12.0, "d2": 8.0}}, name="bm25")
    >>> dense = Run.from_dict({"q": {"d2": 0.9, "d3": 0.5}}, name="dense")
    >>> fuse([bm25, dense], "combsum").to_dict()
    {'q': {'d1': 1.0, 'd2': 1.0, 'd3': 0.0}}
    >>> fuse([bm25, dense], "combmnz").to_dict()
    {'q': {'d1': 1.0, 'd2': 2.0, 'd3': 0.0}}
    >>> fuse([bm25, dense], "wsum", weights=[0.3, 0.7]).to_dict()
    {'q': {'d1': 0.3, 'd2': 0.7, 'd3': 0.0}}
    >>> fuse([bm25, dense], "rbc", phi=0.5).to_dict()
    {'q': {'d1': 0.5, 'd2': 0.75, 'd3': 0.25}}
    """
    from rankscope.retrieval.fusion.methods import KERNELS
    from rankscope.retrieval.fusion.train import supervised_scores

    run_list = _as_runs(runs)
    if not run_list:
        raise EmptyInputError(_("fuse needs at least one run"))
    spec = get_method(method)
    norm_name = _norm_name(norm)
    k = _check_k(k)
    _check_depth(depth)
    if spec.name == "rrf":
        params = {"k": k, **params}
    checked = check_params(spec, params)
    w = check_weights(spec, weights, len(run_list))
    fused_name = name or f"{spec.name}({','.join(r.name for r in run_list)})"
    if spec.supervised:
        if trained is None and qrels is None:
            raise InvalidParameterError(_("{method} is trained on judgments: give qrels=... (or "
                                          "trained=train_fusion(...))", method=spec.name))
        if trained is not None and (trained.method != spec.name or len(trained.tables) != len(run_list)):
            raise InvalidParameterError(_("trained is {trained} for {n_trained} runs; this is {method} of {n} runs",
                                          trained=trained.method, n_trained=len(trained.tables), method=spec.name,
                                          n=len(run_list)))
    elif trained is not None or qrels is not None:
        raise InvalidParameterError(_("{method} learns nothing from judgments; call fuse() without qrels",
                                      method=spec.name))
    pool = Pool.build(run_list, depth)
    if pool.n_rows == 0:
        return Run(pa.array([], type=pa.string()), pa.array([], type=pa.string()), np.zeros(0), fused_name)
    feat = pool.features(norm_name)
    if spec.supervised:
        if trained is None:
            from rankscope.engine.evaluator import Evaluator

            ev = Evaluator(qrels, ["map"], relevance_level=relevance_level)
            tables, __ = learn(spec, feat, checked, ev)
        else:
            tables = list(trained.tables)
        scores = supervised_scores(spec.name, feat, tables, checked)
    else:
        batch = {key: np.array([value], dtype=np.float64) for key, value in checked.items()}
        scores = KERNELS[spec.name](feat, w[None, :], batch)[0]
    return feat.pool.to_run(scores, fused_name)


def ranked_lists(run: Run, k: int | None = None) -> dict[str, list[tuple[str, float]]]:
    """``{query: [(doc, score), ...]}`` best first in trec_eval order, cut at ``k``.

    >>> ranked_lists(Run.from_dict({"q": {"a": 1.0, "b": 1.0, "c": 2.0}}), k=2)
    {'q': [('c', 2.0), ('b', 1.0)]}
    """
    from rankscope.engine.ranking import trec_order

    if len(run) == 0:
        return {}
    order = trec_order(run)
    q = run.qcode[order]
    counts = np.bincount(q, minlength=len(run.query_ids))
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(len(q)) - np.repeat(starts, counts)
    if k is not None:
        keep = rank < k
        order, q = order[keep], q[keep]
    s = run.scores[order]
    doc = run.doc_ids.take(pa.array(run.dcode[order])).to_pylist()
    qs = run.query_ids[q].tolist()
    out: dict[str, list[tuple[str, float]]] = {}
    for qi, di, si in zip(qs, doc, s.tolist()):
        out.setdefault(qi, []).append((di, si))
    return out
