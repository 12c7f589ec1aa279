"""evaluate_retriever: retries, recorded failures, threads vs batches, interruption + resume, unknown ids."""

from __future__ import annotations

import json
import threading
import warnings
from pathlib import Path

import pytest

from rankscope import Run, evaluate
from rankscope.data.testset import Query, TestSet
from rankscope.errors import EmptyInputError, InvalidParameterError, ParseError
from rankscope.retrieval import Hit, UnknownIdsWarning, evaluate_retriever
from rankscope.retrieval.cache import check_sample

# 6 queries, one relevant doc each; the fake retriever ranks the relevant doc at a known rank
RANK_OF_RELEVANT = {"q1": 1, "q2": 2, "q3": 3, "q4": 1, "q5": None, "q6": 4}


def _testset() -> TestSet:
    queries = [Query(q, f"text of {q}") for q in RANK_OF_RELEVANT]
    qrels = {q: {f"rel-{q}": 1} for q in RANK_OF_RELEVANT}
    return TestSet(queries, qrels, name="toy")


class FakeRetriever:
    """Deterministic ranking; fails on chosen queries (always, or the first `transient` calls)."""

    name = "fake"

    def __init__(self, fail_always: set[str] = frozenset(), transient: dict[str, int] | None = None,
                 interrupt_after: int | None = None) -> None:
        self.fail_always = set(fail_always)
        self.transient = dict(transient or {})
        self.interrupt_after = interrupt_after
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()

    def search(self, query: str, k: int) -> list[Hit]:
        qid = query.split()[-1]
        with self.lock:
            self.calls[qid] = self.calls.get(qid, 0) + 1
            n_calls = sum(self.calls.values())
        if self.interrupt_after is not None and n_calls > self.interrupt_after:
            raise KeyboardInterrupt  # not an Exception: must stop the evaluation
        if qid in self.fail_always:
            raise ConnectionError(f"backend down for {qid}")
        if self.transient.get(qid, 0) > 0:
            self.transient[qid] -= 1
            raise TimeoutError("slow backend")
        rank = RANK_OF_RELEVANT[qid]
        ids = [f"junk-{qid}-{i}" for i in range(1, 6)]
        if rank is not None:
            ids[rank - 1] = f"rel-{qid}"
        return [Hit(d, 1.0 / (i + 1)) for i, d in enumerate(ids)][:k]


# hand-computed: reciprocal ranks 1, 1/2, 1/3, 1, 0, 1/4 -> MRR = (1+.5+.3333+1+0+.25)/6
MRR_ALL = (1 + 0.5 + 1 / 3 + 1 + 0 + 0.25) / 6


def test_scores_match_hand_computed_values() -> None:
    ev = evaluate_retriever(FakeRetriever(), _testset(), ["mrr", "recall@2", "P@1"], k=5, progress=False)
    assert ev.result.mean()["mrr"] == pytest.approx(MRR_ALL)
    assert ev.result.mean()["recall@2"] == pytest.approx(3 / 6)  # q1, q2, q4
    assert ev.result.mean()["P@1"] == pytest.approx(2 / 6)
    assert ev.errors == {}
    assert set(ev.latencies) == set(RANK_OF_RELEVANT)
    assert all(t >= 0 for t in ev.latencies.values())
    assert len(ev.run) == 30 and ev.run.name == "fake"


def test_failing_query_is_retried_recorded_and_scored_as_empty() -> None:
    fake = FakeRetriever(fail_always={"q2"}, transient={"q3": 1})
    ev = evaluate_retriever(fake, _testset(), ["mrr"], k=5, retries=2, progress=False, workers=3)
    assert fake.calls["q2"] == 3  # 1 + 2 retries
    assert fake.calls["q3"] == 2  # recovered on the first retry
    assert list(ev.errors) == ["q2"] and "ConnectionError: backend down for q2" in ev.errors["q2"]
    assert ev.retries == {"q2": 2, "q3": 1}
    assert "q2" not in ev.run.queries and "q2" not in ev.latencies
    # q2 scores 0 (empty ranking) but is still counted: the other five keep their values
    per_query = ev.result.per_query.to_dict()
    assert per_query["q2"]["mrr"] == 0.0
    assert per_query["q3"]["mrr"] == pytest.approx(1 / 3)
    assert ev.result.mean()["mrr"] == pytest.approx((1 + 1 / 3 + 1 + 0 + 0.25) / 6)
    assert ev.to_dict()["errors"] == {"q2": ev.errors["q2"]}


