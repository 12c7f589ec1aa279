"""A command line that rankscope suggests runs as written: the one typed, with the files in their places (it
suggested `rankscope compare RUN run.trec pirc.trec --qrels qrels.txt`)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from clirun import cli


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "qrels.txt").write_text("601 0 d1 1\n602 0 d2 1\n")
    (tmp_path / "run.trec").write_text("601 Q0 d1 1 2.0 a\n602 Q0 d2 1 1.0 a\n")
    (tmp_path / "pirc.trec").write_text("601 Q0 d2 1 2.0 b\n602 Q0 d1 1 1.0 b\n")
    return tmp_path


@pytest.mark.parametrize("argv", [
    ["compare", "qrels.txt", "run.trec", "pirc.trec", "-m", "mrr"],
    ["evaluate", "run.trec", "qrels.txt", "-m", "mrr"],
    ["evaluate", "--run", "qrels.txt", "--qrels=run.trec"],
    ["compare", "run.trec", "qrels.txt", "--qrels", "pirc.trec"],
    ["check", "--qrels", "run.trec", "--run", "qrels.txt", "--require", "mrr>=0.1"],
])
def test_the_suggested_command_runs(folder: Path, argv: list[str]) -> None:
    wrong = cli(*argv, cwd=folder, width=300)
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    suggested = wrong.stderr.strip().rsplit(": ", 1)[1]
    assert suggested.startswith("rankscope ") and "RUN" not in suggested and "QRELS" not in suggested
    right = cli(*shlex.split(suggested)[1:], cwd=folder, width=300)
    assert right.returncode == 0, (suggested, right.stderr)


def test_no_command_is_suggested_when_none_would_run(folder: Path) -> None:
    done = cli("compare", "qrels.txt", "run.trec", cwd=folder, width=300)  # one run left: compare needs two
    assert done.returncode == 2 and "rankscope compare" not in done.stderr and "RUN" not in done.stderr
    assert "holds judgments (query iter doc relevance), not a run; give a run file" in done.stderr
    zh = cli("compare", "qrels.txt", "run.trec", "--lang", "zh", cwd=folder, width=300)
    assert "请在这个位置给出结果文件" in zh.stderr
