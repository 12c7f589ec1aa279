"""The report as JSON: everything :func:`~rankscope.report.content.build_report` gathered.

The document carries ``"schema": "rankscope.report"`` and ``"schema_version"``;
consumers should check both.  Keys are stable; numbers are plain JSON numbers
(non-finite values become ``null``).
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["render_json", "json_ready"]


def json_ready(obj: Any) -> Any:
    """``obj`` with every non-finite float (a NaN: trec_eval's 0/0) as ``None``: JSON has no NaN.

    >>> json_ready({"a": [1.0, float("nan")]})
    {'a': [1.0, None]}
    """
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): json_ready(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_ready(v) for v in obj]
    return obj


def render_json(report: dict[str, Any]) -> str:
    """Indented, UTF-8-friendly JSON text of a report dict."""
    return json.dumps(json_ready(report), ensure_ascii=False, indent=1, allow_nan=False) + "\n"
