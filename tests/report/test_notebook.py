"""Issue 17 §3: notebook displays, tidy DataFrames, save/load, saved evaluations in compare, plots."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from report_fixtures import METRICS, shared_comparison, shared_inputs

import rankscope as rs
from clirun import cli, outcome
from rankscope import display
from rankscope.comparison import Comparison
from rankscope.engine import EvaluationResult
from rankscope.errors import InvalidParameterError, ParseError
from rankscope.gate import check


def rich_result() -> EvaluationResult:
    """A result with every optional part: missing and unjudged queries, a notice, ceilings below 1."""
    qrels, runs = shared_inputs()
    run = runs["dense_v2"]
    keep = np.flatnonzero(run.qcode != 0)  # one qrels query missing from the run
    run = run._keep_rows(keep)
    extra = rs.Run.from_dict({"zz": {"d0": 1.0}})
    both = rs.Run(np.r_[run.query_column(), extra.query_column()], np.r_[np.asarray(run.doc_column()),
                  np.asarray(extra.doc_column())], np.r_[run.scores, extra.scores], "dense_v2")
    from rankscope.data.notices import InputNotice

    both.notices = (InputNotice("rank_column", "dense.tsv", (("column", 3), ("best", 1))),)
    return rs.evaluate(qrels, both, [*METRICS, "map"])


def test_result_save_load_round_trips_every_field(tmp_path: Path) -> None:
    result = rich_result()
    assert result.queries.missing_from_run == 1 and result.queries.not_in_qrels == 1 and result.notices
    assert result.ceilings and min(result.ceilings.values()) < 1
    path = tmp_path / "dense.json"
    rs.save(result, path)
    back = rs.load(path, EvaluationResult)
    assert back == result
    for f in fields(EvaluationResult):  # a field added later must round-trip too
        assert getattr(back, f.name) == getattr(result, f.name), f.name
    assert back.per_query.values.tobytes() == result.per_query.values.tobytes()  # bit for bit
    assert json.loads(path.read_text())["schema_version"] == 1
    assert rs.load(path) == result


def test_comparison_save_load_round_trips_every_field(tmp_path: Path) -> None:
    c = shared_comparison()
    rs.save(c, tmp_path / "c.json")
    back = rs.load(tmp_path / "c.json", Comparison)
    for f in fields(Comparison):
        a, b = getattr(c, f.name), getattr(back, f.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), f.name
        else:
            assert a == b, f.name
    assert back.to_dict(per_query=True) == c.to_dict(per_query=True)
    with pytest.raises(InvalidParameterError, match="not an EvaluationResult"):
        rs.load(tmp_path / "c.json", EvaluationResult)
    bad = tmp_path / "bad.json"
    bad.write_text('{"q1": {"d1": 1}}')
    with pytest.raises(ParseError, match="not a saved rankscope evaluation"):
        rs.load(bad)


def test_compare_a_saved_evaluation_with_todays_run(tmp_path: Path) -> None:
    qrels, runs = shared_inputs()
    last_month = rs.evaluate(qrels, runs["bm25"], METRICS)
    path = tmp_path / "bm25-2026-04.json"
    rs.save(last_month, path)
    fresh = rs.compare(qrels, {"bm25": runs["bm25"], "hybrid": runs["hybrid"]}, METRICS)
    mixed = rs.compare(qrels, {"bm25": str(path), "hybrid": runs["hybrid"]})  # metrics: the saved ones
    assert mixed.labels == tuple(METRICS)
    for s in ("bm25", "hybrid"):
        assert mixed.means[s] == fresh.means[s]
    assert [p.p_adjusted for p in mixed.pairs] == [p.p_adjusted for p in fresh.pairs]
    with pytest.raises(InvalidParameterError, match=r"relevance_level=1 \(--relevance-level 1\)"):
        rs.compare(qrels, {"bm25": str(path), "hybrid": runs["hybrid"]}, relevance_level=2)
    other = rs.Qrels.from_dict({q: {"d0": 1} for q in qrels.query_ids})
    with pytest.raises(InvalidParameterError, match="scored against other judgments"):
        rs.compare(other, {"bm25": str(path), "hybrid": runs["hybrid"]})
    # the command line: a saved evaluation is a RUN like any file
    q, r = tmp_path / "qrels.txt", tmp_path / "hybrid.trec"
    rs.io.write_qrels(qrels, q)
    rs.io.write_run(runs["hybrid"], r)
    code, out, err = outcome(cli("compare", str(path), str(r), "--qrels", str(q), "-f", "json", width=80))
    assert code == 0, err
    data = json.loads(out)
    assert data["systems"] == ["bm25-2026-04", "hybrid"]
    assert data["means"]["bm25-2026-04"] == pytest.approx(fresh.means["bm25"], abs=1e-15)
    saved_c = tmp_path / "c.json"
    code, _, err = outcome(cli("compare", str(path), str(path), "--save", str(saved_c), width=80))
    assert code == 2 and "same run file" in err  # twice the same file
    code, _, err = outcome(cli("evaluate", str(q), str(r), "-m", ",".join(METRICS), "--save",
                             str(tmp_path / "hybrid.json"), width=80))
    assert code == 0 and "evaluation saved" in err
    code, out, err = outcome(cli("compare", str(path), str(tmp_path / "hybrid.json"), "--save", str(saved_c), width=80))
    assert code == 0, err  # saved evaluations alone need no qrels
    assert isinstance(rs.load(saved_c), Comparison)


def test_reprs_are_short() -> None:
    c = shared_comparison()
    assert len(repr(c)) < 400 and "3 systems" in repr(c) and "30 queries" in repr(c)
    assert len(repr(rich_result())) < 300
    qrels, runs = shared_inputs()
    gate = check(qrels, runs["bm25"], ["mrr>=0.5"])
    assert len(repr(gate)) < 200 and "FAILED" in repr(gate)


def test_html_displays_hold_means_intervals_marks_and_notices() -> None:
    res_html = display.html(rich_result())
    for needle in ("dense_v2", "30 queries", "has no ranking for 1 of the 30", "ranks 1 query that is not",
                   "column 3 read as rank", "95% bootstrap", "<table"):
        assert needle in res_html, needle
    qrels, runs = shared_inputs()
    c = rs.compare(qrels, runs, METRICS)  # every pair: marks as ranx's report sets them
    html = display.html(c)
    assert html.count("<tr>") == 1 + len(c.systems)  # one table: header + a row per system
    # hybrid (c) is significantly better than bm25 (a) and dense_v2 (b) on recall@5: its cell carries "ab"
    assert "<sup>ab</sup>" in html and "superscript letters" in html
    based = shared_comparison()  # against the baseline bm25: † better, ‡ worse
    assert "†" in display.html(based) and "‡" in display.html(based)
    ts = rs.TestSet([rs.data.testset.Query("q1", "what"), rs.data.testset.Query("q2", "who")], {"q1": {"d": 1}})
    assert "1 query has no judgment" in display.html(ts)
    html_gate = display.html(check(qrels, runs["bm25"], ["mrr>=0.5", "recall@5>=0.1"]))
    assert "FAIL" in html_gate and "PASS" in html_gate and "mrr &gt;= 0.5" in html_gate


def test_comparison_to_dataframe_is_tidy() -> None:
    c = shared_comparison()
    df = c.to_dataframe()
    assert list(df.columns) == ["system", "metric", "mean", "ci_low", "ci_high", "versus", "diff", "p_value",
                                "p_adjusted", "effect_size", "significant"]
    assert len(df) == len(c.systems) * len(c.labels)
    row = df[(df.system == "hybrid") & (df.metric == "mrr")].iloc[0]
    p = c.pair("bm25", "hybrid", "mrr")
    assert row["versus"] == "bm25" and row["p_adjusted"] == p.p_adjusted and row["effect_size"] == p.cohen_d
    assert row["mean"] == c.means["hybrid"]["mrr"] and (row["ci_low"], row["ci_high"]) == c.mean_ci["hybrid"]["mrr"]
    assert df[df.system == "bm25"]["p_value"].isna().all()


def test_plots_are_matplotlib_figures() -> None:
    from matplotlib.figure import Figure

    c = shared_comparison()
    qrels, runs = shared_inputs()
    for fig in (rs.plot(c, "mrr"), rs.plot(c), rs.plot(c, "P@5", kind="differences"), rs.plot(c, kind="first_rank"),
                rs.plot(c, kind="curves", qrels=qrels, runs=runs, kmax=10), rs.plot(rich_result()),
                rs.plot(rich_result(), "mrr"), rs.plot(rs.evaluate(qrels, runs["bm25"], ["mrr"]), kind="first_rank")):
        assert isinstance(fig, Figure)
        assert fig.axes and fig.canvas.get_renderer() is not None
    assert len(rs.plot(c, "mrr").axes) == 1 and len(rs.plot(c).axes) == len(METRICS)
    with pytest.raises(InvalidParameterError, match="unknown plot kind"):
        rs.plot(c, kind="pie")
    with pytest.raises(InvalidParameterError, match="curves need the qrels"):
        rs.plot(rich_result(), kind="curves")


def test_displays_in_chinese(monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, runs = shared_inputs()
    monkeypatch.setenv("RANKSCOPE_LANG", "zh")
    assert "均值的 95% bootstrap 区间" in display.html(rs.evaluate(qrels, runs["bm25"], METRICS))
    assert "上标字母" in display.html(rs.compare(qrels, runs, METRICS))
    assert "门禁未通过" in display.html(check(qrels, runs["bm25"], ["mrr>=0.5"]))
    from rankscope.report.notebook import html_result

    assert "bootstrap intervals of the mean" in html_result(rs.evaluate(qrels, runs["bm25"], ["mrr"]), lang="en")
