"""Each fusion method and normalisation on the literal values of ranx's own tests, plus rankscope's rules.

The inputs and expected values are those of ranx's published unit tests (github.com/AmenRa/ranx,
tests/unit/ranx/fusion/*_test.py and tests/unit/ranx/normalization/*_test.py): three runs over two
queries (``R1``, ``R2``, ``R3``; the Condorcet tests use a variant of ``R2``), the four runs of
``rbc_test.py`` and the qrels of ``bayesfuse_test.py``.  They run without ranx installed;
tests/retrieval/test_fusion_ranx.py compares with ranx itself on random inputs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rankscope import Qrels, Run
from rankscope.errors import InvalidParameterError
from rankscope.retrieval.fusion import METHODS, NORMS, fuse, train_fusion
from rankscope.retrieval.fusion.methods import KERNELS

R1 = Run.from_dict({"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2}}, name="r1")
R2 = Run.from_dict({"q1": {"d1": 3, "d2": 2}, "q2": {"d1": 1, "d3": 3}}, name="r2")
R3 = Run.from_dict({"q1": {"d3": 1}, "q2": {"d2": 2, "d3": 3}}, name="r3")
R2_CONDORCET = Run.from_dict({"q1": {"d1": 2, "d2": 3}, "q2": {"d1": 1, "d3": 3}}, name="r2")
QRELS = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d1": 1}})


def fused(method: str, runs: list[Run] | None = None, **kw: object) -> dict[str, dict[str, float]]:
    return fuse(runs or [R1, R2, R3], method, **{"norm": None, **kw}).to_dict()  # type: ignore[arg-type]


def test_borda_and_weighted_borda() -> None:  # bordafuse_test.py, weighted_bordafuse_test.py
    assert fused("bordafuse") == {"q1": {"d1": 1 + 3 + 1.5, "d2": 2 + 2 + 1.5, "d3": 3 + 1 + 3},
                                  "q2": {"d1": 2 + 2 + 1, "d2": 3 + 1 + 2, "d3": 1 + 3 + 3}}
    got = fused("w_bordafuse", weights=[3, 2, 1])
    assert got == {"q1": {"d1": 3 * 1 + 2 * 3 + 1.5, "d2": 3 * 2 + 2 * 2 + 1.5, "d3": 3 * 3 + 2 * 1 + 3},
                   "q2": {"d1": 3 * 2 + 2 * 2 + 1, "d2": 3 * 3 + 2 * 1 + 2, "d3": 3 * 1 + 2 * 3 + 3}}


def test_condorcet_and_weighted_condorcet() -> None:  # condorcet_test.py, weighted_condorcet_test.py
    runs = [R1, R2_CONDORCET, R3]
    expected = {"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2, "d3": 3}}
    assert fused("condorcet", runs) == expected
    assert fused("w_condorcet", runs, weights=[1, 1, 1]) == expected
    assert fused("w_condorcet", runs, weights=[1, 5, 2]) == {"q1": {"d1": 2, "d2": 3, "d3": 1},
                                                             "q2": {"d1": 2, "d2": 1, "d3": 3}}


def test_condorcet_cycle_is_a_copeland_tie() -> None:
    """a > b > c > a (each by 2 votes to 1): every document wins once and loses once; trec order breaks the tie."""
    runs = [Run.from_ranked_lists({"q": order}, name=f"r{i}") for i, order in
            enumerate((["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]))]
    assert fused("condorcet", runs) == {"q": {"a": 2.0, "b": 2.0, "c": 2.0}}


def test_comb_family() -> None:  # comb_*_test.py: the raw scores of R1, R2, R3
    assert fused("comb_sum") == {"q1": {"d1": 4.0, "d2": 4.0, "d3": 4.0}, "q2": {"d1": 2.0, "d2": 4.0, "d3": 6.0}}
    assert fused("comb_mnz") == {"q1": {"d1": 8.0, "d2": 8.0, "d3": 8.0}, "q2": {"d1": 4.0, "d2": 8.0, "d3": 12.0}}
    assert fused("comb_max") == {"q1": {"d1": 3.0, "d2": 2.0, "d3": 3.0}, "q2": {"d1": 1.0, "d2": 2.0, "d3": 3.0}}
    assert fused("comb_min") == {"q1": {"d1": 1.0, "d2": 2.0, "d3": 1.0}, "q2": {"d1": 1.0, "d2": 2.0, "d3": 3.0}}
    assert fused("comb_med") == {"q1": {"d1": np.median([1, 3]), "d2": 2.0, "d3": np.median([3, 1])},
                                 "q2": {"d1": 1.0, "d2": 2.0, "d3": 3.0}}
    assert fused("comb_anz") == {"q1": {"d1": 2.0, "d2": 2.0, "d3": 2.0}, "q2": {"d1": 1.0, "d2": 2.0, "d3": 3.0}}
    assert fused("comb_gmnz", gamma=0.5)["q2"]["d3"] == pytest.approx(6 * 2 ** 0.5)


def test_wsum_wmnz_mixed() -> None:  # fusion_test.py, wmnz_test.py, mixed_test.py
    w = [0.3, 0.2, 0.5]
    got = fused("wsum", weights=w)
    assert got["q1"] == pytest.approx({"d1": 0.3 * 1 + 0.2 * 3, "d2": 0.3 * 2 + 0.2 * 2, "d3": 0.3 * 3 + 0.5 * 1})
    got = fused("wmnz", weights=w)
    assert got["q2"] == pytest.approx({"d1": (1 + 1) * (0.3 + 0.2), "d2": (2 + 2) * (0.3 + 0.5),
                                       "d3": (3 + 3) * (0.2 + 0.5)})
    assert fused("wmnz", weights=[1, 1, 1])["q1"] == {"d1": 8.0, "d2": 8.0, "d3": 8.0}
    got = fused("mixed", weights=w)
    assert got["q1"]["d3"] == pytest.approx((0.3 * 3 + 0.5 * 1) * math.sqrt(2))


def test_isr_family() -> None:  # isr_test.py, log_isr_test.py, logn_isr_test.py
    assert fused("isr")["q1"] == pytest.approx({"d1": (1 / 9 + 1) * 2, "d2": (1 / 4 + 1 / 4) * 2, "d3": (1 + 1) * 2})
    assert fused("log_isr")["q2"]["d2"] == pytest.approx((1 + 1 / 4) * math.log(2))
    got = fused("logn_isr", sigma=0.1)
    assert got["q1"] == pytest.approx({"d1": (1 / 9 + 1) * math.log(2.1), "d2": (1 / 4 + 1 / 4) * math.log(2.1),
                                       "d3": 2 * math.log(2.1)})


def test_rrf() -> None:  # rrf_test.py
    assert fused("rrf")["q1"] == pytest.approx({"d1": 1 / 63 + 1 / 61, "d2": 1 / 62 + 1 / 62, "d3": 1 / 61 + 1 / 61})


def test_rbc_published_values() -> None:  # rbc_test.py (values rounded to 2 digits as published)
    runs = [Run.from_dict({"q1": d}, name=f"r{i}") for i, d in enumerate([
        {"A": 7, "D": 6, "B": 5, "C": 4, "G": 3, "F": 2}, {"B": 7, "D": 6, "E": 5, "C": 4},
        {"A": 7, "B": 6, "D": 5, "C": 4, "G": 3, "F": 2, "E": 1}, {"G": 7, "D": 6, "E": 5, "A": 4, "F": 3, "C": 2}])]
    published = {
        0.6: {"A": 0.89, "D": 0.86, "B": 0.78, "G": 0.50, "E": 0.31, "C": 0.29, "F": 0.11},
        0.8: {"D": 0.61, "A": 0.50, "B": 0.49, "C": 0.37, "G": 0.36, "E": 0.31, "F": 0.21},
        0.9: {"D": 0.35, "C": 0.28, "A": 0.27, "B": 0.27, "G": 0.23, "E": 0.22, "F": 0.18},
    }
    for phi, values in published.items():
        got = fused("rbc", runs, phi=phi)["q1"]
        assert {d: round(s, 2) for d, s in got.items()} == values


def test_supervised_published_values() -> None:  # posfuse/probfuse/segfuse/slidefuse/mapfuse_test.py
    runs = [R1, R2, R3]
    pos = train_fusion(QRELS, runs, "posfuse", norm=None).tables
    assert [p.tolist() for p in pos] == [[0, 1 / 2, 1], [1 / 2, 1 / 2], [0, 0]]
    assert fused("posfuse", qrels=QRELS) == {"q1": {"d1": 1.5, "d2": 1.0, "d3": 0.0},
                                             "q2": {"d1": 1.0, "d2": 0.0, "d3": 0.5}}
    prob = train_fusion(QRELS, runs, "probfuse", norm=None, n_segments=2).tables
    assert [p.tolist() for p in prob] == [[0.0, 1.0], [0.5, 0.5], [0, 0]]
    got = fused("probfuse", qrels=QRELS, n_segments=2)
    assert got["q1"] == {"d1": 1.0 / 2 + 0.5, "d2": 0.0 + 0.5 / 2, "d3": 0.0}
    seg = train_fusion(QRELS, runs, "segfuse", norm=None).tables
    assert [s.tolist() for s in seg] == [[0.2] + [0.0] * 9, [0.2] + [0.0] * 9, [0.0] * 10]
    assert fused("segfuse", qrels=QRELS)["q1"]["d1"] == pytest.approx(0.2 * (1 + 1) + 0.2 * (1 + 3))
    p0, p1, p2 = (np.array(x) for x in ([0, 0.5, 1], [0.5, 0.5], [0, 0]))
    got = fused("slidefuse", qrels=QRELS, w=1)
    assert got["q1"] == pytest.approx({"d1": p0[1:3].sum() / 2 + p1.sum() / 2, "d2": p0.sum() / 3 + p1.sum() / 2,
                                       "d3": p0[:2].sum() / 2 + p2.sum() / 2})
    got = fused("slidefuse", qrels=QRELS, w=2)
    assert got["q2"] == pytest.approx({"d1": p0[:2].sum() / 2 + p1.sum() / 2, "d2": p0[:2].sum() / 2,
                                       "d3": p1.sum() / 2})
    maps = [t[0] for t in train_fusion(QRELS, runs, "mapfuse", norm=None).tables]
    assert maps == pytest.approx([(1 / 3 + 1 / 2) / 2, (1 + 1 / 2) / 2, 0.0])
    assert fused("mapfuse", qrels=QRELS)["q1"]["d1"] == pytest.approx(maps[0] / 3 + maps[1] / 1)


def test_bayesfuse_published_log_odds() -> None:  # bayesfuse_test.py
    qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 1, "d8": 1, "d9": 1, "d10": 1}, "q2": {"d2": 1, "d4": 1, "d7": 1},
                             "q3": {"d1": 1, "d3": 1, "d4": 1, "d5": 1, "d6": 1, "d8": 1, "d9": 1}})
    ranked = {q: [f"d{i}" for i in range(1, 11)] for q in ("q1", "q2", "q3")}
    run = Run.from_ranked_lists(ranked, name="r1")
    odds = train_fusion(qrels, [run, run], "bayesfuse", norm=None).tables[0]
    assert odds[:5] == pytest.approx([math.log((8 / 15) / (7 / 15))] * 5)
    assert odds[5:10] == pytest.approx([math.log((7 / 15) / (8 / 15))] * 5)
    assert (odds[10:] < 0).all() and len(odds) == 1000


@pytest.mark.parametrize(("norm", "q1", "q2"), [  # normalization/*_test.py on R1
    ("min-max", [0 / 2, 1 / 2, 2 / 2], [0.0, 1.0]),
    ("min-max-inverted", [2 / 2, 1 / 2, 0 / 2], [1.0, 0.0]),
    ("max", [1 / 3, 2 / 3, 3 / 3], [1 / 2, 2 / 2]),
    ("sum", [0 / 3, 1 / 3, 2 / 3], [0.0, 1.0]),
    ("zmuv", [-1 / 0.816496580927726, 0.0, 1 / 0.816496580927726], [-1.0, 1.0]),
    ("rank", [1 - 2 / 3, 1 - 1 / 3, 1.0], [1 - 1 / 2, 1.0]),
])
def test_normalisations(norm: str, q1: list[float], q2: list[float]) -> None:
    got = fuse([R1], "combsum", norm=norm).to_dict()
    assert [got["q1"][d] for d in ("d1", "d2", "d3")] == pytest.approx(q1)
    assert [got["q2"][d] for d in ("d1", "d2")] == pytest.approx(q2)


def test_borda_normalisation() -> None:  # borda_norm_test.py: each run gets every candidate
    got = [fuse([R1, R2, R3], "combsum", norm="borda", weights=w).to_dict() for w in np.eye(3).tolist()]
    assert got[0]["q1"] == pytest.approx({"d1": 1 / 3, "d2": 2 / 3, "d3": 3 / 3})
    assert got[0]["q2"] == pytest.approx({"d1": 2 / 3, "d2": 3 / 3, "d3": 1 / 3})
    assert got[1]["q2"] == pytest.approx({"d1": 2 / 3, "d2": 1 / 3, "d3": 3 / 3})
    assert got[2]["q1"] == pytest.approx({"d1": 1.5 / 3, "d2": 1.5 / 3, "d3": 3 / 3})
    # after borda every run retrieves every candidate: CombMNZ counts all three runs
    assert fuse([R1, R2, R3], "combmnz", norm="borda").to_dict()["q1"]["d1"] == pytest.approx(
        3 * (1 / 3 + 3 / 3 + 1.5 / 3))


def test_minmax_keeps_rankscope_rule_min_max_is_ranx() -> None:
    single = Run.from_dict({"q": {"a": 5.0}}, name="s")
    assert fuse([single], "combsum", norm="minmax").to_dict() == {"q": {"a": 1.0}}
    assert fuse([single], "combsum", norm="min-max").to_dict() == {"q": {"a": 0.0}}


def test_registry_is_complete() -> None:
    names = [m.name for m in METHODS]
    assert len(set(names)) == len(names) == 25
    for m in METHODS:
        assert m.supervised or m.name in KERNELS, m.name
    ranx_names = {m.ranx for m in METHODS}
    assert ranx_names >= {"bayesfuse", "bordafuse", "anz", "gmnz", "max", "med", "min", "mnz", "sum", "condorcet",
                          "isr", "log_isr", "logn_isr", "mapfuse", "mixed", "posfuse", "probfuse", "rbc", "rrf",
                          "segfuse", "slidefuse", "w_bordafuse", "w_condorcet", "wmnz", "wsum"}
    page = (Path(__file__).resolve().parents[2] / "docs" / "fusion.md").read_text(encoding="utf-8")
    for m in METHODS:
        assert f"`{m.name}`" in page, m.name
    for n in NORMS:
        assert f"`{n.name}`" in page, n.name


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "combsumm"}, "did you mean: 'combsum'|combsum"),
    ({"method": "rbc", "phi": 1.5}, r"phi must be a number in \[0, 1\]"),
    ({"method": "rbc", "alpha": 1}, "takes no parameter 'alpha'"),
    ({"method": "combmax", "weights": [1, 1, 1]}, "takes no weights"),
    ({"method": "wmnz"}, "needs weights"),
    ({"method": "posfuse"}, "trained on judgments"),
    ({"method": "rrf", "qrels": QRELS}, "learns nothing"),
    ({"method": "probfuse", "n_segments": 2.5, "qrels": QRELS}, "integer"),
    ({"method": "rrf", "norm": "minmaxx"}, "did you mean"),
])
def test_bad_options(kwargs: dict, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        fuse([R1, R2, R3], **kwargs)
