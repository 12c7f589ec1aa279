"""`rankscope pool`, `judge` and `agreement` from the command line, with the local fake endpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import cli, outcome
from prose import unwrap
from rankscope.io import read_trec_qrels
from rankscope.labels.provenance import read_labels

from .fake_llm import FakeLLM


def one_error(err: str, needle: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankscope: error: ") and needle in lines[0], err


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    f = {name: tmp_path / name for name in ("a.trec", "b.trec", "human.qrels", "queries.jsonl", "corpus.jsonl")}
    f["a.trec"].write_text("".join(f"q{q} Q0 d{q}{i} {i} {10 - i} A\n" for q in (1, 2) for i in range(1, 5)))
    f["b.trec"].write_text("".join(f"q{q} Q0 d{q}{i} {i} {10 - i} B\n" for q in (1, 2) for i in (4, 5, 6)))
    f["human.qrels"].write_text("q1 0 d11 2\nq1 0 d12 0\nq2 0 d21 1\n")
    f["queries.jsonl"].write_text('{"_id": "q1", "text": "what is bm25"}\n{"_id": "q2", "text": "什么是检索"}\n',
                                  encoding="utf-8")
    f["corpus.jsonl"].write_text("".join(json.dumps({"_id": f"d{q}{i}", "title": f"T{q}{i}",
                                                     "text": f"passage {q}{i} grade={i % 4}"}) + "\n"
                                         for q in (1, 2) for i in range(1, 7)))
    return f


def test_pool_then_judge_then_pool_again(files: dict[str, Path], tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    pool = tmp_path / "pool.jsonl"
    code, out, _ = outcome(cli("pool", "--runs", files["a.trec"], files["b.trec"], "--qrels", files["human.qrels"],
                             "--depth", 3, "--out", pool, width=80))
    assert code == 0 and "pool: 9 documents to judge over 2 queries" in out
    recs = [json.loads(x) for x in pool.read_text().splitlines()]
    assert recs[0] == {"query_id": "q1", "doc_id": "d14", "best_rank": 1, "runs": {"b": 1}}
    assert [r["doc_id"] for r in recs] == ["d14", "d15", "d13", "d16", "d24", "d22", "d25", "d23", "d26"]

    monkeypatch.setenv("LLM_TEST_KEY", "sk-test-secret-42")
    model_qrels = tmp_path / "model.qrels"
    cache = tmp_path / "cache.sqlite"
    with FakeLLM(api_key="sk-test-secret-42") as llm:
        base = ["judge", "--pool", pool, "--queries", files["queries.jsonl"], "--corpus", files["corpus.jsonl"],
                "--base-url", llm.url, "--model", "fake-judge", "--api-key-env", "LLM_TEST_KEY", "--cache", cache]
        code, out, err = outcome(cli(*base, "--dry-run", "--price-in", "0.5", "--price-out", "1.5", width=80))
        assert code == 0 and llm.calls == 0
        assert "9 pairs, 9 distinct texts, 0 in the cache, 9 calls to make" in unwrap(out) and "estimated cost" in out
        code, out, err = outcome(cli(*base, "--out", model_qrels, "--no-progress", width=80))
        assert code == 0 and llm.calls == 9, err
        assert "9 graded, 0 failed; 0 from the cache, 9 judged now" in unwrap(out)
        code, out, _ = outcome(cli(*base, "--out", model_qrels, "--format", "json", width=80))
        summary = json.loads(out)
        assert (summary["from_cache"], summary["judged_now"], llm.calls) == (9, 0, 9)
        for text in (out, err, model_qrels.read_text(), (tmp_path / "model.qrels.provenance.jsonl").read_text()):
            assert "sk-test-secret" not in text
    assert read_trec_qrels(model_qrels).to_dict() == {"q1": {"d13": 3, "d14": 0, "d15": 1, "d16": 2},
                                                      "q2": {"d22": 2, "d23": 3, "d24": 0, "d25": 1, "d26": 2}}
    labels = read_labels(model_qrels, source="model")
    assert labels.models() == ["fake-judge / graded-1/en"]

    combined = tmp_path / "all.qrels"
    code, out, _ = outcome(cli("pool", "--runs", files["a.trec"], files["b.trec"], "--qrels", files["human.qrels"],
                             "--judged", model_qrels, "--depth", 3, "--combined-out", combined, "-f", "json", width=80))
    data = json.loads(out)
    assert data["pool_size"] == 0 and data["labels"] == {"human": 3, "model": 9, "failed": 0}
    a = data["judged_before"][0]
    assert a["judged@3"] == 1.0 and a["model@3"] == pytest.approx((1 / 3 + 2 / 3) / 2)
    assert read_labels(combined).counts() == {"human": 3, "model": 9, "failed": 0}


def test_judge_records_failures(files: dict[str, Path], tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"query_id": "q1", "doc_id": "d11"}\n{"query_id": "q1", "doc_id": "bad"}\n'
                    '{"query_id": "q1", "doc_id": "nope"}\n')
    corpus = tmp_path / "c.tsv"
    corpus.write_text("d11\tfine passage grade=2\nbad\tbroken [[malformed]]\n")
    out = tmp_path / "m.qrels"
    with FakeLLM() as llm:
        code, _, err = outcome(cli("judge", "--pool", pool, "--queries", files["queries.jsonl"], "--corpus", corpus,
                                 "--base-url", llm.url, "--model", "m", "--out", out, "--no-cache",
                                 "--parse-retries", 1, width=80))
    assert code == 1  # more failures than --max-failures (10%) allows: the labels are written all the same
    assert "2 of 3 pairs have no grade (1 missing text, 1 unreadable reply)" in unwrap(err)
    assert "more than --max-failures 10% allows (0)" in unwrap(err)
    assert out.read_text() == "q1 0 d11 2\n"
    side = [json.loads(x) for x in (tmp_path / "m.qrels.provenance.jsonl").read_text().splitlines()]
    assert [(r["doc_id"], r["grade"], r.get("error", "")[:14]) for r in side] == [
        ("bad", None, "unreadable rep"), ("d11", 2, ""), ("nope", None, "missing text: ")]


@pytest.mark.parametrize(("args", "needle"), [
    (["--base-url", "localhost:1/v1"], "base_url must start with http"),
    (["--api-key-env", "SURELY_UNSET_VAR_H13"], "SURELY_UNSET_VAR_H13"),
    (["--lang", "fr"], "'--lang'"),
])
def test_judge_user_errors(files: dict[str, Path], tmp_path: Path,
                           args: list[str], needle: str) -> None:
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"query_id": "q1", "doc_id": "d11"}\n')
    base = {"--base-url": "http://127.0.0.1:9/v1"}
    base.update(dict(zip(args[::2], args[1::2])))
    flat = [x for kv in base.items() for x in kv]
    code, _, err = outcome(cli("judge", "--pool", pool, "--queries", files["queries.jsonl"], "--corpus",
                             files["corpus.jsonl"], "--model", "m", "--out", tmp_path / "o.qrels", "--no-cache",
                             *flat, width=80))
    assert code == 2
    one_error(err, needle)


def test_file_errors_name_file_and_line(files: dict[str, Path], tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    pool.write_text('{"query_id": "q1", "doc_id": "d11"}\n{"query_id": 5}\n')
    code, _, err = outcome(cli("judge", "--pool", pool, "--queries", files["queries.jsonl"], "--base-url",
                             "http://127.0.0.1:9/v1", "--model", "m", "--dry-run", width=80))
    assert code == 2
    one_error(err, "pool.jsonl:2: doc_id must be a non-empty string")
    bad = tmp_path / "corpus.jsonl"
    bad.write_text('{"_id": "d1", "text": "x"}\n{"_id": "d1", "text": "y"}\n')
    pool.write_text('{"query_id": "q1", "doc_id": "d11"}\n')
    code, _, err = outcome(cli("judge", "--pool", pool, "--queries", files["queries.jsonl"], "--corpus", bad,
                             "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--dry-run", width=80))
    one_error(err, "corpus.jsonl:2: id 'd1' occurs twice")
    code, _, err = outcome(cli("pool", "--runs", files["a.trec"], "--depth", 0, width=80))
    assert code == 2
    one_error(err, "depth must be an integer >= 1")
    code, _, err = outcome(cli("pool", "--runs", files["a.trec"], tmp_path / "missing.trec", width=80))
    one_error(err, "missing.trec: no such file")


def test_agreement_cli(tmp_path: Path) -> None:
    human, model = tmp_path / "h.qrels", tmp_path / "m.qrels"
    human.write_text("".join(f"q{q} 0 d{d} {(q + d) % 4}\n" for q in range(8) for d in range(10)))
    model.write_text("".join(f"q{q} 0 d{d} {(q + d) % 4 if d % 5 else 0}\n" for q in range(8) for d in range(10)))
    runs = []
    for r in range(3):
        p = tmp_path / f"r{r}.trec"
        p.write_text("".join(f"q{q} Q0 d{d} 1 {((q + d) % 4) * r + (d % 3)} r{r}\n" for q in range(8)
                             for d in range(10)))
        runs.append(p)
    code, out, _ = outcome(cli("agreement", "--qrels", human, "--judged", model, "--runs", *runs, "-f", "json",
                             "--bootstrap", 200, width=80))
    assert code == 0
    data = json.loads(out)
    assert data["labels"]["pairs_judged_by_both"] == 80
    assert len(data["ranking"]["pairs"]) == 3 and data["ranking"]["rankings"][0]["metric"] == "ndcg@10"
    assert any("κ" in line for line in data["reading"])
    code, out, _ = outcome(cli("agreement", "--qrels", human, "--judged", model, "--lang", "zh", width=80))
    assert code == 0 and "Landis&Koch分级" in "".join(out.split()) and "混淆矩阵" in out and "confusion" not in out
