"""compare(): real DL-HARD runs, the seed 001 statistical example, reproducibility, errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

import rankscope
from conftest import DATA, require
from rankscope import Qrels, Run, compare
from rankscope.engine import EvaluationResult, evaluate
from rankscope.engine.prepare import PolicyCounts
from rankscope.engine.result import PerQueryScores
from rankscope.errors import InvalidParameterError, NoOverlapError
from rankscope.io import read_qrels, read_run
from rankscope.measures import parse_metric

PASSAGE = DATA / "runs_dl_hard" / "dataset"
RUNS = ("bm25", "bm25+rm3", "bm25+t5(zs)")
METRICS = ["ndcg@10", "recall@100", "mrr"]


@pytest.fixture(scope="module")
def dlhard() -> tuple[Qrels, dict[str, Run]]:
    qrels = read_qrels(require(PASSAGE / "dl_hard-passage.qrels"))
    runs = {name: read_run(require(PASSAGE / "baselines" / "passage" / f"{name}.run")) for name in RUNS}
    return qrels, runs


def test_t_test_p_values_and_holm_match_scipy_and_statsmodels(dlhard: tuple[Qrels, dict[str, Run]]) -> None:
    qrels, runs = dlhard
    c = compare(qrels, runs, METRICS, relevance_level=2)
    per = {n: evaluate(qrels, r, METRICS, relevance_level=2) for n, r in runs.items()}
    assert c.systems == RUNS
    assert [(p.a, p.b, p.metric) for p in c.pairs] == [
        (a, b, m) for a, b in [(RUNS[0], RUNS[1]), (RUNS[0], RUNS[2]), (RUNS[1], RUNS[2])] for m in METRICS
    ]
    raw = []
    for p in c.pairs:
        a, b = per[p.a].per_query[p.metric], per[p.b].per_query[p.metric]
        ref = stats.ttest_rel(b, a)
        assert p.statistic == pytest.approx(ref.statistic, rel=1e-10)
        assert p.p_value == pytest.approx(ref.pvalue, rel=1e-10)
        assert p.mean_a == pytest.approx(per[p.a].mean()[p.metric])
        assert p.diff == pytest.approx(b.mean() - a.mean())
        assert p.diff_ci[0] <= p.diff <= p.diff_ci[1]
        assert p.wins == int(np.sum(b > a)) and p.losses == int(np.sum(b < a))
        assert p.wins + p.ties + p.losses == len(a)
        raw.append(ref.pvalue)
    rej, adj, _, _ = multipletests(raw, alpha=0.05, method="holm")
    np.testing.assert_allclose([p.p_adjusted for p in c.pairs], adj, rtol=1e-10)
    assert [p.significant for p in c.pairs] == rej.tolist()
    # the t5 re-ranker is clearly better than bm25 on ndcg@10 in DL-HARD
    assert c.best("ndcg@10") == "bm25+t5(zs)"


@pytest.mark.parametrize("test", ["wilcoxon", "randomization"])
def test_other_tests_use_the_per_query_values(dlhard: tuple[Qrels, dict[str, Run]], test: str) -> None:
    qrels, runs = dlhard
    c = compare(qrels, runs, ["ndcg@10"], test=test, baseline="bm25", correction="none", permutations=4000, rng=3)
    assert [(p.a, p.b) for p in c.pairs] == [("bm25", "bm25+rm3"), ("bm25", "bm25+t5(zs)")]
    _, values = c.per_query("ndcg@10")
    for p in c.pairs:
        d = values[c.systems.index(p.b)] - values[c.systems.index(p.a)]
        if test == "wilcoxon":
            assert p.p_value == pytest.approx(stats.wilcoxon(d).pvalue, rel=1e-10)
        else:
            _, t_p = stats.ttest_1samp(d, 0.0)
            assert abs(p.p_value - t_p) < 0.03
            assert p.p_value >= 1 / 4001
        assert p.p_adjusted == p.p_value


def _result(name: str, label: str, values: list[float]) -> EvaluationResult:
    qids = np.array([f"q{i:02d}" for i in range(len(values))], dtype=object)
    return EvaluationResult(
        run_name=name, labels=(label,), measures=(parse_metric(label),),
        per_query=PerQueryScores(qids, (label,), np.array(values)[:, None]),
        queries=PolicyCounts(evaluated=len(values), missing_from_run=0, not_in_qrels=0),
    )


def test_seed_001_statistical_example() -> None:
    """Seed 001's baseline vs improved Recall@5 (10 queries): a real test, not the n=10 critical value."""
    baseline = [0.6, 0.7, 0.65, 0.68, 0.72, 0.63, 0.69, 0.71, 0.66, 0.70]
    improved = [0.75, 0.82, 0.78, 0.80, 0.85, 0.76, 0.81, 0.83, 0.79, 0.84]
    runs = {"baseline": _result("baseline", "recall@5", baseline),
            "improved": _result("improved", "recall@5", improved)}
    c = compare(None, runs, ["recall@5"])
    p = c.pair("baseline", "improved", "recall@5")
    d = np.subtract(improved, baseline)
    t_formula = d.mean() / (d.std(ddof=1) / np.sqrt(len(d)))
    assert p.statistic == pytest.approx(t_formula, rel=1e-12)
    assert p.statistic == pytest.approx(41.0219, abs=1e-4)
    assert p.p_value == pytest.approx(1.5144e-11, rel=1e-3) and p.p_value < 0.05 and p.significant
    assert p.mean_a == pytest.approx(0.674) and p.mean_b == pytest.approx(0.803)
    assert p.rel_improvement == pytest.approx(19.1395, abs=1e-4)
    assert (p.wins, p.ties, p.losses) == (10, 0, 0)
    # every difference positive: the exact randomization p is 2 / 2**10 (all +, all -)
    r = compare(None, runs, ["recall@5"], test="randomization").pairs[0]
    assert r.p_value == pytest.approx(2 / 1024)


