"""Anytime-valid early stopping: evaluate_retriever(stop_when=...) and judging until the interval is narrow."""

from __future__ import annotations

import numpy as np
import pytest

from rankscope.data.qrels import Qrels
from rankscope.data.testset import Query, TestSet
from rankscope.errors import InvalidParameterError
from rankscope.labels.batch import judge_until
from rankscope.labels.judge import JudgeSettings, Judgment
from rankscope.llm_client import Endpoint
from rankscope.retrieval import evaluate_retriever
from rankscope.stats.betting import StopWhen


def _testset(n: int, rng: np.random.Generator) -> tuple[TestSet, dict[str, int]]:
    """``n`` queries with one relevant document each; the retriever ranks it at a random place (or misses it)."""
    qrels = Qrels.from_dict({f"q{i}": {f"rel{i}": 1} for i in range(n)})
    place = {f"q{i}": int(rng.choice([1, 1, 2, 3, 11])) for i in range(n)}
    return TestSet([Query(f"q{i}", f"question {i}") for i in range(n)], qrels), place


def test_a_retriever_evaluation_stops_once_the_interval_excludes_the_threshold() -> None:
    ts, place = _testset(400, np.random.default_rng(1))
    calls = {"n": 0}

    def search(query: str, k: int) -> list[str]:
        calls["n"] += 1
        qid = "q" + query.split()[-1]
        docs = [f"x{j}" for j in range(12)]
        docs.insert(place[qid] - 1, f"rel{qid[1:]}")
        return docs[:k]

    rule = StopWhen("mrr", excludes=0.3, every=20)
    ev = evaluate_retriever(search, ts, ["mrr"], workers=1, progress=False, stop_when=rule)
    st = ev.stopped
    assert st is not None and st.reason == "excludes" and st.used < 400 and st.saved == 400 - st.used
    assert calls["n"] == st.used == ev.queries
    full = evaluate_retriever(search, ts, ["mrr"], workers=1, progress=False).mean()["document"]["mrr"]
    assert st.lower <= full <= st.upper and st.lower > 0.3  # it covers the mean over all 400 queries
    assert f"stopped after {st.used} of 400 queries ({st.saved} not run" in ev.summary()
    assert ev.to_dict()["stopped"]["saved"] == st.saved


def test_a_baseline_missing_queries_is_refused_before_any_call() -> None:
    ts, _ = _testset(30, np.random.default_rng(2))

    def search(query: str, k: int) -> list[str]:
        raise AssertionError("no call expected")

    with pytest.raises(InvalidParameterError, match="no value for 10 of the 30 queries"):
        evaluate_retriever(search, ts, ["mrr"], progress=False,
                           stop_when=StopWhen("mrr", excludes=0.0, baseline={f"q{i}": 0.5 for i in range(20)}))


def _pool(n: int, share: float, rng: np.random.Generator) -> tuple[list[tuple[str, str]], dict[tuple[str, str], int]]:
    pairs = [(f"q{i % 50}", f"d{i}") for i in range(n)]
    return pairs, {p: int(rng.random() < share) * 2 for p in pairs}


def test_judging_stops_once_the_share_is_known_to_the_width() -> None:
    pairs, grades = _pool(3000, 0.3, np.random.default_rng(3))
    calls = {"n": 0}

    def oracle(qt: str, dt: str, settings: JudgeSettings, client: object = None) -> Judgment:
        calls["n"] += 1
        return Judgment(grades[(qt, dt)], None, "ok", 1, 10, 1)

    settings = JudgeSettings(Endpoint("http://127.0.0.1:9"), "stand-in")
    texts_q = {q: q for q, _ in pairs}
    texts_d = {d: d for _, d in pairs}
    report, st = judge_until(pairs, texts_q, texts_d, settings, width=0.1, client=object(), judge=oracle,
                             progress=False)
    assert st.reason == "width" and st.used < 3000 and calls["n"] == st.used == len(report.labels)
    true = np.mean([g >= 1 for g in grades.values()])
    assert st.lower <= true <= st.upper and st.upper - st.lower <= 0.1
    assert "pairs graded 1 or more over all 3000 pairs" in st.text()


def test_a_failed_judgment_stops_the_early_stop() -> None:
    pairs, grades = _pool(400, 0.3, np.random.default_rng(4))

    def flaky(qt: str, dt: str, settings: JudgeSettings, client: object = None) -> Judgment:
        if int(dt[1:]) % 20 == 0:
            return Judgment(None, "timeout: no answer", None, 1, 10, 0)
        return Judgment(grades[(qt, dt)], None, "ok", 1, 10, 1)

    settings = JudgeSettings(Endpoint("http://127.0.0.1:9"), "stand-in")
    report, st = judge_until(pairs, {q: q for q, _ in pairs}, {d: d for _, d in pairs}, settings, width=0.5,
                             client=object(), judge=flaky, progress=False)
    assert st.used == 400 and st.reason == "failed" and report.failed == 20
    assert "no early stop was made" in st.text()
