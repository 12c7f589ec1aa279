"""The dense baseline on an OpenAI-compatible embeddings endpoint: a local stand-in server on 127.0.0.1
(``tests/labels/fake_llm.py``, whose vectors are bags of words that the tests recompute)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

from rankscope.data.testset import TestSet
from rankscope.errors import RankscopeError
from rankscope.llm_client import EndpointError
from rankscope.retrieval import DenseRetriever, evaluate_retriever
from rankscope.retrieval.openai_embeddings import EmbeddingCache, OpenAIEmbeddings, request_key

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from clirun import cli
from labels.fake_llm import FakeLLM

DOCS = {
    "d1": "Paris is the capital and largest city of France.",
    "d2": "Jupiter is the largest planet in the Solar System.",
    "d3": "The Great Wall of China is a series of fortifications.",
    "d4": "北京大学创办于1898年，初名京师大学堂。",
}
QUESTIONS = ["capital city of France", "largest planet in the solar system", "great wall of china", "北京大学创办"]
RELEVANT = [["d1"], ["d2"], ["d3"], ["d4"]]


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    with FakeLLM(api_key="sk-test-secret") as fake:
        yield fake


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("EMBED_KEY", "sk-test-secret")
    return "EMBED_KEY"


def _cosines(query: str, dims: int = 64) -> dict[str, float]:
    q = np.array(FakeLLM.vector(query, dims))
    out = {}
    for d, text in DOCS.items():
        v = np.array(FakeLLM.vector(text, dims))
        out[d] = float(q @ v / np.linalg.norm(q) / np.linalg.norm(v))
    return out


def test_dense_retriever_scores_the_endpoints_vectors(server: FakeLLM, key: str, tmp_path: Path) -> None:
    emb = OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=tmp_path / "e.sqlite", batch_size=3)
    dense = DenseRetriever(DOCS, emb, cache=False)
    hits = dense.search("largest planet in the solar system", 4)
    expected = _cosines("largest planet in the solar system")
    assert [h.id for h in hits] == sorted(expected, key=lambda d: (-expected[d], d))[:4] and hits[0].id == "d2"
    assert [h.score for h in hits] == pytest.approx([expected[h.id] for h in hits], abs=1e-6)
    # 4 documents in batches of 3 (the server answers in reverse order: the client sorts by index), then 1 query
    paths = [r["path"] for r in server.requests]
    assert paths == ["/v1/embeddings"] * 3
    assert sorted(len(r["body"]["input"]) for r in server.requests[:2]) == [1, 3]
    assert {r["headers"]["Authorization"] for r in server.requests} == {"Bearer sk-test-secret"}
    assert {k: v for k, v in server.requests[0]["body"].items() if k != "input"} == {"model": "bag",
                                                                                     "encoding_format": "float"}
    assert sorted(t for r in server.requests[:2] for t in r["body"]["input"]) == sorted(DOCS.values())
    ev = evaluate_retriever(dense, TestSet.from_annotations(QUESTIONS, RELEVANT), ["mrr"], k=4, progress=False)
    assert ev.result.mean() == {"mrr": 1.0} and ev.errors == {}


def test_vectors_are_cached_by_the_exact_request(server: FakeLLM, key: str, tmp_path: Path) -> None:
    path = tmp_path / "e.sqlite"
    first = OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=path)
    vectors = first.embed_documents(list(DOCS.values()))
    assert server.embedded == 4 and first.from_cache == 0 and first.requests == 1 and first.tokens > 0
    # the key of each vector is the request that asks for that text alone, as it would be sent
    wanted = request_key(f"{server.url}/embeddings", {"model": "bag", "input": DOCS["d1"], "encoding_format": "float"})
    with sqlite3.connect(path) as db:
        keys = {row[0] for row in db.execute("SELECT key FROM vectors")}
        raw = b"".join(row[0] for row in db.execute("SELECT vector FROM vectors"))
    assert wanted in keys and len(keys) == 4
    assert b"sk-test-secret" not in path.read_bytes() + raw and "sk-test-secret" not in repr(first) + first.identity

    again = OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=path)
    assert np.array_equal(again.embed_documents(list(DOCS.values())), vectors)
    assert server.embedded == 4 and again.from_cache == 4 and again.requests == 0  # nothing asked again
    mixed = again.embed_documents([DOCS["d1"], "a new text"])  # only the new text is asked
    assert server.embedded == 5 and np.array_equal(mixed[0], vectors[0])

    # another model, size, prefix or parameter is another request: asked, not taken from the cache
    OpenAIEmbeddings(server.url, "bag-2", api_key_env=key, cache=path).embed_documents([DOCS["d1"]])
    OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=path, dimensions=32).embed_documents([DOCS["d1"]])
    OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=path, doc_prefix="passage: ").embed_documents(
        [DOCS["d1"]])
    assert server.embedded == 8
    assert len(EmbeddingCache(path)) == 8


def test_base64_vectors_and_shorter_dimensions(server: FakeLLM, key: str) -> None:
    plain = OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=False, dimensions=16)
    packed = OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=False, dimensions=16,
                              extra_body={"encoding_format": "base64"})
    a, b = plain.embed_queries(["great wall"]), packed.embed_queries(["great wall"])
    assert a.shape == (1, 16) and np.array_equal(a, b)
    sent = server.requests[-1]["body"]
    assert sent["encoding_format"] == "base64" and sent["dimensions"] == 16


def test_failures_are_retried_or_stop_with_what_to_check(server: FakeLLM, key: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    flaky = OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=False, retries=2, backoff=0.01)
    assert flaky.embed_documents(["[[500]] twice, then fine"]).shape == (1, 64)
    assert len(server.requests) == 3

    with pytest.raises(RankscopeError, match="after 2 attempts: HTTP 500") as failed:
        OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=False, retries=1,
                         backoff=0.01).embed_documents(["[[500]] again"])
    assert failed.value.text("zh") != str(failed.value)  # said in Chinese too

    with pytest.raises(EndpointError, match="/embeddings: model 'missing-model' not found: check --base-url") as info:
        OpenAIEmbeddings(server.url, "missing-model", api_key_env=key, cache=False).embed_documents(["x"])
    assert info.value.text("zh") != str(info.value) and "/embeddings" in info.value.text("zh")  # said in Chinese too

    monkeypatch.setenv("EMBED_KEY", "sk-wrong")
    with pytest.raises(EndpointError, match=r"embeddings refused the request \(HTTP 401\): check the key in \$EMBED"):
        OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=False).embed_documents(["x"])
    monkeypatch.delenv("EMBED_KEY")
    with pytest.raises(EndpointError, match="EMBED_KEY"):
        OpenAIEmbeddings(server.url, "bag", api_key_env=key, cache=False)
    with pytest.raises(EndpointError, match=r"cannot reach http://127\.0\.0\.1:9/v1/embeddings"):
        OpenAIEmbeddings("http://127.0.0.1:9/v1", "bag", cache=False, retries=0).embed_documents(["x"])


def test_run_command_openai_kind(server: FakeLLM, key: str, tmp_path: Path) -> None:
    records = [{"id": f"q{i}", "query": q, "relevant_docs": r} for i, (q, r) in enumerate(zip(QUESTIONS, RELEVANT))]
    (tmp_path / "questions.json").write_text(json.dumps({"queries": records, "corpus": DOCS}, ensure_ascii=False),
                                             encoding="utf-8")
    args = ["run", "openai", "--base-url", server.url, "--model", "bag", "--api-key-env", key, "--testset",
            "questions.json", "--out", "openai.trec", "-m", "mrr"]
    env = {"RANKSCOPE_CACHE_DIR": str(tmp_path / "cache"), "EMBED_KEY": "sk-test-secret"}
    done = cli(*args, cwd=tmp_path, env=env, width=120)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "openai.trec").read_text().splitlines()
    assert lines[0].split()[:3] == ["q0", "Q0", "d1"] and lines[0].split()[-1] == "openai"
    assert "1.0000" in done.stdout
    asked = server.embedded
    assert (tmp_path / "cache" / "embeddings" / "openai-embeddings.sqlite").is_file()
    assert cli(*args, cwd=tmp_path, env=env, width=120).returncode == 0
    assert server.embedded == asked  # the second run asks for nothing: every vector is cached

    missing = cli("run", "openai", "--testset", "questions.json", "--out", "x.trec", cwd=tmp_path, env=env)
    assert missing.returncode == 2 and "--base-url and --model" in missing.stderr
    zh = cli("run", "openai", "--testset", "questions.json", "--out", "x.trec", cwd=tmp_path,
             env={**env, "RANKSCOPE_LANG": "zh"})
    assert zh.returncode == 2 and "请给出 --base-url 和 --model" in zh.stderr
