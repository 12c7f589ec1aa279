"""Silent wrong answers of live retriever evaluation (issue 11, points 1 and 3-10): each is counted,
kept in the result and shown in its repr, to_dict() and warnings."""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import pytest

import rankscope
from rankscope.data.testset import Query, TestSet
from rankscope.errors import InvalidParameterError, RankscopeError
from rankscope.retrieval import Hit
from rankscope.retrieval.evaluation import RetrieverWarning


def _ts(n: int = 8, answers: int = 0) -> TestSet:
    queries = [Query(f"q{i}", f"question {i}", answers=(f"ans{i}",) if i < answers else ()) for i in range(n)]
    return TestSet(queries, {f"q{i}": {f"d{i}": 1} for i in range(n)}, name="t")


def _evaluate(retriever, ts, metrics=("mrr",), **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev = rankscope.evaluate_retriever(retriever, ts, list(metrics), progress=False, **kw)
    return ev, [str(w.message) for w in caught if issubclass(w.category, RetrieverWarning)]


def _shown_everywhere(ev, needle: str) -> None:
    assert any(needle in str(w) for w in ev.warnings), ev.warnings
    assert needle in repr(ev)
    assert any(needle in w["message"] for w in ev.to_dict()["warnings"])
    json.dumps(ev.to_dict())


# -- 1. the relevance source never switches silently ------------------------------------------
def test_answer_matching_instead_of_judgments_is_said_with_the_queries_scored() -> None:
    queries = [Query(f"q{i}", f"question {i}", answers=("paris",) if i < 5 else ()) for i in range(15)]
    ts = TestSet(queries, None, name="no-judgments")
    ev, warned = _evaluate(lambda q, k: [Hit("d1", 1.0, text="Paris is nice")], ts, ["recall@10"], k=10)
    assert ev.relevance == "answers"
    _shown_everywhere(ev, "answer matching")
    _shown_everywhere(ev, "5 of 15 queries")
    assert any("answer matching" in w for w in warned)


def test_unknown_test_set_keys_reach_the_evaluation(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps([{"question": "a", "relevant_ids": ["d1"], "gold": 1}]))
    with pytest.warns(UserWarning):
        ts = TestSet.from_file(path)
    ev, _ = _evaluate(lambda q, k: ["d1"], ts, k=1)
    _shown_everywhere(ev, "unknown key 'gold'")


# -- 3. a cache from another retriever / test set ----------------------------------------------
def test_cache_of_another_retriever_or_test_set_is_refused(tmp_path: Path) -> None:
    cache = tmp_path / "c.jsonl"
    ts = _ts()

    def first(q, k):
        return ["d1"]

    def second(q, k):
        return ["d2"]

    rankscope.evaluate_retriever(first, ts, ["mrr"], k=5, cache=cache, progress=False)
    header = json.loads(cache.read_text().splitlines()[0])
    assert header["retriever"] == "first" and "first" in header["identity"] and header["testset_fingerprint"]
    with pytest.raises(InvalidParameterError, match=r"another evaluation.*retriever.*overwrite_cache"):
        rankscope.evaluate_retriever(second, ts, ["mrr"], k=5, cache=cache, progress=False)
    other = TestSet([Query("q0", "a different question")], {"q0": {"d0": 1}})
    with pytest.raises(InvalidParameterError, match=r"test set"):
        rankscope.evaluate_retriever(first, other, ["mrr"], k=5, cache=cache, progress=False)
    # explicit overwrite starts afresh; the same evaluation afterwards resumes from it
    ev = rankscope.evaluate_retriever(second, ts, ["mrr"], k=5, cache=cache, progress=False, overwrite_cache=True)
    assert ev.from_cache == 0 and json.loads(cache.read_text().splitlines()[0])["retriever"] == "second"
    again = rankscope.evaluate_retriever(second, ts, ["mrr"], k=5, cache=cache, progress=False)
    assert (again.from_cache, again.cache_checked) == (len(ts) - 3, 3)  # 3 asked again to check the cache


def test_cache_written_without_fingerprint_is_refused(tmp_path: Path) -> None:
    cache = tmp_path / "old.jsonl"
    cache.write_text(json.dumps({"rankscope_cache": 1, "k": 5, "retriever": "f", "testset": "t"}) + "\n")
    with pytest.raises(InvalidParameterError, match="overwrite_cache"):
        rankscope.evaluate_retriever(lambda q, k: ["d1"], _ts(), ["mrr"], k=5, cache=cache, progress=False)


# -- 4. empty or None rankings ----------------------------------------------------------------
def test_retriever_that_forgot_return_is_an_error_naming_it_and_the_query() -> None:
    class Forgetful:
        def search(self, query, k):
            [Hit("d1", 1.0)]

    calls = []

    def forgetful_fn(query, k):
        calls.append(query)

    for r, name in ((Forgetful(), "Forgetful"), (forgetful_fn, "forgetful_fn")):
        with pytest.raises(RankscopeError, match=rf"{name}.*returned None.*query 'q0'"):
            rankscope.evaluate_retriever(r, _ts(), ["mrr"], progress=False, workers=1, retries=3)
    assert len(calls) == 1  # not retried, not continued


def test_mostly_empty_rankings_are_warned() -> None:
    ev, warned = _evaluate(lambda q, k: [] if q != "question 0" else ["d0"], _ts(), k=5)
    assert ev.empty == 7
    _shown_everywhere(ev, "7 of 8 queries (88%) returned no hit")
    assert warned


# -- 5. failures below 100 % ------------------------------------------------------------------
def test_any_failure_is_warned_and_kept_as_a_table_with_traceback() -> None:
    def flaky(query, k):
        if query.endswith(("0", "1")):
            raise TimeoutError(f"timed out on {query}")
        return ["d1"]

    ev, warned = _evaluate(flaky, _ts(), k=5, retries=1)
    _shown_everywhere(ev, "2 of 8 queries (25%) failed")
    assert "TimeoutError: timed out on question 0" in repr(ev) or "TimeoutError" in repr(ev)
    table = ev.failures_table()
    assert table.num_rows == 2 and set(table.column("error_type").to_pylist()) == {"TimeoutError"}
    assert all("raise TimeoutError" in tb for tb in table.column("traceback").to_pylist())
    assert table.column("attempts").to_pylist() == [2, 2]
    assert ev.to_dict()["failures"][0]["error_type"] == "TimeoutError"
    assert warned


@pytest.mark.parametrize("exc", [NameError, TypeError, AttributeError])
@pytest.mark.parametrize("workers", [1, 3])
def test_programming_errors_are_raised_at_once_not_retried(exc: type[Exception], workers: int) -> None:
    calls = []

    def buggy(query, k):
        calls.append(query)
        raise exc("a bug in the retriever")

    with pytest.raises(exc, match="a bug in the retriever"):
        rankscope.evaluate_retriever(buggy, _ts(40), ["mrr"], progress=False, workers=workers, retries=5)
    assert len(calls) < 40 and calls.count("question 0") <= 1


def test_programming_error_in_a_batch_is_raised_at_once() -> None:
    class Batch:
        def search_batch(self, queries, k):
            return undefined_name  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(NameError):
        rankscope.evaluate_retriever(Batch(), _ts(), ["mrr"], progress=False)


# -- 6. chunk level without texts -------------------------------------------------------------
def test_answer_matching_without_texts_is_not_judged_never_zero() -> None:
    ts = TestSet([Query(f"q{i}", f"question {i}", answers=("paris",)) for i in range(4)], None)
    ev, _ = _evaluate(lambda q, k: ["c1", "c2"], ts, ["mrr"], k=2)  # ids only: no text to match
    assert ev.mean()["retrieved"] == {"mrr": None} and ev.coverage["retrieved"] == 0
    _shown_everywhere(ev, "not judged")
    assert "mrr=0.0000" not in repr(ev)


def test_chunk_level_coverage_is_counted_per_query() -> None:
    ts = TestSet([Query(f"q{i}", f"question {i}", answers=("paris",)) for i in range(4)], None)

    def half(query, k):
        text = "paris" if query.endswith(("0", "1")) else None
        return [Hit("c1", 1.0, text=text)]

    ev, _ = _evaluate(half, ts, ["mrr"], k=1)
    assert ev.coverage["retrieved"] == 2 and ev.mean()["retrieved"]["mrr"] == 1.0
    _shown_everywhere(ev, "2 of 4 queries")


def test_folded_chunks_with_document_judgments_only_report_chunk_level_not_judged() -> None:
    ts = _ts(4)
    ev, _ = _evaluate(lambda q, k: [f"d{q[-1]}#0"], ts, ["mrr"], k=1, chunk_to_doc="{doc_id}#{chunk}")
    assert ev.mean() == {"retrieved": {"mrr": None}, "document": {"mrr": 1.0}}
    assert ev.coverage == {"retrieved": 0, "document": 4}


# -- 7. fewer hits than k; duplicates ---------------------------------------------------------
def test_fewer_hits_than_k_for_most_queries_is_warned() -> None:
    ev, warned = _evaluate(lambda q, k: ["d1", "d2"], _ts(), ["recall@10"], k=10)
    _shown_everywhere(ev, "fewer than k=10 hits")
    assert warned


def test_dropped_duplicate_ids_are_counted_per_query() -> None:
    ev, _ = _evaluate(lambda q, k: ["d1", "d1", "d2", "d1"], _ts(3), k=2)
    assert ev.duplicates == {"q0": 1, "q1": 1, "q2": 1}  # the first 2 distinct ids: one repeat on the way
    _shown_everywhere(ev, "duplicate")


def test_langchain_retriever_is_evaluated_as_configured() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=8))
    store.add_documents([Document(page_content=f"text {i}", id=f"d{i}") for i in range(10)])
    retriever = store.as_retriever(search_kwargs={"k": 3})
    ev, _ = _evaluate(retriever, _ts(4), ["recall@10"], k=10)
    assert {len(v) for v in ev.run.to_dict().values()} == {3}  # its own k=3 is kept, never overridden
    _shown_everywhere(ev, "fewer than k=10 hits")


