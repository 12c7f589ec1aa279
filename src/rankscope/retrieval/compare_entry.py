"""One call from retrievers to a verdict: what :func:`rankscope.compare` does with retrievers and their evaluations.

* a :class:`~rankscope.retrieval.evaluation.RetrieverEvaluation` is compared on its
  :attr:`~rankscope.retrieval.evaluation.RetrieverEvaluation.primary` result (the document
  level when judged, else the retrieved level);
* ``compare(testset, {"bm25": bm25, "dense": dense}, metrics)`` runs every retriever over the
  test set with :func:`~rankscope.retrieval.runner.evaluate_retriever`, all with the same
  :class:`~rankscope.retrieval.options.RetrieverOptions` (``options=`` and the same keywords:
  ``chunk_to_doc``, ``k`` — default the largest metric cutoff, at least 10 —, ``workers``,
  ``retries``, ``cache`` — one file per retriever, ``c.jsonl`` becoming ``c.bm25.jsonl`` — ...)
  and compares the evaluations; runs given beside them are scored on the test set's judgments.
  Each evaluation's warnings are issued as it runs and kept in the comparison's warnings, named
  by the retriever, so that every output of the comparison says them.

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

__all__ = ["resolve_retrievers", "is_retriever", "notice_warnings"]

_RETRIEVER_ATTRS = ("search", "search_batch", "invoke", "retrieve", "as_retriever", "similarity_search_with_score")


def is_retriever(obj: Any) -> bool:
    """True for what :func:`~rankscope.retrieval.protocol.as_retriever` accepts and a run is not."""
    from rankscope.data.run import Run
    from rankscope.engine.result import EvaluationResult

    if isinstance(obj, (Run, EvaluationResult, str, bytes, Path, Mapping, Sequence)) or hasattr(obj, "to_pandas"):
        return False
    if type(obj).__name__ == "DataFrame":
        return False
    from rankscope.retrieval.adapters import recognises

    return callable(obj) or any(hasattr(obj, a) for a in _RETRIEVER_ATTRS) or recognises(obj)  # Haystack: run()


def resolve_retrievers(qrels: Any, runs: Any, metrics: Any, options: Any = None, *, for_retrievers: bool = False
                       ) -> tuple[Any, Any, list[Any]]:
    """``(qrels, runs, warnings)`` for :func:`rankscope.compare`: evaluations and retrievers become results, and
    their warnings :class:`~rankscope.engine.coverage.DataWarning` values naming each retriever.

    ``options`` is the :class:`~rankscope.retrieval.options.RetrieverOptions` the retrievers run with (None: the
    defaults); ``for_retrievers`` says they were given for retrievers only (``options=``, ``k=`` ...), which is an
    error when ``runs`` holds none.  Unchanged when ``runs`` holds neither (the usual runs-and-qrels call).
    """
    from rankscope.retrieval.evaluation import RetrieverEvaluation

    items = list(runs.items()) if isinstance(runs, Mapping) else None
    values = [v for __, v in items] if items is not None else (
        list(runs) if isinstance(runs, Sequence) and not isinstance(runs, (str, bytes)) else [])
    evaluations = [isinstance(v, RetrieverEvaluation) for v in values]
    retrievers = [is_retriever(v) for v in values]
    if for_retrievers and not any(retrievers):
        from rankscope.errors import InvalidParameterError

        raise InvalidParameterError(_("retriever options (options=, k=, chunk_to_doc=, workers=, cache= ...) run "
                                      "retrievers; the values compared here are runs or results: leave them out, "
                                      "or pass a test set and a dict of name: retriever"))
    if not any(evaluations) and not any(retrievers):
        return qrels, runs, []
    if any(retrievers):
        return _run_retrievers(qrels, items, values, metrics, options)

    def primary(v: Any, name: str | None) -> Any:
        if not isinstance(v, RetrieverEvaluation):
            return v
        from dataclasses import replace

        return replace(v.primary, run_name=name or v.run.name)

    said = [w for name, v in (items or [(None, v) for v in values]) if isinstance(v, RetrieverEvaluation)
            for w in notice_warnings(str(name) if name is not None else v.run.name, v)]
    if items is not None:
        return qrels, {str(k): primary(v, str(k)) for k, v in items}, said
    return qrels, [primary(v, None) for v in values], said


def notice_warnings(name: str, ev: Any) -> list[Any]:
    """The warnings of the retriever evaluation ``ev`` as comparison warnings naming ``name`` (the judged@10 ones
    are left out: the comparison computes its own from the results)."""
    from rankscope.engine.coverage import DataWarning
    from rankscope.i18n import Message, _

    return [DataWarning("retriever", 0, 0, name, info=(("said", (n.said if isinstance(n.said, Message)
                                                                 else _("{said}", said=n.message)).to_dict()),))
            for n in ev.warnings if n.code not in ("nothing_judged", "mostly_unjudged")]


def _per_retriever(cache: Any, name: str) -> Path:
    """The cache file of one retriever of a comparison: ``c.jsonl`` -> ``c.NAME.jsonl``."""
    import re

    path = Path(cache)
    return path.with_name(f"{path.stem}.{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}{path.suffix or '.jsonl'}")


def _run_retrievers(qrels: Any, items: list[tuple[Any, Any]] | None, values: list[Any],
                    metrics: Any, options: Any) -> tuple[Any, Any, list[Any]]:
    from rankscope.data.testset import TestSet
    from rankscope.errors import InvalidParameterError
    from rankscope.retrieval.evaluation import RetrieverEvaluation
    from rankscope.retrieval.options import RetrieverOptions, default_k
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
    opts = options if options is not None else RetrieverOptions()
    if opts.k is None:
        opts = opts.replace(k=default_k(metrics))
    out: dict[str, Any] = {}
    said: list[Any] = []
    for name, value in items:
        if isinstance(value, RetrieverEvaluation):
            out[str(name)] = value.primary
            said += notice_warnings(str(name), value)
        elif is_retriever(value):
            mine = opts if opts.cache is None else opts.replace(cache=_per_retriever(opts.cache, str(name)))
            ev = evaluate_retriever(value, qrels, metrics, options=mine, name=str(name))
            out[str(name)] = ev.primary
            said += notice_warnings(str(name), ev)
        else:
            from rankscope.engine import evaluate
            from rankscope.io.convert import as_run

            out[str(name)] = evaluate(qrels.qrels, as_run(value, name=str(name)), metrics,
                                      relevance_level=opts.relevance_level)
    from dataclasses import replace

    return qrels.qrels, {name: replace(res, run_name=name) for name, res in out.items()}, said
