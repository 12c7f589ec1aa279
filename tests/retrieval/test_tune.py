"""rankscope.tune: the fast scorer equals evaluate(fuse(...)), the cross-validation is what it says, the verdicts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from clirun import cli
from rankscope import Qrels, Run, fuse, tune
from rankscope.engine.evaluator import Evaluator
from rankscope.errors import InvalidParameterError
from rankscope.retrieval.fusion import train_fusion
from rankscope.retrieval.fusion.methods import KERNELS
from rankscope.retrieval.fusion.pool import Pool
from rankscope.retrieval.fusion.scoring import PoolScorer
from rankscope.retrieval.tune import Setting, candidates, simplex


def _data(n_q: int = 40, seed: int = 0, noise: tuple[float, float] = (0.6, 1.2)) -> tuple[Qrels, list[Run]]:
    """Graded qrels over 30 documents per query; two runs: relevance plus noise (ties from rounding)."""
    rng = np.random.default_rng(seed)
    qs, ds, gs = [], [], []
    grades = {}
    for q in range(n_q):
        g = np.zeros(30, dtype=int)
        g[rng.choice(30, 3, replace=False)] = rng.integers(1, 3, 3)
        grades[q] = g
        for d in np.flatnonzero(g):
            qs.append(f"q{q}")
            ds.append(f"d{d}")
            gs.append(int(g[d]))
    qs.append("q_unjudged_doc")  # a qrels query no run answers, with only a non-relevant judgment
    ds.append("d0")
    gs.append(0)
    runs = []
    for name, sd in zip(("lex", "dense"), noise):
        rq, rd, rs = [], [], []
        for q in range(n_q):
            s = np.round(grades[q] + rng.normal(0, sd, 30), 1)
            top = np.argsort(-s)[: int(rng.integers(8, 20))]
            rq += [f"q{q}"] * len(top)
            rd += [f"d{d}" for d in top]
            rs += s[top].tolist()
        rq.append("q_not_in_qrels")
        rd.append("d1")
        rs.append(1.0)
        runs.append(Run(rq, rd, np.array(rs), name))
    return Qrels(qs, ds, np.array(gs)), runs


METRICS = ["ndcg@10", "map", "P@5", "recall@15", "mrr", "bpref", "num_ret"]


@pytest.mark.parametrize("mode", ["grid", "pairs", "sort"])
@pytest.mark.parametrize(("method", "kwargs"), [
    ("rrf", {"k": 60}), ("wsum", {"weights": [0.3, 0.7]}), ("combmnz", {"norm": "zscore"}),
    ("borda", {}), ("condorcet", {}), ("rbc", {"phi": 0.7}), ("combmed", {"norm": "rank"}),
])
def test_pool_scorer_equals_evaluating_the_fused_run(mode: str, method: str, kwargs: dict) -> None:
    qrels, runs = _data()
    ev = Evaluator(qrels, METRICS)
    pool = Pool.build(runs)
    scorer = PoolScorer(pool, ev, mode=mode)
    norm = kwargs.pop("norm", "minmax")
    feat = pool.features(norm)
    w = np.array([kwargs.pop("weights", [1.0, 1.0])])
    fused = KERNELS[method](feat, w, {k: np.array([float(v)]) for k, v in kwargs.items()})
    got = scorer.values(fused)[0]
    want = ev.evaluate(pool.to_run(fused[0], "f")).per_query.values
    np.testing.assert_array_equal(got, want)


def test_pool_scorer_ranks_agree_across_modes_on_many_settings() -> None:
    qrels, runs = _data(seed=3)
    ev = Evaluator(qrels, ["ndcg@10"])
    pool = Pool.build(runs, depth=12)
    feat = pool.features("minmax")
    weights = np.array(simplex(2, 0.05))
    fused = KERNELS["wsum"](feat, weights, {})
    ranks = [PoolScorer(pool, ev, mode=m).ranks(fused) for m in ("grid", "pairs", "sort")]
    np.testing.assert_array_equal(ranks[0], ranks[1])
    np.testing.assert_array_equal(ranks[0], ranks[2])


def test_input_run_values_equal_evaluate() -> None:
    qrels, runs = _data()
    ev = Evaluator(qrels, METRICS)
    pool = Pool.build(runs)
    scorer = PoolScorer(pool, ev)
    for r, run in enumerate(runs):
        got = scorer.run_values(pool.rank[r], pool.present[r], pool.length[r])
        np.testing.assert_array_equal(got, ev.evaluate(run).per_query.values)


def _by_hand(qrels: Qrels, runs: list[Run], settings: list[Setting], folds: int, seed: int) -> np.ndarray:
    """The out-of-fold values computed the slow way: fuse and evaluate every setting, choose on the other folds."""
    ev = Evaluator(qrels, ["ndcg@10"])
    table = np.array([ev.evaluate(fuse(runs, s.method, **s.fuse_kwargs())).per_query.values[:, 0]
                      for s in settings])
    n = table.shape[1]
    fold = np.empty(n, dtype=int)
    fold[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    oof = np.zeros(n)
    for f in range(folds):
        best = int(np.argmax(table[:, fold != f].mean(axis=1)))
        oof[fold == f] = table[best, fold == f]
    return oof


def test_out_of_fold_values_are_chosen_without_the_query() -> None:
    qrels, runs = _data(seed=1)
    grid = {"norm": ["minmax", "zscore"]}
    r = tune(qrels, runs, ["wsum", "rrf"], grid, folds=4, seed=7, weight_step=0.25)
    settings = candidates(["wsum", "rrf"], grid, 2, 0.25)
    np.testing.assert_allclose(r.oof, _by_hand(qrels, runs, settings, 4, 7), rtol=0, atol=1e-12)
    assert r.oof_mean == pytest.approx(r.oof.mean())
    ev = Evaluator(qrels, ["ndcg@10"])
    assert r.in_sample == pytest.approx(ev.evaluate(fuse(runs, r.chosen.method, **r.chosen.fuse_kwargs())).mean()[
        "ndcg@10"], abs=1e-12)
    assert r.in_sample >= max(m for _, m in r.top) - 1e-12


def test_supervised_methods_train_on_the_other_folds_only() -> None:
    qrels, runs = _data(seed=2)
    r = tune(qrels, runs, "posfuse", folds=3, seed=5)
    ev = Evaluator(qrels, ["ndcg@10"])
    query_ids = ev.evaluate(runs[0]).per_query.query_ids
    n = len(query_ids)
    fold = np.empty(n, dtype=int)
    fold[np.random.default_rng(5).permutation(n)] = np.arange(n) % 3
    table = qrels.to_dict()
    for f in range(3):
        train = {q: table[q] for q in query_ids[fold != f]}
        fused = train_fusion(Qrels.from_dict(train), runs, "posfuse").fuse(runs)
        want = ev.evaluate(fused).per_query.values[fold == f, 0]
        np.testing.assert_allclose(r.oof[fold == f], want, atol=1e-12)


def test_a_clear_winner_is_found_and_called_significant() -> None:
    qrels, runs = _data(n_q=60, seed=4, noise=(0.3, 3.0))
    r = tune(qrels, runs, "wsum", {"norm": ["minmax"]}, weight_step=0.1)
    assert r.chosen.weights is not None and r.chosen.weights[0] > r.chosen.weights[1]
    assert r.pair("dense").significant and r.pair("dense").diff < 0
    assert r.oof_ci is not None and r.oof_ci[0] <= r.oof_mean <= r.oof_ci[1]
    assert len(r.per_fold) == 5 and 0 <= r.stability <= 1


def test_no_gain_recommends_the_default_in_those_words() -> None:
    """Both runs put the relevant document first: every setting scores what RRF scores, so tuning gains nothing."""
    qrels = Qrels.from_dict({f"q{i}": {f"a{i}": 1} for i in range(20)})
    runs = [Run.from_ranked_lists({f"q{i}": [f"a{i}", f"x{j}", f"y{j}"] for i in range(20)}, name=f"r{j}")
            for j in range(2)]
    r = tune(qrels, runs, ["rrf", "wsum"], metric="mrr")
    assert not r.significant_vs_rrf and r.pair("rrf").p_value == 1.0
    assert r.recommended == Setting("rrf", None, (("k", 60.0),))
    assert "recommendation: keep rrf (k=60): the tuned setting is not significantly better out of fold" in r.text()
    assert "建议：保留 rrf (k=60)" in r.text("zh")


def test_deterministic_for_a_seed() -> None:
    qrels, runs = _data()
    a = tune(qrels, runs, "rrf", seed=3)
    b = tune(qrels, runs, "rrf", seed=3)
    np.testing.assert_array_equal(a.oof, b.oof)
    assert a.chosen == b.chosen and a.to_dict()["comparisons"] == b.to_dict()["comparisons"]


def test_nested_estimate() -> None:
    qrels, runs = _data(seed=8)
    r = tune(qrels, runs, "rrf", {"k": [1, 10, 60]}, nested=True, folds=3)
    assert r.nested is not None and len(r.nested["per_fold"]) == 3
    assert 0 <= r.nested["mean"] <= 1
    assert "nested cross-validation" in r.text()
    json.dumps(r.to_dict())


def test_live_retrievers_are_asked_once() -> None:
    from rankscope.data.testset import TestSet

    ts = TestSet.from_annotations([f"question {i}" for i in range(12)], [[f"d{i}"] for i in range(12)])
    calls = {"a": 0, "b": 0}

    def a(query: str, k: int) -> list[str]:
        calls["a"] += 1
        return ["d" + query.split()[-1]] + [f"x{j}" for j in range(k - 1)]

    def b(query: str, k: int) -> list[str]:
        calls["b"] += 1
        return [f"x{j}" for j in range(3)] + ["d" + query.split()[-1]]

    r = tune(ts, {"a": a, "b": b}, "rrf", metric="mrr", folds=3)
    assert calls == {"a": 12, "b": 12}
    assert r.oof_mean > r.comparison.means["b"]["mrr"]


def test_optuna_search() -> None:
    pytest.importorskip("optuna")
    qrels, runs = _data()
    r = tune(qrels, runs, ["wsum", "rrf"], search="optuna", trials=15, seed=1)
    again = tune(qrels, runs, ["wsum", "rrf"], search="optuna", trials=15, seed=1)
    assert r.chosen == again.chosen and r.search == "optuna"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"folds": 1}, "folds"),
    ({"grid": {"kk": [1]}}, "grid"),
    ({"method": "rrff"}, "did you mean"),
    ({"metric": "ndcg@10,map"}, "one metric"),
    ({"search": "random"}, "search"),
    ({"grid": {"norm": ["min-max-inverted"]}, "method": "combsum"}, "inverted"),
])
def test_bad_arguments(kwargs: dict, message: str) -> None:
    qrels, runs = _data(n_q=10)
    with pytest.raises(InvalidParameterError, match=message):
        tune(qrels, runs, **kwargs)
    with pytest.raises(InvalidParameterError, match="two runs"):
        tune(qrels, runs[:1])


def test_cli_fuse_and_tune(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from rankscope.io import read_run, write_qrels, write_run

    qrels, runs = _data()
    write_qrels(qrels, tmp_path / "qrels.txt")
    for r in runs:
        write_run(r, tmp_path / f"{r.name}.trec")
    files = [str(tmp_path / "lex.trec"), str(tmp_path / "dense.trec")]
    res = cli("fuse", *files, "-o", str(tmp_path / "f.trec"), "--method", "wsum", "--weights", "0.4,0.6",
               "--norm", "zscore")
    assert res.returncode == 0, (res.stdout + res.stderr)
    got = read_run(tmp_path / "f.trec").to_dict()
    want = fuse({"lex": runs[0], "dense": runs[1]}, "wsum", weights=[0.4, 0.6], norm="zscore").to_dict()
    assert got.keys() == want.keys()
    for q in want:
        assert got[q] == pytest.approx(want[q], rel=1e-12)
    res = cli("fuse", *files, "-o", str(tmp_path / "p.trec"), "--method", "posfuse")
    assert res.returncode == 2 and "--qrels" in (res.stdout + res.stderr)
    res = cli("fuse", *files, "-o", str(tmp_path / "p.trec"), "--method", "rbc", "--param", "phi")
    assert res.returncode == 2 and "name=value" in (res.stdout + res.stderr)
    res = cli("tune", *files, "--qrels", str(tmp_path / "qrels.txt"), "--method", "rrf", "--grid", "k=10,60",
               "--json", str(tmp_path / "t.json"), "-o", str(tmp_path / "best.trec"))
    assert res.returncode == 0, (res.stdout + res.stderr)
    assert "out of fold: ndcg@10 = " in (res.stdout + res.stderr) and "recommendation:" in (res.stdout + res.stderr)
    saved = json.loads((tmp_path / "t.json").read_text())
    assert saved["candidates"] == 2 and len(saved["oof_per_query"]) == 41
    assert (tmp_path / "best.trec").exists()
    res = cli("tune", *files, "--qrels", str(tmp_path / "qrels.txt"), "--method", "rrf", "--grid", "k=10,60",
               "--lang", "zh")
    assert res.returncode == 0 and "折外" in (res.stdout + res.stderr)
    res = cli("tune", *files, "--qrels", str(tmp_path / "qrels.txt"), "--grid", "k=ten")
    assert res.returncode == 2 and "KEY=V1,V2" in (res.stdout + res.stderr)
