"""A trec_eval 9.0.8-compatible command line on top of rankscope's kernels (``rankscope trec_eval``)."""

from rankscope.trec_eval.cli import main, run_trec_eval

__all__ = ["main", "run_trec_eval"]
