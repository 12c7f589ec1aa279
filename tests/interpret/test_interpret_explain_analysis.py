"""Explanations computed from the data, and the per-query analysis (first ranks, failing queries, wins/losses)."""

from __future__ import annotations

import numpy as np
import pytest

import rankscope as rs
from conftest import DATA, require
from rankscope.interpret.analysis import (
    biggest_differences,
    failing_queries,
    first_relevant_ranks,
    ranks_from_reciprocal,
    summarize_first_ranks,
)
from rankscope.interpret.explain import explain, explain_result


def _seed001() -> tuple[rs.Qrels, rs.Run]:
    """The test set and mock retriever of seed 001's main() (retrieving k = max(3, 5, 10) = 10)."""
    qrels = rs.Qrels.from_dict({
        "Python编程语言": {"doc_0": 3, "doc_1": 2, "doc_5": 1},
        "机器学习算法": {"doc_2": 3, "doc_3": 2},
        "容器化部署": {"doc_6": 3, "doc_7": 2},
        "数据库选择": {"doc_8": 3, "doc_9": 2},
    })
    generic = [f"doc_{i}" for i in range(10)]
    run = rs.Run.from_ranked_lists({
        "Python编程语言": ["doc_0", "doc_1", "doc_5", "doc_2", "doc_3"],
        "机器学习算法": ["doc_2", "doc_3", "doc_0", "doc_1", "doc_4"],
        "容器化部署": generic,
        "数据库选择": generic,
    })
    return qrels, run


def test_seed001_detailed_analysis_from_the_data() -> None:
    qrels, run = _seed001()
    res = rs.evaluate(qrels, run, ["recall@5", "mrr", "ndcg@5"])
    # what seed 001's code really computes (its printed example output is wrong; see seeds/README.md)
    assert res.mean()["recall@5"] == pytest.approx(0.5)
    assert res.mean()["mrr"] == pytest.approx((1 + 1 + 1 / 7 + 1 / 9) / 4)
    text = explain_result(res)
    assert text["recall@5"].startswith(
        "Recall@5 = 0.500: on average 50.0% of the relevant documents are in the top 5; for 2 of 4 queries all")
    # first relevant ranks are 1, 1, 7, 9: median 1 (not 1/MRR = 1.8), middle half 1-7
    assert text["mrr"].startswith("MRR = 0.563: the first relevant document is typically at rank 1–7 (median rank 1;"
                                  " at rank 1 for 2 of 4 queries)")
    assert "Rating: fair (acceptable, but there is room for improvement)." in text["mrr"]
    zh = explain_result(res, "zh")
    assert zh["recall@5"].startswith("Recall@5 = 0.500：在前 5 个结果中，平均找到了 50.0% 的相关文档")
    assert "中位数为第 1 位" in zh["mrr"] and "评级：中" in zh["mrr"]


def test_explanations_of_other_metrics() -> None:
    assert explain("hit_rate@3", np.array([1.0, 0.0, 1.0, 1.0])).startswith(
        "Hit Rate@3 = 0.750: 75.0% of queries (3 of 4) have at least one relevant document in the top 3.")
    assert explain("P@2", np.array([0.5, 1.0])).startswith(
        "Precision@2 = 0.750: on average 75.0% of the top 2 documents are relevant (1.5 of 2); 0 of 2 queries")
    mostly_missing = explain("mrr@10", np.array([0.0, 0.0, 0.0, 0.5]), band=False)
    assert mostly_missing == (
        "MRR@10 = 0.125: for 3 of 4 queries no relevant document is retrieved in the top 10;"
        " where one is, the first is typically at rank 2 (median rank 2; at rank 1 for 0 queries).")
    assert explain("mrr", np.zeros(3), band=False) == "MRR = 0.000: no query has a relevant document in the ranking."
    generic = explain("num_rel", np.array([3.0, 1.0]))
    assert generic.startswith("num_rel = 2.000: ")


