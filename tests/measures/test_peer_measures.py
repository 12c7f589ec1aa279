"""hits, RBP, ERR, Compat, Accuracy, nDCG(dcg=exp-log2) and judged_only against the libraries that define them.

Literal values are those the peers' own test suites hold (cited at each test); the oracle tests compute
the same measures with ranx and ir_measures (its providers: gdeval for ERR and exp-log2 nDCG, its own
code for Compat and Accuracy, pytrec_eval for judged_only, cwl_eval for RBP) on random inputs with
distinct scores (the peers break ties in other orders).
"""

from __future__ import annotations

import logging
import random
import warnings

import numpy as np
import pytest

from rankscope import Qrels, Run, evaluate

ir_measures = pytest.importorskip("ir_measures")


def _per_query(qrels: Qrels, run: Run, metric: str) -> dict[str, float]:
    res = evaluate(qrels, run, [metric], score_precision="float64")
    return dict(zip(res.per_query.query_ids.tolist(), res.per_query.values[:, 0].tolist(), strict=True))


def _random(seed: int, n_queries: int = 25) -> tuple[dict, dict]:
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(1, n_queries + 1):
        docs = [f"d{i}" for i in range(40)]
        judged = rng.sample(docs, rng.randint(1, 15))
        qrels[str(q)] = {d: rng.choice([0, 0, 1, 1, 2, 3]) for d in judged}
        retrieved = rng.sample(docs, rng.randint(0, 25))
        if retrieved:
            scores = rng.sample(range(1000), len(retrieved))
            run[str(q)] = {d: s / 7 - 30 for d, s in zip(retrieved, scores, strict=True)}
    return qrels, run


# -- the peers' own literal values --------------------------------------------------------
def test_hits_is_ranx_hits() -> None:
    # AmenRa/ranx tests/unit/ranx/metrics_test.py::test_hits: mean hits@5 == 2.5
    qrels = Qrels.from_dict({"1": {"1": 1, "4": 1, "5": 1, "6": 1}, "2": {"1": 1, "4": 1, "6": 1}})
    run = Run.from_ranked_lists({"1": ["1", "2", "3", "4", "5", "7"], "2": ["1", "2", "4", "3", "5", "7"]})
    assert evaluate(qrels, run, ["hits@5"]).mean() == {"hits@5": 2.5}


@pytest.mark.parametrize(("spelling", "value"), [("rbp.5", 0.7661), ("rbp.8", 0.4526), ("rbp.95", 0.1881)])
def test_rbp_is_ranx_rbp(spelling: str, value: float) -> None:
    # AmenRa/ranx tests/unit/ranx/metrics/rank_biased_precision_test.py: d1..d20, relevant d1 d2 d6 d11 d17
    qrels = Qrels.from_dict({"q1": {f"d{i}": 1 for i in (1, 2, 6, 11, 17)}})
    run = Run.from_dict({"q1": {f"d{i}": float(21 - i) for i in range(1, 21)}})
    assert round(evaluate(qrels, run, [spelling]).mean()[spelling], 4) == value


# -- oracles: ranx -------------------------------------------------------------------------
@pytest.mark.slow  # ranx compiles its numba kernels on first use (~30 s)
@pytest.mark.parametrize("metric", ["hits@10", "hits", "rbp.8", "rbp.95-l2", "ndcg_burges@10", "dcg_burges@5",
                                    "r-precision", "precision@5-l2", "ndcg@10-l2", "hit_rate@3"])
def test_ranx_spellings_mean_what_ranx_computes(metric: str) -> None:
    ranx = pytest.importorskip("ranx")  # here, not at the top: importing it costs every worker 3 s at collection
    qrels, run = _random(7)
    run = {q: docs for q, docs in run.items() if q in qrels}
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), metric, return_mean=False, make_comparable=True)
    ours = _per_query(Qrels.from_dict(qrels), Run.from_dict(run), metric)
    got = np.array([ours[q] for q in sorted(qrels)])
    order = sorted(ranx.Qrels(qrels).keys())
    want = dict(zip(order, np.asarray(theirs).tolist(), strict=True))
    np.testing.assert_allclose(got, [want[q] for q in sorted(qrels)], rtol=1e-12, atol=1e-12)


