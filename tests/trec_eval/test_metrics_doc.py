"""docs/metrics.md is generated from the registry and must be current."""

from __future__ import annotations

from conftest import REPO
from rankscope.measures import all_specs
from rankscope.measures.docs import metrics_markdown


def test_committed_reference_is_up_to_date() -> None:
    committed = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    assert committed == metrics_markdown(), "docs/metrics.md is stale: run `python scripts/gen_metrics_doc.py`"


def test_every_builtin_metric_is_documented_with_its_spellings() -> None:
    text = metrics_markdown()
    for spec in all_specs():
        if spec.builtin:
            assert f"`{spec.name}" in text
            for name in (*(t.name for t in spec.trec), spec.ir_measures):
                if name:
                    assert f"`{name}" in text, (spec.name, name)
