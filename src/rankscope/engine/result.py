"""The outcome of scoring one run: :class:`EvaluationResult`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.engine.prepare import PolicyCounts
from rankscope.measures.base import Measure

__all__ = ["EvaluationResult", "PerQueryScores", "aggregate"]

GEO_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN


def aggregate(values: np.ndarray, how: str) -> float:
    """Combine per-query values: mean, sum, count, or trec_eval's geometric mean."""
    if how == "count":
        return float(len(values))
    if len(values) == 0:
        return 0.0
    if how == "sum":
        return float(values.sum())
    if how == "gmean":
        return float(np.exp(np.mean(np.log(np.maximum(values, GEO_FLOOR)))))
    return float(values.mean())


@dataclass(frozen=True)
class PerQueryScores:
    """A query × metric table of per-query values.

    ``values[i, j]`` is metric ``metrics[j]`` on query ``query_ids[i]``.

    >>> t = PerQueryScores(np.array(["q1", "q2"], dtype=object), ("P@1",), np.array([[1.0], [0.0]]))
    >>> t["P@1"].tolist(), t.row("q2")
    ([1.0, 0.0], {'P@1': 0.0})
    """

    query_ids: np.ndarray
    metrics: tuple[str, ...]
    values: np.ndarray

    def __getitem__(self, metric: str) -> np.ndarray:
        return self.values[:, self.metrics.index(metric)]

    def __len__(self) -> int:
        return len(self.query_ids)

    def row(self, query_id: str) -> dict[str, float]:
        """All metric values of one query."""
        idx = int(np.flatnonzero(self.query_ids == query_id)[0])
        return {m: float(v) for m, v in zip(self.metrics, self.values[idx])}

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {metric: value}}`` in query order."""
        vals = self.values.tolist()
        return {str(q): dict(zip(self.metrics, row)) for q, row in zip(self.query_ids, vals)}

    def to_dataframe(self) -> Any:
        """A pandas DataFrame indexed by query id, one column per metric."""
        import pandas as pd

        return pd.DataFrame(self.values, index=pd.Index(self.query_ids.astype(str), name="query_id"),
                            columns=list(self.metrics))


@dataclass(frozen=True)
class EvaluationResult:
    """Per-query values and aggregates of several metrics on one run.

    ``labels`` are the metric names as the caller wrote them, ``measures`` what
    they mean; ``queries`` says how many queries each query policy touched.
    """

    run_name: str
    labels: tuple[str, ...]
    measures: tuple[Measure, ...]
    per_query: PerQueryScores
    queries: PolicyCounts
    policies: dict[str, Any] = field(default_factory=dict)

    def mean(self) -> dict[str, float]:
        """Aggregate of each metric over queries, in the caller's metric order.

        The aggregate is the arithmetic mean except for trec_eval's counts
        (``num_*``: sum) and ``gm_*`` measures (geometric mean).
        """
        return {
            label: aggregate(self.per_query.values[:, j], m.spec.aggregate)
            for j, (label, m) in enumerate(zip(self.labels, self.measures))
        }

    def __getitem__(self, label: str) -> float:
        return self.mean()[label]

    def to_dict(self, per_query: bool = True) -> dict[str, Any]:
        """A JSON-ready dict: run name, metric labels, means, per-query values, query counts."""
        out: dict[str, Any] = {"run": self.run_name, "metrics": list(self.labels), "mean": self.mean()}
        if per_query:
            out["per_query"] = self.per_query.to_dict()
        out["queries"] = {
            "evaluated": self.queries.evaluated,
            "missing_from_run": self.queries.missing_from_run,
            "not_in_qrels": self.queries.not_in_qrels,
            "no_relevant": self.queries.no_relevant,
        }
        if "spans" in self.policies:  # span judgments: chunking, chunk rule and span coverage
            out["spans"] = self.policies["spans"]
        return out

    def to_dataframe(self) -> Any:
        """Per-query values as a pandas DataFrame (query id index, one column per metric)."""
        return self.per_query.to_dataframe()

    def __repr__(self) -> str:
        means = ", ".join(f"{k}={v:.4f}" for k, v in self.mean().items())
        return f"EvaluationResult({self.run_name!r}, {self.queries.evaluated} queries: {means})"
