"""bands.json and presets.json against the text of seed 000 itself (the transcription must be exact): the data files
hold the English, the original Chinese is its translation in the message catalog (context ``guide``)."""

from __future__ import annotations

import ast
import re

import pytest

from conftest import REPO, require
from rankscope.i18n import gettext
from rankscope.interpret.i18n import load_data
from rankscope.measures import parse_metric

SEEDS = (REPO / ".." / "shared" / "seeds").resolve()


def zh(english: str) -> str:
    """The guide's original Chinese of a text of the data files."""
    return gettext(english, "zh", context="guide")


@pytest.fixture(scope="module")
def seed000() -> str:
    files = sorted(require(SEEDS).glob("000_*.txt"))
    if not files:
        pytest.fail(f"seed 000 missing in {SEEDS}")
    return files[0].read_text(encoding="utf-8")


def _band_tables(text: str) -> dict[str, list[tuple[str, str, str]]]:
    """The seed's 优化建议 tables: {header metric: [(range, level, advice)]}."""
    out = {}
    for m in re.finditer(r"### 优化建议\n\n\| (\S+) \| 评级 \| 建议 \|\n\|[-|]+\|\n((?:\|.*\|\n)+)", text):
        rows = []
        for line in m.group(2).strip().splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows.append((cells[0], cells[1], cells[2]))
        out[m.group(1)] = rows
    return out


SEED_TO_FAMILY = {"Precision@K": "precision", "Recall@K": "recall", "MRR": "mrr", "NDCG@K": "ndcg"}


def _seed_range(text: str) -> tuple[float | None, float | None]:
    if text.startswith("<"):
        return None, float(text[1:])
    if text.startswith(">"):
        return float(text[1:]), None
    lo, hi = text.split("-")
    return float(lo), float(hi)


def test_band_tables_match_seed(seed000: str) -> None:
    tables = _band_tables(seed000)
    assert set(tables) == set(SEED_TO_FAMILY)
    data = load_data("bands.json")
    levels_zh = {k: zh(v) for k, v in data["levels"].items()}
    for seed_name, rows in tables.items():
        ours = data["metrics"][SEED_TO_FAMILY[seed_name]]["bands"]
        assert len(ours) == len(rows)
        for (rng, level_zh, advice_zh), band in zip(rows, ours):
            assert levels_zh[band["level"]] == level_zh
            assert zh(band["advice"]) == advice_zh and band["advice"] != advice_zh
            lo, hi = _seed_range(rng.replace(" ", ""))
            nums = [float(x) for x in re.findall(r"[0-9.]+", band["range"])]
            if lo is None:
                assert nums == [0.0, hi] and band["range"].endswith(")")  # "< x": x excluded
            elif hi is None:
                assert nums == [lo, 1.0] and band["range"].startswith("(")  # "> x": x excluded
            else:
                assert nums == [lo, hi]


def _code_dict(text: str, name: str) -> dict:
    m = re.search(name + r" = (\{.*?\n\})", text, re.S)
    assert m, name
    return ast.literal_eval(m.group(1))


SEED_METRIC = {"MRR": "mrr"}


def _metric(seed_name: str) -> str:
    if seed_name in SEED_METRIC:
        return SEED_METRIC[seed_name]
    name, k = seed_name.split("@")
    return {"Hit Rate": "hit_rate", "Precision": "precision", "Recall": "recall", "NDCG": "ndcg"}[name] + "@" + k


def test_benchmarks_and_standards_match_seed(seed000: str) -> None:
    presets = load_data("presets.json")
    bench = _code_dict(seed000, "industry_benchmarks")
    ours = {zh(s["benchmark_name"]): s["benchmark"] for s in presets["scenarios"].values() if s["benchmark"]}
    assert set(ours) == set(bench)
    for name, figures in bench.items():
        assert ours[name] == {_metric(k): v for k, v in figures.items()}
    standards = _code_dict(seed000, "production_standards")
    tiers = presets["production_standards"]["tiers"]
    assert set(tiers) == set(standards)
    for tier, req in standards.items():
        assert tiers[tier]["requirements"] == {_metric(k): v for k, v in req.items()}


def test_recommended_metrics_match_seed(seed000: str) -> None:
    found = re.findall(r"# 场景\d: (.+)\nrecommended_metrics = (\[.*\])", seed000)
    assert len(found) == 4
    by_name = {zh(s["name"]): s["recommended"] for s in load_data("presets.json")["scenarios"].values()}
    for title, listed in found:
        assert by_name[title] == [_metric(m) for m in ast.literal_eval(listed)]


def test_every_metric_name_in_the_data_parses() -> None:
    presets = load_data("presets.json")
    names = [m for s in presets["scenarios"].values() for m in [*s["recommended"], *s["benchmark"]]]
    names += [m for t in presets["production_standards"]["tiers"].values() for m in t["requirements"]]
    for n in names:
        m = parse_metric(n)
        assert m.name in ("mrr", "success", "precision", "recall", "ndcg")
        assert m.cutoff == (int(n.split("@")[1]) if "@" in n else None)


def test_metric_profiles_match_seed(seed000: str) -> None:
    table = re.search(r"\| 指标 \| 关注点 \| 优势 \| 局限 \| 适用场景 \|\n\|[-|]+\|\n((?:\|.*\|\n)+)", seed000)
    assert table
    family = {"Precision@K": "precision", "Recall@K": "recall", "MRR": "mrr", "NDCG@K": "ndcg", "Hit Rate": "success"}
    profiles = load_data("bands.json")["profiles"]
    rows = table.group(1).strip().splitlines()
    assert len(rows) == len(profiles) == 5
    for line in rows:
        name, focus, strength, limitation, use = (c.strip().strip("*") for c in line.strip("|").split("|"))
        p = profiles[family[name]]
        assert (zh(p["focus"]), zh(p["strength"]), zh(p["limitation"]), zh(p["use"])) == (
            focus, strength, limitation, use)