def test_no_retry_when_retries_is_zero() -> None:
    fake = FakeRetriever(transient={"q1": 1})
    ev = evaluate_retriever(fake, _testset(), ["mrr"], retries=0, progress=False)
    assert fake.calls["q1"] == 1 and "q1" in ev.errors


def test_threads_and_sequential_give_identical_runs() -> None:
    a = evaluate_retriever(FakeRetriever(), _testset(), ["ndcg@5"], workers=1, progress=False)
    b = evaluate_retriever(FakeRetriever(), _testset(), ["ndcg@5"], workers=8, progress=False)
    assert a.run.to_dict() == b.run.to_dict()
    assert a.result.per_query.to_dict() == b.result.per_query.to_dict()


class BatchFake:
    """A CPU-bound style retriever with search_batch; one query text makes a batch fail."""

    def __init__(self) -> None:
        self.batch_sizes: list[int] = []
        self.single_calls = 0

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        self.single_calls += 1
        if query.endswith("q5"):
            raise ValueError("cannot embed this")
        return FakeRetriever().search(query, k)  # type: ignore[return-value]

    def search_batch(self, queries: list[str], k: int) -> list[list[Hit]]:
        self.batch_sizes.append(len(queries))
        if any(q.endswith("q5") for q in queries):
            raise ValueError("batch contains a bad query")
        return [FakeRetriever().search(q, k) for q in queries]


def test_batch_retriever_uses_search_batch_and_isolates_a_failing_query() -> None:
    fake = BatchFake()
    ev = evaluate_retriever(fake, _testset(), ["mrr"], batch_size=4, retries=1, progress=False)
    assert fake.batch_sizes == [4, 2]  # q1-q4 then q5-q6
    assert fake.single_calls == 2 + 1  # q5 twice (1 retry), q6 once: only the failing batch is re-run
    assert list(ev.errors) == ["q5"]
    ok = FakeRetriever()
    expected = evaluate_retriever(ok, _testset(), ["mrr"], progress=False).result.per_query.to_dict()
    assert ev.result.per_query.to_dict() == expected  # q5 had no relevant retrieved anyway


def test_plain_callables_returning_ids_or_pairs() -> None:
    ts = TestSet.from_annotations(["a", "b"], [["d1"], ["d2"]])
    ids_only = evaluate_retriever(lambda q: ["d1", "d2"], ts, ["mrr"], progress=False)
    assert ids_only.result.mean()["mrr"] == pytest.approx((1 + 0.5) / 2)
    # distances (ascending): the list order is the ranking, not the raw score
    dist = evaluate_retriever(lambda q, k: [("d2", 0.1), ("d1", 0.7)], ts, ["mrr"], progress=False)
    assert dist.result.per_query.to_dict() == {"q1": {"mrr": 0.5}, "q2": {"mrr": 1.0}}


def test_agrees_with_the_engine_on_the_same_run() -> None:
    ts = _testset()
    ev = evaluate_retriever(FakeRetriever(), ts, ["ndcg@3", "map", "recall@5"], progress=False)
    direct = evaluate(ts.qrels, ev.run, ["ndcg@3", "map", "recall@5"])
    assert ev.result.mean() == direct.mean()


def _cache_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_interrupted_evaluation_resumes_where_it_stopped(tmp_path: Path) -> None:
    cache = tmp_path / "cache.jsonl"
    first = FakeRetriever(interrupt_after=3)
    with pytest.raises(KeyboardInterrupt):
        evaluate_retriever(first, _testset(), ["mrr"], workers=1, cache=cache, progress=False)
    lines = _cache_lines(cache)
    assert lines[0]["rankscope_cache"] == 2 and lines[0]["k"] == 10
    assert [r["query_id"] for r in lines[1:]] == ["q1", "q2", "q3"]

    second = FakeRetriever()
    ev = evaluate_retriever(second, _testset(), ["mrr"], workers=1, cache=cache, progress=False, cache_check=0)
    assert sorted(second.calls) == ["q4", "q5", "q6"]  # nothing done twice
    assert ev.from_cache == 3 and ev.cache_checked == 0
    assert ev.result.mean()["mrr"] == pytest.approx(MRR_ALL)
    full = evaluate_retriever(FakeRetriever(), _testset(), ["mrr"], progress=False)
    assert ev.run.to_dict() == full.run.to_dict()

    third = FakeRetriever()  # everything cached now: only the seeded sample of 3 is asked again, to check the cache
    again = evaluate_retriever(third, _testset(), ["mrr"], cache=cache, progress=False)
    assert sorted(third.calls) == check_sample(RANK_OF_RELEVANT, 3) and again.result.mean() == ev.result.mean()
    assert (again.from_cache, again.cache_checked) == (3, 3)
    assert evaluate_retriever(FakeRetriever(), _testset(), ["mrr"], cache=cache, progress=False,
                              cache_check=0).from_cache == 6


