"""The outcome of scoring one run: :class:`EvaluationResult`, keyed by :class:`~rankscope.measures.Measure`.

A result is read with any spelling of a metric it holds: after
``evaluate(..., ["nDCG@10"])``, ``result["ndcg@10"]``, ``result["ndcg_cut_10"]``
and ``result.per_query["ndcg@10"]`` all find the value; a metric it does not
hold raises :class:`~rankscope.errors.MetricNotFoundError` naming the ones it does.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import numpy as np

from rankscope.data.notices import InputNotice
from rankscope.engine.coverage import result_warnings
from rankscope.engine.judged import JudgedAtK
from rankscope.engine.policies import Policies
from rankscope.engine.prepare import PolicyCounts
from rankscope.errors import InvalidParameterError, MetricNotFoundError, NotFoundError, RankscopeError
from rankscope.i18n import _, ngettext
from rankscope.measures.base import Measure

__all__ = ["EvaluationResult", "PerQueryScores", "aggregate", "result_to_json", "result_from_json"]

GEO_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN


def aggregate(values: np.ndarray, how: str) -> float:
    """Combine per-query values: mean, sum, count, trec_eval's geometric mean, or the median of the positive ones.

    >>> aggregate(np.array([0.0, 3.0, 1.0, 8.0]), "median_found")
    3.0
    """
    if how == "count":
        return float(len(values))
    if len(values) == 0:
        return 0.0
    if how == "sum":
        return float(values.sum())
    if how == "median_found":  # first_rel_rank: 0 means "none found"
        found = values[values > 0]
        return float(np.median(found)) if len(found) else 0.0
    if how == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(values, GEO_FLOOR)))))
    return float(values.mean())


def _measure_of(metric: str | Measure) -> Measure | None:
    if isinstance(metric, Measure):
        return metric
    from rankscope.measures.parse import parse_metric

    try:
        return parse_metric(metric)
    except RankscopeError:
        return None


def metric_column(metric: str | Measure, labels: tuple[str, ...], measures: tuple[Measure, ...] | None) -> int:
    """Column of ``metric`` (any spelling, or a Measure) among ``labels`` / ``measures``.

    >>> from rankscope.measures import parse_metric
    >>> metric_column("ndcg_cut_10", ("nDCG@10",), (parse_metric("nDCG@10"),))
    0
    """
    if isinstance(metric, str) and metric in labels:
        return labels.index(metric)
    wanted = _measure_of(metric)
    if wanted is not None:
        known = measures if measures is not None else tuple(_measure_of(lb) for lb in labels)
        if wanted in known:
            return known.index(wanted)
    raise MetricNotFoundError(metric, labels)


@dataclass(frozen=True)
class PerQueryScores:
    """A query × metric table of per-query values.

    ``values[i, j]`` is metric ``metrics[j]`` on query ``query_ids[i]``; ``measures``
    (what the labels mean) lets any spelling of a metric find its column.

    >>> t = PerQueryScores(np.array(["q1", "q2"], dtype=object), ("P@1",), np.array([[1.0], [0.0]]))
    >>> t["P@1"].tolist(), t["P_1"].tolist(), t.row("q2")
    ([1.0, 0.0], [1.0, 0.0], {'P@1': 0.0})
    """

    query_ids: np.ndarray
    metrics: tuple[str, ...]
    values: np.ndarray
    measures: tuple[Measure, ...] | None = None

    def __getitem__(self, metric: str | Measure) -> np.ndarray:
        return self.values[:, metric_column(metric, self.metrics, self.measures)]

    def __eq__(self, other: object) -> bool:
        """Equal when the queries, labels, measures and every value (bit for bit, NaN equal to NaN) are."""
        if not isinstance(other, PerQueryScores):
            return NotImplemented
        return (self.metrics == other.metrics and self.measures == other.measures
                and self.query_ids.dtype == other.query_ids.dtype and np.array_equal(self.query_ids, other.query_ids)
                and self.values.shape == other.values.shape
                and np.array_equal(self.values, other.values, equal_nan=True))

    __hash__ = None  # type: ignore[assignment]  # mutable arrays inside

    def __contains__(self, metric: object) -> bool:
        try:
            metric_column(metric, self.metrics, self.measures)  # type: ignore[arg-type]
        except MetricNotFoundError:
            return False
        return True

    def __len__(self) -> int:
        return len(self.query_ids)

    def row(self, query_id: str) -> dict[str, float]:
        """All metric values of one query."""
        hit = np.flatnonzero(self.query_ids == query_id)
        if len(hit) == 0:
            n = ngettext("{n} query", "{n} queries", len(self.query_ids))
            raise NotFoundError(_("no query {query_id!r} in this result ({n})", query_id=query_id, n=n))
        return {m: float(v) for m, v in zip(self.metrics, self.values[int(hit[0])])}

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {metric: value}}`` in query order."""
        vals = self.values.tolist()
        return {str(q): dict(zip(self.metrics, row)) for q, row in zip(self.query_ids, vals)}

    def to_dataframe(self) -> Any:
        """A pandas DataFrame indexed by query id, one column per metric."""
        from rankscope.extras import need

        pd = need("pandas", "dataframe")

        return pd.DataFrame(self.values, index=pd.Index(self.query_ids.astype(str), name="query_id"),
                            columns=list(self.metrics))


