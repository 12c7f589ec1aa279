"""Which thread calls a retriever: the calling one while the retriever computes its answers, the workers as soon as
it waits (a network, a disk)."""

from __future__ import annotations

import threading
import time

from rankscope.data.testset import TestSet
from rankscope.retrieval import evaluate_retriever


def _testset(n: int) -> TestSet:
    return TestSet.from_annotations([f"question {i}" for i in range(n)], [[f"d{i}"] for i in range(n)])


def test_a_retriever_that_answers_at_once_runs_on_the_calling_thread() -> None:
    seen: set[str] = set()

    def search(query: str, k: int) -> list[tuple[str, float]]:
        seen.add(threading.current_thread().name)
        return [("d1", 1.0)]

    evaluate_retriever(search, _testset(50), ["mrr"], workers=4, progress=False)
    assert seen == {threading.current_thread().name}


def test_a_retriever_that_waits_runs_on_the_workers_in_parallel() -> None:
    lock = threading.Lock()
    active = {"now": 0, "max": 0}
    names: set[str] = set()

    def search(query: str, k: int) -> list[tuple[str, float]]:
        with lock:
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
            names.add(threading.current_thread().name)
        time.sleep(0.03)
        with lock:
            active["now"] -= 1
        return [("d1", 1.0)]

    ev = evaluate_retriever(search, _testset(12), ["mrr"], workers=4, progress=False)
    assert ev.result.queries.evaluated == 12
    assert active["max"] > 1  # the workers took the queries after the first one waited
    assert any(n.startswith("rankscope-retriever-") for n in names)
