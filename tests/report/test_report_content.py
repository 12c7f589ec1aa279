"""The report content: computed best values, significance marks, curves, first ranks, per-query analysis."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from report_fixtures import METRICS, shared_comparison, shared_inputs

import rankscope as rs
from rankscope.comparison import compare
from rankscope.errors import InvalidParameterError
from rankscope.report.content import build_report


def test_best_values_are_computed_not_positional() -> None:
    inputs = shared_inputs()
    qrels, runs = inputs
    for order in (["bm25", "dense_v2", "hybrid"], ["hybrid", "bm25", "dense_v2"], ["dense_v2", "hybrid", "bm25"]):
        c = compare(qrels, {k: runs[k] for k in order}, METRICS, bootstrap=50)
        rep = build_report(c, curves=False)
        for label in METRICS:
            means = {s: c.means[s][label] for s in order}
            top = max(means.values())
            assert rep["leaders"][label] == [s for s in order if means[s] == top]


def test_ties_mark_every_leader() -> None:
    qrels = rs.Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    same = {"q1": ["a"], "q2": ["x", "b"]}
    c = compare(qrels, {"one": rs.Run.from_ranked_lists(same), "two": rs.Run.from_ranked_lists(same)}, ["mrr"])
    assert build_report(c, curves=False)["leaders"]["mrr"] == ["one", "two"]


def test_significance_marks_follow_the_pairs() -> None:
    comparison = shared_comparison()
    rep = build_report(comparison, curves=False)
    assert rep["reference"] == "bm25"
    for s in ("dense_v2", "hybrid"):
        for label in METRICS:
            p = comparison.pair("bm25", s, label)
            expected = None if not p.significant else ("better" if p.diff > 0 else "worse")
            assert rep["significance"][s][label] == expected
    assert all(v is None for v in rep["significance"]["bm25"].values())
    # the fixture is built so that hybrid is clearly better and dense_v2 clearly worse on ndcg@10
    assert rep["significance"]["hybrid"]["ndcg@10"] == "better"
    assert rep["significance"]["dense_v2"]["ndcg@10"] == "worse"


def test_curves_equal_the_engine() -> None:
    comparison = shared_comparison()
    inputs = shared_inputs()
    qrels, runs = inputs
    rep = build_report(comparison, qrels=qrels, runs=runs, kmax=20)
    assert rep["curves"]["ks"] == list(range(1, 21))
    for s in ("bm25", "hybrid"):
        direct = rs.evaluate(qrels, runs[s], ["ndcg@7", "recall@20", "precision@1"]).mean()
        curve = rep["curves"]["systems"][s]
        assert curve["ndcg"][6] == pytest.approx(direct["ndcg@7"], abs=1e-6)
        assert curve["recall"][19] == pytest.approx(direct["recall@20"], abs=1e-6)
        assert curve["precision"][0] == pytest.approx(direct["precision@1"], abs=1e-6)
    assert build_report(comparison, curves=False)["curves"] is None
    with pytest.raises(InvalidParameterError, match="kmax"):
        build_report(comparison, qrels=qrels, runs=runs, kmax=0)


def test_first_ranks_exact_and_from_mrr_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    comparison = shared_comparison()
    inputs = shared_inputs()
    qrels, runs = inputs
    # the comparison's results hold first_rel_rank: the report reads them, no join nor evaluation again
    import rankscope.engine.evaluator as evaluator_mod

    def no_join(*args: object, **kwargs: object) -> None:
        raise AssertionError("the report joined the runs again")

    with monkeypatch.context() as m:
        m.setattr(evaluator_mod, "prepare", no_join)
        held = build_report(comparison, curves=False)
        exact = build_report(comparison, qrels=qrels, runs=runs, curves=False)
    assert held["analysis"]["first_rank_source"] == exact["analysis"]["first_rank_source"] == "exact"
    assert held["first_ranks"] == exact["first_ranks"]
    # results without them (computed elsewhere): 1/RR of an uncut mrr they hold, else evaluated from the runs
    bare = {s: replace(r, diagnostics=None) for s, r in comparison.results.items()}
    from_rr = build_report(compare(None, bare, baseline="bm25", bootstrap=200), qrels=qrels, runs=runs, curves=False)
    no_mrr = compare(None, bare, [m for m in METRICS if m != "mrr"], baseline="bm25", bootstrap=200)
    from_runs = build_report(no_mrr, qrels=qrels, runs=runs, curves=False)
    assert from_rr["analysis"]["first_rank_source"] == "reciprocal_rank"
    assert from_runs["analysis"]["first_rank_source"] == "exact"
    assert exact["first_ranks"] == from_rr["first_ranks"] == from_runs["first_ranks"]
    assert exact["analysis"]["first_rank"] == from_rr["analysis"]["first_rank"]
    # dense_v2 returns no relevant document for every 7th query
    assert exact["analysis"]["first_rank"]["dense_v2"]["not_found"] >= 5
    # failing queries use the hit-rate cutoff: exactly the queries with hit_rate@5 == 0
    assert exact["analysis"]["failing_k"] == 5
    ids, hits = comparison.per_query("hit_rate@5")
    for i, s in enumerate(comparison.systems):
        assert exact["analysis"]["failing"][s] == sorted(str(q) for q, v in zip(ids, hits[i]) if v == 0)


def test_no_rank_source_without_runs_or_mrr() -> None:
    inputs = shared_inputs()
    qrels, runs = inputs
    c = compare(qrels, runs, ["ndcg@10"], bootstrap=50)
    assert build_report(c, curves=False)["analysis"]["first_rank_source"] == "exact"  # held by the results
    bare = compare(None, {s: replace(r, diagnostics=None) for s, r in c.results.items()}, bootstrap=50)
    rep = build_report(bare, curves=False)
    assert rep["analysis"]["first_rank_source"] == "unavailable" and rep["analysis"]["first_rank"] == {}


def test_wins_and_losses_per_pair() -> None:
    comparison = shared_comparison()
    rep = build_report(comparison, curves=False, top_n=3)
    d = next(x for x in rep["analysis"]["differences"] if x["b"] == "hybrid" and x["metric"] == "mrr")
    _, vals = comparison.per_query("mrr")
    diff = vals[comparison.systems.index("hybrid")] - vals[comparison.systems.index("bm25")]
    assert [w["diff"] for w in d["wins"]] == sorted(diff[diff > 0], reverse=True)[:3]
    assert all(w["diff"] > 0 for w in d["wins"]) and all(x["diff"] < 0 for x in d["losses"])


def test_ratings_explanations_standards_and_scenario() -> None:
    comparison = shared_comparison()
    rep = build_report(comparison, curves=False, lang="zh", scenario="faq")
    assert rep["ratings"]["hybrid"]["recall@5"]["level"] == "excellent"
    assert rep["ratings"]["hybrid"]["recall@5"]["level_name"] == "优秀"
    assert rep["ratings"]["hybrid"]["hit_rate@5"] is None  # seed 000 gives no hit-rate bands
    assert rep["profiles"]["hit_rate@5"]["focus"] == "基础可用性"
    assert rep["explanations"]["hybrid"]["recall@5"].startswith("Recall@5 = 1.000：")
    # "P@5" matches the standard's precision@5 by meaning; 0.6 is all a perfect ranking reaches with 3 relevant
    # documents per query: the standards check the mean as measured (as rankscope check does), so P@5 0.6 meets the
    # minimum (0.6) and no more, and the verdict says why "good" (P@5 >= 0.75) cannot be met on these qrels
    assert comparison.ceilings["P@5"] == pytest.approx(0.6)
    std = rep["standards"]["hybrid"]
    assert std["highest_tier"] == "minimum" and std["highest_tier_name"] == "最低"
    assert std["status_text"] == "最低（precision@5 >= 0.75 无法达到：完美排序在这些 qrels 上只得 0.600）"
    good = {c["metric"]: c for c in std["checks"]["good"]}
    assert good["precision@5"]["value"] == pytest.approx(0.6) and good["precision@5"]["unreachable"]
    assert rep["scenario"]["key"] == "faq" and rep["scenario"]["benchmark"]["mrr"] == 0.85
    checks = {c["metric"]: c for c in rep["scenario"]["checks"]["hybrid"]}
    assert checks["mrr"]["value"] == pytest.approx(comparison.means["hybrid"]["mrr"])
    assert checks["precision@3"]["value"] is None
    assert np.isfinite(rep["n_queries"])