@dataclass(frozen=True)
class EvaluationResult:
    """Per-query values and aggregates of several metrics on one run.

    ``labels`` are the metric names as the caller wrote them, ``measures`` what
    they mean (any spelling of a metric finds its value: ``result["ndcg_cut_10"]``);
    ``queries`` says how many queries each policy touched and ``policies`` how the
    run was evaluated.  ``diagnostics`` (when the evaluation asked for them, as
    comparisons do) holds per-query values computed in the same pass
    (``first_rel_rank``: the rank of the first relevant document, 0 when none was
    retrieved), in the same query order.  ``spans`` (span judgments only) states
    the chunking, the chunk-qrels rule and the span coverage.  ``judged`` is judged@10 of the run
    (:class:`~rankscope.engine.judged.JudgedAtK`: the share of its top 10 that is judged, model
    labels among them, and why nothing is judged when no id matches); :meth:`warnings` says what
    the counts imply, in every output.  ``notices`` are what the
    reader of the run decided (e.g. a third column read as a rank), shown in every output.
    ``ceilings`` is the mean a perfect ranking reaches on the evaluated queries, per bounded
    metric (ratings compare the mean with it: a perfect run is rated in the best band); an evaluation
    scores the perfect ranking when ``ceilings`` is first read
    (:class:`~rankscope.engine.ceilings.CeilingMeans`).
    """

    run_name: str
    labels: tuple[str, ...]
    measures: tuple[Measure, ...]
    per_query: PerQueryScores
    queries: PolicyCounts
    policies: Policies = field(default_factory=Policies)
    diagnostics: PerQueryScores | None = None
    spans: dict[str, Any] | None = None
    judged: JudgedAtK | None = None
    notices: tuple[InputNotice, ...] = ()
    ceilings: Mapping[str, float] = field(default_factory=dict)

    def warnings(self) -> list[Any]:
        """What the counts imply (:class:`~rankscope.engine.coverage.DataWarning` values; ``.text(lang)``)."""
        return result_warnings(self)

    def mean(self) -> dict[str, float]:
        """Aggregate of each metric over queries, in the caller's metric order.

        The aggregate is the arithmetic mean except for trec_eval's counts
        (``num_*``: sum) and ``gm_*`` measures (geometric mean).
        """
        return {
            label: aggregate(self.per_query.values[:, j], m.spec.aggregate)
            for j, (label, m) in enumerate(zip(self.labels, self.measures))
        }

    def __getitem__(self, metric: str | Measure) -> float:
        """The aggregate of ``metric``, in any spelling (``result["P_10"]`` after asking for ``"P@10"``)."""
        j = metric_column(metric, self.labels, self.measures)
        return aggregate(self.per_query.values[:, j], self.measures[j].spec.aggregate)

    def __contains__(self, metric: object) -> bool:
        try:
            metric_column(metric, self.labels, self.measures)  # type: ignore[arg-type]
        except MetricNotFoundError:
            return False
        return True

    def to_dict(self, per_query: bool = True) -> dict[str, Any]:
        """A JSON-ready dict: run name, metric labels, means, per-query values, query counts, policies.

        The fields are written by the serialiser a saved result uses (:func:`result_to_json`), so the two say
        the counts, policies, notices and ceilings alike."""
        out: dict[str, Any] = {"run": self.run_name, "metrics": list(self.labels), "mean": self.mean()}
        if per_query:
            out["per_query"] = self.per_query.to_dict()
        out["queries"] = _RESULT_OUT["queries"](self.queries)
        out["policies"] = _RESULT_OUT["policies"](self.policies)
        if self.spans is not None:  # span judgments: chunking, chunk rule and span coverage
            out["spans"] = self.spans
        if self.judged is not None:
            out["judged"] = self.judged.to_dict(self.per_query.query_ids if per_query else None)
        out["warnings"] = [w.to_dict() for w in self.warnings()]
        out["notices"] = _RESULT_OUT["notices"](self.notices)
        out["ceilings"] = _RESULT_OUT["ceilings"](self.ceilings)
        return out

    def to_dataframe(self) -> Any:
        """Per-query values as a pandas DataFrame (query id index, one column per metric)."""
        return self.per_query.to_dataframe()

    def __repr__(self) -> str:
        means = ", ".join(f"{k}={v:.4f}" for k, v in self.mean().items())
        notes = f", {len(self.notices)} notice(s)" if self.notices else ""
        return f"EvaluationResult({self.run_name!r}, {self.queries.evaluated} queries: {means}{notes})"


