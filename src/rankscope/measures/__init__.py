"""Metric definitions: the :class:`Measure` value, the registry and the parser."""

from rankscope.measures.base import Measure, MeasureSpec, Param
from rankscope.measures.parse import parse_metric, parse_metrics
from rankscope.measures.registry import all_specs, get_spec, register_metric, unregister_metric

__all__ = [
    "Measure",
    "MeasureSpec",
    "Param",
    "parse_metric",
    "parse_metrics",
    "register_metric",
    "unregister_metric",
    "get_spec",
    "all_specs",
]
