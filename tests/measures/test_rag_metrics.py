"""Hand-computed values: the RAG-oriented metrics, the seed documents' examples, the two seed variants.

Every expected number below is worked out from the formula in the comment next
to it (log2(2) = 1, log2(3) = 1.5849625, log2(6) = 2.5849625, ...), not taken
from rankscope's output.
"""

from __future__ import annotations

import math

import pytest

from rankscope import Qrels, Run, evaluate

L2 = math.log2


def scores(qrels: dict, run: dict, metrics: list[str], **kw: object) -> dict[str, float]:
    return evaluate(Qrels.from_dict(qrels), Run.from_dict(run), metrics, **kw).mean()  # type: ignore[arg-type]


# one query: relevant (grade >= 1) are a (2), b (1), d (1); c is judged 0; x, y unjudged
QRELS = {"q1": {"a": 2, "b": 1, "c": 0, "d": 1}}
RUN = {"q1": ["x", "a", "c", "y", "b"]}


@pytest.mark.parametrize(
    ("metric", "expected"),
    [
        # top 3 = x a c: 1 relevant; P = 1/3, R = 1/3 -> F1 = 1/3
        ("f1@3", 1 / 3),
        # top 5: a, b relevant; P = 2/5, R = 2/3 -> 2PR/(P+R) = (8/15)/(16/15)
        ("f1@5", 0.5),
        ("hit_rate@1", 0.0),
        ("hit_rate@2", 1.0),
        ("mrr@1", 0.0),
        ("mrr@2", 0.5),
        ("mrr", 0.5),
        # linear gain: a (2) at rank 2, b (1) at rank 5
        ("dcg@2", 2 / L2(3)),
        ("dcg@5", 2 / L2(3) + 1 / L2(6)),
        # exponential gain 2^g - 1: a 3, b 1, d 1; ideal 3, 1, 1
        ("ndcg_exp@5", (3 / L2(3) + 1 / L2(6)) / (3 + 1 / L2(3) + 1 / L2(4))),
        # linear ndcg for comparison: ideal 2, 1, 1
        ("ndcg@5", (2 / L2(3) + 1 / L2(6)) / (2 + 1 / L2(3) + 1 / L2(4))),
        # judged in the top k / k: x unjudged, a c judged; a c b judged in the top 5
        ("judged@3", 2 / 3),
        ("judged@5", 3 / 5),
        ("precision@5", 2 / 5),
        ("recall@5", 2 / 3),
    ],
)
def test_rag_metric_by_hand(metric: str, expected: float) -> None:
    assert scores(QRELS, RUN, [metric])[metric] == pytest.approx(expected, abs=1e-12)


def test_f1_is_zero_without_hits() -> None:
    assert scores(QRELS, {"q1": ["x", "y"]}, ["f1@2"])["f1@2"] == 0.0


def test_relevance_level_changes_binary_metrics_only() -> None:
    # with relevance_level=2 only a counts: hit@1 0, P@5 = 1/5, R@5 = 1/1; dcg keeps raw grades
    got = scores(QRELS, RUN, ["precision@5", "recall@5", "mrr", "dcg@5"], relevance_level=2)
    assert got["precision@5"] == pytest.approx(1 / 5)
    assert got["recall@5"] == pytest.approx(1.0)
    assert got["mrr"] == pytest.approx(0.5)
    assert got["dcg@5"] == pytest.approx(2 / L2(3) + 1 / L2(6))


# ---- seed 000: the worked examples -------------------------------------------------------


def test_seed000_precision_recall_example() -> None:
    qrels = {"q": dict.fromkeys(["doc1", "doc3", "doc6", "doc7"], 1)}
    run = {"q": ["doc1", "doc2", "doc3", "doc4", "doc5"]}
    got = scores(qrels, run, ["P@5", "recall@5"])
    assert got == {"P@5": pytest.approx(0.4), "recall@5": pytest.approx(0.5)}  # 2/5 and 2/4


def test_seed000_mrr_examples() -> None:
    assert scores({"q": {"doc1": 1, "doc5": 1}}, {"q": ["doc2", "doc3", "doc1", "doc4"]}, ["mrr"])["mrr"] == (
        pytest.approx(1 / 3)
    )
    qrels = {"q1": {"退货流程指南": 1}, "q2": {"退货流程指南": 1}, "q3": {"退货流程指南": 1}}
    run = {
        "q1": ["退货流程指南", "售后政策", "物流信息"],
        "q2": ["售后政策", "物流信息", "退货流程指南"],
        "q3": ["售后政策", "物流信息", "联系客服"],
    }
    assert scores(qrels, run, ["mrr"])["mrr"] == pytest.approx((1 + 1 / 3 + 0) / 3)  # 0.444


def test_seed000_ranx_ndcg_example() -> None:
    qrels = {"q1": {"doc1": 3, "doc2": 1, "doc3": 2, "doc5": 3}}
    run = {"q1": {"doc1": 0.9, "doc2": 0.8, "doc3": 0.7, "doc4": 0.6, "doc5": 0.5}}
    dcg5 = 3 + 1 / L2(3) + 2 / L2(4) + 0 + 3 / L2(6)
    ideal = [3, 3, 2, 1]
    idcg = [sum(g / L2(i + 2) for i, g in enumerate(ideal[:k])) for k in (1, 3, 5)]
    got = scores(qrels, run, ["ndcg@1", "ndcg@3", "ndcg@5", "dcg@5"])
    assert got["ndcg@1"] == pytest.approx(3 / idcg[0])  # 1.0
    assert got["ndcg@3"] == pytest.approx((3 + 1 / L2(3) + 2 / L2(4)) / idcg[1])  # 0.7859
    assert got["ndcg@5"] == pytest.approx(dcg5 / idcg[2])  # 0.9159
    assert got["dcg@5"] == pytest.approx(dcg5)  # 5.791 (the DCG@5 example)
    assert got["ndcg@3"] == pytest.approx(0.785864, abs=1e-6)