# -- 8. async retrievers ----------------------------------------------------------------------
def test_async_retriever_with_semaphore_and_shared_httpx_client(tmp_path: Path) -> None:
    import asyncio
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    httpx = pytest.importorskip("httpx")
    active = {"now": 0, "max": 0}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with lock:
                active["now"] += 1
                active["max"] = max(active["max"], active["now"])
            time.sleep(0.05)
            with lock:
                active["now"] -= 1
            qid = self.path.rsplit("/", 1)[-1]
            body = json.dumps([{"id": f"d{qid}", "score": 1.0}]).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        class AsyncHTTP:
            def __init__(self) -> None:
                self.client = httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.server_port}")
                self.gate = asyncio.Semaphore(3)

            async def search(self, query, k):
                async with self.gate:
                    resp = await self.client.get(f"/search/{query.split()[-1]}")
                    return resp.json()

        r = AsyncHTTP()
        ev = rankscope.evaluate_retriever(r, _ts(12), ["mrr"], k=1, workers=4, progress=False)
        assert ev.errors == {} and ev.mean()["document"]["mrr"] == 1.0
        assert 1 < active["max"] <= 3  # overlapped, and within the retriever's own limit
        active["max"] = 0
        rankscope.evaluate_retriever(r, _ts(12), ["mrr"], k=1, workers=2, progress=False)
        assert active["max"] <= 2  # the runner's concurrency limit
    finally:
        server.shutdown()
        server.server_close()


