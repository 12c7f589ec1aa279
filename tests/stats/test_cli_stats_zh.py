"""``rankscope check``, ``compare`` and ``power`` say their statistics errors in Chinese (issue 17 §5).

What a first hour with the gate meets — a requirement it cannot read, a threshold outside the metric's range, a
maximum drop with the Wilcoxon test, a bad alpha — and compare's and power's argument errors: ``--lang zh`` says
them in Chinese, English says them as it always did.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clirun import cli
from prose import assert_chinese

SRC = Path(__file__).resolve().parents[2] / "src"


def _cli(*args: str | Path) -> subprocess.CompletedProcess:
    return cli(*args, width=100)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("stats_zh")
    qids = [f"q{i}" for i in range(8)]
    (d / "qrels.txt").write_text("".join(f"{q} 0 d{q} 1\n" for q in qids))
    (d / "bm25.trec").write_text("".join(f"{q} Q0 x 1 2 bm25\n{q} Q0 d{q} 2 1 bm25\n" for q in qids))
    (d / "dense.trec").write_text("".join(f"{q} Q0 d{q} 1 2 dense\n{q} Q0 x 2 1 dense\n" for q in qids))
    return {"qrels": d / "qrels.txt", "bm25": d / "bm25.trec", "dense": d / "dense.trec"}


CASES = {
    "unreadable requirement": (
        ["check", "-r", "ndcg@10=>0.5"],
        "cannot read the requirement 'ndcg@10=>0.5'; write it as METRIC>=VALUE (or <=, >, <), e.g. recall@5>=0.8",
        "无法读取要求 'ndcg@10=>0.5'；请写成 METRIC>=VALUE"),
    "threshold outside the range": (
        ["check", "-r", "ndcg@10>=1.5"],
        "the threshold in 'ndcg@10>=1.5' is outside the range of ndcg@10: it lies between 0 and 1, got 1.5",
        "超出了 ndcg@10 的取值范围"),
    "bad maximum drop": (
        ["check", "--baseline", "bm25", "--max-drop", "ndcg@10=2"],
        "the maximum drop in 'ndcg@10=2' is larger than the whole range of ndcg@10 (0 to 1), got 2",
        "最大降幅大于 ndcg@10 的整个取值范围"),
    "wilcoxon for a maximum drop": (
        ["check", "--baseline", "bm25", "--max-drop", "ndcg@10=0.02", "--test", "wilcoxon"],
        "the Wilcoxon signed-rank test cannot check a maximum drop: it tests a pseudo-median (Hodges-Lehmann "
        "location), not the mean the margin is stated on, and passes runs whose mean dropped by more than the "
        "margin when a few queries lose a lot; use --test betting, t, randomization or bootstrap",
        "请改用 --test betting、t、randomization 或 bootstrap"),
    "gate alpha": (
        ["check", "-r", "mrr>=0.5", "--alpha", "2"], "alpha must be a number between 0 and 1, got 2.0", "实际为 2.0"),
    "nothing to check": (
        ["check"], "nothing to check: give at least one requirement, preset or maximum drop", "没有可检查的内容"),
    "tukey with a correction": (
        ["compare", "--test", "tukey-hsd", "--correction", "bh"],
        "the tukey-hsd test already controls the family-wise error over all pairs of systems (per metric); "
        "leave the correction unset instead of 'bh'", "当前设为 Benjamini–Hochberg 校正（bh）"),
    "compare alpha": (
        ["compare", "--alpha", "0"], "alpha must be a number between 0 and 1, got 0.0", "显著性水平 alpha"),
    "power sd": (
        ["power", "--sd", "-1", "--delta", "0.02"], "the standard deviation must be a finite number >= 0, got -1.0",
        "标准差必须是大于或等于 0 的有限数"),
}


def _args(args: list[str], files: dict[str, Path]) -> list[str | Path]:
    if args[0] == "check":
        shown = [files.get(a, a) for a in args[1:]]
        return ["check", "--qrels", files["qrels"], "--run", files["dense"], *shown]
    if args[0] == "compare":
        return ["compare", files["bm25"], files["dense"], "--qrels", files["qrels"], "-m", "mrr", *args[1:]]
    return list(args)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_statistics_errors_of_the_commands_in_chinese(files: dict[str, Path], case: str) -> None:
    args, english, chinese = CASES[case]
    zh = _cli(*_args(args, files), "--lang", "zh")
    assert zh.returncode == 2, zh.stderr
    assert zh.stderr.startswith("rankscope：错误："), zh.stderr
    assert_chinese(zh.stderr)
    assert chinese in zh.stderr, zh.stderr
    en = _cli(*_args(args, files), "--lang", "en")
    assert en.returncode == 2
    assert en.stderr == f"rankscope: error: {english}\n"