# -- the serialiser of a result: every field as JSON-ready data and back, bit for bit (rankscope.saved writes it to a
# file, the service rebuilds its stored results through it, to_dict above shares its field writers) --------------
def _ids_out(ids: np.ndarray) -> dict[str, Any]:
    return {"ids": [str(q) for q in ids.tolist()], "dtype": "object" if ids.dtype == object else ids.dtype.str}


def _ids_in(data: dict[str, Any]) -> np.ndarray:
    return np.asarray(data["ids"], dtype=object if data["dtype"] == "object" else np.dtype(data["dtype"]))


def _matrix_in(rows: list[Any], shape: list[int]) -> np.ndarray:
    return np.asarray(rows, dtype=np.float64).reshape(shape)


def _scores_out(p: PerQueryScores | None) -> dict[str, Any] | None:
    if p is None:
        return None
    return {"query_ids": _ids_out(p.query_ids), "metrics": list(p.metrics), "values": p.values.tolist(),
            "shape": list(p.values.shape), "measures": None if p.measures is None else [str(m) for m in p.measures]}


def _scores_in(d: dict[str, Any] | None) -> PerQueryScores | None:
    if d is None:
        return None
    measures = None if d["measures"] is None else _measures_in(d["measures"])
    return PerQueryScores(_ids_in(d["query_ids"]), tuple(d["metrics"]), _matrix_in(d["values"], d["shape"]), measures)


def _measures_in(names: list[str]) -> tuple[Measure, ...]:
    from rankscope.measures.parse import parse_metric

    return tuple(parse_metric(n) for n in names)


def _counts_in(d: dict[str, Any]) -> PolicyCounts:
    known = {f.name for f in fields(PolicyCounts)}
    return PolicyCounts(**{k: v for k, v in d.items() if k in known})


def _plain(value: Any, field: str) -> Any:
    """The value of ``field`` as JSON can hold it (str, numbers, lists, dicts, None)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        kind = type(value).__name__
        raise InvalidParameterError(_("cannot save the field {field!r}: a {type} has no JSON form", field=field,
                                      type=kind)) from None


def _judged_out(j: JudgedAtK | None) -> dict[str, Any] | None:
    if j is None:
        return None
    return {**j.to_dict(), "shares": [None if v != v else float(v) for v in j.per_query.tolist()]}


def _judged_in(d: dict[str, Any] | None) -> JudgedAtK | None:
    if d is None:
        return None
    shares = np.asarray([np.nan if v is None else v for v in d.get("shares") or []], dtype=float)
    return replace(JudgedAtK.from_dict(d), per_query=shares)


_RESULT_OUT: dict[str, Callable[[Any], Any]] = {
    "labels": list,
    "measures": lambda ms: [str(m) for m in ms],
    "per_query": _scores_out,
    "diagnostics": _scores_out,
    "queries": asdict,
    "policies": lambda p: p.to_dict(),
    "notices": lambda ns: [n.to_dict() for n in ns],
    "judged": _judged_out,
    "ceilings": dict,
}
_RESULT_IN: dict[str, Callable[[Any], Any]] = {
    "labels": tuple,
    "measures": _measures_in,
    "per_query": _scores_in,
    "diagnostics": _scores_in,
    "queries": _counts_in,
    "policies": lambda d: Policies(**d),
    "notices": lambda items: tuple(InputNotice.from_dict(n) for n in items),
    "judged": _judged_in,
}


def result_to_json(result: EvaluationResult) -> dict[str, Any]:
    """Every field of an :class:`EvaluationResult` as JSON-ready data (numbers as JSON floats: a round trip is
    exact).

    >>> from rankscope import Qrels, Run, evaluate
    >>> res = evaluate(Qrels.from_dict({"q1": {"d1": 1}}), Run.from_ranked_lists({"q1": ["d0", "d1"]}, "bm25"), ["mrr"])
    >>> data = result_to_json(res)
    >>> data["per_query"]["values"], result_from_json(json.loads(json.dumps(data))) == res
    ([[0.5]], True)
    """
    return {f.name: _RESULT_OUT.get(f.name, lambda v, n=f.name: _plain(v, n))(getattr(result, f.name))
            for f in fields(result)}


def result_from_json(data: Mapping[str, Any]) -> EvaluationResult:
    """The :class:`EvaluationResult` :func:`result_to_json` wrote (fields it does not hold take their default)."""
    known = {f.name for f in fields(EvaluationResult)}
    return EvaluationResult(**{k: _RESULT_IN.get(k, lambda v: v)(v) for k, v in data.items() if k in known})