def test_resume_reruns_failed_queries_and_drops_a_truncated_line(tmp_path: Path) -> None:
    cache = tmp_path / "c.jsonl"
    evaluate_retriever(FakeRetriever(fail_always={"q6"}), _testset(), ["mrr"], retries=0, cache=cache,
                       progress=False)
    with open(cache, "a", encoding="utf-8") as fh:
        fh.write('{"query_id": "q9", "ids": ["x"')  # killed in the middle of a write
    fixed = FakeRetriever()
    ev = evaluate_retriever(fixed, _testset(), ["mrr"], cache=cache, progress=False)
    assert sorted(fixed.calls) == [*check_sample(["q1", "q2", "q3", "q4", "q5"], 3), "q6"]  # 3 checked, q6 again
    assert ev.errors == {} and ev.result.mean()["mrr"] == pytest.approx(MRR_ALL)
    assert all(line.strip().endswith("}") for line in cache.read_text().splitlines())


def test_cache_with_another_k_or_garbage_is_refused(tmp_path: Path) -> None:
    cache = tmp_path / "c.jsonl"
    evaluate_retriever(FakeRetriever(), _testset(), ["mrr"], k=5, cache=cache, progress=False)
    with pytest.raises(InvalidParameterError, match="k 5 there, 10 now"):
        evaluate_retriever(FakeRetriever(), _testset(), ["mrr"], k=10, cache=cache, progress=False)
    bad = tmp_path / "bad.jsonl"
    header = cache.read_text().splitlines()[0]  # this evaluation's fingerprint, then a broken line
    bad.write_text(header + '\nnot json\n{"query_id": "q1", "ids": [], "scores": []}\n')
    with pytest.raises(ParseError, match=r"bad.jsonl:2"):
        evaluate_retriever(FakeRetriever(), _testset(), ["mrr"], k=5, cache=bad, progress=False)


def test_unknown_ids_are_counted_and_warned_about() -> None:
    corpus = {f"rel-{q}": "text" for q in RANK_OF_RELEVANT}
    ts = TestSet(_testset().queries, _testset().qrels, corpus=corpus)
    with pytest.warns(UnknownIdsWarning, match="are chunk ids mapped to document ids"):
        ev = evaluate_retriever(FakeRetriever(), ts, ["mrr"], k=5, progress=False)
    # 30 retrieved rows, 5 relevant ones are in the corpus, 25 junk ids are not
    assert (ev.unknown_ids.retrieved, ev.unknown_ids.unknown) == (30, 25)
    assert ev.unknown_ids.against == "corpus"
    assert ev.unknown_ids.message().startswith("83% of retrieved ids (25 of 30) are unknown (not in the corpus)")


def test_no_warning_when_ids_match() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = evaluate_retriever(FakeRetriever(), _testset(), ["mrr"], k=5, progress=False)
    assert ev.unknown_ids.against == "qrels" and not ev.unknown_ids.suspicious and ev.warnings == []


def test_latency_percentiles_and_summary() -> None:
    ev = evaluate_retriever(FakeRetriever(), _testset(), ["mrr"], progress=False)
    ev.latencies = {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}
    assert ev.latency_percentile(50) == pytest.approx(0.25)
    assert ev.latency_summary()["max"] == pytest.approx(0.4)
    with pytest.raises(InvalidParameterError):
        ev.latency_percentile(101)