# -- oracles: ir_measures ------------------------------------------------------------------
IR_CASES = [
    ("RBP(rel=1)", 1e-12), ("RBP(p=0.5,rel=2)", 1e-12), ("Compat", 1e-12), ("Compat(p=0.8)", 1e-12),
    ("Compat(normalize=False)", 1e-12), ("Accuracy@10", 1e-12), ("Accuracy", 1e-12),
    ("ERR@10", 6e-6), ("ERR@20", 6e-6), ("nDCG(dcg='exp-log2')@5", 6e-6),  # gdeval prints 5 decimals
    ("P(judged_only=True)@5", 1e-12), ("AP(judged_only=True)", 1e-12), ("nDCG(judged_only=True)@10", 1e-12),
    ("RR(judged_only=True)", 1e-12), ("Rprec(rel=2)", 1e-12), ("Rprec(judged_only=True)", 1e-12),
    ("SetP(judged_only=True)", 1e-12), ("infAP", 1e-12), ("infAP(rel=2)", 1e-12),
]


@pytest.mark.parametrize(("metric", "tol"), IR_CASES, ids=[c[0] for c in IR_CASES])
def test_ir_measures_spellings_mean_what_ir_measures_computes(metric: str, tol: float) -> None:
    qrels, run = _random(3)
    if metric.startswith("Accuracy"):  # ir_measures divides by zero when no non-relevant document is in the top k
        run = {q: {**docs, "unjudged": 1e6} for q, docs in run.items()}
    measure = ir_measures.parse_measure(metric)
    irq = [ir_measures.Qrel(q, d, g) for q, ds in qrels.items() for d, g in ds.items()]
    irr = [ir_measures.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        logging.disable(logging.WARNING)
        try:
            theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], irq, irr)}
        finally:
            logging.disable(logging.NOTSET)
    assert theirs, metric
    ours = _per_query(Qrels.from_dict(qrels), Run.from_dict(run), metric)
    for q, value in theirs.items():
        assert ours[q] == pytest.approx(value, abs=tol), (metric, q)


def test_accuracy_counts_a_query_without_relevant_retrieved_as_zero_and_one_without_non_relevant_as_one() -> None:
    qrels = Qrels.from_dict({"a": {"x": 1}, "b": {"y": 1}, "c": {"z": 0}})
    run = Run.from_ranked_lists({"a": ["x"], "b": ["n", "y"], "c": ["z"]})
    assert evaluate(qrels, run, ["accuracy"]).per_query.values[:, 0].tolist() == [1.0, 0.0, 0.0]


def test_err_refuses_a_grade_above_max_grade() -> None:
    from rankscope.errors import InvalidParameterError

    qrels = Qrels.from_dict({"a": {"x": 5}})
    run = Run.from_ranked_lists({"a": ["x"]})
    with pytest.raises(InvalidParameterError, match=r"grade 5, above max_grade=4; write err\(max_grade=5\)"):
        evaluate(qrels, run, ["ERR@10"])
    assert evaluate(qrels, run, ["err(max_grade=5)@10"]).mean()["err(max_grade=5)@10"] == pytest.approx(31 / 32)


def test_judged_only_is_the_condensed_list_of_that_measure_alone() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0}})
    run = Run.from_ranked_lists({"q": ["x", "y", "a", "b"]})
    res = evaluate(qrels, run, ["P(judged_only=True)@1", "P@1", "RR(judged_only=true)", "RR"]).mean()
    assert res == {"P(judged_only=True)@1": 1.0, "P@1": 0.0, "RR(judged_only=true)": 1.0, "RR": 1 / 3}
