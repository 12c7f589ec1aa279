"""Fusion (RRF, CombSUM, CombMNZ, weighted; min-max / z-score) against values computed by hand."""

from __future__ import annotations

import math

import pytest

from rankscope.data import Run
from rankscope.errors import EmptyInputError, InvalidParameterError
from rankscope.retrieval.fusion import fuse, normalize_scores, ranked_lists
from rankscope.retrieval.hybrid import HybridRetriever
from rankscope.retrieval.protocol import Hit

# run A: q1 ranks d1 > d2 > d3, q2 has a single document; run B: q1 ranks d3 > d1 > d5
A = Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 0.5}}, name="A")
B = Run.from_dict({"q1": {"d3": 0.9, "d1": 0.8, "d5": 0.7}}, name="B")
Z = math.sqrt(1.5)  # z-score of the top of three equally spaced scores: 1 / sqrt(2/3)


def scores(run: Run) -> dict[str, dict[str, float]]:
    return run.to_dict()


def test_rrf_default_k60() -> None:
    got = scores(fuse([A, B]))
    assert got["q1"] == pytest.approx({"d1": 1 / 61 + 1 / 62, "d2": 1 / 62, "d3": 1 / 63 + 1 / 61, "d5": 1 / 63})
    assert got["q2"] == pytest.approx({"d4": 1 / 61})


def test_rrf_k0_and_weights() -> None:
    got = scores(fuse([A, B], "rrf", k=0))["q1"]
    assert got == pytest.approx({"d1": 1.5, "d2": 0.5, "d3": 1 / 3 + 1, "d5": 1 / 3})
    got = scores(fuse([A, B], "rrf", weights=[2, 1]))["q1"]
    assert got == pytest.approx({"d1": 2 / 61 + 1 / 62, "d2": 2 / 62, "d3": 2 / 63 + 1 / 61, "d5": 1 / 63})


def test_rrf_ranks_ties_in_trec_eval_order() -> None:
    # equal scores: trec_eval ranks doc ids descending, so "b" is rank 1 and "a" rank 2
    tied = Run.from_dict({"q": {"a": 1.0, "b": 1.0}})
    assert scores(fuse([tied], k=60))["q"] == pytest.approx({"a": 1 / 62, "b": 1 / 61})


def test_combsum_minmax() -> None:
    got = scores(fuse([A, B], "combsum"))
    assert got["q1"] == pytest.approx({"d1": 1.5, "d2": 0.5, "d3": 1.0, "d5": 0.0})
    assert got["q2"] == {"d4": 1.0}  # a single score (max == min) normalises to 1


def test_combmnz_minmax() -> None:
    got = scores(fuse([A, B], "combmnz"))
    assert got["q1"] == pytest.approx({"d1": 3.0, "d2": 0.5, "d3": 2.0, "d5": 0.0})


def test_combsum_zscore() -> None:
    got = scores(fuse([A, B], "combsum", norm="zscore"))
    assert got["q1"] == pytest.approx({"d1": Z, "d2": 0.0, "d3": 0.0, "d5": -Z}, abs=1e-12)
    assert got["q2"] == {"d4": 0.0}  # std == 0 -> 0


def test_combmnz_zscore() -> None:
    got = scores(fuse([A, B], "combmnz", norm="zscore"))["q1"]
    assert got == pytest.approx({"d1": 2 * Z, "d2": 0.0, "d3": 0.0, "d5": -Z}, abs=1e-12)


def test_combsum_raw_scores() -> None:
    got = scores(fuse([A, B], "combsum", norm=None))["q1"]
    assert got == pytest.approx({"d1": 3.8, "d2": 2.0, "d3": 1.9, "d5": 0.7})


def test_weighted_sum() -> None:
    got = scores(fuse([A, B], "weighted", weights=[0.25, 0.75]))["q1"]
    assert got == pytest.approx({"d1": 0.25 + 0.75 * 0.5, "d2": 0.25 * 0.5, "d3": 0.75, "d5": 0.0})


def test_depth_cuts_each_run_first() -> None:
    got = scores(fuse([A, B], depth=1))
    assert got == {"q1": pytest.approx({"d1": 1 / 61, "d3": 1 / 61}), "q2": pytest.approx({"d4": 1 / 61})}


def test_names_mapping_input_and_dict_runs() -> None:
    fused = fuse({"bm25": A, "dense": {"q1": {"d3": 0.9, "d1": 0.8, "d5": 0.7}}})
    assert fused.name == "rrf(bm25,dense)"
    assert scores(fused) == scores(fuse([A, B]))
    assert fuse([A, B], name="hybrid").name == "hybrid"


def test_fusing_one_run_keeps_its_ranking() -> None:
    fused = fuse([A], "rrf")
    assert [d for d, _ in ranked_lists(fused)["q1"]] == ["d1", "d2", "d3"]


