"""Reports say what their verdicts rest on: interval levels, warnings, ceilings, tests, corrections, in every format."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import shared_inputs
from rich.console import Console

from rankscope import Qrels, Run
from rankscope.comparison import compare
from rankscope.gate import check
from rankscope.report import write_report
from rankscope.report.content import build_report
from rankscope.report.terminal import print_comparison

FORMATS = ("md", "json", "html", "tex")


def _terminal(comparison: Any, lang: str = "en", **kw: Any) -> str:
    console = Console(record=True, width=200, color_system=None)
    print_comparison(comparison, console=console, lang=lang, **kw)
    return console.export_text()


def _all_outputs(comparison: Any, tmp_path: Path, lang: str = "en", **kw: Any) -> dict[str, str]:
    out = {fmt: write_report(comparison, tmp_path / f"r.{lang}.{fmt}", lang=lang, **kw).read_text(encoding="utf-8")
           for fmt in FORMATS}
    out["terminal"] = _terminal(comparison, lang, **kw)
    return out


@cache
def _partial() -> tuple[Any, Qrels, dict[str, Run]]:
    """``partial`` answers 30 of the 50 qrels queries perfectly (plus 5 unknown ones); ``full`` all, moderately."""
    qrels = Qrels.from_dict({f"q{i:02d}": {f"r{i}": 1, f"n{i}": 0} for i in range(50)}
                            | {"empty": {"n": 0}})  # one query without any relevant document
    full = Run.from_ranked_lists({f"q{i:02d}": ["x", f"r{i}"] for i in range(50)} | {"empty": ["n"]}, name="full")
    answered = {f"q{i:02d}": [f"r{i}"] for i in range(30)} | {f"extra{i}": ["x"] for i in range(5)}
    partial = Run.from_ranked_lists(answered, name="T5-P")
    runs = {"full": full, "partial": partial}
    return compare(qrels, runs, ["mrr", "recall@5"], baseline="full", bootstrap=100), qrels, runs


@pytest.mark.slow
def test_missing_query_warning_with_counts_in_every_output(tmp_path: Path) -> None:
    c, qrels, runs = _partial()
    outputs = _all_outputs(c, tmp_path, qrels=qrels, runs=runs)
    for fmt, text in outputs.items():
        flat = re.sub(r"\s+", " ", text)
        assert "partial has no ranking for 21 of the 51 qrels queries" in flat, fmt
        assert "ranks 5 queries that are not in the qrels" in flat, fmt
        assert "1 of the 51 queries has no document judged relevant" in flat, fmt
    # the LaTeX says it in the caption of the summary table
    caption = re.search(r"\\caption\{(.*?)\}\n\\label\{tab:rankscope-summary\}", outputs["tex"], re.S)
    assert caption is not None and "no ranking for 21 of the 51" in caption.group(1)
    doc = json.loads(outputs["json"])
    assert doc["queries"]["partial"]["missing_from_run"] == 21
    assert any(w["kind"] == "missing_zero" and w["count"] == 21 for w in doc["comparison"]["warnings"])
    zh = _all_outputs(c, tmp_path, lang="zh", qrels=qrels, runs=runs)
    for fmt, text in zh.items():
        assert "partial 缺少 qrels 中 51 个查询里的 21 个" in re.sub(r"\s+", " ", text), fmt


def test_queries_without_relevant_documents_are_not_failing_queries(tmp_path: Path) -> None:
    c, qrels, runs = _partial()
    report = build_report(c, qrels=qrels, runs=runs, curves=False)
    assert report["analysis"]["no_relevant"] == ["empty"]
    for failing in report["analysis"]["failing"].values():
        assert "empty" not in failing
    md = write_report(c, tmp_path / "r.md", qrels=qrels, runs=runs).read_text(encoding="utf-8")
    assert "no relevant judgment" in md.lower() and "`empty`" in md


def test_the_run_tag_is_shown_where_it_differs(tmp_path: Path) -> None:
    c, _, _ = _partial()
    assert c.tags == {"partial": "T5-P"}
    for fmt, text in _all_outputs(c, tmp_path).items():
        assert "T5-P" in text, fmt


def test_interval_label_follows_alpha(tmp_path: Path) -> None:
    qrels, runs = shared_inputs()
    c = compare(qrels, runs, ["ndcg@10", "mrr"], baseline="bm25", bootstrap=100, alpha=0.1)
    for fmt, text in _all_outputs(c, tmp_path).items():
        text = text.replace("\\%", "%")  # LaTeX escapes the percent sign
        assert "95%" not in text, fmt
        assert "90%" in text, fmt
    zh = write_report(c, tmp_path / "zh.md", lang="zh").read_text(encoding="utf-8")
    assert "未校正的 90% 百分位 bootstrap 置信区间" in zh and "95%" not in zh
    c = compare(qrels, runs, ["mrr"], baseline="bm25", bootstrap=100, alpha=0.025)
    assert "unadjusted 97.5% percentile-bootstrap CI" in write_report(c, tmp_path / "a.md").read_text(encoding="utf-8")


def test_captions_name_the_test_the_correction_and_alpha(tmp_path: Path) -> None:
    qrels, runs = shared_inputs()
    c = compare(qrels, runs, ["mrr"], bootstrap=100, test="randomization", correction="bh", alpha=0.1)
    tex = write_report(c, tmp_path / "r.tex").read_text(encoding="utf-8")
    captions = re.findall(r"\\caption\{(.*?)\}\n\\label", tex, re.S)
    assert len(captions) == 2
    for cap in captions:
        assert "paired randomization test" in cap and "Benjamini" in cap and r"$\alpha$ = 0.1" in cap
    md = write_report(c, tmp_path / "r.md").read_text(encoding="utf-8")
    assert "paired randomization test" in md and "Benjamini–Hochberg" in md


def test_effect_size_is_labelled_paired_d_z(tmp_path: Path) -> None:
    qrels, runs = shared_inputs()
    c = compare(qrels, runs, ["mrr"], baseline="bm25", bootstrap=50)
    for fmt, text in _all_outputs(c, tmp_path).items():
        if fmt == "json":  # data, not labels: the field is cohen_d, documented as the paired d_z
            continue
        assert "Cohen's d" not in text or "d_z" in text or "d<sub>z</sub>" in text, fmt
        assert re.search(r"d_z|d<sub>z</sub>|d\$_z\$|\$d_z\$", text), fmt


def test_policy_values_are_translated_in_chinese(tmp_path: Path) -> None:
    qrels, runs = shared_inputs()
    c = compare(qrels, runs, ["mrr"], baseline="bm25", bootstrap=50)
    md = write_report(c, tmp_path / "zh.md", lang="zh").read_text(encoding="utf-8")
    line = next(ln for ln in md.splitlines() if "相关性等级" in ln)
    # a Chinese term, with the English name a reader would search for (rankscope.choices.TERMS)
    assert "缺失查询计零（missing=zero）" in line
    c2 = compare(qrels, runs, ["mrr"], baseline="bm25", bootstrap=50, missing="ignore")
    md2 = write_report(c2, tmp_path / "zh2.md", lang="zh").read_text(encoding="utf-8")
    assert "忽略缺失查询（missing=ignore）" in next(ln for ln in md2.splitlines() if "相关性等级" in ln)


def test_one_query_is_not_shown_as_an_interval(tmp_path: Path) -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 1}})
    runs = {"x": Run.from_ranked_lists({"q1": ["a", "z"]}), "y": Run.from_ranked_lists({"q1": ["z", "a"]})}
    c = compare(qrels, runs, ["ndcg@10"], bootstrap=50)
    for fmt, text in _all_outputs(c, tmp_path).items():
        assert not re.search(r"\[\s*[+-]?\d\.\d+,\s*[+-]?\d\.\d+\s*\]", text), fmt


def test_ratings_are_against_what_a_perfect_ranking_reaches_standards_as_check_says(tmp_path: Path) -> None:
    # every query has 10 relevant documents: recall@5 can reach only 0.5
    qrels = Qrels.from_dict({f"q{i}": {f"d{j}": 1 for j in range(10)} for i in range(20)})
    perfect = Run.from_ranked_lists({f"q{i}": [f"d{j}" for j in range(10)] for i in range(20)}, name="perfect")
    weak = Run.from_ranked_lists({f"q{i}": ["x", "y", "z", "d0", "d1"] for i in range(20)}, name="weak")
    c = compare(qrels, {"perfect": perfect, "weak": weak}, ["recall@5", "P@5", "mrr"], bootstrap=50)
    assert c.ceilings["recall@5"] == pytest.approx(0.5)
    report = build_report(c, curves=False)
    r = report["ratings"]["perfect"]["recall@5"]
    assert r["ceiling"] == pytest.approx(0.5) and r["relative"] == pytest.approx(1.0) and r["level"] == "excellent"
    # the standards check the mean as measured, the rule of `rankscope check --preset production:<tier>`: recall@5
    # >= 0.7 cannot be met on these qrels, and the verdict says so with the ceiling, the same way in every output
    std = report["standards"]["perfect"]
    assert std["status"] == "below_minimum" and std["highest_tier"] is None
    assert std["status_text"] == ("below minimum (recall@5 >= 0.7 cannot be met: a perfect ranking scores 0.500 "
                                  "on these qrels)")
    recall = std["checks"]["minimum"][0]
    assert (recall["metric"], recall["value"], recall["ceiling"], recall["unreachable"]) == ("recall@5", 0.5, 0.5, True)
    gate = check(qrels, perfect, preset="production:minimum")
    assert not gate.passed and any("unreachable: a perfect ranking scores 0.5000" in ln for ln in gate.lines())
    assert report["standards"]["weak"]["status"] == "below_minimum"
    md = write_report(c, tmp_path / "r.md").read_text(encoding="utf-8")
    assert "0.500" in md and "reachable" in md and "cannot be met" in md
    # a standard whose metric was not computed is "not evaluated", not "below minimum" (five relevant documents per
    # query: a perfect ranking reaches 1 on recall@5 and P@5)
    five = Qrels.from_dict({f"q{i}": {f"d{j}": 1 for j in range(5)} for i in range(20)})
    c2 = compare(five, {"perfect": perfect, "weak": weak}, ["recall@5", "P@5"], bootstrap=50)
    rep2 = build_report(c2, curves=False)
    assert rep2["standards"]["perfect"]["status"] == "not_evaluated"
    assert rep2["standards"]["perfect"]["not_evaluated"] == ["mrr"]
    md2 = write_report(c2, tmp_path / "r2.md").read_text(encoding="utf-8")
    assert "not evaluated" in md2 and "below minimum" in md2  # weak fails the minimum on recall@5 already


def test_forest_plot_says_which_interval_and_which_marks(tmp_path: Path) -> None:
    qrels, runs = shared_inputs()
    c = compare(qrels, runs, ["mrr", "ndcg@10"], baseline="bm25", bootstrap=100, correction="bonferroni")
    html = write_report(c, tmp_path / "r.html").read_text(encoding="utf-8")
    caption = re.search(r'<figure id="plot-differences">.*?<figcaption>(.*?)</figcaption>', html, re.S)
    assert caption is not None
    text = caption.group(1)
    assert "unadjusted" in text and "95%" in text and "Bonferroni" in text and "hollow" in text


def test_near_alpha_verdicts_are_flagged(tmp_path: Path) -> None:
    import numpy as np

    from rankscope.comparison import PairResult

    qrels, runs = shared_inputs()
    c = compare(qrels, runs, ["mrr"], baseline="bm25", bootstrap=50, test="randomization", permutations=200,
                max_permutations=200)
    pairs = tuple(PairResult(**{**p.__dict__, "near_alpha": True, "p_mc_se": 0.004}) for p in c.pairs)
    from dataclasses import replace

    flagged = replace(c, pairs=pairs)
    for fmt, text in _all_outputs(flagged, tmp_path).items():
        assert "Monte-Carlo" in text, fmt
    assert np.isfinite(pairs[0].p_value)
