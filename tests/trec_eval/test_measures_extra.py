"""Hand-computed cases for the trec_eval-specific measures (bpref, infAP, iprec, ..., relstring)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from rankscope import Qrels, Run, evaluate
from rankscope.engine.prepare import QrelsIndex, prepare
from rankscope.errors import InvalidParameterError
from rankscope.measures import parse_metric
from rankscope.measures.utility import relstrings
from rankscope.trec_eval import run_trec_eval

EPS = 1e-5


def score(qrels: dict, ranking: list[str], metric: str, **kw: object) -> float:
    res = evaluate(Qrels.from_dict({"q": qrels}), Run.from_ranked_lists({"q": ranking}), [metric], **kw)
    return res.per_query.values[0, 0]


def test_bpref_counts_judged_nonrelevant_above_each_relevant() -> None:
    q = {"a": 1, "b": 1, "n1": 0, "n2": 0}
    assert score(q, ["n1", "a", "x", "b"], "bpref") == 0.5  # unjudged x is skipped
    assert score(q, ["a", "b", "n1"], "bpref") == 1.0
    # N < R: the denominator is min(N, R) = 1
    q3 = {"a": 1, "b": 1, "c": 1, "n": 0}
    assert score(q3, ["n", "a", "b"], "bpref") == 0.0
    assert score(q3, ["a", "n", "b"], "bpref") == pytest.approx(1 / 3)
    assert score({"n": 0}, ["n"], "bpref") == 0.0  # R = 0


def test_gm_bpref_is_a_geometric_mean_with_floor() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1, "n": 0}, "q2": {"b": 1, "n": 0}})
    run = Run.from_ranked_lists({"q1": ["n", "a"], "q2": ["b"]})
    res = evaluate(qrels, run, ["bpref", "gm_bpref"])
    assert res.per_query["bpref"].tolist() == [0.0, 1.0]
    assert res.mean()["gm_bpref"] == pytest.approx(math.exp((math.log(1e-5) + 0.0) / 2))


def test_infap_equals_ap_with_complete_judgments_and_credits_pooled_unjudged() -> None:
    q = {"a": 1, "b": 1, "n": 0}
    assert score(q, ["a", "n", "b"], "infAP") == pytest.approx((1 + 2 / 3) / 2, abs=1e-4)
    # b at rank 3 with one pooled-unjudged document above: 1/3 + 2/3 * (2/2) * (1+e)/(1+2e)
    qu = {"a": 1, "b": 1, "u": -1}
    expected = (1 + 1 / 3 + (2 / 3) * 1.0 * ((1 + EPS) / (1 + 2 * EPS))) / 2
    assert score(qu, ["a", "u", "b"], "infAP") == pytest.approx(expected, rel=1e-12)
    assert score(qu, ["a", "u", "b"], "map") == pytest.approx((1 + 2 / 3) / 2)


def test_iprec_uses_trec_eval_9_rounding() -> None:
    q = {"a": 1, "b": 1, "c": 1}  # R = 3; c is never retrieved
    ranking = ["a", "x", "y", "b"]  # precision 1 at a, 2/4 at b
    assert score(q, ranking, "IPrec@0.0") == 1.0
    assert score(q, ranking, "iprec_at_recall_0.30") == 1.0  # floor(0.9 + 0.9) = 1 document
    # 9.0.8: floor(0.4*3 + 0.9) = 2 documents -> 0.5 (trec_eval 10 rounds 1.2 to 1 -> 1.0)
    assert score(q, ranking, "iprec_at_recall_0.40") == 0.5
    assert score(q, ranking, "iprec(recall=0.8)") == 0.0  # 3 relevant needed, 2 retrieved
    levels = [1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0, 0, 0]  # 0.7*3+0.9 = 2.9999... -> 2 in doubles
    assert score(q, ranking, "11pt_avg") == pytest.approx(sum(levels) / 11)
    assert score(q, ranking, "iprec_11pt(levels=0.3,0.4)") == pytest.approx(0.75)


def test_interpolation_takes_the_best_later_precision() -> None:
    q = {"a": 1, "b": 1}
    assert score(q, ["a", "x", "y", "b", "z"], "IPrec@0.5") == 1.0
    assert score(q, ["x", "a", "b"], "IPrec@0.5") == pytest.approx(2 / 3)  # P@3 beats P@2


def test_rprec_mult() -> None:
    q = {"a": 1, "b": 1, "c": 1}
    ranking = ["a", "x", "y", "b"]
    assert score(q, ranking, "Rprec_mult_1.00") == pytest.approx(1 / 3) == score(q, ranking, "Rprec")
    assert score(q, ranking, "rprec_mult(mult=2)") == pytest.approx(2 / 6)  # past the end = non-relevant
    assert score(q, ranking, "Rprec_mult@0.2") == 1.0  # floor(0.6 + 0.9) = 1
    assert score({"n": 0}, ["n"], "Rprec_mult_1.00") == 0.0


def test_utility_coefficients_and_collection_size() -> None:
    q = {"a": 1, "b": 1}
    assert score(q, ["a", "x"], "utility") == 0.0  # 1 - 1
    # a*1 + b*1 + c*(2-1) + d*(10 + 1 - 2 - 2)
    assert score(q, ["a", "x"], "utility(a=1,b=-1,c=-2,d=0.5,n_docs=10)") == 1.5
    assert parse_metric("utility.2,-1,0,0") == parse_metric("utility(a=2)")


def test_gain_measures_by_hand() -> None:
    q = {"a": 2, "b": 1, "n": 0}
    ranking = ["b", "n", "a"]  # DCG prefix 1, 1, 2; ideal gains 2, 1 -> IDCG 2, 2 + 1/log2(3)
    idcg = 2 + 1 / math.log2(3)
    assert score(q, ranking, "binG") == pytest.approx((1 + 1 / math.log2(3)) / 2)
    assert score(q, ranking, "G") == pytest.approx((1 / math.log2(3) + 2 / math.log2(3)) / 3)
    assert score(q, ranking, "ndcg_rel") == pytest.approx((1 / 2 + 2 / idcg) / 2)
    assert score(q, ranking, "Rndcg") == pytest.approx((1 / 2 + 1 / idcg) / 2)
    # more than P + 1 documents retrieved: a final point DCG(end) / IDCG(P) joins Rndcg
    assert score(q, [*ranking, "x", "y"], "Rndcg") == pytest.approx((1 / 2 + 1 / idcg + 2 / idcg) / 3)
    # a relevant document never retrieved counts DCG(end) / IDCG(P) in ndcg_rel
    assert score({"a": 2, "b": 1}, ["b", "x"], "ndcg_rel") == pytest.approx((1 / 2 + 1 / idcg) / 2)
    assert score({"n": 0}, ["n"], "Rndcg") == 0.0


def test_gain_map_never_rewards_unjudged_documents() -> None:
    q = {"a": 1, "n": 0}
    # grade 0 mapped to gain 1: the judged n gains, the unjudged x does not
    assert score(q, ["x", "n", "a"], "dcg(gains=0=1)") == pytest.approx(1 / math.log2(3) + 1 / 2)
    assert score(q, ["a"], "ndcg(gains=0=-1)") == 1.0  # negative gains stay out of the ideal


def test_relstring_codes_and_numeric_refusal() -> None:
    qrels = Qrels.from_dict({"q": {"a": 12, "b": 3, "c": 0, "u": -1}})
    run = Run.from_ranked_lists({"q": ["a", "b", "x", "c", "u"]})
    p, _ = prepare(QrelsIndex(qrels), run)
    assert relstrings(p, 10) == [">3-0."]
    assert relstrings(p, 2) == [">3"]
    with pytest.raises(InvalidParameterError, match="string-valued"):
        evaluate(qrels, run, ["relstring"])


def test_relevance_level_zero_never_makes_unjudged_documents_relevant() -> None:
    q = {"a": 1, "n": 0, "u": -1}  # with -l0 every judged document is relevant; x and u are not judged
    ranking = ["x", "n", "u", "a"]
    assert score(q, ranking, "P@1", relevance_level=0) == 0.0
    assert score(q, ranking, "P@2", relevance_level=0) == 0.5
    assert score(q, ranking, "num_rel", relevance_level=0) == 2.0
    assert score(q, ranking, "num_rel_ret", relevance_level=0) == 2.0


@pytest.mark.parametrize("text", ["ndcg(gains=1=3,2=9)", "rndcg(gains=0=1,2=5)", "iprec_11pt(levels=0.2,0.5)",
                                  "utility(a=2.0,c=-1.0)", "IPrec@0.3", "rprec_mult(mult=0.5)"])
def test_list_valued_parameters_round_trip(text: str) -> None:
    m = parse_metric(text)
    assert parse_metric(str(m)) == m
    assert parse_metric("ndcg(gains=1=3,2=9)") == parse_metric("ndcg.1=3,2=9")


@pytest.mark.parametrize("x", [0.25, 0.5, 1.0, 2.0])
def test_set_f_is_trec_evals_formula(x: float, tmp_path: Path) -> None:
    """trec_eval's set_F.x is (x+1)·P·R / (x·P + R): its parameter is not beta (x = beta²)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels_d = {"q1": {"a": 1, "b": 1, "c": 1, "d": 0}, "q2": {"e": 1}, "q3": {"f": 2, "g": 1}}
    run_d = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": {"y": 1.0}, "q3": {"f": 2.0, "g": 1.0, "z": 0.5}}
    res = evaluate(Qrels.from_dict(qrels_d), Run.from_dict(run_d), [f"set_F.{x}", f"SetF(beta={x})", "set_P",
                                                                    "set_recall"])
    for q, row in res.per_query.to_dict().items():
        p, r = row["set_P"], row["set_recall"]
        want = (x + 1) * p * r / (x * p + r) if p + r else 0.0
        assert row[f"set_F.{x}"] == pytest.approx(want, abs=1e-15)
        assert row[f"SetF(beta={x})"] == row[f"set_F.{x}"]  # ir_measures' SetF(beta=x) is trec_eval's set_F.x
        got = pytrec_eval.RelevanceEvaluator(qrels_d, {f"set_F.{x}"}).evaluate(run_d)[q]["set_F"]
        assert abs(row[f"set_F.{x}"] - got) <= 1e-12
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, ds in qrels_d.items() for d, g in ds.items()))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 0 {s} t\n" for q, ds in run_d.items() for d, s in ds.items()))
    out = run_trec_eval(["-m", f"set_F.{x}", str(tmp_path / "qrels"), str(tmp_path / "run")])
    assert out == f"{'set_F_' + str(x):<22}\tall\t{res[f'set_F.{x}']:6.4f}\n"


def test_f1_at_k_keeps_its_meaning() -> None:
    """f1@k is the harmonic mean of precision@k and recall@k (beta = 1), whatever set_F's parameter means."""
    res = evaluate(Qrels.from_dict({"q": {"a": 1, "b": 1, "c": 1}}), Run.from_ranked_lists({"q": ["a", "x", "b", "y"]}),
                   ["f1@4", "P@4", "recall@4"])
    p, r = res["P@4"], res["recall@4"]
    assert res["f1@4"] == pytest.approx(2 * p * r / (p + r))
