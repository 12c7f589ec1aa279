"""The C/W/L measures (INST, INSQ, BPM, SDCG, NERR8-11, RBP) against cwl_eval.

The literal values are those of ir_measures' own test of its cwl_eval provider (terrierteam/ir_measures
test/test_cwl_eval.py, on its test/cwl.qrels and test/cwl.run, "based on a manual execution of cwl-eval",
to 4 decimals); the oracle test runs cwl_eval through ir_measures on random graded judgments.
"""

from __future__ import annotations

import logging
import random

import pytest

from rankscope import Qrels, Run, evaluate

CWL_QRELS = {
    "T1": {"D1": 1, "D2": 0, "D3": 1, "D4": 1, "D7": 1, "D8": 0, "D9": 1, "D10": 0},
    "T2": {"D1": 1, "D2": 1, "D5": 1, "D6": 0, "D7": 1, "D8": 1, "D9": 1, "D10": 0},
    "T3": {"D4": 0, "D5": 0, "D6": 1, "D7": 1, "D8": 1, "D9": 0, "D10": 1},
}
CWL_RUN = {q: [f"D{i}" for i in range(1, 11)] for q in ("T1", "T2", "T3")}  # the file's ranks 1..10 in each topic

# ir_measures test/test_cwl_eval.py: expected (T1, T2, T3)
EXPECTED = [
    ("AP", (0.7087, 0.7438, 0.3068)),
    ("BPM(T=1.0, max_rel=1)@20", (1.0000, 1.0000, 0.1667)),
    ("BPM(T=2.0, max_rel=1)@10", (0.6667, 1.0000, 0.2857)),
    ("INSQ(T=1.0, max_rel=1)", (0.5872, 0.6629, 0.0880)),
    ("INSQ(T=2.0, max_rel=1)", (0.4513, 0.5068, 0.1292)),
    ("INST(T=1.0, max_rel=1)", (0.7934, 0.9226, 0.0888)),
    ("INST(T=2.0, max_rel=1)", (0.5994, 0.6924, 0.1397)),
    ("SDCG(max_rel=1)@10", (0.5645, 0.6531, 0.2848)),
    ("NERR8(max_rel=1)@10", (1.0000, 1.0000, 0.1667)),
    ("NERR9(max_rel=1)@10", (1.0000, 1.0000, 0.0680)),
    ("NERR10(p=0.8, max_rel=1)", (1.0000, 1.0000, 0.0888)),
    ("NERR11(T=2.0, max_rel=1)", (1.0000, 1.0000, 0.0691)),
    ("P@1", (1.0000, 1.0000, 0.0000)),
    ("P@10", (0.5000, 0.6000, 0.4000)),
    ("P@20", (0.2500, 0.3000, 0.2000)),
    ("P@5", (0.6000, 0.6000, 0.0000)),
    ("RBP(p=0.9, rel=1)", (0.3501, 0.3996, 0.1988)),
    ("RR", (1.0000, 1.0000, 0.1667)),
]


@pytest.mark.parametrize(("metric", "expected"), EXPECTED, ids=[e[0] for e in EXPECTED])
def test_the_values_ir_measures_holds_for_cwl_eval(metric: str, expected: tuple[float, float, float]) -> None:
    res = evaluate(Qrels.from_dict(CWL_QRELS), Run.from_ranked_lists(CWL_RUN), [metric.replace(" ", "")])
    assert res.per_query.values[:, 0].tolist() == pytest.approx(list(expected), abs=1e-4)


ORACLE = ["INST(max_rel=3)", "INST(T=2,min_rel=1,max_rel=3)", "INSQ(T=3,max_rel=3)", "BPM(T=1.5,max_rel=3)@10",
          "SDCG(max_rel=2)@5", "NERR8(max_rel=3)@10", "NERR9(max_rel=3)@5", "NERR10(p=0.7,max_rel=3)",
          "NERR11(T=2,max_rel=3)", "RBP(p=0.95,rel=2)"]


@pytest.mark.parametrize("metric", ORACLE)
def test_cwl_measures_equal_cwl_eval_on_graded_judgments(metric: str) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    rng = random.Random(11)
    qrels = {str(q): {f"d{i}": rng.choice([-1, 0, 0, 1, 2, 3]) for i in rng.sample(range(30), 12)} for q in range(20)}
    run = {str(q): {f"d{i}": float(s) for s, i in enumerate(rng.sample(range(30), rng.randint(1, 25)))}
           for q in range(20)}
    measure = ir_measures.parse_measure(metric)
    logging.disable(logging.WARNING)
    try:
        theirs = {m.query_id: m.value for m in ir_measures.cwl_eval.iter_calc(
            [measure], [ir_measures.Qrel(q, d, g) for q, ds in qrels.items() for d, g in ds.items()],
            [ir_measures.ScoredDoc(q, d, s) for q, ds in run.items() for d, s in ds.items()])}
    finally:
        logging.disable(logging.NOTSET)
    res = evaluate(Qrels.from_dict(qrels), Run.from_dict(run), [metric])
    ours = dict(zip(res.per_query.query_ids.tolist(), res.per_query.values[:, 0].tolist(), strict=True))
    assert len(theirs) == 20
    for q, value in theirs.items():
        assert ours[q] == pytest.approx(value, rel=1e-12, abs=1e-15), q


def test_max_rel_must_exceed_min_rel() -> None:
    from rankscope.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="max_rel must be above min_rel"):
        evaluate(Qrels.from_dict(CWL_QRELS), Run.from_ranked_lists(CWL_RUN), ["INST(min_rel=2,max_rel=2)"])
