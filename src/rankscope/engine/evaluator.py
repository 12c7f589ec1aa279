"""Score runs against qrels: :class:`Evaluator` and :func:`evaluate`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from rankscope.engine.prepare import MissingPolicy, QrelsIndex, prepare
from rankscope.engine.result import EvaluationResult, PerQueryScores
from rankscope.errors import EmptyInputError, InvalidParameterError
from rankscope.measures.base import Measure
from rankscope.measures.parse import parse_metrics

__all__ = ["Evaluator", "evaluate", "DEFAULT_METRICS"]

DEFAULT_METRICS: tuple[str, ...] = ("ndcg@10", "map", "mrr", "recall@100", "precision@10", "hit_rate@10")


class Evaluator:
    """Qrels prepared once, scored against many runs.

    Parameters
    ----------
    qrels : Qrels (or anything :func:`rankscope.io.as_qrels` accepts)
    metrics : metric names in any of the three spellings, or Measure values
    relevance_level : minimum grade that counts as relevant for binary metrics (default 1)
    missing : ``"zero"`` (every qrels query counts; one absent from the run scores as an
        empty ranking, like trec_eval ``-c``) or ``"ignore"`` (only queries in both)
    depth : cut every ranking after this many documents (trec_eval ``-M``)
    chunking : with span judgments (:class:`~rankscope.data.spans.SpanQrels` as ``qrels``): where
        each chunk lies (:class:`~rankscope.data.chunking.Chunking`); the span measures
        (``span_recall@k`` ...) score the judged characters, the other measures score the chunk
        qrels derived with ``rule`` (see :mod:`rankscope.engine.spans`)
    rule : how chunk qrels are derived from spans: ``"any"`` (= ``"chars>=1"``, default),
        ``"chars>=N"``, ``"fraction>=F"``, ``"contains"``

    >>> from rankscope import Qrels, Run
    >>> ev = Evaluator(Qrels.from_dict({"q": {"a": 1}}), ["mrr"])
    >>> ev.evaluate(Run.from_ranked_lists({"q": ["x", "a"]})).mean()
    {'mrr': 0.5}
    """

    def __init__(
        self,
        qrels: Any,
        metrics: Iterable[str | Measure] | str | None = None,
        *,
        relevance_level: int = 1,
        missing: MissingPolicy = "zero",
        depth: int | None = None,
        chunking: Any = None,
        rule: str = "any",
    ) -> None:
        from rankscope.data.spans import SpanQrels
        from rankscope.io.convert import as_qrels

        self.spans = None
        if isinstance(qrels, SpanQrels):
            from rankscope.engine.spans import SpanSource

            self.spans = SpanSource(qrels, chunking, rule)
            qrels = self.spans.qrels
        elif chunking is not None:
            raise InvalidParameterError("chunking= goes with span judgments: pass SpanQrels as the qrels")
        self.qrels = as_qrels(qrels)
        if len(self.qrels) == 0:
            raise EmptyInputError("the qrels hold no judgment")
        if isinstance(relevance_level, bool) or not isinstance(relevance_level, (int, np.integer)):
            raise InvalidParameterError(f"relevance_level must be an integer, got {relevance_level!r}")
        if missing not in ("zero", "ignore"):
            raise InvalidParameterError(f"missing must be 'zero' or 'ignore', got {missing!r}")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1):
            raise InvalidParameterError(f"depth must be a positive integer, got {depth!r}")
        pairs = parse_metrics(DEFAULT_METRICS if metrics is None else metrics)
        if not pairs:
            raise InvalidParameterError("no metric given")
        self.labels = tuple(label for label, _ in pairs)
        self.measures = tuple(m for _, m in pairs)
        if self.spans is None:
            needs = [label for label, m in pairs if m.spec.family == "span"]
            if needs:
                raise InvalidParameterError(
                    f"{needs[0]} needs span judgments: evaluate(span_qrels, run, metrics, chunking=chunking) "
                    "(SpanQrels + Chunking), or --span-qrels and --chunks on the command line")
        self.relevance_level = int(relevance_level)
        self.missing: MissingPolicy = missing
        self.depth = depth
        self.index = QrelsIndex(self.qrels)

    def evaluate(self, run: Any, name: str | None = None) -> EvaluationResult:
        """Score one run (a :class:`Run` or anything :func:`rankscope.io.as_run` accepts)."""
        from rankscope.io.convert import as_run

        run = as_run(run, name=name)
        prepared, counts = prepare(
            self.index, run, relevance_level=self.relevance_level, missing=self.missing, depth=self.depth
        )
        if self.spans is not None and any(m.spec.family == "span" for m in self.measures):
            span_input = self.spans.input_for(prepared)
            prepared.spans = prepared.complete_view().spans = span_input
        cache: dict[Measure, np.ndarray] = {}
        columns = []
        for m in self.measures:
            if m not in cache:
                view = prepared if m.spec.judged_view else prepared.complete_view()
                values = np.asarray(m.spec.kernel(view, m), dtype=np.float64)
                if values.shape != (prepared.n,):
                    raise InvalidParameterError(
                        f"metric {m} returned shape {values.shape}, expected ({prepared.n},)"
                    )
                cache[m] = values
            columns.append(cache[m])
        matrix = np.column_stack(columns) if columns else np.empty((prepared.n, 0))
        return EvaluationResult(
            run_name=run.name,
            labels=self.labels,
            measures=self.measures,
            per_query=PerQueryScores(prepared.query_ids, self.labels, matrix),
            queries=counts,
            policies={"relevance_level": self.relevance_level, "missing": self.missing, "depth": self.depth,
                      **({"spans": self.spans.policy()} if self.spans is not None else {})},
        )


def evaluate(
    qrels: Any,
    run: Any,
    metrics: Iterable[str | Measure] | str | None = None,
    *,
    relevance_level: int = 1,
    missing: MissingPolicy = "zero",
    depth: int | None = None,
    chunking: Any = None,
    rule: str = "any",
) -> EvaluationResult:
    """Score ``run`` against ``qrels`` with ``metrics`` (see :class:`Evaluator`).

    With span judgments: ``evaluate(span_qrels, run, ["span_recall@5", "ndcg@10"], chunking=chunking)``.

    Default metrics: ``ndcg@10 map mrr recall@100 precision@10 hit_rate@10``.

    >>> from rankscope import Qrels, Run
    >>> qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}})
    >>> run = Run.from_dict({"q1": {"d1": 0.9, "d9": 0.8, "d2": 0.1}})
    >>> res = evaluate(qrels, run, ["P@2", "recall@2"])
    >>> res.mean(), res.queries.missing_from_run
    ({'P@2': 0.25, 'recall@2': 0.25}, 1)
    >>> evaluate(qrels, run, ["P@2"], missing="ignore").mean()
    {'P@2': 0.5}
    """
    return Evaluator(
        qrels, metrics, relevance_level=relevance_level, missing=missing, depth=depth, chunking=chunking, rule=rule
    ).evaluate(run)
