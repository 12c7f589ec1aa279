"""Prediction-powered metrics: model-judged metrics corrected by a random audit of queries judged by people.

Angelopoulos, Bates, Fannjiang, Jordan & Zrnic, *Prediction-powered inference*,
Science 382 (2023).  The model judges every pooled document of every query; a
random sample of queries (:func:`draw_audit`, ``rankscope pool --audit-sample``)
is also judged by people, *every* pooled document of each sampled query.

The unit is the query
    nDCG@10, AP or RR is a function of all of a query's labels at once, so the
    sampling unit is the query and PPI is applied to per-query metric values:
    ``ŷ_q`` the metric of a run on query ``q`` with the model's labels (every
    query), ``y_q`` the same with people's labels (audited queries only).  The
    rectifier ``Δ_q = y_q − ŷ_q`` is what the model's labels get wrong on ``q``;
    its mean over the audit corrects the model-judged mean.  Differences between
    two runs are the same estimator on per-query differences (paired by query).
The sampling frame
    The audit is drawn from the *frame*: the queries of the pool, i.e. those with
    documents people had not judged.  Queries outside the frame are taken to
    carry no model label, so their ``Δ`` is 0 (rankscope checks, when the
    labels have provenance, that the model labels hold no model label on them).
Target ``queries`` (default)
    The metric these queries would have with people's labels,
    ``θ = mean over all N queries of y_q``.  With ``F`` frame queries and ``n``
    audited, ``θ̂ = mean(ŷ) + (F/N) · mean over the audit of Δ``, an unbiased
    estimate under the random audit; its standard error is
    ``(F/N) · sqrt((1 − n/F) · s²_Δ / n)`` (sampling without replacement from the
    frame, ``s²`` with ``n − 1``), and the interval uses Student's t on ``n − 1``
    degrees of freedom.  It says nothing about other queries: the test set's own
    sampling is what ``rankscope compare`` is about.
Target ``population``
    The classical PPI mean of Angelopoulos et al.: the queries are a sample of a
    population and ``θ`` is its mean metric; ``θ̂ = mean of ŷ over the queries not
    audited + mean over the audit of Δ``, standard error
    ``sqrt(σ̂²_ŷ / (N − n) + σ̂²_Δ / n)`` (standard deviations with ``n``, as
    ``ppi_py.ppi_mean_ci`` with ``lam=1``, which the tests check it against), and
    a normal interval.  It needs the audit to be drawn from every query.
Small audits
    The intervals rest on the audit's spread of ``Δ``.  When the model's labels
    matter on a few queries only (two runs whose top documents nearly coincide,
    compared by their difference), a small audit may draw none of those queries,
    see no spread and give too narrow an interval; on DL-HARD with 20 of 50
    queries audited, the interval of the worst such pair covered the true
    difference in 74–80% of simulated audits where the runs' intervals covered
    theirs in 93–94%.  Audit more queries when a difference rests on few of them.
Human-only
    Each estimate comes with the interval the audit alone gives (the same target,
    the people's values ``y_q`` in place of the rectifier), so the gain of the
    model's labels is visible: PPI is narrower when ``Δ`` varies less than ``y``.

>>> yhat = np.array([[0.2, 0.4, 0.6, 0.8, 0.5, 0.3]])
>>> est = ppi_mean(yhat, np.array([[0.3, 0.5, 0.6]]), np.array([0, 1, 2]))
>>> round(float(est.value[0]), 4)
0.5333
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.errors import InvalidParameterError, Items, ParseError, RankscopeError
from rankscope.i18n import _
from rankscope.labels.provenance import Labels

__all__ = ["TARGETS", "AuditSample", "PPIEstimate", "PPIReport", "draw_audit", "ppi_mean", "prediction_powered",
           "read_audit"]

TARGETS = ("queries", "population")


@dataclass(frozen=True)
class PPIEstimate:
    """Rows of estimates (one per run, or per pair of runs): the PPI value and interval, the human-only value and
    interval, and the plain model-judged mean over every query."""

    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    human_value: np.ndarray
    human_low: np.ndarray
    human_high: np.ndarray
    model_only: np.ndarray


def _check_target(target: str) -> None:
    if target not in TARGETS:
        choices = Items(TARGETS)
        raise InvalidParameterError(_("target must be one of {choices}, got {value!r}", choices=choices, value=target))


def ppi_mean(yhat: np.ndarray, y: np.ndarray, audited: np.ndarray, *, frame: np.ndarray | None = None,
             alpha: float = 0.05, target: str = "queries") -> PPIEstimate:
    """PPI means of rows (module docstring).

    ``yhat``: ``(rows, N)`` model-judged values of every query; ``y``: ``(rows, n)`` people-judged values of the
    audited queries, whose columns in ``yhat`` are ``audited``; ``frame``: a boolean mask of the ``N`` queries the
    audit was drawn from (default: all).
    """
    from scipy import stats

    _check_target(target)
    yhat = np.atleast_2d(np.asarray(yhat, dtype=np.float64))
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    audited = np.asarray(audited, dtype=np.int64)
    big_n, n = yhat.shape[1], len(audited)
    frame = np.ones(big_n, dtype=bool) if frame is None else np.asarray(frame, dtype=bool)
    f = int(frame.sum())
    if n < 2 or y.shape[1] != n:
        raise InvalidParameterError(_("PPI needs at least 2 audited queries, got {n}", n=n))
    delta = y - yhat[:, audited]
    model_only = yhat.mean(axis=1)
    if target == "population":
        if f != big_n:
            raise InvalidParameterError(_("the population target needs an audit drawn from every query; this one "
                                          "was drawn from {frame} of {queries}", frame=f, queries=big_n))
        rest = np.ones(big_n, dtype=bool)
        rest[audited] = False
        z = float(stats.norm.ppf(1 - alpha / 2))
        value = yhat[:, rest].mean(axis=1) + delta.mean(axis=1)
        se = np.sqrt(yhat[:, rest].std(axis=1) ** 2 / rest.sum() + delta.std(axis=1) ** 2 / n)
        hv, hse = y.mean(axis=1), y.std(axis=1) / np.sqrt(n)
        return PPIEstimate(value, value - z * se, value + z * se, hv, hv - z * hse, hv + z * hse, model_only)
    share = f / big_n
    t = float(stats.t.ppf(1 - alpha / 2, n - 1))
    fpc = max(0.0, 1.0 - n / f)
    value = model_only + share * delta.mean(axis=1)
    se = share * np.sqrt(fpc * delta.var(axis=1, ddof=1) / n)
    outside = yhat[:, ~frame].sum(axis=1) / big_n  # outside the frame people's values are the model-judged ones
    hv = outside + share * y.mean(axis=1)
    hse = share * np.sqrt(fpc * y.var(axis=1, ddof=1) / n)
    return PPIEstimate(value, value - t * se, value + t * se, hv, hv - t * hse, hv + t * hse, model_only)


# -- the audit sample -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AuditSample:
    """The queries drawn for people to judge (``sampled``), the ``frame`` they were drawn from and the ``seed``."""

    sampled: tuple[str, ...]
    frame: tuple[str, ...]
    seed: int

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "rankscope audit sample", "seed": self.seed, "sampled": list(self.sampled),
                "frame": list(self.frame),
                "how": "queries drawn uniformly without replacement from the frame (the pool's queries); people "
                       "judge every pooled document of each sampled query"}


def draw_audit(pool_queries: Iterable[str], n: int, seed: int = 0) -> AuditSample:
    """``n`` queries drawn uniformly without replacement (``seed``) from ``pool_queries``, the frame.

    >>> draw_audit(["q1", "q2", "q3", "q4"], 2, seed=0).sampled
    ('q3', 'q4')
    """
    frame = tuple(sorted(set(pool_queries)))
    if isinstance(n, bool) or not isinstance(n, int) or not 2 <= n <= len(frame):
        raise InvalidParameterError(_("the audit sample must be between 2 and the pool's {frame} queries, got "
                                      "{value!r}", frame=len(frame), value=n))
    pick = np.random.default_rng(seed).choice(len(frame), size=n, replace=False)
    return AuditSample(tuple(frame[i] for i in sorted(pick)), frame, int(seed))


def audit_sidecar(path: str | Path) -> Path:
    """The sample description beside an audit pool file: ``audit.jsonl`` -> ``audit.jsonl.sample.json``."""
    p = Path(path)
    return p.with_name(p.name + ".sample.json")


def read_audit(path: str | Path) -> AuditSample:
    """The :class:`AuditSample` described beside the audit pool file ``path`` (or the description itself)."""
    p = Path(path)
    side = p if p.name.endswith(".sample.json") else audit_sidecar(p)
    if not side.exists():
        raise ParseError(_("no audit sample description beside this file (rankscope pool --audit-sample writes "
                           "{name})", name=side.name),
                         source=str(p))
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ParseError(_("invalid JSON: {reason}", reason=exc.msg), source=str(side)) from None
    ok = isinstance(data, dict) and all(isinstance(data.get(k), list) for k in ("sampled", "frame")) \
        and isinstance(data.get("seed"), int)
    if not ok or not set(data["sampled"]) <= set(data["frame"]):
        raise ParseError(_("not an audit sample description (sampled, frame, seed)"), source=str(side))
    return AuditSample(tuple(map(str, data["sampled"])), tuple(map(str, data["frame"])), data["seed"])


# -- per-query metrics and the report ----------------------------------------------------------------------
@dataclass(frozen=True)
class PPIReport:
    """PPI estimates per metric: ``runs[metric]`` (one row per system) and ``pairs[metric]`` (``b − a`` for every
    pair ``(a, b)`` with ``a`` before ``b``), and what they rest on."""

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    runs: dict[str, PPIEstimate]
    pairs: dict[str, PPIEstimate]
    pair_names: tuple[tuple[str, str], ...]
    queries: int
    frame: int
    audited: int
    alpha: float
    target: str
    seed: int

    def to_dict(self) -> dict[str, Any]:
        def rows(est: PPIEstimate, names: Sequence[str]) -> list[dict[str, Any]]:
            return [{"name": name, "ppi": float(est.value[i]), "ppi_interval": [float(est.low[i]),
                                                                                 float(est.high[i])],
                     "human_only": float(est.human_value[i]),
                     "human_only_interval": [float(est.human_low[i]), float(est.human_high[i])],
                     "model_judged": float(est.model_only[i])} for i, name in enumerate(names)]

        pairs = [f"{b} - {a}" for a, b in self.pair_names]
        return {"method": "prediction-powered inference (Angelopoulos et al., 2023) on per-query metric values",
                "target": self.target, "alpha": self.alpha, "queries": self.queries, "frame": self.frame,
                "audited": self.audited, "audit_seed": self.seed,
                "metrics": {m: {"runs": rows(self.runs[m], self.systems),
                                "differences": rows(self.pairs[m], pairs) if m in self.pairs else []}
                            for m in self.metrics}}


def _restrict(qrels: Qrels, keep: Sequence[str]) -> Qrels:
    t = qrels.to_arrow()
    t = t.filter(pc.is_in(t["query_id"], value_set=pa.array(list(keep), type=pa.string())))
    return Qrels(t["query_id"], t["doc_id"], t["relevance"].to_numpy())


def prediction_powered(
    human: Qrels | Labels,
    model: Qrels | Labels,
    runs: Mapping[str, Run] | Sequence[Run],
    audit: AuditSample,
    metrics: Iterable[str] | None = None,
    *,
    alpha: float = 0.05,
    target: str = "queries",
    relevance_level: int = 1,
    depth: int | None = None,
) -> PPIReport:
    """PPI estimates of each run's metric and of each difference between runs (module docstring).

    ``model``: the labels the model-judged numbers use (every query); ``human``: people's labels, which must hold
    the audited queries (every pooled document of each); ``audit``: the sample (:func:`read_audit`).
    """
    from rankscope.comparison import compare

    _check_target(target)
    h = human.qrels if isinstance(human, Labels) else human
    m = model.qrels if isinstance(model, Labels) else model
    wanted = list(metrics) if metrics is not None else ["ndcg@10"]
    options: dict[str, Any] = {"relevance_level": relevance_level, "depth": depth, "alpha": alpha, "bootstrap": 1}
    cm = compare(m, runs, wanted, **options)
    queries = [str(q) for q in cm.query_ids]
    sampled = list(audit.sampled)
    missing = sorted(set(sampled) - set(queries))
    unjudged = sorted(set(sampled) - {str(q) for q in h.queries})
    if missing:
        raise RankscopeError(_("audited query {query!r} is not among the queries the model labels and the runs "
                               "evaluate", query=missing[0]))
    if unjudged:
        raise RankscopeError(_("audited query {query!r} is not in the human labels (have people judged the audit?)",
                               query=unjudged[0]))
    if isinstance(model, Labels):
        outside = set(queries) - set(audit.frame)
        t = model.table.filter(pc.equal(model.table["source"], "model"))
        stray = sorted(set(t["query_id"].to_pylist()) & outside)
        if stray:
            raise RankscopeError(_("the model labels judge query {query!r}, outside the frame the audit was drawn "
                                   "from: the audit does not cover it", query=stray[0]))
    ch = compare(_restrict(h, sampled), runs, wanted, **options)
    index = {q: i for i, q in enumerate(queries)}
    audited = np.array([index[q] for q in sampled])
    frame = np.isin(np.array(queries, dtype=object), np.array(audit.frame, dtype=object))
    hq = [str(q) for q in ch.query_ids]
    order = np.array([hq.index(q) for q in sampled])
    n_sys = len(cm.systems)
    pair_idx = [(i, j) for i in range(n_sys) for j in range(i + 1, n_sys)]
    out_runs, out_pairs = {}, {}
    for label in cm.labels:
        yhat = cm.per_query(label)[1]
        y = ch.per_query(label)[1][:, order]
        out_runs[label] = ppi_mean(yhat, y, audited, frame=frame, alpha=alpha, target=target)
        if pair_idx:
            a, b = np.array(pair_idx).T
            out_pairs[label] = ppi_mean(yhat[b] - yhat[a], y[b] - y[a], audited, frame=frame, alpha=alpha,
                                        target=target)
    return PPIReport(cm.systems, tuple(cm.labels), out_runs, out_pairs,
                     tuple((cm.systems[i], cm.systems[j]) for i, j in pair_idx), len(queries), int(frame.sum()),
                     len(sampled), float(alpha), target, audit.seed)
