"""Judged traffic metrics: sampling, the cached judge (the labels tests' fake OpenAI-compatible server), the budget."""

from __future__ import annotations

from pathlib import Path

import pytest

from labels.fake_llm import FakeLLM
from rankscope.labels import Endpoint, JudgeSettings
from rankscope.monitor.events import parse_event
from rankscope.monitor.judged import JudgeBudget, Spent, judge_events, sample_events, version_difference


@pytest.fixture
def llm():
    with FakeLLM() as server:
        yield server


def _settings(url: str) -> JudgeSettings:
    return JudgeSettings(Endpoint(url, timeout=5.0, retries=2, backoff=0.01), "fake-model")


def _events(n: int, version: str = "v1") -> list:
    # the fake judge gives the grade a text names (grade=N): two distinct texts, relevant when i + j is even
    return [parse_event({"query": f"question {i}", "retriever": version, "time": i,
                         "results": [{"id": f"d{i}-{j}", "text": "grade=3" if (i + j) % 2 == 0 else "grade=0"}
                                     for j in range(5)]}) for i in range(n)]


def test_sampling_is_stratified_and_repeatable() -> None:
    evs = _events(100, "v1") + _events(100, "v2")
    a = sample_events(evs, rate=0.2, seed=3)
    assert a == sample_events(list(reversed(evs)), rate=0.2, seed=3)
    by = {v: sum(1 for e in a if e.retriever == v) for v in ("v1", "v2")}
    assert 5 < by["v1"] < 40 and 5 < by["v2"] < 40
    assert len(sample_events(evs, per_window=7)) == 14


def test_judged_metrics_with_intervals_and_the_cache(llm: FakeLLM, tmp_path: Path) -> None:
    evs = _events(20)
    cache = tmp_path / "labels.sqlite3"
    out = judge_events(evs, _settings(llm.url), metrics=["precision@5", "hit_rate@5"], cache=cache)
    assert out.scored == 20 and out.pairs == 100 and out.failed_events == 0
    assert out.judged_now == 40  # pairs with the same query and document texts are judged once
    p5 = out.metrics["precision@5"]
    # events with even i have 3 relevant of 5 (j = 0, 2, 4), odd i 2 of 5: mean 0.5
    assert p5["mean"] == pytest.approx(0.5) and p5["lower"] < 0.5 < p5["upper"] and p5["n"] == 20
    again = judge_events(evs, _settings(llm.url), metrics=["precision@5"], cache=cache)
    assert again.from_cache == 40 and again.judged_now == 0 and again.calls == 0


def test_the_daily_budget_stops_judging_and_says_how_much_was_left(llm: FakeLLM) -> None:
    spent = Spent()
    budget = JudgeBudget(calls=9)  # two distinct texts (two calls) per event
    out = judge_events(_events(10), _settings(llm.url), metrics=["precision@5"], budget=budget, spent=spent)
    assert out.scored == 4 and out.not_judged_budget == 6 and spent.calls == 8
    more = judge_events(_events(10)[4:], _settings(llm.url), metrics=["precision@5"], budget=budget, spent=spent)
    assert more.scored == 0 and more.not_judged_budget == 6


def test_documents_without_text_are_counted_and_their_event_left_out(llm: FakeLLM) -> None:
    ev = parse_event({"query": "q", "results": [{"id": "a", "text": "grade=3"}, {"id": "b"}]})
    out = judge_events([ev, *_events(3)], _settings(llm.url), metrics=["precision@5"])
    assert out.missing_text == 1 and out.failed_events == 1 and out.scored == 3


def test_version_difference_interval() -> None:
    assert version_difference({"mean": None}, {"mean": 0.1}) is None
