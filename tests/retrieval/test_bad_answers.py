"""``on_bad_answer``: a retriever that returns None (an HTTP wrapper on a timeout) stops the evaluation by default, or
is retried and counted as a failed query with ``"count"``, said in every output."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

import rankscope
from clirun import cli
from rankscope.data.testset import Query, TestSet
from rankscope.retrieval.protocol import RetrieverContractError


def _ts(n: int = 6) -> TestSet:
    return TestSet([Query(f"q{i}", f"question {i}") for i in range(n)], {f"q{i}": {f"d{i}": 1} for i in range(n)},
                   name="t")


class TimingOut:
    """Returns None for the queries in ``silent`` (every time), a ranking otherwise; counts the calls."""

    def __init__(self, silent: set[str]) -> None:
        self.silent = silent
        self.calls: dict[str, int] = {}

    def search(self, query: str, k: int) -> list[str] | None:
        qid = "q" + query.split()[-1]
        self.calls[qid] = self.calls.get(qid, 0) + 1
        return None if qid in self.silent else [f"d{qid[1:]}"]


class AsyncTimingOut(TimingOut):
    async def search(self, query: str, k: int) -> list[str] | None:  # type: ignore[override]
        return TimingOut.search(self, query, k)


class BatchTimingOut(TimingOut):
    def search_batch(self, queries: list[str], k: int) -> list[list[str] | None]:
        return [TimingOut.search(self, q, k) for q in queries]


def _run(retriever: object, **kw: object) -> rankscope.retrieval.RetrieverEvaluation:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rankscope.evaluate_retriever(retriever, _ts(), ["mrr"], k=1, progress=False, **kw)


def test_by_default_a_none_stops_the_evaluation() -> None:
    with pytest.raises(RetrieverContractError, match="returned None"):
        _run(TimingOut({"q2"}))
    with pytest.raises(RetrieverContractError, match="returned None"):
        _run(TimingOut({"q2"}), on_bad_answer="fail")


@pytest.mark.parametrize("kind", [TimingOut, AsyncTimingOut, BatchTimingOut])
def test_counted_nones_are_retried_then_failed_queries_in_every_output(kind: type[TimingOut]) -> None:
    retriever = kind({"q2", "q4"})
    ev = _run(retriever, on_bad_answer="count", retries=1)
    tries = 3 if kind is BatchTimingOut else 2  # retried like a raised error (a batch first, then query by query)
    assert retriever.calls["q2"] == tries and retriever.calls["q4"] == tries
    assert sorted(ev.failures) == ["q2", "q4"] and ev.failures["q2"].error_type == "RetrieverContractError"
    assert "returned None" in ev.errors["q2"]
    assert ev.mean()["retrieved"]["mrr"] == pytest.approx(4 / 6)  # the two failed queries score 0, and count
    assert "2 failed" in ev.summary() and "2 of 6 queries (33%) failed after 2 attempts" in ev.summary()
    assert "2 个失败" in ev.summary("zh")
    assert "2 failed" in repr(ev)
    out = ev.to_dict()
    assert [f["query_id"] for f in out["failures"]] == ["q2", "q4"]
    assert any(w["code"] == "failed" for w in out["warnings"])
    json.dumps(out)


def test_the_value_is_checked() -> None:
    with pytest.raises(rankscope.RankscopeError, match=r"'on_bad_answer' parameter .* one of 'fail', 'count'"):
        _run(TimingOut(set()), on_bad_answer="skip")


def test_the_command_line_counts_them(tmp_path: Path) -> None:
    (tmp_path / "flaky_http.py").write_text(
        "def search(query, k):\n    n = query.split()[-1]\n    return None if n in ('1', '3') else [f'd{n}']\n")
    testset = tmp_path / "t.jsonl"
    testset.write_text("".join(json.dumps({"id": f"q{i}", "question": f"question {i}", "relevant": [f"d{i}"]}) + "\n"
                               for i in range(6)))
    common = ("run", "--retriever", "flaky_http:search", "--testset", testset, "--out", tmp_path / "r.trec", "-k", "1",
              "--json", tmp_path / "ev.json")
    stopped = cli(*common, cwd=tmp_path, width=200)
    assert stopped.returncode == 2 and "returned None" in stopped.stderr and "Traceback" not in stopped.stderr
    counted = cli(*common, "--on-bad-answer", "count", cwd=tmp_path, width=200)
    assert counted.returncode == 0, counted.stderr
    assert "2 failed" in counted.stdout and "2 of 6 queries (33%) failed after 3 attempts" in counted.stdout
    assert len(json.loads((tmp_path / "ev.json").read_text())["failures"]) == 2
