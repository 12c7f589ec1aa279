"""What :func:`~rankscope.retrieval.runner.evaluate_retriever` returns: :class:`RetrieverEvaluation`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.data.run import Run
from rankscope.engine.result import EvaluationResult
from rankscope.errors import InvalidParameterError
from rankscope.retrieval.unknown import UnknownIds

__all__ = ["RetrieverEvaluation"]


@dataclass
class RetrieverEvaluation:
    """The outcome of running a retriever over a test set.

    ``result``
        the metrics of the ranking as retrieved (chunk level when the retriever returns chunks);
    ``run``
        that ranking as a :class:`~rankscope.data.Run` (failed queries have no rows);
    ``latencies``
        seconds per query (the successful call; a batch's time is shared equally by its queries);
    ``errors``
        query id -> the error of the last attempt, for queries that failed every attempt
        (scored as an empty ranking);
    ``doc_result`` / ``doc_run``
        the document-level metrics and run after folding chunks (``None`` without ``chunk_to_doc``);
    ``unknown_ids``
        retrieved ids found in neither qrels nor corpus (at document level when folded);
    ``relevance``
        ``"qrels"`` or ``"answers"`` (judgments derived from answer containment);
    ``chunk_relevance``
        with ``chunk_to_doc``: where the chunk-level judgments come from — ``"qrels"`` (the qrels
        name retrieved chunk ids), ``"answers"``, or ``None`` when nothing judges chunks (document
        judgments and no answers); ``result`` is then all zeros and :meth:`levels` leaves it out;
    ``from_cache``
        how many queries came from the resume cache instead of the retriever.
    """

    result: EvaluationResult
    run: Run
    latencies: dict[str, float]
    errors: dict[str, str]
    doc_result: EvaluationResult | None = None
    unknown_ids: UnknownIds = field(default_factory=UnknownIds)
    doc_run: Run | None = None
    relevance: str = "qrels"
    k: int = 10
    from_cache: int = 0
    retries: dict[str, int] = field(default_factory=dict)
    chunk_relevance: str | None = "qrels"

    def latency_percentile(self, q: float) -> float:
        """The ``q``-th percentile (0-100, linear interpolation) of per-query latency in seconds.

        NaN when no query succeeded.
        """
        if not 0 <= q <= 100:
            raise InvalidParameterError(f"latency percentile must be within [0, 100], got {q!r}")
        values = np.fromiter(self.latencies.values(), dtype=np.float64, count=len(self.latencies))
        return float(np.percentile(values, q)) if len(values) else float("nan")

    def latency_summary(self) -> dict[str, float]:
        """Mean, p50, p95, p99 and max latency in seconds."""
        values = np.fromiter(self.latencies.values(), dtype=np.float64, count=len(self.latencies))
        if not len(values):
            return {}
        return {"mean": float(values.mean()), "p50": self.latency_percentile(50),
                "p95": self.latency_percentile(95), "p99": self.latency_percentile(99), "max": float(values.max())}

    def levels(self) -> dict[str, EvaluationResult]:
        """The results side by side: ``{"retrieved": result}``, or ``{"chunk": ..., "document": ...}`` when
        folded (``"chunk"`` only when something judges chunks, see ``chunk_relevance``)."""
        if self.doc_result is None:
            return {"retrieved": self.result}
        out = {"chunk": self.result} if self.chunk_relevance is not None else {}
        out["document"] = self.doc_result
        return out

    def mean(self) -> dict[str, dict[str, float]]:
        """Mean of each metric at each level, e.g. ``{"chunk": {...}, "document": {...}}``."""
        return {level: res.mean() for level, res in self.levels().items()}

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """A JSON-ready summary: metrics per level, latency, errors, unknown ids."""
        return {
            "run": self.run.name,
            "k": self.k,
            "relevance": self.relevance,
            "chunk_relevance": self.chunk_relevance,
            "levels": {level: res.to_dict(per_query=per_query) for level, res in self.levels().items()},
            "latency_seconds": self.latency_summary(),
            "errors": dict(sorted(self.errors.items())),
            "retried": dict(sorted(self.retries.items())),
            "unknown_ids": self.unknown_ids.to_dict(),
            "from_cache": self.from_cache,
        }

    def __repr__(self) -> str:
        parts = []
        for level, means in self.mean().items():
            parts.append(level + " " + ", ".join(f"{k}={v:.4f}" for k, v in means.items()))
        p50 = self.latency_percentile(50)
        return (f"RetrieverEvaluation({self.run.name!r}: {'; '.join(parts)}; p50 latency {p50 * 1000:.1f} ms; "
                f"{len(self.errors)} failed)")
