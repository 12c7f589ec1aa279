"""One call from retrievers to a verdict: what :func:`rankscope.compare` does with retrievers and their evaluations.

* a :class:`~rankscope.retrieval.evaluation.RetrieverEvaluation` is compared on its
  :attr:`~rankscope.retrieval.evaluation.RetrieverEvaluation.primary` result (the document
  level when judged, else the retrieved level);
* ``compare(testset, {"bm25": bm25, "dense": dense}, metrics)`` runs every retriever over the
  test set with :func:`~rankscope.retrieval.runner.evaluate_retriever` (``k`` = the largest
  metric cutoff, at least 10) and compares the evaluations; runs given beside them are scored on
  the test set's judgments.  Each evaluation's warnings are issued as it runs.

>>> from rankscope import TestSet, compare
>>> ts = TestSet.from_annotations([f"question {i}" for i in range(6)], [[f"d{i}"] for i in range(6)])
>>> def exact(query, k): return ["d" + query.split()[-1]] + [f"x{j}" for j in range(k - 1)]
>>> def second(query, k): return ["x0", "d" + query.split()[-1]] + [f"x{j}" for j in range(1, k - 1)]
>>> c = compare(ts, {"exact": exact, "second": second}, ["mrr"], test="randomization")
>>> c.pair("exact", "second", "mrr").diff, round(c.pair("exact", "second", "mrr").p_value, 4)
(-0.5, 0.0312)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rankscope.i18n import _

__all__ = ["resolve_retrievers", "is_retriever"]

_RETRIEVER_ATTRS = ("search", "search_batch", "invoke", "retrieve", "as_retriever", "similarity_search_with_score")


def is_retriever(obj: Any) -> bool:
    """True for what :func:`~rankscope.retrieval.protocol.as_retriever` accepts and a run is not."""
    from rankscope.data.run import Run
    from rankscope.engine.result import EvaluationResult

    if isinstance(obj, (Run, EvaluationResult, str, bytes, Path, Mapping, Sequence)) or hasattr(obj, "to_pandas"):
        return False
    if type(obj).__name__ == "DataFrame":
        return False
    return callable(obj) or any(hasattr(obj, a) for a in _RETRIEVER_ATTRS)


def resolve_retrievers(qrels: Any, runs: Any, metrics: Any) -> tuple[Any, Any]:
    """``(qrels, runs)`` for :func:`rankscope.compare`: evaluations and retrievers become results.

    Unchanged when ``runs`` holds neither (the usual runs-and-qrels call).
    """
    from rankscope.retrieval.evaluation import RetrieverEvaluation

    items = list(runs.items()) if isinstance(runs, Mapping) else None
    values = [v for __, v in items] if items is not None else (
        list(runs) if isinstance(runs, Sequence) and not isinstance(runs, (str, bytes)) else [])
    evaluations = [isinstance(v, RetrieverEvaluation) for v in values]
    retrievers = [is_retriever(v) for v in values]
    if not any(evaluations) and not any(retrievers):
        return qrels, runs
    if any(retrievers):
        return _run_retrievers(qrels, items, values, metrics)

    def primary(v: Any, name: str | None) -> Any:
        if not isinstance(v, RetrieverEvaluation):
            return v
        from dataclasses import replace

        return replace(v.primary, run_name=name or v.run.name)

    if items is not None:
        return qrels, {str(k): primary(v, str(k)) for k, v in items}
    return qrels, [primary(v, None) for v in values]


def _run_retrievers(qrels: Any, items: list[tuple[Any, Any]] | None, values: list[Any],
                    metrics: Any) -> tuple[Any, Any]:
    from rankscope.data.testset import TestSet
    from rankscope.errors import InvalidParameterError
    from rankscope.measures.parse import parse_metrics
    from rankscope.retrieval.evaluation import RetrieverEvaluation
    from rankscope.retrieval.runner import default_metrics, evaluate_retriever

    if isinstance(qrels, (str, Path)):
        qrels = TestSet.from_file(qrels)
    example = "compare(testset, {name: retriever, ...}, metrics)"
    if not isinstance(qrels, TestSet):
        raise InvalidParameterError(_("to compare retrievers, pass the test set first: {example}", example=example))
    if items is None:
        raise InvalidParameterError(_("name the retrievers: {example}", example=example))
    if metrics is None:
        metrics = default_metrics(10)
    cutoffs = [m.cutoff for __, m in parse_metrics(metrics if isinstance(metrics, str) else list(metrics))
               if m.cutoff is not None]
    k = max([10, *cutoffs])
    out: dict[str, Any] = {}
    for name, value in items:
        if isinstance(value, RetrieverEvaluation):
            out[str(name)] = value.primary
        elif is_retriever(value):
            out[str(name)] = evaluate_retriever(value, qrels, metrics, k=k, name=str(name)).primary
        else:
            from rankscope.engine import evaluate
            from rankscope.io.convert import as_run

            out[str(name)] = evaluate(qrels.qrels, as_run(value, name=str(name)), metrics)
    from dataclasses import replace

    return qrels.qrels, {name: replace(res, run_name=name) for name, res in out.items()}