def test_async_retriever_inside_a_running_event_loop() -> None:
    import asyncio

    async def search(query, k):
        await asyncio.sleep(0)
        return [f"d{query.split()[-1]}"]

    async def main():
        return rankscope.evaluate_retriever(search, _ts(), ["mrr"], k=1, progress=False)

    assert asyncio.run(main()).mean()["document"]["mrr"] == 1.0


# -- 9. latency -------------------------------------------------------------------------------
def test_batched_latency_is_a_labelled_batch_average_without_p95() -> None:
    class Batched:
        def search_batch(self, queries, k):
            time.sleep(0.01)
            return [["d1"] for _ in queries]

    ev, _ = _evaluate(Batched(), _ts(), k=1)
    assert ev.latency_kind == "batch average" and set(ev.latency_summary()) == {"mean"}
    assert "batch average" in repr(ev) and "p95" not in repr(ev)
    assert ev.to_dict()["latency_seconds"]["kind"] == "batch average"
    with pytest.raises(InvalidParameterError, match="batch average"):
        ev.latency_percentile(95)
    single = rankscope.evaluate_retriever(Batched(), _ts(), ["mrr"], k=1, batch_size=1, progress=False)
    assert single.latency_kind == "per query" and "p95" in single.latency_summary()


def test_per_query_latency_is_measured_per_query() -> None:
    def slow_on_one(query, k):
        time.sleep(0.05 if query.endswith("0") else 0.0)
        return ["d1"]

    ev, _ = _evaluate(slow_on_one, _ts(), k=1, workers=1)
    assert ev.latency_kind == "per query"
    assert ev.latencies["q0"] >= 0.05 and ev.latencies["q1"] < 0.05


