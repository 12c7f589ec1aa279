"""Regenerate docs/metrics.md from the metric registry: ``python scripts/gen_metrics_doc.py``."""

from __future__ import annotations

from pathlib import Path

from rankscope.measures.docs import metrics_markdown

TARGET = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"

if __name__ == "__main__":
    TARGET.write_text(metrics_markdown(), encoding="utf-8")
    print(f"wrote {TARGET}")
