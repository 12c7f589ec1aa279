"""The gate never passes by accident: one query, equal differences, identical runs and unstable p-values are undecided
(exit 3, ``passed: false, undecided: true``), and every output says so and what to add."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from clirun import cli
from rankscope import Qrels, Run, display
from rankscope.gate import check
from rankscope.io import write_trec_qrels, write_trec_run
from rankscope.stats.noninferiority import NON_INFERIORITY_TESTS, non_inferiority

TESTS = NON_INFERIORITY_TESTS


def _runs(ranks_new: list[int | None], ranks_base: list[int | None]) -> tuple[Qrels, Run, Run]:
    """One relevant document per query, ranked at the given position (None: not retrieved) by each run."""
    qrels = Qrels.from_dict({f"q{i:03d}": {f"rel{i}": 1} for i in range(len(ranks_new))})

    def run(ranks: list[int | None], name: str) -> Run:
        lists = {}
        for i, r in enumerate(ranks):
            docs = [f"x{j}" for j in range(12)]
            if r is not None:
                docs.insert(r - 1, f"rel{i}")
            lists[f"q{i:03d}"] = docs
        return Run.from_ranked_lists(lists, name=name)

    return qrels, run(ranks_new, "new"), run(ranks_base, "base")


@pytest.mark.parametrize("test", TESTS)
def test_one_query_is_undecided(test: str) -> None:
    # the bootstrap used to print "PASS ... lower bound -inf > -0.05 ... p = 0" and exit 0
    r = non_inferiority([0.3], 0.05, test)
    assert not r.passed and r.undecided == "one_query"
    qrels, new, base = _runs([1], [2])
    gate = check(qrels, new, baseline=base, max_drops=["ndcg@10=0.05"], test=test)
    assert gate.exit_code == 3 and not gate.passed
    assert gate.lines()[-1].startswith("gate UNDECIDED")
    assert "add queries" in gate.lines()[0] and gate.lines()[0].startswith("UNDECIDED")


@pytest.mark.parametrize("test", TESTS)
def test_equal_differences_are_undecided(test: str) -> None:
    # non_inferiority([-0.04, -0.04], 0.05, "t") used to pass with p = 0: a zero standard deviation taken as proof
    r = non_inferiority([-0.04, -0.04], 0.05, test)
    assert not r.passed and r.undecided == "no_variance"
    assert not non_inferiority(np.full(40, 0.02), 0.05, test).passed


@pytest.mark.parametrize("test", TESTS)
def test_a_run_identical_to_its_baseline_is_undecided(test: str) -> None:
    qrels, new, base = _runs([1, 3, None, 2] * 10, [1, 3, None, 2] * 10)
    gate = check(qrels, new, ["mrr>=0.1"], baseline=base, max_drops=["ndcg@10=0.05"], test=test)
    assert gate.exit_code == 3 and gate.failed == 0 and gate.undecided == 1
    d = gate.to_dict()
    assert d["passed"] is False and d["undecided"] is True and d["exit_code"] == 3
    o = d["outcomes"][1]
    assert o["status"] == "undecided" and o["undecided"] == "no_variance" and o["p_value"] is None
    line = gate.lines()[1]
    assert "all 40 per-query differences are equal (0)" in line and "add queries on which the runs differ" in line
    md = gate.to_markdown()
    assert md.startswith("## rankscope gate UNDECIDED") and "❔" in md
    html = display.html(gate)
    assert "gate UNDECIDED" in html and "UNDECIDED</span>" in html
    assert "门禁未决" in "\n".join(gate.lines("zh"))


def test_a_failure_beside_an_undecided_check_fails() -> None:
    qrels, new, base = _runs([1, 3, None, 2] * 10, [1, 3, None, 2] * 10)
    gate = check(qrels, new, ["mrr>=0.9"], baseline=base, max_drops=["ndcg@10=0.05"])
    assert gate.exit_code == 1 and gate.failed == 1 and gate.undecided == 1
    assert gate.to_dict()["undecided"] is False


@pytest.mark.parametrize("test", ["randomization", "bootstrap"])
def test_an_unstable_p_value_is_undecided(test: str) -> None:
    # UNSTABLE (p within Monte-Carlo error of alpha) used to exit 0 with "gate passed" and JSON passed: true
    ranks = [1] * 20 + [2] * 6 + [None] * 2
    qrels, new, base = _runs(ranks, [1] * len(ranks))
    loose = check(qrels, new, baseline=base, max_drops=["ndcg@10=0.3"], test=test, permutations=100,
                  max_permutations=100)
    (o,) = loose.outcomes
    assert o.near_alpha and o.undecided == "unstable" and not o.passed, o
    assert loose.exit_code == 3 and loose.to_dict()["passed"] is False
    assert "still within Monte-Carlo error" in loose.lines()[0] and "raise --permutations" in loose.lines()[0]
    assert check(qrels, new, baseline=base, max_drops=["ndcg@10=0.3"], test=test).exit_code == 0  # 10,000 draws


def test_a_margin_of_zero_prints_no_minus_zero() -> None:
    ranks = [1] * 20 + [2] * 5
    qrels, new, base = _runs([1] * 25, ranks)  # the new run is better on 5 queries
    for test in TESTS:
        gate = check(qrels, new, baseline=base, max_drops=["ndcg@10=0"], test=test)
        text = "\n".join(gate.lines()) + gate.to_markdown()
        assert "-0;" not in text and "-0 " not in text and "-0)" not in text, text
        assert " 0; " in gate.lines()[0] or " 0;" in gate.lines()[0]


def test_the_cli_exits_3_and_writes_undecided(tmp_path: Path) -> None:
    qrels, new, base = _runs([2, 3] * 3, [2, 3] * 3)
    write_trec_qrels(qrels, tmp_path / "q.txt")
    write_trec_run(new, tmp_path / "new.run")
    write_trec_run(base, tmp_path / "base.run")
    done = cli("check", "--qrels", tmp_path / "q.txt", "--run", tmp_path / "new.run", "--baseline",
               tmp_path / "base.run", "--max-drop", "ndcg@10=0.05", "--json", tmp_path / "g.json", "--summary",
               tmp_path / "g.md")
    assert done.returncode == 3, done.stderr
    assert "UNDECIDED" in done.stdout and "Traceback" not in done.stderr
    d = json.loads((tmp_path / "g.json").read_text())
    assert d["passed"] is False and d["undecided"] is True
    assert (tmp_path / "g.md").read_text().startswith("## rankscope gate UNDECIDED")