def test_same_seed_same_output_every_time(dlhard: tuple[Qrels, dict[str, Run]]) -> None:
    qrels, runs = dlhard
    kw = {"test": "randomization", "permutations": 2000, "bootstrap": 300}
    one = compare(qrels, runs, ["ndcg@10", "mrr"], rng=11, **kw).to_dict()  # type: ignore[arg-type]
    two = compare(qrels, runs, ["ndcg@10", "mrr"], rng=np.random.default_rng(11), **kw).to_dict()  # type: ignore[arg-type]
    default1 = compare(qrels, runs, ["ndcg@10", "mrr"], **kw).to_dict()  # type: ignore[arg-type]
    default2 = compare(qrels, runs, ["ndcg@10", "mrr"], **kw).to_dict()  # type: ignore[arg-type]
    two["seed"] = one["seed"]
    assert one == two
    assert default1 == default2
    assert one["pairs"] != default1["pairs"]
    # bootstrap intervals do not depend on which test was run
    t = compare(qrels, runs, ["ndcg@10", "mrr"], rng=11, bootstrap=300)
    assert t.to_dict()["mean_ci"] == one["mean_ci"]


def test_to_dict_is_strict_json_and_pair_flips(dlhard: tuple[Qrels, dict[str, Run]]) -> None:
    qrels, runs = dlhard
    c = compare(qrels, runs, ["P@5", "ndcg@10"], bootstrap=200)
    d = c.to_dict(per_query=True)
    json.dumps(d, allow_nan=False)
    assert d["schema_version"] == 1 and d["n_queries"] == len(c.query_ids)
    assert set(d["per_query"]) == set(RUNS)
    ab = c.pair("bm25", "bm25+rm3", "P@5")
    ba = c.pair("bm25+rm3", "bm25", "precision@5")  # another spelling of the same metric
    assert ba.diff == -ab.diff and ba.wins == ab.losses and ba.p_value == ab.p_value
    assert ba.diff_ci == (-ab.diff_ci[1], -ab.diff_ci[0])
    ids, matrix = c.per_query("ndcg@10")
    assert matrix.shape == (3, len(ids))
    lo, hi = c.mean_ci["bm25"]["ndcg@10"]
    assert lo <= c.means["bm25"]["ndcg@10"] <= hi


def test_ties_in_best_and_leaders() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"a": 1}})
    same = Run.from_ranked_lists({"q1": ["a"], "q2": ["a"]})
    worse = Run.from_ranked_lists({"q1": ["x", "a"], "q2": ["a"]})
    c = compare(qrels, {"one": same, "two": worse, "three": same}, ["mrr"])
    assert c.best("mrr") == "one" and c.leaders("mrr") == ("one", "three")
    p = c.pair("one", "three", "mrr")
    assert p.p_value == 1.0 and not p.significant and p.statistic is None and p.cohen_d is None


def test_missing_ignore_uses_the_shared_queries() -> None:
    qrels = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(5)})
    full = Run.from_ranked_lists({f"q{i}": ["a"] for i in range(5)})
    part = Run.from_ranked_lists({f"q{i}": ["x", "a"] for i in range(3)})
    c = compare(qrels, {"full": full, "part": part}, ["mrr"], missing="ignore")
    assert list(c.query_ids) == ["q0", "q1", "q2"]
    assert c.means["part"]["mrr"] == 0.5
    z = compare(qrels, {"full": full, "part": part}, ["mrr"])
    assert len(z.query_ids) == 5 and z.means["part"]["mrr"] == pytest.approx(0.3)


def test_top_level_compare_is_the_function_from_the_api_module() -> None:
    """rankscope.compare is the facade's function (it runs retrievers and reads saved evaluations, then calls
    rankscope.comparison.compare), not the module of the same name."""
    from rankscope.api import compare as from_module

    assert rankscope.compare is from_module
    assert callable(rankscope.compare) and not isinstance(rankscope.compare, type(rankscope))
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"a": 1}})
    runs = [Run.from_ranked_lists({"q1": ["a"]}, name="x"), Run.from_ranked_lists({"q2": ["a"]}, name="y")]
    assert rankscope.compare(qrels, runs, ["mrr"]).systems == ("x", "y")