def test_first_ranks_match_reciprocal_rank_on_real_runs() -> None:
    base = require(DATA / "zh_lecard_qrels_runs")
    qrels = rs.read_qrels(base / "qrels.trec")
    for name in ("bm25", "tfidf", "bert_0"):
        run = rs.read_run(base / "runs" / f"{name}.trec")
        ids, ranks = first_relevant_ranks(qrels, run)
        res = rs.evaluate(qrels, run, ["mrr", "hit_rate@5", "hit_rate@1000"])
        assert list(ids) == list(res.per_query.query_ids)
        assert np.array_equal(ranks, ranks_from_reciprocal(res.per_query["mrr"]))
        # failing = no relevant document in the top k, exactly the queries with hit_rate@k = 0
        for k in (5, 1000):
            expected = sorted(str(q) for q, v in zip(ids, res.per_query[f"hit_rate@{k}"]) if v == 0)
            assert failing_queries(ids, ranks, k) == expected
        # relevance level 2 changes what counts as relevant
        _, ranks2 = first_relevant_ranks(qrels, run, relevance_level=2)
        found2 = ranks2 > 0
        assert np.all(ranks[found2] > 0) and np.all(ranks2[found2] >= ranks[found2])
        assert np.array_equal(ranks2, ranks_from_reciprocal(rs.evaluate(qrels, run, ["mrr"], relevance_level=2)
                                                            .per_query["mrr"]))


def test_first_ranks_brute_force_on_random_runs() -> None:
    rng = np.random.default_rng(7)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in rng.choice(30, 6, replace=False)} for i in range(25)}
    # integer scores with many ties: the rank order must be trec_eval's (score desc, doc id desc)
    run = {f"q{i}": {f"d{j}": float(rng.integers(0, 5)) for j in rng.choice(30, 12, replace=False)} for i in range(25)}
    ids, ranks = first_relevant_ranks(rs.Qrels.from_dict(qrels), rs.Run.from_dict(run))
    for q, r in zip(ids, ranks):
        ranked = sorted(run[q], key=lambda d: (run[q][d], d), reverse=True)
        hits = [i + 1 for i, d in enumerate(ranked) if qrels[q].get(d, 0) >= 1]
        assert r == (hits[0] if hits else 0), q


def test_summary_and_histogram() -> None:
    s = summarize_first_ranks(np.array([1, 1, 2, 7, 150, 0, 0]))
    assert (s.n, s.found, s.not_found, s.at_rank_1) == (7, 5, 2, 2)
    assert (s.q1, s.median, s.q3) == (1, 2, 7)
    counts = {b.label: b.count for b in s.histogram}
    assert counts == {"1": 2, "2": 1, "3": 0, "4": 0, "5": 0, "6-10": 1, "11-20": 0, "21-50": 0, "51-100": 0,
                      ">100": 1, "none": 2}
    assert s.to_dict()["histogram"][-2]["high"] is None
    empty = summarize_first_ranks(np.array([0, 0]))
    assert empty.median is None and empty.found == 0


def test_biggest_differences_order_and_ties() -> None:
    ids = np.array(["q3", "q1", "q2", "q4", "q5"], dtype=object)
    a = np.array([0.0, 0.0, 1.0, 0.5, 0.5])
    b = np.array([1.0, 1.0, 0.0, 0.5, 0.7])
    wins, losses = biggest_differences(ids, a, b, n=2)
    assert [w.query_id for w in wins] == ["q1", "q3"]  # equal diffs: by query id
    assert [(d.query_id, d.diff) for d in losses] == [("q2", -1.0)]
    wins_all, _ = biggest_differences(ids, a, b, n=10)
    assert [w.query_id for w in wins_all] == ["q1", "q3", "q5"]  # ties (q4) are neither wins nor losses


def test_a_measure_without_its_own_sentence_is_explained_by_its_summary_in_the_readers_language() -> None:
    """bpref, iprec_at_recall ... have no sentence of their own: Chinese reports said their English summary."""
    from prose import assert_chinese
    from rankscope.measures import parse_metric

    for name in ("bpref", "iprec_at_recall_0.50", "gm_map"):
        zh = explain(name, np.array([0.5, 1.0]), "zh", measure=parse_metric(name))
        assert_chinese(zh)
        en = explain(name, np.array([0.5, 1.0]), "en", measure=parse_metric(name))
        assert parse_metric(name).spec.summary.rstrip(".") in en
