"""`rankscope judge` does not look like success when it fails (--max-failures), stops at a cost (--max-cost), and
`--prompt umbrela` sends the published UMBRELA prompt and request exactly."""

from __future__ import annotations

import json
from pathlib import Path

from clirun import cli, outcome
from prose import whole_lines
from rankscope.labels.judge import JudgeSettings, judge_one
from rankscope.labels.prompts import get_prompt
from rankscope.llm_client import Endpoint

from .fake_llm import FakeLLM

#: castorini/umbrela, src/umbrela/prompts/qrel_zeroshot_bing.txt at commit 16cba3ebdfb79477850196695e06eef5ce96f339,
#: verbatim (UMBRELA strips the file and fills it with str.format)
UMBRELA = """Given a query and a passage, you must provide a score on an integer scale of 0 to 3 with the following meanings:
0 = represent that the passage has nothing to do with the query, 
1 = represents that the passage seems related to the query but does not answer it, 
2 = represents that the passage has some answer for the query, but the answer may be a bit unclear, or hidden amongst extraneous information and 
3 = represents that the passage is dedicated to the query and contains the exact answer.

Important Instruction: Assign category 1 if the passage is somewhat related to the topic but not completely, category 2 if passage presents something very important related to the entire topic but also has some extra information and category 3 if the passage only and entirely refers to the topic. If none of the above satisfies give it category 0.

Query: {query}
Passage: {passage}

Split this problem into steps:
Consider the underlying intent of the search.
Measure how well the content matches a likely intent of the query (M).
Measure how trustworthy the passage is (T).
Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score must be an integer value only.
Do not provide any code in result. Provide each score in the format of: ##final score: score without providing any reasoning."""  # noqa: E501, W291


def files(tmp_path: Path, marker: str = "", n: int = 4) -> list[str]:
    pool, queries, corpus = tmp_path / "pool.jsonl", tmp_path / "q.jsonl", tmp_path / "c.jsonl"
    pool.write_text("".join(json.dumps({"query_id": "q1", "doc_id": f"d{i}"}) + "\n" for i in range(n)))
    queries.write_text('{"_id": "q1", "text": "what is bm25"}\n')
    corpus.write_text("".join(json.dumps({"_id": f"d{i}", "text": f"doc {i} {marker} grade=2"}) + "\n"
                              for i in range(n)))
    return ["judge", "--pool", str(pool), "--queries", str(queries), "--corpus", str(corpus), "--no-cache",
            "--retries", "0", "--model", "fake-judge", "--out", str(tmp_path / "out.qrels")]


def test_every_call_failing_exits_non_zero(tmp_path: Path) -> None:
    with FakeLLM() as llm:
        code, _, err = outcome(cli(*files(tmp_path, "[[500-always]]"), "--base-url", llm.url, width=80))
        assert code == 1 and "4 of 4 pairs have no grade, more than --max-failures 10% allows (0)" in whole_lines(err)
        code, _, err = outcome(cli(*files(tmp_path, "[[500-always]]"), "--base-url", llm.url, "--max-failures", "4",
                                       width=80))
        assert code == 0, err
        code, _, _ = outcome(cli(*files(tmp_path), "--base-url", llm.url, width=80))
        assert code == 0
        code, _, err = outcome(cli(*files(tmp_path), "--base-url", llm.url, "--max-failures", "lots", width=80))
        assert code == 2 and "--max-failures must be a count" in err


def test_max_cost_stops_sending(tmp_path: Path) -> None:
    with FakeLLM() as llm:
        args = [*files(tmp_path, n=12), "--base-url", llm.url, "--concurrency", "1", "--price-in", "1000",
                "--price-out", "1000", "--max-failures", "100%"]
        code, _, err = outcome(cli(*args, "--max-cost", "0.5", width=80))
        sent = llm.calls
        assert code == 1 and "reaching --max-cost 0.5" in err and 1 <= sent < 12
        code, _, err = outcome(cli(*args[:-6], "--max-cost", "1", width=80))
        assert code == 2 and "--max-cost needs --price-in and --price-out" in err


def test_umbrela_is_sent_exactly_as_published() -> None:
    p = get_prompt("umbrela")
    assert p.user == UMBRELA and p.system == "You are a helpful assistant."
    with FakeLLM() as llm:
        llm.responder = lambda messages: "M: 2\nT: 1\n##final score: 2"
        s = JudgeSettings(Endpoint(llm.url, retries=0), "gpt-4o", prompt_name="umbrela")
        j = judge_one("what is {passage}?", "BM25 {query} is a ranking function", s)
        assert j.grade == 2
        body = llm.requests[0]["body"]
    assert body["messages"] == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": UMBRELA.format(query="what is {passage}?",
                                                   passage="BM25 {query} is a ranking function")}]
    assert {k: body[k] for k in ("temperature", "max_tokens", "top_p", "frequency_penalty", "presence_penalty")} == {
        "temperature": 0.0, "max_tokens": 100, "top_p": 1, "frequency_penalty": 0.5, "presence_penalty": 0}


def test_the_judge_says_which_prompt_it_used(tmp_path: Path) -> None:
    with FakeLLM() as llm:
        llm.responder = lambda messages: "##final score: 1"
        code, out, _ = outcome(cli(*files(tmp_path), "--base-url", llm.url, "--prompt", "umbrela", width=80))
        out = whole_lines(out)
        assert code == 0 and "the published UMBRELA prompt and request" in out and "reproduced exactly" in out
        code, out, _ = outcome(cli(*files(tmp_path), "--base-url", llm.url, "--prompt", "umbrela", "--max-tokens", "5",
                                       width=80))
        assert "not an exact reproduction" in whole_lines(out)
        code, out, _ = outcome(cli(*files(tmp_path), "--base-url", llm.url, "--dry-run", width=80))
        assert "rankscope's own wording after UMBRELA, not UMBRELA's prompt" in whole_lines(out)
        code, _, err = outcome(cli(*files(tmp_path), "--base-url", llm.url, "--prompt", "umbrela", "--lang", "zh",
                                       width=80))
        assert code == 2 and "--prompt graded" in whole_lines(err)