def test_bad_input_raises_clear_errors(tmp_path: Path) -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}})
    r = Run.from_ranked_lists({"q1": ["a"]}, name="r")
    with pytest.raises(InvalidParameterError, match="at least 2 runs"):
        compare(qrels, [r], ["mrr"])
    with pytest.raises(InvalidParameterError, match="share the name"):
        compare(qrels, [r, r], ["mrr"])
    with pytest.raises(InvalidParameterError, match="baseline 'zz'"):
        compare(qrels, {"a": r, "b": r}, ["mrr"], baseline="zz")
    with pytest.raises(InvalidParameterError, match="test must be one of"):
        compare(qrels, {"a": r, "b": r}, ["mrr"], test="anova")
    with pytest.raises(InvalidParameterError, match="correction must be one of"):
        compare(qrels, {"a": r, "b": r}, ["mrr"], correction="sidak")
    with pytest.raises(InvalidParameterError, match="alpha"):
        compare(qrels, {"a": r, "b": r}, ["mrr"], alpha=5)
    other = Run.from_ranked_lists({"q9": ["a"]}, name="o")
    with pytest.raises(NoOverlapError):
        compare(qrels, {"a": r, "b": other}, ["mrr"], missing="ignore")
    c = compare(qrels, {"a": r, "b": r}, ["mrr"], baseline="a")
    with pytest.raises(InvalidParameterError, match="not in this comparison"):
        c.pair("a", "b", "ndcg@10")


def test_results_in_any_query_order_are_aligned() -> None:
    a = _result("a", "mrr", [0.1, 0.2, 0.3, 0.4])
    b = _result("b", "mrr", [0.5, 0.6, 0.7, 0.8])
    shuffled = [3, 1, 0, 2]
    pq = PerQueryScores(b.per_query.query_ids[shuffled], ("mrr",), b.per_query.values[shuffled])
    b2 = EvaluationResult("b", b.labels, b.measures, pq, b.queries)
    one, two = compare(None, [a, b], ["mrr"]), compare(None, [a, b2], ["mrr"])
    assert one.pairs == two.pairs
    assert (one.pairs[0].wins, one.pairs[0].diff) == (4, pytest.approx(0.4))


def test_all_pairs_randomization_through_differences_to_one_system(dlhard: tuple[Qrels, dict[str, Run]]) -> None:
    """All pairs of 4 systems test 3 basis rows per metric; p-values equal the direct test of every pair."""
    from rankscope.stats import paired

    qrels, runs = dlhard
    runs = dict(runs)
    runs["bm25+bert(zs)"] = read_run(require(PASSAGE / "baselines" / "passage" / "bm25+bert(zs).run"))
    metrics = ["P@5", "ndcg@10", "recall@100"]  # P@5: many exact ties between permuted sums
    c = compare(qrels, runs, metrics, test="randomization", permutations=3000, rng=21, relevance_level=2)
    assert len(c.pairs) == 6 * 3
    s_test, _ = np.random.default_rng(21).integers(0, 2**63 - 1, size=2)
    diffs = []
    for p in c.pairs:
        _, m = c.per_query(p.metric)
        diffs.append(m[c.systems.index(p.b)] - m[c.systems.index(p.a)])
    _, direct = paired.randomization(np.array(diffs), permutations=3000, rng=np.random.default_rng(s_test))
    assert [p.p_value for p in c.pairs] == direct.tolist()


def test_parallel_scoring_equals_sequential(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    import rankscope.comparison as comparison
    import rankscope.comparison_inputs as inputs

    rng = np.random.default_rng(7)
    qs = np.repeat([f"q{i}" for i in range(40)], 20)
    ds = np.array([f"d{j}" for j in rng.integers(0, 60, len(qs))], dtype=object)
    keep = np.unique(np.char.add(qs.astype(str), ds.astype(str)), return_index=True)[1]
    qs, ds = qs[np.sort(keep)], ds[np.sort(keep)]
    qrels = Qrels(qs[::3], ds[::3], rng.integers(0, 3, len(qs[::3])))
    runs = {n: Run(qs, ds, rng.random(len(qs)), n) for n in ("a", "b", "c")}
    monkeypatch.setattr(inputs, "_PARALLEL_ROWS", 10**12)
    sequential = comparison.compare(qrels, runs, ["ndcg@10", "mrr"], rng=3)
    monkeypatch.setattr(inputs, "_PARALLEL_ROWS", 0)
    parallel = comparison.compare(qrels, runs, ["ndcg@10", "mrr"], rng=3)
    assert sequential.to_dict() == parallel.to_dict()
