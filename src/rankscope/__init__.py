"""rankscope: evaluate the retrieval step of a RAG system, exactly as trec_eval does.

>>> import rankscope
>>> qrels = rankscope.Qrels.from_dict({"q1": {"d1": 1, "d2": 0}})
>>> run = rankscope.Run.from_ranked_lists({"q1": ["d2", "d1"]})
>>> rankscope.evaluate(qrels, run, ["mrr", "P@1"]).mean()
{'mrr': 0.5, 'P@1': 0.0}

Everything is imported lazily so that ``import rankscope`` stays fast.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rankscope._lazy import lazy_exports
from rankscope._version import __version__ as __version__

_EXPORTS: dict[str, str] = {
    "Qrels": "rankscope.data",
    "Run": "rankscope.data",
    "evaluate": "rankscope.engine",
    "Evaluator": "rankscope.engine",
    "EvaluationResult": "rankscope.engine",
    "Measure": "rankscope.measures",
    "parse_metric": "rankscope.measures",
    "parse_metrics": "rankscope.measures",
    "register_metric": "rankscope.measures",
    "read_qrels": "rankscope.io",
    "read_run": "rankscope.io",
    "RankscopeError": "rankscope.errors",
    "compare": "rankscope.api",
    "save": "rankscope.api",
    "plot": "rankscope.api",
    "Comparison": "rankscope.comparison",
    "TestSet": "rankscope.data.testset",
    "evaluate_retriever": "rankscope.retrieval.runner",
    "RetrieverOptions": "rankscope.retrieval.options",
    "fuse": "rankscope.retrieval.fusion",
    "tune": "rankscope.retrieval.tune",
    "load_dataset": "rankscope.datasets",
    "SpanQrels": "rankscope.data.spans",
    "Chunking": "rankscope.data.chunking",
    "compare_chunkings": "rankscope.chunking.compare",
    "write_report": "rankscope.report",
    "load": "rankscope.api",
}

__all__ = [
    "RetrieverOptions",
    "Chunking",
    "Comparison",
    "EvaluationResult",
    "Evaluator",
    "Measure",
    "Qrels",
    "RankscopeError",
    "Run",
    "SpanQrels",
    "TestSet",
    "compare",
    "compare_chunkings",
    "evaluate",
    "evaluate_retriever",
    "fuse",
    "load_dataset",
    "parse_metric",
    "parse_metrics",
    "read_qrels",
    "read_run",
    "register_metric",
    "tune",
    "write_report",
    "load",
    "save",
    "plot",
]

if TYPE_CHECKING:
    from rankscope.api import compare, load, plot, save
    from rankscope.chunking.compare import compare_chunkings
    from rankscope.comparison import Comparison
    from rankscope.data import Qrels, Run
    from rankscope.data.chunking import Chunking
    from rankscope.data.spans import SpanQrels
    from rankscope.data.testset import TestSet
    from rankscope.datasets import load_dataset
    from rankscope.engine import EvaluationResult, Evaluator, evaluate
    from rankscope.errors import RankscopeError
    from rankscope.io import read_qrels, read_run
    from rankscope.measures import Measure, parse_metric, parse_metrics, register_metric
    from rankscope.report import write_report
    from rankscope.retrieval.fusion import fuse
    from rankscope.retrieval.options import RetrieverOptions
    from rankscope.retrieval.runner import evaluate_retriever
    from rankscope.retrieval.tune import tune


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())

if "IPython" in sys.modules:  # a notebook shows results, comparisons, test sets and gates as HTML
    from rankscope.display import register_ipython

    register_ipython()
