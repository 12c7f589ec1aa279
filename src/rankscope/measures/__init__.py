"""Metric definitions: the :class:`Measure` value, the registry and the parser."""

from rankscope.measures.base import Kernel, Measure, MeasureSpec, Param, TrecName
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.parse import parse_metric, parse_metrics
from rankscope.measures.registry import all_specs, get_spec, register_metric, unregister_metric

__all__ = [
    "Kernel",
    "KernelInput",
    "TrecName",
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