def test_bad_parameters_raise_clear_errors() -> None:
    ts = _testset()
    for kwargs in ({"k": 0}, {"workers": 0}, {"retries": -1}, {"relevance": "maybe"}):
        with pytest.raises(InvalidParameterError):
            evaluate_retriever(FakeRetriever(), ts, ["mrr"], progress=False, **kwargs)  # type: ignore[arg-type]
    with pytest.raises(EmptyInputError, match="no relevance judgments"):
        evaluate_retriever(FakeRetriever(), TestSet([Query("a", "x")]), progress=False)
    with pytest.raises(InvalidParameterError, match="cannot use a int as a retriever"):
        evaluate_retriever(42, ts, progress=False)


def test_only_judged_queries_are_run_and_progress_bar_runs() -> None:
    ts = TestSet([*_testset().queries, Query("q7", "unjudged q7")], _testset().qrels)
    fake = FakeRetriever()
    ev = evaluate_retriever(fake, ts, ["mrr"], progress=True)
    assert "q7" not in fake.calls and ev.result.queries.evaluated == 6
    assert isinstance(ev.run, Run) and ev.result.per_query.values.shape == (6, 1)


def test_every_query_failing_warns_with_the_first_error() -> None:
    fake = FakeRetriever(fail_always=set(RANK_OF_RELEVANT))
    with pytest.warns(UserWarning, match=r"6 of 6 queries \(100%\) failed .*first: q\d: ConnectionError"):
        ev = evaluate_retriever(fake, _testset(), ["mrr"], retries=0, progress=False)
    assert len(ev.errors) == 6 and ev.result.mean() == {"mrr": 0.0} and len(ev.run) == 0


def test_search_without_k_and_dict_hits_like_seed_001() -> None:
    class SeedStyle:  # seed 001's mock: search(query, k=5) returning [{"id", "score"}]
        def search(self, query, k=5):  # type: ignore[no-untyped-def]
            return [{"id": "doc_0", "score": 0.9}, {"id": "doc_1", "score": 0.8}, {"id": "doc_5", "score": 0.7}][:k]

    class NoK:
        def search(self, query):  # type: ignore[no-untyped-def]
            return ["doc_1", "doc_0", "doc_9"]

    ts = TestSet.from_annotations(["Python编程语言"], [{"doc_0": 3, "doc_1": 2, "doc_5": 1}])
    seed = evaluate_retriever(SeedStyle(), ts, ["ndcg@3", "P@2"], k=3, progress=False)
    assert seed.result.mean() == {"ndcg@3": pytest.approx(1.0), "P@2": 1.0}
    nok = evaluate_retriever(NoK(), ts, ["P@2", "recall@2"], k=2, progress=False)
    assert nok.result.mean() == {"P@2": 1.0, "recall@2": pytest.approx(2 / 3)}
    assert len(nok.run) == 2  # cut at k


def test_metrics_are_checked_before_any_call() -> None:
    from rankscope.errors import UnknownMetricError

    fake = FakeRetriever()
    with pytest.raises(UnknownMetricError):
        evaluate_retriever(fake, _testset(), ["ndcg@10", "mrrr"], progress=False)
    assert fake.calls == {}
    with pytest.warns(UserWarning, match=r"recall@100: cutoff above k=5"):
        ev = evaluate_retriever(fake, _testset(), ["recall@100", "mrr"], k=5, progress=False)
    assert list(ev.result.mean()) == ["recall@100", "mrr"]


def test_async_retrievers_are_awaited() -> None:
    import asyncio

    class AsyncRetriever:
        async def search(self, query: str, k: int) -> list[Hit]:
            await asyncio.sleep(0)
            return FakeRetriever().search(query, k)

    async def fn(query: str, k: int) -> list[str]:
        return [h.id for h in FakeRetriever().search(query, k)]

    for retriever in (AsyncRetriever(), fn):
        ev = evaluate_retriever(retriever, _testset(), ["mrr"], workers=3, progress=False)
        assert ev.errors == {} and ev.result.mean()["mrr"] == pytest.approx(MRR_ALL)

    async def inside_a_running_loop() -> float:  # e.g. a Jupyter cell
        ev = evaluate_retriever(AsyncRetriever(), _testset(), ["mrr"], workers=1, progress=False)
        return ev.result.mean()["mrr"]

    assert asyncio.run(inside_a_running_loop()) == pytest.approx(MRR_ALL)
