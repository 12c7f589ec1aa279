"""rankscope evaluate warns, in every output, when the run lacks queries of the qrels (a run covering 3 of 50
queries scored 0.0258 "poor" with the 47 missing ones said only on the summary line), as compare and check do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import cli
from conftest import DATA, require
from rankscope import Run
from rankscope.io import read_run, write_trec_run

DL_HARD = DATA / "runs_dl_hard" / "dataset"
WARNING = "has no ranking for 47 of the 50 qrels queries: they are scored 0 (missing=zero)"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    qrels = require(DL_HARD / "dl_hard-passage.qrels")
    run = read_run(require(DL_HARD / "baselines" / "passage" / "bm25.run"))
    keep = sorted(run.queries)[:3]
    few = tmp_path_factory.mktemp("missing") / "three.run"
    d = run.to_dict()
    write_trec_run(Run.from_dict({q: d[q] for q in keep}, name=run.name), few)
    return qrels, few


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_every_format_warns(files: tuple[Path, Path], fmt: str) -> None:
    qrels, run = files
    done = cli("evaluate", qrels, run, "-m", "ndcg@10", "--format", fmt, width=200)
    assert done.returncode == 0, done.stderr
    assert WARNING in done.stdout + done.stderr
    if fmt == "json":
        assert any(WARNING in w["message"] for w in json.loads(done.stdout)["warnings"])
    zh = cli("evaluate", qrels, run, "-m", "ndcg@10", "--format", fmt, "--lang", "zh", width=200)
    assert "缺少 qrels 中 50 个查询里的 47 个" in zh.stdout + zh.stderr


def test_reports_and_several_runs_warn(files: tuple[Path, Path], tmp_path: Path) -> None:
    qrels, run = files
    reports = [tmp_path / "r.md", tmp_path / "r.html", tmp_path / "r.json"]
    done = cli("evaluate", qrels, run, "-m", "ndcg@10", *(a for p in reports for a in ("--report", p)), width=200)
    assert done.returncode == 0, done.stderr
    for path in reports:
        assert WARNING in path.read_text(encoding="utf-8"), path
    many = cli("evaluate", "--qrels", qrels, "--run", run, "--run", require(DL_HARD / "baselines" / "passage" /
                                                                             "bm25.run"), "-m", "ndcg@10", width=200)
    assert many.returncode == 0, many.stderr
    assert WARNING in many.stdout + many.stderr
