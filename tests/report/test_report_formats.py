"""write_report for every extension, and the terminal output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_fixtures import METRICS, shared_comparison, shared_inputs
from rich.console import Console

from rankscope.errors import InvalidParameterError
from rankscope.report import REPORT_SCHEMA_VERSION, write_report
from rankscope.report.terminal import print_comparison


def test_json_has_everything(tmp_path: Path) -> None:
    comparison = shared_comparison()
    inputs = shared_inputs()
    qrels, runs = inputs
    path = write_report(comparison, tmp_path / "r.json", qrels=qrels, runs=runs, kmax=10)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["schema"] == "rankscope.report" and doc["schema_version"] == REPORT_SCHEMA_VERSION
    assert doc["systems"] == ["bm25", "dense_v2", "hybrid"] and doc["metrics"] == METRICS
    assert doc["comparison"]["means"]["hybrid"]["mrr"] == pytest.approx(comparison.means["hybrid"]["mrr"])
    assert len(doc["per_query"]["bm25"]["mrr"]) == doc["n_queries"] == 30
    assert len(doc["curves"]["systems"]["hybrid"]["ndcg"]) == 10
    assert set(doc["analysis"]) >= {"first_rank", "failing", "differences", "failing_k"}


def test_markdown(tmp_path: Path) -> None:
    comparison = shared_comparison()
    text = write_report(comparison, tmp_path / "r.md").read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| hybrid"))
    assert row.count("**") == 2 * len(METRICS)  # hybrid is best on every metric
    assert "†" in row
    assert "‡" in next(line for line in text.splitlines() if line.startswith("| dense_v2"))
    assert "### Detailed analysis" in text and "Recall@5 = 1.000: on average 100.0%" in text
    assert "heavy retrieval noise" in text  # the advice of a poor precision band
    zh = write_report(comparison, tmp_path / "zh.md", lang="zh").read_text(encoding="utf-8")
    assert "## 检索质量评估报告" in zh and "### 详细分析" in zh and "基线" in zh


def test_latex_booktabs_and_escaping(tmp_path: Path) -> None:
    comparison = shared_comparison()
    text = write_report(comparison, tmp_path / "r.tex").read_text(encoding="utf-8")
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert text.count(rule) == 2
    assert r"dense\_v2" in text and "dense_v2" not in text.replace(r"dense\_v2", "")
    assert r"\textbf{" in text and r"$^{\dagger}$" in text
    assert "$<$0.001" in text or "<" not in text
    # every table row has as many cells as the header
    body = text.split(r"\midrule")[1].split(r"\bottomrule")[0]
    for line in body.strip().splitlines():
        assert line.count(" & ") == len(METRICS)


def test_bad_path_or_language(tmp_path: Path) -> None:
    comparison = shared_comparison()
    with pytest.raises(InvalidParameterError, match="cannot tell the report format"):
        write_report(comparison, tmp_path / "r.pdf")
    with pytest.raises(InvalidParameterError, match="lang must be one of en, zh"):
        write_report(comparison, tmp_path / "r.md", lang="de")
    with pytest.raises(InvalidParameterError, match="does not exist"):
        write_report(comparison, tmp_path / "missing" / "r.md")
    with pytest.raises(InvalidParameterError, match="unknown scenario"):
        write_report(comparison, tmp_path / "r.md", scenario="nope")


def test_terminal() -> None:
    comparison = shared_comparison()
    console = Console(record=True, width=140, color_system=None)
    print_comparison(comparison, console=console)
    out = console.export_text()
    hybrid = next(line for line in out.splitlines() if "hybrid" in line and "★" in line)
    assert hybrid.count("★") == len(METRICS)
    assert "‡" in next(line for line in out.splitlines() if line.strip("│ ").startswith("dense_v2"))
    assert "Paired comparisons: hybrid vs bm25" in out
    assert re.search(r"MRR = 0\.\d{3}: the first relevant document is typically at rank", out)
    zh = Console(record=True, width=140, color_system=None)
    print_comparison(comparison, console=zh, lang="zh", explanations=False)
    assert "检索质量评估报告" in zh.export_text() and "详细分析" not in zh.export_text()


def test_terminal_colours_bands() -> None:
    comparison = shared_comparison()
    console = Console(record=True, width=140, color_system="standard", force_terminal=True)
    print_comparison(comparison, console=console, explanations=False)
    styled = console.export_text(styles=True)
    assert "\x1b[31m" in styled  # poor band: red
    assert "36m" in styled  # excellent band (hybrid's recall@5 = 1.0): cyan


def test_outputs_are_deterministic(tmp_path: Path) -> None:
    from rankscope.report.content import build_report
    from rankscope.report.plots import first_rank_svg

    comparison = shared_comparison()
    qrels, runs = shared_inputs()
    a = write_report(comparison, tmp_path / "a.json", qrels=qrels, runs=runs, kmax=5).read_bytes()
    b = write_report(comparison, tmp_path / "b.json", qrels=qrels, runs=runs, kmax=5).read_bytes()
    assert a == b
    rep = build_report(comparison, curves=False)
    svg = first_rank_svg(rep)
    assert svg is not None and svg.startswith("<svg") and svg == first_rank_svg(rep)


def _svg_texts(html: str) -> str:
    import base64

    blobs = re.findall(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)", html)
    return "".join(base64.b64decode(b).decode("utf-8") for b in blobs)


def test_html_plot_labels_follow_the_language(tmp_path: Path) -> None:
    comparison = shared_comparison()
    zh = _svg_texts(write_report(comparison, tmp_path / "zh.html", lang="zh").read_text(encoding="utf-8"))
    en = _svg_texts(write_report(comparison, tmp_path / "en.html").read_text(encoding="utf-8"))
    # axis labels inside the embedded SVG plots
    assert "第一个相关文档的名次" in zh and "差值" in zh
    assert "第一个相关文档的名次" not in en and "<svg" in en
