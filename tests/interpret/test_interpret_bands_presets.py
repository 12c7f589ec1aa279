"""Rating bands, scenario presets and production standards: behaviour at the boundaries, errors."""

from __future__ import annotations

import math

import pytest

from rankscope.errors import InvalidParameterError
from rankscope.interpret import bands, presets
from rankscope.interpret.bands import rate


@pytest.mark.parametrize(("metric", "value", "level"), [
    ("precision@5", 0.0, "poor"), ("P@3", 0.4999, "poor"), ("precision@5", 0.5, "fair"),
    ("precision@5", 0.7, "good"), ("precision@5", 0.85, "good"), ("precision@5", 0.8500001, "excellent"),
    ("precision@5", 1.0, "excellent"), ("recall@10", 0.59, "poor"), ("R@5", 0.6, "fair"),
    ("recall@5", 0.75, "good"), ("recall@5", 0.86, "excellent"), ("mrr", 0.39, "poor"), ("RR", 0.4, "fair"),
    ("mrr@10", 0.8, "good"), ("recip_rank", 0.81, "excellent"), ("ndcg@10", 0.49, "poor"),
    ("nDCG@3", 0.5, "fair"), ("ndcg_cut_5", 0.7, "good"), ("ndcg", 0.9, "excellent"),
    # float noise around a boundary: 17 * 0.05 is 0.8500000000000001
    ("precision@5", 17 * 0.05, "good"),
])
def test_levels(metric: str, value: float, level: str) -> None:
    r = rate(metric, value)
    assert r is not None and r.level == level


def test_advice_in_both_languages() -> None:
    en, zh = rate("precision@5", 0.3), rate("precision@5", 0.3, lang="zh")
    assert en is not None and zh is not None
    assert en.advice == "heavy retrieval noise — consider a reranker or a better retrieval strategy"
    assert zh.advice == "检索噪音严重，考虑ReRank或改进检索策略" and zh.level_name == "差"
    r = rate("recall@5", 0.1)
    assert r is not None and r.advice.startswith("many relevant documents missed")


def test_metrics_without_a_seed_table_have_no_band() -> None:
    for m in ("hit_rate@5", "map", "f1@5", "num_rel"):
        assert rate(m, 0.5) is None
        assert bands.band_table(m) is None


def test_bad_values_and_languages() -> None:
    with pytest.raises(InvalidParameterError, match="NaN"):
        rate("mrr", math.nan)
    with pytest.raises(InvalidParameterError, match="outside every band"):
        rate("mrr", 1.5)
    with pytest.raises(InvalidParameterError, match="lang must be one of en, zh"):
        rate("mrr", 0.5, lang="fr")


def test_bands_cover_zero_to_one_without_gaps() -> None:
    for family in ("precision", "recall", "mrr", "ndcg"):
        for i in range(0, 1001):
            v = i / 1000
            hits = [b for b in bands.band_table(family) or () if b.contains(v)]
            assert len(hits) == 1, (family, v)


def test_standards_as_gates() -> None:
    assert presets.standard_requirements("production:minimum") == [
        ("recall@5", ">=", 0.70), ("precision@5", ">=", 0.60), ("mrr", ">=", 0.50)]
    assert presets.standard_requirements("production:excellent")[2] == ("mrr", ">=", 0.80)
    assert presets.standard_requirements("benchmark:faq") == [
        ("mrr", ">=", 0.85), ("hit_rate@3", ">=", 0.90), ("precision@3", ">=", 0.80)]
    assert "benchmark:production_monitoring" not in presets.standard_names()
    for name in presets.standard_names():
        assert presets.standard_requirements(name)
    with pytest.raises(InvalidParameterError, match="unknown standard 'production:great'"):
        presets.standard_requirements("production:great")
    with pytest.raises(InvalidParameterError, match="known: production:minimum"):
        presets.standard_requirements("benchmark:production_monitoring")


def test_check_standard_and_tiers() -> None:
    values = {"recall@5": 0.80, "precision@5": 0.75, "mrr": 0.70}
    assert presets.highest_tier(values) == "good"
    assert presets.highest_tier({**values, "mrr": 0.49}) is None
    assert presets.highest_tier({"recall@5": 0.9, "precision@5": 0.9}) is None  # mrr not evaluated
    checks = presets.check_standard({"R@5": 0.9}, "production:minimum")
    assert [c.passed for c in checks] == [True, None, None]


def test_scenarios() -> None:
    assert presets.scenario_names() == ["faq", "document_qa", "academic_search", "enterprise_kb",
                                        "production_monitoring"]
    assert presets.get_scenario("enterprise_kb").metrics() == ["recall@5", "precision@5", "ndcg@5"]
    assert presets.get_scenario("production_monitoring").metrics() == ["hit_rate@5", "mrr"]
    assert presets.get_scenario("academic_search").title("zh") == "学术搜索 (排序重要)"
    with pytest.raises(InvalidParameterError, match="unknown scenario 'faqs'"):
        presets.get_scenario("faqs")


def test_every_gate_named_in_the_docs_exists_or_is_documented_absent() -> None:
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    names = set(presets.standard_names())
    text = {p.name: p.read_text(encoding="utf-8") for p in [root / "README.md", *sorted((root / "docs").glob("*.md"))]}
    interp = text["interpretation.md"]
    for name in names:  # every gate is listed in docs/interpretation.md
        assert f"`{name}`" in interp, name
    for doc, body in text.items():
        for kind, key in re.findall(r"\b(production|benchmark):([a-z_]+)\b", body):
            name = f"{kind}:{key}"
            if name in names:
                continue
            # a name that is not a gate must be said not to be one, and the library must say why
            assert f"There is no `{name}`" in body, (doc, name)
            with pytest.raises(InvalidParameterError, match="no benchmark figures"):
                presets.standard_requirements(name)