# ---- seed 001: the example test set and mock retriever -------------------------------------

SEED001_QRELS = {
    "q1": {"doc_0": 3, "doc_1": 2, "doc_5": 1},
    "q2": {"doc_2": 3, "doc_3": 2},
    "q3": {"doc_6": 3, "doc_7": 2},
    "q4": {"doc_8": 3, "doc_9": 2},
}
SEED001_RUN = {  # search(query, k=10): the two fixed lists, else doc_0..doc_9
    "q1": ["doc_0", "doc_1", "doc_5", "doc_2", "doc_3"],
    "q2": ["doc_2", "doc_3", "doc_0", "doc_1", "doc_4"],
    "q3": [f"doc_{i}" for i in range(10)],
    "q4": [f"doc_{i}" for i in range(10)],
}


def test_seed001_example_gives_what_its_formulas_imply() -> None:
    got = scores(SEED001_QRELS, SEED001_RUN, ["recall@3", "recall@5", "recall@10", "P@3", "P@5", "P@10", "mrr",
                                              "ndcg@3", "ndcg@5", "ndcg@10", "hit_rate@3"])
    idcg = 3 + 2 / L2(3)
    assert got["recall@3"] == pytest.approx(0.5)  # 1, 1, 0, 0
    assert got["recall@5"] == pytest.approx(0.5)  # the seed's code: 0.500 (its printed output says 0.833)
    assert got["recall@10"] == pytest.approx(1.0)
    assert got["P@3"] == pytest.approx((1 + 2 / 3) / 4)
    assert got["P@5"] == pytest.approx((3 / 5 + 2 / 5) / 4)
    assert got["P@10"] == pytest.approx((3 + 2 + 2 + 2) / 10 / 4)
    assert got["mrr"] == pytest.approx((1 + 1 + 1 / 7 + 1 / 9) / 4)  # 0.563 (printed: 0.854)
    assert got["mrr"] == pytest.approx(0.563492, abs=1e-6)
    assert got["ndcg@3"] == pytest.approx(0.5)  # q1, q2 perfect; q3, q4 nothing in the top 3
    assert got["ndcg@5"] == pytest.approx(0.5)
    q3 = (3 / L2(8) + 2 / L2(9)) / idcg
    q4 = (3 / L2(10) + 2 / L2(11)) / idcg
    assert got["ndcg@10"] == pytest.approx((1 + 1 + q3 + q4) / 4)
    assert got["hit_rate@3"] == pytest.approx(0.5)


# ---- the two seed variants -------------------------------------------------------------------


def test_ap_rel_ret_divides_by_relevant_retrieved() -> None:
    qrels = {"q": dict.fromkeys("abcd", 1)}
    run = {"q": ["a", "x", "b"]}  # precision at the relevant ranks: 1/1, 2/3
    got = scores(qrels, run, ["map", "ap_rel_ret", "map@1", "ap_rel_ret@1"])
    assert got["map"] == pytest.approx((1 + 2 / 3) / 4)  # standard AP: / R = 4
    assert got["ap_rel_ret"] == pytest.approx((1 + 2 / 3) / 2)  # seed 002: / 2 relevant retrieved
    assert got["map@1"] == pytest.approx(1 / 4)
    assert got["ap_rel_ret@1"] == pytest.approx(1.0)
    # it is never below AP and ignores what was not found: one hit at rank 1 is "perfect"
    assert scores(qrels, {"q": ["a"]}, ["ap_rel_ret"])["ap_rel_ret"] == 1.0


def test_ndcg_ret_ideal_is_inflated() -> None:
    qrels = {"q": {f"d{i}": 1 for i in range(10)}}
    run = {"q": ["d0", "x1", "x2"]}
    got = scores(qrels, run, ["ndcg@3", "ndcg_ret_ideal@3"])
    assert got["ndcg@3"] == pytest.approx(1 / (1 + 1 / L2(3) + 1 / L2(4)))  # 0.469: 9 relevant never found
    assert got["ndcg_ret_ideal@3"] == pytest.approx(1.0)  # seed 001: ideal of the retrieved = this ranking


def test_ndcg_ret_ideal_equals_ndcg_when_everything_relevant_is_retrieved() -> None:
    got = scores(SEED001_QRELS, SEED001_RUN, ["ndcg@10", "ndcg_ret_ideal@10"])
    assert got["ndcg_ret_ideal@10"] == pytest.approx(got["ndcg@10"])


def test_ndcg_ret_ideal_sorts_the_whole_retrieved_list_like_seed001() -> None:
    # seed 001: ideal = sorted(grades of all retrieved docs)[:k]; here [3, 1, 0][:2]
    got = scores({"q": {"a": 1, "b": 3}}, {"q": ["x", "a", "b"]}, ["ndcg_ret_ideal@2"])
    assert got["ndcg_ret_ideal@2"] == pytest.approx((1 / L2(3)) / (3 + 1 / L2(3)))
