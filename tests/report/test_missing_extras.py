"""A core install (no jinja2, matplotlib or pandas) asked for a report, a plot or a DataFrame: one line naming the
extra to install, exit 2, before any work (it printed the results, then a ModuleNotFoundError traceback, exit 1)."""

from __future__ import annotations

import sys
from pathlib import Path
from unittest import mock

import pytest

import rankscope as rs
from clirun import cli
from rankscope import Qrels, Run, compare, evaluate
from rankscope.errors import MissingExtraError


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq2 0 b 1\n")
    (tmp_path / "bm25.trec").write_text("q1 Q0 a 1 2.0 bm25\nq2 Q0 x 1 1.0 bm25\n")
    (tmp_path / "dense.trec").write_text("q1 Q0 x 1 2.0 dense\nq2 Q0 b 1 1.0 dense\n")
    return tmp_path / "qrels.txt", tmp_path / "bm25.trec", tmp_path / "dense.trec"


def _without(*modules: str):  # type: ignore[no-untyped-def]
    """As if ``modules`` were not installed (importing them raises ImportError)."""
    gone = {m: None for m in modules}
    gone.update({m: None for m in list(sys.modules) if m.split(".")[0] in modules})
    return mock.patch.dict(sys.modules, gone)


@pytest.mark.parametrize("missing", ["jinja2", "matplotlib"])
def test_an_html_report_without_its_extra_is_one_line_before_any_work(files: tuple[Path, Path, Path],
                                                                     tmp_path: Path, missing: str) -> None:
    qrels, bm25, dense = files
    for argv in (("evaluate", qrels, bm25), ("compare", bm25, dense, "--qrels", qrels)):
        with _without(missing):
            done = cli(*argv, "--report", tmp_path / "x.html", width=200)
        assert done.returncode == 2, done
        assert done.stdout == ""  # no result printed before the failure: a CI job sees one error
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert f"the HTML report needs {missing}: pip install 'rankscope[report]'" in done.stderr
    with _without(missing):
        zh = cli("evaluate", qrels, bm25, "--report", tmp_path / "x.html", "--lang", "zh", width=200)
    assert zh.returncode == 2 and f"HTML 报告需要 {missing}：pip install 'rankscope[report]'" in zh.stderr
    with _without(missing):  # reports that need no extra are still written
        md = cli("evaluate", qrels, bm25, "--report", tmp_path / "x.md", width=200)
    assert md.returncode == 0 and (tmp_path / "x.md").exists()


def test_plots_and_dataframes_name_their_extra() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    res = evaluate(qrels, Run.from_ranked_lists({"q1": ["a"], "q2": ["x"]}), ["mrr"])
    c = compare(qrels, {"a": Run.from_ranked_lists({"q1": ["a"]}), "b": Run.from_ranked_lists({"q2": ["b"]})},
                ["mrr"])
    with _without("matplotlib"):
        with pytest.raises(MissingExtraError, match=r"^plots needs matplotlib: pip install 'rankscope\[report\]'$"):
            rs.plot(res)
        with pytest.raises(MissingExtraError, match=r"rankscope\[report\]"):
            rs.plot(c, "mrr")
    with _without("pandas"):
        with pytest.raises(MissingExtraError, match=r"^a DataFrame needs pandas: pip install 'rankscope\[pandas\]'$"):
            res.to_dataframe()
        with pytest.raises(MissingExtraError, match=r"rankscope\[pandas\]"):
            c.to_dataframe()


@pytest.mark.slow
def test_the_html_report_names_no_internal_document(files: tuple[Path, Path, Path], tmp_path: Path) -> None:
    qrels, bm25, dense = files
    done = cli("compare", bm25, dense, "--qrels", qrels, "--report", tmp_path / "c.html", width=200)
    assert done.returncode == 0, done.stderr
    html = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "What each metric measures" in html and "seed 0" not in html  # it said "(seed 000)"
