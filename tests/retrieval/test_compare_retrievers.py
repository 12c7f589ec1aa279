"""rankscope.compare with RetrieverEvaluations, and with {name: retriever} plus a test set (issue 11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import rankscope
from rankscope.data.testset import TestSet
from rankscope.errors import InvalidParameterError


def _ts() -> TestSet:
    return TestSet.from_annotations([f"question {i}" for i in range(8)], [[f"d{i}"] for i in range(8)])


def good(query: str, k: int) -> list[str]:
    i = int(query.split()[-1])
    return [f"d{i}"] + [f"x{j}" for j in range(k - 1)]


def late(query: str, k: int) -> list[str]:
    i = int(query.split()[-1])
    return [f"x{j}" for j in range(i % 3)] + [f"d{i}"] + [f"y{j}" for j in range(k)]


def test_evaluations_compare_like_their_runs() -> None:
    ts = _ts()
    ev_good = rankscope.evaluate_retriever(good, ts, ["mrr", "ndcg@5"], k=10, progress=False)
    ev_late = rankscope.evaluate_retriever(late, ts, ["mrr", "ndcg@5"], k=10, progress=False)
    by_runs = rankscope.compare(ts.qrels, {"good": ev_good.run, "late": ev_late.run}, ["mrr", "ndcg@5"])
    by_list = rankscope.compare(None, [ev_good, ev_late], ["mrr", "ndcg@5"])
    by_dict = rankscope.compare(None, {"good": ev_good, "late": ev_late}, ["mrr", "ndcg@5"])
    for c in (by_list, by_dict):
        assert c.systems == ("good", "late")
        assert c.means == by_runs.means
        assert c.pair("good", "late", "mrr").p_value == by_runs.pair("good", "late", "mrr").p_value


def test_mapping_of_retrievers_runs_them_all_in_one_call(tmp_path: Path) -> None:
    ts = _ts()
    c = rankscope.compare(ts, {"good": good, "late": late}, ["mrr", "recall@20"])
    assert c.means["good"]["mrr"] == 1.0 and c.means["late"]["mrr"] < 1.0
    ev = rankscope.evaluate_retriever(late, ts, ["recall@20"], k=20, progress=False)
    assert c.means["late"]["recall@20"] == ev.mean()["document"]["recall@20"]  # k followed the deepest cutoff
    path = tmp_path / "q.json"
    ts.to_json(path)
    assert rankscope.compare(str(path), {"good": good, "late": late}, ["mrr"]).means == {
        k: {"mrr": v["mrr"]} for k, v in c.means.items()}
    mixed = rankscope.compare(ts, {"good": good, "late_run": ev.run}, ["mrr"])  # a run beside a retriever
    assert mixed.systems == ("good", "late_run")


def test_retrievers_without_a_test_set_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="pass the test set first"):
        rankscope.compare(_ts().qrels, {"good": good, "late": late}, ["mrr"])
    with pytest.raises(InvalidParameterError, match="name the retrievers"):
        rankscope.compare(_ts(), [good, late], ["mrr"])
    json.dumps(rankscope.compare(_ts(), {"good": good, "late": late}, ["mrr"]).to_dict())
