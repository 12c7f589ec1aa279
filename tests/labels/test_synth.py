"""Synthetic questions: stratified sampling, gold ids kept, the three filters, caching, `testset check`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from rankscope.cli.app import main
from rankscope.data.testset import TestSet
from rankscope.data.testset_audit import audit_testset
from rankscope.labels.judge import JudgeSettings
from rankscope.labels.synth import copy_ratio, is_copy, sample_order, synthesize
from rankscope.llm_client import Endpoint

from .fake_llm import FakeLLM


@pytest.fixture
def llm():
    with FakeLLM() as server:
        yield server


def gen(url: str, **kw) -> JudgeSettings:
    return JudgeSettings(Endpoint(url, timeout=5, retries=2, backoff=0.01), "fake-gen", **kw)


def corpus(docs: int = 6, chunks: int = 4) -> dict[str, str]:
    return {f"doc{d}#{c}": f"topic{d}x{c} alpha{d} beta{c} is described in section {c} of document {d}. grade=3"
            for d in range(docs) for c in range(chunks)}


def test_sampling_is_stratified_and_seeded() -> None:
    c = corpus(5, 4)
    order = sample_order(c, chunk_to_doc="{doc_id}#{chunk}", seed=1)
    assert sorted(order) == sorted(c)
    first = [x.split("#")[0] for x in order[:5]]
    assert len(set(first)) == 5  # one chunk of every document before any second chunk
    assert Counter(x.split("#")[0] for x in order[:10]) == Counter({f"doc{d}": 2 for d in range(5)})
    assert order == sample_order(c, chunk_to_doc="{doc_id}#{chunk}", seed=1)
    assert order != sample_order(c, chunk_to_doc="{doc_id}#{chunk}", seed=2)
    short = {"a": "tiny", "b": "long enough text " * 5}
    assert sample_order(short, min_chars=40) == ["b"]


def test_copy_ratio() -> None:
    passage = "an experimental study of a wing in a propeller slipstream was made in order to determine the lift"
    assert copy_ratio(passage + "?", passage) == (1.0, 18)
    assert not is_copy("which study measured the lift of a wing in a slipstream?", passage)
    assert copy_ratio("北京大学成立于哪一年？", "北京大学成立于1898年。") == (0.75, 3)  # 北京大学 成立 于 | 哪一年


def test_questions_keep_their_chunk_and_answer(llm: FakeLLM, tmp_path: Path) -> None:
    c = corpus()
    res = synthesize(c, 5, gen(llm.url), chunk_to_doc="{doc_id}#{chunk}", cache=tmp_path / "c.sqlite",
                     progress=False)
    ts = res.testset
    assert len(ts) == 5 and res.counts["accepted"] == 5
    docs = set()
    for q in ts.queries:
        (chunk, grade), = ts.judgments()[q.id].items()
        assert grade == 1 and chunk in c
        assert q.text == f"Which passage mentions {' and '.join(c[chunk].split()[:3])}?"
        assert q.answers == (c[chunk].split()[0],)
        assert q.metadata["generator"] == "fake-gen" and q.metadata["judge_grade"] == 3
        docs.add(chunk.split("#")[0])
    assert len(docs) == 5  # stratified: five documents
    assert res.counts["candidates"] == res.counts["accepted"] + len(res.rejected)  # nothing dropped silently
    calls = llm.calls
    again = synthesize(c, 5, gen(llm.url), chunk_to_doc="{doc_id}#{chunk}", cache=tmp_path / "c.sqlite",
                       progress=False)
    assert llm.calls == calls  # generation and judging come from the cache
    assert [q.text for q in again.testset.queries] == [q.text for q in ts.queries]


def test_filters(llm: FakeLLM) -> None:
    c = {
        "good1": "alpha one is a fine passage about apples and pears grade=3",
        "good2": "bravo two is a fine passage about boats and rivers grade=3",
        "copy": "[[copy]] charlie three is a passage that the generator copies word by word into its question grade=3",
        "pointing": "[[pointing]] hotel eight passage that the question points at grade=3",
        "dup1": "[[dup]] delta four passage about a duplicated topic grade=3",
        "dup2": "[[dup]] echo five passage about a duplicated topic again grade=3",
        "noanswer": "foxtrot six passage that does not answer anything useful grade=1",
        "genfail": "[[genfail-always]] golf seven passage where generation fails grade=3",
        "short": "tiny",
    }
    res = synthesize(c, 10, gen(llm.url, parse_retries=1), min_chars=20, progress=False)
    reasons = {r.chunk_id: r.reason for r in res.rejected}
    assert res.counts["candidates"] == res.counts["accepted"] + len(res.rejected)
    assert {q.text for q in res.testset.queries} >= {"Which passage mentions alpha and one and is?"}
    assert reasons["copy"].startswith("copies the passage")
    dups = [reasons.get(k, "") for k in ("dup1", "dup2")]  # the one sampled later is dropped
    assert sorted(d.startswith("near-duplicate of") for d in dups) == [False, True]
    assert reasons["pointing"] == "not standalone: it points at its passage"
    assert reasons["noanswer"] == "the judge finds it unanswerable from its chunk (grade 1 < 2)"
    assert reasons["genfail"].startswith("generation failed: unreadable reply")
    assert res.counts == {"candidates": 8, "short_chunks_skipped": 1, "generation_failed": 1, "not_standalone": 1,
                          "verbatim_copy": 1,
                          "near_duplicate": 1, "unanswerable": 1, "judge_failed": 0, "surplus": 0, "accepted": 3}


def test_cli_synth_then_testset_check(llm: FakeLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "corpus.jsonl"
    with open(path, "w", encoding="utf-8") as fh:
        for cid, text in corpus(4, 3).items():
            fh.write(json.dumps({"_id": cid, "title": "", "text": text}) + "\n")
    out = tmp_path / "synthetic.json"
    args = ["synth", "--corpus", str(path), "--base-url", llm.url, "--model", "fake-gen", "--n", "6",
            "--chunk-to-doc", "{doc_id}#{chunk}", "--out", str(out), "--with-corpus", "--cache",
            str(tmp_path / "c.sqlite"), "--no-progress"]
    with pytest.raises(SystemExit) as e:
        main(args)
    assert e.value.code == 0
    assert "6 of 6 questions" in capsys.readouterr().out
    ts = TestSet.from_file(out)
    assert len(ts) == 6 and ts.corpus is not None
    audit = audit_testset(ts)
    assert audit.problems == 0
    report = json.loads((tmp_path / "synthetic.json.synth.json").read_text())
    assert report["counts"]["accepted"] == 6 and report["settings"]["generator_prompt"] == "synth-1/en"
    with pytest.raises(SystemExit) as e:
        main(["testset", "check", str(out), "--strict"])
    assert e.value.code == 0
    with pytest.raises(SystemExit) as e:
        main([*args[:-3], "--dry-run", "--price-in", "1", "--price-out", "2"])
    assert e.value.code == 0
    assert "nothing was sent" in capsys.readouterr().out


def test_chinese_generation(llm: FakeLLM) -> None:
    c = {"z1": "北京大学 成立 于 1898 年 是 中国 最早 的 国立 大学 grade=3"}
    res = synthesize(c, 1, gen(llm.url, lang="zh"), min_chars=5, progress=False)
    assert res.testset.queries[0].text.startswith("Which passage mentions 北京大学")
    first = llm.requests[0]["body"]["messages"]
    assert "请用中文书写" in first[1]["content"]


def test_a_separate_judge_endpoint(llm: FakeLLM) -> None:
    with FakeLLM() as judge_server:
        judge = JudgeSettings(Endpoint(judge_server.url, timeout=5, retries=1), "fake-judge")
        res = synthesize(corpus(2, 2), 2, gen(llm.url), judge=judge, progress=False)
    assert res.counts["accepted"] == 2
    assert {r["body"]["model"] for r in llm.requests} == {"fake-gen"}
    assert {r["body"]["model"] for r in judge_server.requests} == {"fake-judge"}
    assert res.testset.queries[0].metadata["judge"] == "fake-judge"