def test_normalize_scores_by_hand() -> None:
    got = normalize_scores(__import__("numpy").array([4.0, 2.0, 0.0, 7.0, 7.0]),
                           __import__("numpy").array([0, 0, 0, 1, 1]), "minmax")
    assert got.tolist() == [1.0, 0.5, 0.0, 1.0, 1.0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "lambdamart"}, "fusion method"),
        ({"method": "weighted"}, "needs weights"),
        ({"method": "combsum", "weights": [1.0]}, "one weight per run"),
        ({"weights": [1.0, -1.0]}, ">= 0"),
        ({"method": "combsum", "norm": "l2"}, "norm"),
        ({"k": -1}, "RRF constant"),
        ({"depth": 0}, "depth"),
    ],
)
def test_bad_options_raise(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        fuse([A, B], **kwargs)  # type: ignore[arg-type]


def test_no_runs() -> None:
    with pytest.raises(EmptyInputError):
        fuse([])
    with pytest.raises(InvalidParameterError, match="one Run"):
        fuse(A)  # type: ignore[arg-type]


class Fixed:
    """A retriever returning fixed (id, score) lists, ignoring the query."""

    def __init__(self, name: str, ranked: list[tuple[str, float]]) -> None:
        self.name = name
        self.ranked = ranked
        self.calls: list[int] = []

    def search(self, query: str, k: int) -> list[Hit]:
        self.calls.append(k)
        return [Hit(d, s, text=f"text of {d}") for d, s in self.ranked[:k]]


def test_hybrid_retriever_matches_fuse_on_runs() -> None:
    a = Fixed("A", [("d1", 3.0), ("d2", 2.0), ("d3", 1.0)])
    b = Fixed("B", [("d3", 0.9), ("d1", 0.8), ("d5", 0.7)])
    for method in ("rrf", "combsum", "combmnz"):
        hybrid = HybridRetriever([a, b], method=method, depth=10)
        hits = hybrid.search("q1", k=3)
        expected = ranked_lists(fuse([A, B], method), k=3)["q1"]
        assert [(h.id, h.score) for h in hits] == [(d, pytest.approx(s)) for d, s in expected]
        assert hits[0].text == f"text of {hits[0].id}"
    assert a.calls[-1] == 10  # each retriever is asked for `depth` hits


def test_hybrid_batch_equals_single() -> None:
    a = Fixed("A", [("d1", 3.0), ("d2", 2.0)])
    b = Fixed("B", [("d2", 5.0), ("d9", 1.0)])
    hybrid = HybridRetriever({"a": a, "b": b}, method="combmnz", norm="zscore")
    assert hybrid.search_batch(["x", "y"], 2) == [hybrid.search("x", 2), hybrid.search("y", 2)]
    assert hybrid.search_batch([], 2) == []


def test_hybrid_errors() -> None:
    with pytest.raises(EmptyInputError):
        HybridRetriever([])
    with pytest.raises(InvalidParameterError):
        HybridRetriever([Fixed("A", [])], method="nope")
    with pytest.raises(InvalidParameterError):
        HybridRetriever([Fixed("A", [])]).search("q", 0)


def test_hybrid_retriever_equals_fusing_the_evaluated_runs() -> None:
    """What the demo relies on: RRF of two evaluated top-k runs == HybridRetriever(depth=k) evaluated."""
    import numpy as np

    from rankscope.data.testset import Query, TestSet
    from rankscope.engine import evaluate
    from rankscope.retrieval.bm25 import BM25Retriever
    from rankscope.retrieval.dense import DenseRetriever
    from rankscope.retrieval.runner import evaluate_retriever

    class Letters:
        def encode(self, texts: list[str], **_: object) -> np.ndarray:
            return np.array([[t.count(c) + 0.01 for c in "aeioustrnl"] for t in texts], dtype=np.float32)

    words = ["wing", "flow", "heat", "layer", "shock", "wave", "boundary", "plate", "cone", "jet"]
    rng = np.random.default_rng(7)
    corpus = {f"d{i}": " ".join(rng.choice(words, size=6)) for i in range(40)}
    queries = [Query(f"q{i}", " ".join(rng.choice(words, size=2))) for i in range(12)]
    qrels = {q.id: {f"d{j}": 1 for j in rng.choice(40, size=3, replace=False)} for q in queries}
    ts = TestSet(queries, qrels, corpus, "toy")
    bm25 = BM25Retriever(corpus)
    dense = DenseRetriever(corpus, model=Letters(), cache=False)
    k = 5
    ev_b = evaluate_retriever(bm25, ts, ["mrr"], k=k, progress=False)
    ev_d = evaluate_retriever(dense, ts, ["mrr"], k=k, progress=False)
    fused = fuse([ev_b.run, ev_d.run], "rrf")
    via_runs = evaluate(ts.qrels, fused, ["mrr", "ndcg@5", "map"], depth=k).per_query.to_dict()
    ev_h = evaluate_retriever(HybridRetriever([bm25, dense], depth=k), ts, ["mrr", "ndcg@5", "map"], k=k,
                              progress=False)
    got = ev_h.result.per_query.to_dict()
    assert got.keys() == via_runs.keys()
    for qid, values in via_runs.items():
        assert got[qid] == pytest.approx(values), qid
    assert any(v["mrr"] > 0 for v in got.values())


@pytest.mark.parametrize(("method", "params"), [("combmax", {}), ("rbc", {"phi": 0.5}), ("condorcet", {}),
                                                ("borda", {})])
def test_hybrid_retriever_takes_every_unsupervised_method(method: str, params: dict[str, float]) -> None:
    a = Fixed("A", [("d1", 3.0), ("d2", 2.0), ("d3", 1.0)])
    b = Fixed("B", [("d3", 0.9), ("d1", 0.8), ("d5", 0.7)])
    hits = HybridRetriever([a, b], method=method, depth=10, **params).search("q1", k=4)
    expected = ranked_lists(fuse([A, B], method, **params), k=4)["q1"]
    assert [(h.id, h.score) for h in hits] == [(d, pytest.approx(s)) for d, s in expected]
    with pytest.raises(InvalidParameterError, match="trained on judgments"):
        HybridRetriever([a, b], method="posfuse")
