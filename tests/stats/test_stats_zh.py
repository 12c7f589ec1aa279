"""The errors of the statistics, of compare() and of the gate say themselves in Chinese (issue 17 §5).

Each error keeps its English message word for word (``str(error)``, ``text("en")``) and says the same in Chinese
(``text("zh")``): what a user meets first — a requirement or maximum drop the gate cannot read, a threshold outside
the metric's range, a bad alpha, compare's run names and query sets — and the library's argument checks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import rankscope as rs
from prose import assert_chinese
from rankscope import Qrels, Run, compare
from rankscope.comparison import Comparison, aligned_scores
from rankscope.errors import RankscopeError
from rankscope.gate import check, parse_max_drop, parse_requirement
from rankscope.stats import adjust, bootstrap_means, estimate, paired_t, percentile_ci, queries_needed, reject
from rankscope.stats.noninferiority import non_inferiority
from rankscope.stats.paired import sign_flip_test
from rankscope.stats.tukey import compact_letters, tukey_hsd

QRELS = Qrels.from_dict({f"q{i}": {"a": 1, "b": 1} for i in range(6)})
BM25 = Run.from_ranked_lists({f"q{i}": ["x", "a"] for i in range(6)}, name="bm25")
DENSE = Run.from_ranked_lists({f"q{i}": ["a", "b"] for i in range(6)}, name="dense")
BOTH = {"bm25": BM25, "dense": DENSE}
D = np.array([0.1, -0.05, 0.2, 0.0, 0.1])


def _raised(call: Callable[[], Any]) -> RankscopeError:
    with pytest.raises(RankscopeError) as info:
        call()
    return info.value


def _says(error: RankscopeError, english: str, *chinese: str) -> None:
    """English as it always was, the same in Chinese (with ``chinese`` in it)."""
    assert str(error) == english
    assert error.text("en") == english
    zh = error.text("zh")
    assert_chinese(zh)
    for part in chinese:
        assert part in zh, (part, zh)


GATE = [
    (lambda: parse_requirement("ndcg@10=>0.5"),
     "cannot read the requirement 'ndcg@10=>0.5'; write it as METRIC>=VALUE (or <=, >, <), e.g. recall@5>=0.8",
     ["无法读取要求 'ndcg@10=>0.5'", "请写成 METRIC>=VALUE"]),
    (lambda: parse_requirement("ndcg@10>=abc"),
     "the threshold in 'ndcg@10>=abc' must be a number, got 'abc'",
     ["'ndcg@10>=abc' 中的阈值必须是数字，实际为 'abc'"]),
    (lambda: parse_requirement("mrr>=inf"),
     "the threshold in 'mrr>=inf' must be a finite number, got 'inf'", ["阈值必须是有限的数字"]),
    (lambda: parse_requirement("ndcg@10>=1.5"),
     "the threshold in 'ndcg@10>=1.5' is outside the range of ndcg@10: it lies between 0 and 1, got 1.5",
     ["超出了 ndcg@10 的取值范围", "介于 0 和 1 之间，实际为 1.5"]),
    (lambda: parse_requirement("recall@5 >= 150%"),
     "the threshold in 'recall@5 >= 150%' is outside the range of recall@5: it lies between 0 and 1, got 1.5",
     ["实际为 1.5"]),
    (lambda: parse_max_drop("ndcg@10"),
     "cannot read the maximum drop 'ndcg@10'; write it as METRIC=DROP, e.g. ndcg@10=0.02",
     ["无法读取最大降幅 'ndcg@10'"]),
    (lambda: parse_max_drop("ndcg@10=two"),
     "the maximum drop in 'ndcg@10=two' must be a number, got 'two'", ["'ndcg@10=two' 中的最大降幅必须是数字"]),
    (lambda: parse_max_drop("ndcg@10=-0.1"),
     "the maximum drop in 'ndcg@10=-0.1' must be >= 0, got '-0.1'", ["最大降幅不能为负"]),
    (lambda: parse_max_drop("ndcg@10=150%"),
     "the maximum drop in 'ndcg@10=150%' is more than 100% of the baseline's mean", ["基线平均值的 100%"]),
    (lambda: parse_max_drop("ndcg@10=2"),
     "the maximum drop in 'ndcg@10=2' is larger than the whole range of ndcg@10 (0 to 1), got 2",
     ["整个取值范围（0 到 1）"]),
    (lambda: check(QRELS, DENSE),
     "nothing to check: give at least one requirement, preset or maximum drop", ["没有可检查的内容"]),
    (lambda: check(QRELS, DENSE, max_drops=["ndcg@10=0.02"]),
     "a maximum drop needs a baseline run to compare with", ["基线"]),
    (lambda: check(QRELS, DENSE, ["mrr>=0.5"], baseline=BM25),
     "a baseline run needs at least one maximum drop (e.g. ndcg@10=0.02)", ["（例如 ndcg@10=0.02）"]),
    (lambda: check(QRELS, DENSE, ["mrr>=0.5"], alpha=1.5),
     "alpha must be a number between 0 and 1, got 1.5", ["alpha", "实际为 1.5"]),
    (lambda: check(QRELS, DENSE, baseline=BM25, max_drops=["ndcg@10=0.02"], test="wilcoxon"),
     "the Wilcoxon signed-rank test cannot check a maximum drop: it tests a pseudo-median (Hodges-Lehmann "
     "location), not the mean the margin is stated on, and passes runs whose mean dropped by more than the "
     "margin when a few queries lose a lot; use --test betting, t, randomization or bootstrap",
     ["伪中位数", "请改用 --test betting、t、randomization 或 bootstrap"]),
    (lambda: check(QRELS, DENSE, baseline=BM25, max_drops=["ndcg@10=0.02"], test="sign"),
     "the test of a maximum drop must be one of betting, t, randomization, bootstrap, got 'sign'",
     ["betting、t、randomization、bootstrap 之一"]),
]


@pytest.mark.parametrize(("call", "english", "chinese"), GATE, ids=[e for _, e, _ in GATE])
def test_the_gates_errors_say_themselves_in_chinese(call: Callable[[], Any], english: str,
                                                    chinese: list[str]) -> None:
    _says(_raised(call), english, *chinese)


def _comparison(**options: Any) -> Comparison:
    return compare(QRELS, {**BOTH, "hybrid": DENSE}, ["mrr"], **options)


COMPARE = [
    (lambda: compare(QRELS, [BM25], ["mrr"]), "compare needs at least 2 runs, got 1", ["至少需要 2 个结果"]),
    (lambda: compare(QRELS, [BM25, BM25], ["mrr"]),
     "two runs share the name 'bm25'; pass a dict {name: run} to name them", ["两个结果同名 'bm25'", "{name: run}"]),
    (lambda: compare(QRELS, BOTH, ["mrr"], baseline="dense_v2"),
     "baseline 'dense_v2' is not one of the runs (bm25, dense)", ["基线 'dense_v2'", "（bm25、dense）"]),
    (lambda: compare(QRELS, BOTH, ["mrr"], test="anova"),
     "test must be one of t, wilcoxon, randomization, tukey-hsd, got 'anova'",
     ["t、wilcoxon、randomization、tukey-hsd 之一"]),
    (lambda: compare(QRELS, BOTH, ["mrr"], test="tukey-hsd", correction="bh"),
     "the tukey-hsd test already controls the family-wise error over all pairs of systems (per metric); "
     "leave the correction unset instead of 'bh'",
     ["随机化 Tukey HSD 检验（tukey-hsd）", "Benjamini–Hochberg 校正（bh）"]),
    (lambda: compare(QRELS, BOTH, ["mrr"], correction="sidak"),
     "correction must be one of holm, bonferroni, bh, none, got 'sidak'",
     ["holm、bonferroni、bh、none 之一", "实际为 'sidak'"]),
    (lambda: compare(QRELS, BOTH, ["mrr"], alpha=0), "alpha must be a number between 0 and 1, got 0", ["实际为 0"]),
    (lambda: compare(QRELS, BOTH, ["mrr"], rng="seven"),
     "rng must be a seed (int), a numpy Generator or None, got 'seven'", ["随机种子"]),
    (lambda: compare(QRELS, BOTH, ["mrr"], bootstrap=0),
     "bootstrap resamples must be a positive integer, got 0", ["重抽样次数必须是正整数"]),
    (lambda: compare(QRELS, BOTH, ["mrr"], test="randomization", permutations=0),
     "permutations must be a positive integer, got 0", ["permutations 必须是正整数"]),
    (lambda: _comparison().pair("bm25", "splade", "mrr"),
     "no system 'splade' in this comparison (have: bm25, dense, hybrid)", ["没有系统 'splade'", "bm25、dense、hybrid"]),
    (lambda: _comparison().pair("bm25", "dense", "map"),
     "metric 'map' is not in this comparison (have: mrr)", ["没有指标 'map'"]),
    (lambda: _comparison(baseline="bm25").pair("dense", "hybrid", "mrr"),
     "'dense' and 'hybrid' were not compared (pairs are against baseline 'bm25')", ["基线 'bm25'"]),
    (lambda: aligned_scores([rs.evaluate(QRELS, BM25, ["mrr"]),
                             rs.evaluate(Qrels.from_dict({"q9": {"a": 1}}), Run.from_ranked_lists({"q9": ["a"]}),
                                         ["mrr"])]),
     "the runs share no evaluated query", ["没有共同的已评估查询"]),
]


@pytest.mark.parametrize(("call", "english", "chinese"), COMPARE, ids=[e for _, e, _ in COMPARE])
def test_compares_errors_say_themselves_in_chinese(call: Callable[[], Any], english: str, chinese: list[str]) -> None:
    _says(_raised(call), english, *chinese)


def test_compares_errors_about_saved_evaluations_say_themselves_in_chinese(tmp_path: Path) -> None:
    saved = tmp_path / "bm25.json"
    rs.save(rs.evaluate(QRELS, BM25, ["mrr", "map"]), saved)
    _says(_raised(lambda: compare(None, {"bm25": str(saved), "dense": DENSE})),
          "the runs dense need the qrels to be scored against the saved evaluations", "结果 dense 需要用 qrels 评分")
    _says(_raised(lambda: compare(QRELS, {"bm25": str(saved), "dense": DENSE}, relevance_level=2)),
          "'bm25' was evaluated with relevance_level=1 (not 2); score the runs the same way: relevance_level=1 "
          "(--relevance-level 1)", "relevance_level=1（而不是 2）", "relevance_level=1（--relevance-level 1）")
    plain = rs.evaluate(QRELS, DENSE, ["mrr"], relevance_level=2)
    rs.save(plain, tmp_path / "dense.json")
    _says(_raised(lambda: compare(QRELS, {"bm25": str(saved), "dense": str(tmp_path / "dense.json"), "x": BM25})),
          "the saved evaluations 'bm25' and 'dense' were scored with other policies "
          f"({rs.load(saved).policies.to_dict()} vs {plain.policies.to_dict()})", "评分设置不同")
    _says(_raised(lambda: compare(QRELS, {"bm25": str(saved), "dense": str(tmp_path / "dense.json")}, ["map"])),
          "the result of 'dense' has no metric 'map' (it holds: mrr)", "'dense' 的结果中没有指标 'map'")
    only_map = rs.evaluate(QRELS, DENSE, ["map"])
    _says(_raised(lambda: compare(None, {"a": rs.evaluate(QRELS, BM25, ["mrr"]), "b": only_map})),
          "the results share no metric", "没有共同的指标")
    condensed = rs.evaluate(QRELS, DENSE, ["mrr"], unjudged="condense")
    _says(_raised(lambda: compare(None, {"a": rs.evaluate(QRELS, BM25, ["mrr"]), "b": condensed})),
          "the results were evaluated with different unjudged policies (condense, keep); evaluate them all with the "
          "same one", "（condense、keep）")
    c_path = tmp_path / "c.json"
    rs.save(_comparison(), c_path)
    _says(_raised(lambda: compare(QRELS, {"c": str(c_path), "dense": DENSE})),
          f"{c_path} holds a saved comparison; compare takes runs or saved evaluations (rankscope.save(result, path))",
          "保存的是一次比较")
    _says(_raised(lambda: rs.load(saved, Comparison)), f"{saved} holds a saved EvaluationResult, not a Comparison",
          "不是 Comparison")
    _says(_raised(lambda: compare(QRELS, "bm25.trec")),  # type: ignore[arg-type]
          "runs must be a dict of name -> run or a list of runs, got str", "实际为 str")


def test_a_run_scored_against_other_judgments_is_said_in_chinese(tmp_path: Path) -> None:
    saved = tmp_path / "bm25.json"
    rs.save(rs.evaluate(QRELS, BM25, ["recall@1"]), saved)
    other = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(6)})
    error = _raised(lambda: compare(other, {"bm25": str(saved), "dense": DENSE}))
    assert str(error).startswith("'bm25' was scored against other judgments: a perfect ranking reaches recall@1 "
                                 "0.5000 on its queries with the judgments it was scored on, 1.0000 with these qrels")
    _says(error, str(error), "完美排序按当时的标注得到 recall@1 0.5000，按这份 qrels 得到 1.0000")


STATS = [
    (lambda: paired_t(np.array([0.1, np.nan])), "per-query differences must be finite numbers (got nan or inf)",
     ["nan 或 inf"]),
    (lambda: paired_t(D, "up"),  # type: ignore[arg-type]
     "alternative must be 'two-sided', 'greater' or 'less', got 'up'", ["'two-sided'、'greater' 或 'less'"]),
    (lambda: paired_t(np.zeros((2, 2, 2))),
     "diffs must be a (comparisons × queries) matrix, got shape (2, 2, 2)", ["实际形状为 (2, 2, 2)"]),
    (lambda: sign_flip_test(D, combine=np.ones((2, 3))), "combine must have shape (k, 1), got (2, 3)",
     ["combine 的形状必须是 (k, 1)"]),
    (lambda: sign_flip_test(D, max_permutations=0), "max_permutations must be a positive integer, got 0",
     ["max_permutations 必须是正整数"]),
    (lambda: adjust(np.zeros((2, 2))), "p-values must be a 1-D array, got shape (2, 2)", ["一维数组"]),
    (lambda: adjust(np.array([0.5, 1.5])), "p-values must be numbers between 0 and 1", ["p 值必须是 0 到 1 之间的数"]),
    (lambda: reject(np.array([0.5]), 5), "alpha must be between 0 and 1, got 5", ["实际为 5"]),
    (lambda: bootstrap_means(np.zeros(3)), "scores must be a 2-D matrix, got shape (3,)", ["二维矩阵"]),
    (lambda: percentile_ci(np.zeros((1, 3)), 1.0), "alpha must be between 0 and 1, got 1.0", ["alpha"]),
    (lambda: queries_needed(-0.1, 0.02), "the standard deviation must be a finite number >= 0, got -0.1", ["标准差"]),
    (lambda: queries_needed(0.1, 0.0), "the difference to detect must be a non-zero number, got 0.0",
     ["要检测的差值（delta）"]),
    (lambda: queries_needed(0.1, 0.02, alternative="greater"),
     "alternative must be 'two-sided' or 'one-sided', got 'greater'", ["'two-sided' 或 'one-sided'"]),
    (lambda: queries_needed(0.1, 0.02, power=80), "power must be between 0 and 1, got 80", ["目标功效（power）"]),
    (lambda: estimate(np.array([0.1]), 0.02), "power analysis needs at least 2 queries, got 1", ["实际只有 1 个"]),
    (lambda: estimate(D, None),  # type: ignore[arg-type]
     "give the difference to detect (delta): the smallest difference that matters to you; power at the observed "
     "difference (\"observed power\") only restates the p-value", ["观测功效"]),
    (lambda: tukey_hsd(np.zeros((1, 4))), "scores must be (systems >= 2, queries[, metrics]), got shape (1, 4, 1)",
     ["系统数 ≥ 2"]),
    (lambda: tukey_hsd(np.array([[0.1, np.inf], [0.2, 0.3]])),
     "per-query scores must be finite numbers (got nan or inf)", ["逐查询得分"]),
    (lambda: tukey_hsd(np.zeros((2, 4)), permutations=-1), "permutations must be a positive integer, got -1",
     ["permutations 必须是正整数"]),
    (lambda: compact_letters(["a", "b"], [0.5, 0.4], np.zeros((3, 3), dtype=bool)),
     "significant must be a 2 x 2 matrix, got shape (3, 3)", ["2 × 2 的矩阵"]),
    (lambda: non_inferiority(D, -0.02), "the margin must be a finite number >= 0, got -0.02", ["（margin）"]),
    (lambda: non_inferiority(D, 0.02, "bootstrap", resamples=0), "resamples must be a positive integer, got 0",
     ["resamples 必须是正整数"]),
    (lambda: non_inferiority(D, 0.02, alpha=0.0), "alpha must be a number between 0 and 1, got 0.0", ["alpha"]),
]


@pytest.mark.parametrize(("call", "english", "chinese"), STATS, ids=[e for _, e, _ in STATS])
def test_the_statistics_errors_say_themselves_in_chinese(call: Callable[[], Any], english: str,
                                                         chinese: list[str]) -> None:
    _says(_raised(call), english, *chinese)
