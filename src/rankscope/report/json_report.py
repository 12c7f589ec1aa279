"""The report as JSON: everything :func:`~rankscope.report.content.build_report` gathered.

The document carries ``"schema": "rankscope.report"`` and ``"schema_version"``;
consumers should check both.  Keys are stable; numbers are plain JSON numbers
(non-finite values become ``null``).
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["render_json"]


def _clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def render_json(report: dict[str, Any]) -> str:
    """Indented, UTF-8-friendly JSON text of a report dict."""
    return json.dumps(_clean(report), ensure_ascii=False, indent=1, allow_nan=False) + "\n"