# -- 10. stable result shape; real scores kept when some tie -----------------------------------
def test_mean_has_one_shape_with_and_without_folding() -> None:
    plain, _ = _evaluate(lambda q, k: ["d1"], _ts(3), ["mrr", "recall@1"], k=1)
    folded, _ = _evaluate(lambda q, k: ["d1#0"], _ts(3), ["mrr", "recall@1"], k=1, chunk_to_doc="{doc_id}#{chunk}")
    assert set(plain.mean()) == set(folded.mean()) == {"retrieved", "document"}
    assert set(plain.mean()["retrieved"]) == set(folded.mean()["retrieved"]) == {"mrr", "recall@1"}
    assert set(plain.to_dict()["levels"]) == set(folded.to_dict()["levels"]) == {"retrieved", "document"}


def test_written_run_keeps_the_real_scores_when_some_tie(tmp_path: Path) -> None:
    from rankscope.io import write_trec_run

    def tied(query, k):
        return [("d0", 0.9), ("d3", 0.7), ("d5", 0.7), ("d1", 0.2)]

    ev, _ = _evaluate(tied, _ts(2), ["mrr"], k=4)
    path = tmp_path / "run.trec"
    write_trec_run(ev.run, path)
    scores = sorted({float(line.split()[4]) for line in path.read_text().splitlines()}, reverse=True)
    assert scores == [0.9, 0.7, 0.2]
    # what is scored is exactly what trec_eval scores on the written file
    direct = rankscope.evaluate(_ts(2).qrels, rankscope.read_run(path), ["mrr"])
    assert ev.result.mean() == direct.mean()
    _shown_everywhere(ev, "tie")  # d3 listed before d5: trec_eval ranks d5 first


def test_increasing_scores_are_replaced_by_list_order_and_said() -> None:
    ev, _ = _evaluate(lambda q, k: [("d0", 0.1), ("d1", 0.5)], _ts(2), ["mrr"], k=2)
    assert ev.run.to_dict()["q0"] == {"d0": 2.0, "d1": 1.0}
    _shown_everywhere(ev, "do not decrease")


# -- the runner used from a job: per-query callback and resume from stored outcomes ------------
def test_per_query_callback_and_resume_from_stored_outcomes() -> None:
    seen = []
    ev = rankscope.evaluate_retriever(lambda q, k: [f"d{q[-1]}"], _ts(), ["mrr"], k=1, progress=False,
                                      on_result=seen.append)
    assert sorted(o.query_id for o in seen) == [f"q{i}" for i in range(8)]
    calls = []

    def counting(q, k):
        calls.append(q)
        return [f"d{q[-1]}"]

    again = rankscope.evaluate_retriever(counting, _ts(), ["mrr"], k=1, progress=False, resume=seen[:5])
    assert len(calls) == 3 and again.from_cache == 5 and again.mean() == ev.mean()


def test_baselines_fingerprint_their_settings_and_corpus(tmp_path: Path) -> None:
    pytest.importorskip("bm25s")
    from rankscope.retrieval.bm25 import BM25Retriever
    from rankscope.retrieval.hybrid import HybridRetriever

    corpus = {f"d{i}": f"question {i} text" for i in range(8)}
    a, same = BM25Retriever(corpus), BM25Retriever(dict(corpus))
    other = BM25Retriever({**corpus, "d9": "another"})
    tuned = BM25Retriever(corpus, k1=0.9)
    assert a.fingerprint() == same.fingerprint()
    assert len({a.fingerprint(), other.fingerprint(), tuned.fingerprint()}) == 3
    assert HybridRetriever([a, other]).fingerprint() != HybridRetriever([a, tuned]).fingerprint()
    cache = tmp_path / "c.jsonl"
    rankscope.evaluate_retriever(a, _ts(), ["mrr"], k=3, cache=cache, progress=False)
    with pytest.raises(InvalidParameterError, match="retriever"):
        rankscope.evaluate_retriever(other, _ts(), ["mrr"], k=3, cache=cache, progress=False)


def test_plain_function_returning_awaitables_shares_one_loop() -> None:
    import asyncio

    gate = asyncio.Semaphore(2)  # bound to the first loop that uses it

    async def fetch(query):
        async with gate:
            await asyncio.sleep(0.001)
            return [f"d{query.split()[-1]}"]

    ev = rankscope.evaluate_retriever(lambda q, k: fetch(q), _ts(), ["mrr"], k=1, workers=4, progress=False)
    assert ev.errors == {} and ev.mean()["document"]["mrr"] == 1.0


def test_programming_error_of_an_async_retriever_is_raised_at_once() -> None:
    calls = []

    async def buggy(query, k):
        calls.append(query)
        return undefined_name  # type: ignore[name-defined]  # noqa: F821

    with pytest.raises(NameError):
        rankscope.evaluate_retriever(buggy, _ts(40), ["mrr"], progress=False, workers=2, retries=5)
    assert len(calls) < 40
