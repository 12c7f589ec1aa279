"""The public functions that reach across layers: :func:`compare` (runs, saved evaluations, retrievers),
:func:`save`, :func:`load` and :func:`plot`.

The data model (:mod:`rankscope.comparison`, :mod:`rankscope.engine.result`) knows nothing of retrievers,
files or display; these functions dispatch to the layer that does, so the package's modules import
downward only (docs/architecture.md, "Layers").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.comparison import Comparison
from rankscope.comparison import compare as compare_runs
from rankscope.engine.result import EvaluationResult
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.measures.base import Measure
from rankscope.saved import load, save, saved_runs

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rankscope.retrieval.options import RetrieverOptions
    from rankscope.retrieval.runner import RunOptionValues

__all__ = ["compare", "save", "load", "plot"]


def compare(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: Iterable[str | Measure] | str | None = None,
    *,
    test: str = "t",
    alpha: float = 0.05,
    correction: str | None = None,
    baseline: str | None = None,
    permutations: int = 10_000,
    max_permutations: int | None = None,
    bootstrap: int = 1000,
    rng: np.random.Generator | int | None = None,
    relevance_level: int = 1,
    missing: str = "zero",
    depth: int | None = None,
    score_precision: str = "float32",
    chunking: Any = None,
    rule: str = "any",
    unjudged: str = "keep",
    ci: str = "bootstrap",
    options: RetrieverOptions | None = None,
    **retriever_options: Unpack[RunOptionValues],
) -> Comparison:
    """Compare runs pairwise on ``metrics``: :func:`rankscope.comparison.compare`, whose parameters these are, on
    runs that may also be saved evaluations (``rankscope.save(result, path)``: give the path), ``RetrieverEvaluation``
    values, or retrievers with a test set as ``qrels`` (each is run over it first; see
    :mod:`rankscope.retrieval.compare_entry`).

    options, k, workers, retries, retry_wait, batch_size, cache, overwrite_cache, cache_key, cache_check,
        chunk_to_doc, relevance, progress, on_bad_answer : with retrievers, how they run: the
        :class:`~rankscope.retrieval.options.RetrieverOptions` value and keywords
        :func:`~rankscope.retrieval.runner.evaluate_retriever` takes (``relevance_level``, ``chunking`` and
        ``rule`` go to the retrievers too); every retriever runs with the same options

    >>> from rankscope import Qrels, Run
    >>> qrels = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(6)})
    >>> bm25 = Run.from_ranked_lists({f"q{i}": ["x", "a"] for i in range(6)}, name="bm25")
    >>> dense = Run.from_ranked_lists({f"q{i}": ["a"] for i in range(6)}, name="dense")
    >>> compare(qrels, [bm25, dense], ["mrr"], test="randomization").best("mrr")
    'dense'
    """
    from rankscope.retrieval.compare_entry import resolve_retrievers

    run_options = None
    if options is not None or retriever_options or relevance_level != 1 or chunking is not None or rule != "any":
        from rankscope.retrieval.options import resolve_options

        shared = {k: v for k, v in (("relevance_level", relevance_level), ("chunking", chunking), ("rule", rule))
                  if v != {"relevance_level": 1, "chunking": None, "rule": "any"}[k]}
        run_options = resolve_options(options, {**shared, **retriever_options}, "compare")
    # RetrieverEvaluations, {name: retriever} + a TestSet; their warnings, named by the retriever
    qrels, runs, retriever_warnings = resolve_retrievers(qrels, saved_runs(runs), metrics, run_options,
                                                         for_retrievers=options is not None or bool(retriever_options))
    return compare_runs(qrels, runs, metrics, test=test, alpha=alpha, correction=correction, baseline=baseline,
                        permutations=permutations, max_permutations=max_permutations, bootstrap=bootstrap, rng=rng,
                        relevance_level=relevance_level, missing=missing, depth=depth,
                        score_precision=score_precision, chunking=chunking, rule=rule, unjudged=unjudged, ci=ci,
                        warnings=tuple(retriever_warnings))


def plot(obj: EvaluationResult | Comparison, metric: str | None = None, kind: str = "distribution",
         **inputs: Any) -> Any:
    """A matplotlib figure of the HTML report's plot ``kind`` for a result or a comparison.

    Of a result: ``"distribution"`` (per-query values of every metric, or of ``metric``), ``"first_rank"`` (rank of
    the first relevant document; exact with ``qrels=`` and ``run=``) or ``"curves"`` (metric@k for k = 1..100;
    needs ``qrels=`` and ``run=``).  Of a comparison: ``"distribution"`` (per-query values per system),
    ``"differences"`` (mean difference to the reference with its interval, filled when significant),
    ``"first_rank"`` or ``"curves"`` (metric@k; needs ``qrels=`` and ``runs=``).
    """
    from rankscope.report.notebook import plot_comparison, plot_result

    if isinstance(obj, Comparison):
        return plot_comparison(obj, metric, kind, **inputs)
    if isinstance(obj, EvaluationResult):
        return plot_result(obj, metric, kind, **inputs)
    raise InvalidParameterError(_("plot takes an EvaluationResult or a Comparison, got {type}",
                                  type=type(obj).__name__))

