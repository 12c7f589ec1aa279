"""The evaluation engine: the qrels × run join, the one scoring function, evaluators, results, policies."""

from rankscope.engine.evaluator import DEFAULT_METRICS, Evaluator, evaluate
from rankscope.engine.policies import Policies
from rankscope.engine.result import EvaluationResult, PerQueryScores
from rankscope.engine.scoring import score

__all__ = ["Evaluator", "evaluate", "EvaluationResult", "PerQueryScores", "DEFAULT_METRICS", "Policies", "score"]
