"""Issue 17 §2: a verdict for one run — rating, advice, production standard and scenario in every format."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from report_fixtures import METRICS, shared_comparison, shared_inputs
from rich.console import Console

import rankscope as rs
from clirun import cli, outcome
from rankscope.engine.ceilings import perfect_run
from rankscope.report.run_report import build_run_report
from rankscope.report.run_terminal import print_run_verdict
from rankscope.report.tables import standards_table
from rankscope.report.terminal import print_comparison

EXTENSIONS = (".html", ".md", ".json", ".tex")


def _scenario_in(text: str, lang: str = "en") -> bool:
    name = "FAQ matching (single answer)" if lang == "en" else "FAQ匹配 (单答案)"
    return name in text and "0.85" in text  # the scenario's name and its MRR figure


@pytest.mark.parametrize("ext", EXTENSIONS)
def test_write_report_takes_an_evaluation_result(tmp_path: Path, ext: str) -> None:
    qrels, runs = shared_inputs()
    result = rs.evaluate(qrels, runs["bm25"], METRICS)
    path = rs.write_report(result, tmp_path / f"bm25{ext}", scenario="faq")
    text = path.read_text(encoding="utf-8")
    assert _scenario_in(text)
    assert "bm25" in text
    if ext == ".json":
        doc = json.loads(text)
        assert doc["schema"] == "rankscope.report.run" and doc["scenario"]["key"] == "faq"
        assert doc["standards"]["status"] in ("met", "below_minimum", "not_evaluated")
        assert doc["ratings"]["P@5"]["advice"]
    zh = rs.write_report(result, tmp_path / f"zh{ext}", scenario="faq", lang="zh").read_text(encoding="utf-8")
    assert _scenario_in(zh, "zh")


@pytest.mark.parametrize("ext", EXTENSIONS)
def test_comparison_reports_show_the_scenario_in_every_format(tmp_path: Path, ext: str) -> None:
    text = rs.write_report(shared_comparison(), tmp_path / f"c{ext}", scenario="faq").read_text(encoding="utf-8")
    assert _scenario_in(text)


def test_comparison_terminal_shows_the_scenario() -> None:
    console = Console(record=True, width=200)
    from rankscope.report.content import build_report
    from rankscope.report.terminal import print_report

    print_report(build_report(shared_comparison(), scenario="faq", curves=False), console)
    assert _scenario_in(console.export_text())
    console = Console(record=True, width=200)
    print_comparison(shared_comparison(), console)  # no scenario asked: no section
    assert "FAQ matching" not in console.export_text()


def test_a_perfect_run_is_rated_in_the_best_band() -> None:
    """Collection-aware bands: P@5 of a perfect ranking is below 1 when queries have fewer than 5 relevant
    documents, Recall@5 when they have more; the perfect run is still excellent.  The production standards check the
    means as measured (as rankscope check does): the run's table shows each mean with that ceiling beside it."""
    qrels = rs.Qrels.from_dict({"q1": {"a": 1}, "q2": {f"d{i}": 1 for i in range(8)}, "q3": {"b": 2, "c": 1}})
    result = rs.evaluate(qrels, perfect_run(qrels), ["P@5", "recall@5", "mrr", "ndcg@10"])
    assert result["P@5"] < 0.7 and result["recall@5"] < 0.9  # the raw means are far from 1
    rep = build_run_report(result)
    assert {r["level"] for r in rep["ratings"].values()} == {"excellent"}
    assert rep["standards"]["highest_tier"] is None and "cannot be met" in rep["standards"]["status_text"]
    head, rows = standards_table(rep["standards"], "en")
    cells = dict(zip(head[1:], rows[0][1:]))
    ceiling = rep["ceilings"]["recall@5"]
    assert cells["recall@5"] == f"≥ 0.7: {result['recall@5']:.3f} ✓ (a perfect ranking: {ceiling:.3f})"
    assert cells["precision@5"] == f"≥ 0.6: {result['P@5']:.3f} ✗ (a perfect ranking: {result['P@5']:.3f})"
    console = Console(record=True, width=160)
    print_run_verdict(rep, console)
    assert "below minimum (precision@5 >= 0.6 cannot be met" in console.export_text()


@pytest.mark.slow
def test_cli_evaluate_positional_report_scenario_lang(tmp_path: Path) -> None:
    qrels, runs = shared_inputs()
    q, r = tmp_path / "qrels.txt", tmp_path / "bm25.trec"
    rs.io.write_qrels(qrels, q)
    rs.io.write_run(runs["bm25"], r)
    code, out, err = outcome(cli("evaluate", str(q), str(r), "-m", ",".join(METRICS), "--scenario", "faq", width=80))
    assert code == 0, err
    assert re.search(r"P@5\s+│\s+[0-9.]+\s+│\s+(poor|fair|good|excellent)", out)
    assert "Production standards" in out and "Advice" in out and _scenario_in(out)
    # the options keep working, and give the same numbers
    code, out2, _ = outcome(cli("evaluate", "--qrels", str(q), "--run", str(r), "-m", ",".join(METRICS),
                              "--scenario", "faq", width=80))
    assert out2 == out
    reports = [tmp_path / f"out{ext}" for ext in EXTENSIONS]
    code, out, err = outcome(cli("evaluate", str(q), str(r), "-m", ",".join(METRICS), "--scenario", "faq", "--lang",
                               "zh", *[a for p in reports for a in ("--report", str(p))], width=80))
    assert code == 0, err
    assert "生产标准" in out and _scenario_in(out, "zh")
    for p in reports:
        assert _scenario_in(p.read_text(encoding="utf-8"), "zh"), p
    code, out, _ = outcome(cli("evaluate", str(q), str(r), "-m", "P@5", "--scenario", "faq", "-f", "json", width=80))
    verdict = json.loads(out)["verdict"]
    assert verdict["scenario"]["missing"] == ["hit_rate@3", "mrr", "precision@3"]
    assert verdict["ratings"]["P@5"]["level"] in ("poor", "fair", "good", "excellent")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["a", "b", "c"], "takes two files"),
        (["a", "b", "--run", "c"], "not both"),
        ([], "rankscope evaluate QRELS RUN"),
        (["q", "r", "--scenario", "faqs"], "unknown scenario 'faqs'"),
    ],
)
def test_cli_evaluate_file_mistakes(args: list[str], needle: str) -> None:
    code, out, err = outcome(cli("evaluate", *args, width=80))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and needle in err


def test_summary_report_leaves_out_only_the_per_query_lists() -> None:
    """The command line's verdict (per_query=False) is the full report's verdict without the per-query lists."""
    from rankscope.report.run_report import build_run_report

    qrels, runs = shared_inputs()
    result = rs.evaluate(qrels, next(iter(runs.values())), METRICS)
    full = build_run_report(result)
    summary = build_run_report(result, per_query=False)
    per_query_keys = {"query_ids", "per_query", "first_ranks", "worst"}
    assert full["query_ids"] and full["worst"] and not summary["query_ids"] and not summary["worst"]
    assert not summary["per_query"] and not summary["first_ranks"]
    assert json.dumps({k: v for k, v in summary.items() if k not in per_query_keys | {"generated"}}, sort_keys=True,
                      default=str) == json.dumps({k: v for k, v in full.items() if k not in per_query_keys |
                                                  {"generated"}}, sort_keys=True, default=str)
