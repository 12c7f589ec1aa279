"""The evaluation engine: the qrels × run join, metric kernels' input, evaluators, results."""

from rankscope.engine.evaluator import DEFAULT_METRICS, Evaluator, evaluate
from rankscope.engine.result import EvaluationResult, PerQueryScores

__all__ = ["Evaluator", "evaluate", "EvaluationResult", "PerQueryScores", "DEFAULT_METRICS"]
