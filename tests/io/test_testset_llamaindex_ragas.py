"""Test sets from the tools teams already use: LlamaIndex's retrieval-evaluation dataset and LabelledRagDataset,
RAGAS test sets (0.1 and 0.2+), read with their ids kept, the format said, and malformed files refused with the
file and the record or field.

The files are written as those tools write them (``EmbeddingQAFinetuneDataset.save_json``: ``json.dump(..., indent=4)``
of ``queries`` / ``corpus`` / ``relevant_docs`` / ``mode``; RAGAS ``Testset.to_jsonl``: one ``SingleTurnSample`` dict
plus ``synthesizer_name`` a line, ``None`` fields left out).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from rankscope.data.testset import TestSet, TestSetWarning
from rankscope.errors import ParseError
from rankscope.io.testset import context_id, match_contexts
from rankscope.retrieval import BM25Retriever, evaluate_retriever

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from clirun import cli
from prose import whole_lines

CORPUS = {
    "6f1c0c1e-node-a": "BM25 is a bag-of-words ranking function used by search engines.",
    "9a2b7d44-node-b": "William Shakespeare wrote Hamlet around 1600. It is a tragedy.",
    "c0ffee00-node-c": "The Great Wall of China is a series of fortifications.",
}
LLAMAINDEX = {
    "queries": {"3f8e2a9c-q1": "What kind of function is BM25?", "b7d1e0f2-q2": "Who wrote Hamlet?",
                "e4a5c6b7-q3": "What is the Great Wall of China?"},
    "corpus": CORPUS,
    "relevant_docs": {"3f8e2a9c-q1": ["6f1c0c1e-node-a"], "b7d1e0f2-q2": ["9a2b7d44-node-b"],
                      "e4a5c6b7-q3": ["c0ffee00-node-c"]},
    "mode": "text",
}
RAGAS = [  # what Testset.to_jsonl writes (ragas >= 0.2): SingleTurnSample fields + synthesizer_name
    {"user_input": "What kind of function is BM25?",
     "reference_contexts": ["BM25 is a bag-of-words ranking function used by search engines."],
     "reference": "A bag-of-words ranking function.", "synthesizer_name": "single_hop_specific_query_synthesizer"},
    {"user_input": "Who wrote Hamlet?", "reference_contexts": ["William Shakespeare wrote Hamlet around 1600."],
     "reference": "William Shakespeare", "synthesizer_name": "single_hop_specific_query_synthesizer"},
    {"user_input": "What is the Great Wall?", "reference_contexts": ["It is not in the corpus at all."],
     "reference": "Fortifications", "synthesizer_name": "multi_hop_abstract_query_synthesizer"},
]


def _write(path: Path, data: Any, jsonl: bool = False, indent: int | None = 4) -> Path:
    if jsonl:
        path.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
    else:
        path.write_text(json.dumps(data, indent=indent), encoding="utf-8")
    return path


def _quiet_read(path: Path, **kw: Any) -> TestSet:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TestSetWarning)
        return TestSet.from_file(path, **kw)


# -- LlamaIndex ----------------------------------------------------------------------------------


def test_llamaindex_retrieval_dataset_keeps_its_ids(tmp_path: Path) -> None:
    ts = TestSet.from_file(_write(tmp_path / "qa_dataset.json", LLAMAINDEX))  # was: "expected a list of records"
    assert ts.format == "llamaindex" and ts.issues == ()
    assert ts.query_ids == list(LLAMAINDEX["queries"]) and ts.corpus == CORPUS
    assert ts.judgments() == {q: {d[0]: 1} for q, d in LLAMAINDEX["relevant_docs"].items()}
    assert ts["b7d1e0f2-q2"].text == "Who wrote Hamlet?"
    ev = evaluate_retriever(BM25Retriever(ts.corpus), ts, ["mrr"], k=3, progress=False)
    assert ev.result.mean() == {"mrr": 1.0}

    # a dataset saved by an older LlamaIndex has no "mode"; a query without judgments is kept, unjudged
    older = {k: v for k, v in LLAMAINDEX.items() if k != "mode"}
    older["relevant_docs"] = {"3f8e2a9c-q1": ["6f1c0c1e-node-a"]}
    ts = TestSet.from_file(_write(tmp_path / "older.json", older))
    assert ts.format == "llamaindex" and len(ts) == 3 and ts.judged_query_ids == ["3f8e2a9c-q1"]


@pytest.mark.parametrize(("change", "message", "key"), [
    ({"relevant_docs": [["n1"]]}, "'relevant_docs' must map query ids to lists of node ids, got list",
     "data.llamaindex_relevant_shape"),
    ({"mode": "image"}, "mode 'image': only text datasets", "data.llamaindex_mode"),
    ({"relevant_docs": {"zz-unknown": ["6f1c0c1e-node-a"]}},
     "relevant_docs, entry 0: judgments for query 'zz-unknown', which is not in 'queries'", "at_place"),
    ({"relevant_docs": {"3f8e2a9c-q1": ["6f1c0c1e-node-a", None]}},
     "queries, entry 0: query '3f8e2a9c-q1': relevant_docs item 1: null id", "at_place"),
    ({"queries": {"q1": "fine", "q2": ["not", "text"]}, "relevant_docs": {}},
     "queries, entry 1: the query text must be a string",
     "at_place"),
    ({"corpus": ["a", "b"]}, "'corpus' must map doc ids to texts", "data.corpus_not_mapping"),
])
def test_malformed_llamaindex_files_say_file_and_place(tmp_path: Path, change: dict[str, Any], message: str,
                                                       key: str) -> None:
    path = _write(tmp_path / "bad.json", {**LLAMAINDEX, **change})
    with pytest.raises(ParseError, match=message) as info:
        TestSet.from_file(path)
    assert str(path) in str(info.value)
    assert str(path) in info.value.text("zh")
    assert cli("testset", "check", path).returncode == (2 if key != "at_place" else 0)  # lenient: listed


# -- RAGAS ----------------------------------------------------------------------------------------


def test_ragas_reference_context_ids_are_kept(tmp_path: Path) -> None:
    samples = [{"user_input": "Who wrote Hamlet?", "reference_context_ids": ["9a2b7d44-node-b"],
                "reference_contexts": ["William Shakespeare wrote Hamlet around 1600. It is a tragedy."],
                "reference": "Shakespeare", "retrieved_contexts": ["something else"], "response": "Marlowe"},
               {"user_input": "BM25?", "reference_context_ids": [7, "6f1c0c1e-node-a"]}]
    ts = TestSet.from_file(_write(tmp_path / "eval.jsonl", samples, jsonl=True))
    assert ts.format == "ragas" and ts.issues == ()
    assert ts.judgments() == {"q1": {"9a2b7d44-node-b": 1}, "q2": {"7": 1, "6f1c0c1e-node-a": 1}}
    assert ts["q1"].answers == ("Shakespeare",) and ts["q1"].metadata["response"] == "Marlowe"
    assert ts.corpus == {"9a2b7d44-node-b": CORPUS["9a2b7d44-node-b"]}  # a context beside its id is its text


def test_ragas_reference_contexts_are_matched_to_the_corpus(tmp_path: Path) -> None:
    path = _write(tmp_path / "testset.jsonl", RAGAS, jsonl=True)
    with pytest.warns(TestSetWarning) as caught:
        ts = TestSet.from_file(path, corpus=CORPUS)
    assert ts.format == "ragas" and ts.corpus == CORPUS
    # equal text -> node a; a part of node b's text -> node b; the third context is in no document: counted, said
    assert ts.judgments() == {"q1": {"6f1c0c1e-node-a": 1}, "q2": {"9a2b7d44-node-b": 1}}
    assert ts["q3"].answers == ("Fortifications",)
    unmatched, inside = ts.issues
    assert str(unmatched.message).startswith("reference contexts in no corpus document: 1 of 3 (first: line 3)")
    assert str(inside.message).startswith("reference contexts found only inside longer corpus documents")
    assert inside.count == 1
    assert "不在任何语料库文档中的参考上下文：3 段中有 1 段（第一次：第 3 行）" in unmatched.reason("zh")
    assert len(caught) == 2
    ev = evaluate_retriever(BM25Retriever(CORPUS), ts, ["mrr"], k=3, progress=False)
    assert ev.result.mean() == {"mrr": 1.0}
    assert any("no corpus document" in str(n) for n in ev.warnings)  # every evaluation says it again


def test_ragas_without_a_corpus_makes_one_from_the_contexts(tmp_path: Path) -> None:
    path = _write(tmp_path / "testset.json", RAGAS, indent=None)
    with pytest.warns(TestSetWarning, match="no corpus given"):
        ts = TestSet.from_file(path)
    assert ts.format == "ragas" and len(ts.qrels) == 3  # was 0 judgments
    ids = [context_id(r["reference_contexts"][0]) for r in RAGAS]
    assert ts.judgments() == {f"q{i + 1}": {d: 1} for i, d in enumerate(ids)}
    assert ts.corpus == {d: r["reference_contexts"][0] for d, r in zip(ids, RAGAS)}


def test_ragas_01_test_set_and_llamaindex_rag_dataset(tmp_path: Path) -> None:
    old = [{"question": "Who wrote Hamlet?", "contexts": ["William Shakespeare wrote Hamlet around 1600."],
            "ground_truth": "Shakespeare", "evolution_type": "simple", "metadata": [{"source": "plays.txt"}],
            "episode_done": True}]
    ts = _quiet_read(_write(tmp_path / "ragas01.json", old), corpus=CORPUS)
    assert ts.format == "ragas-0.1" and ts.judgments() == {"q1": {"9a2b7d44-node-b": 1}}
    assert ts["q1"].answers == ("Shakespeare",) and ts["q1"].metadata["metadata"] == [{"source": "plays.txt"}]

    rag = {"examples": [{"query": "What kind of function is BM25?",
                         "query_by": {"model_name": "gpt-4o", "type": "ai"},
                         "reference_contexts": [CORPUS["6f1c0c1e-node-a"]],
                         "reference_answer": "A ranking function.",
                         "reference_answer_by": {"model_name": "gpt-4o", "type": "ai"}}]}
    ts = TestSet.from_file(_write(tmp_path / "rag_dataset.json", rag), corpus=CORPUS)
    assert ts.format == "llamaindex-rag" and ts.judgments() == {"q1": {"6f1c0c1e-node-a": 1}}
    assert ts["q1"].metadata["query_by"] == {"model_name": "gpt-4o", "type": "ai"} and ts.issues == ()


@pytest.mark.parametrize(("record", "message"), [
    ({"user_input": [{"content": "hi", "type": "human"}], "reference": "x"},
     "jsonl:2: a multi-turn sample"),
    ({"user_input": "q", "reference_contexts": "one text, not a list"},
     "jsonl:2: reference_contexts must be a list of texts, got str"),
    ({"user_input": "q", "reference_context_ids": [None]},
     r"jsonl:2: query 'q2': reference_context_ids item 0: null id"),
])
def test_malformed_ragas_records_say_line_and_field(tmp_path: Path, record: dict[str, Any], message: str) -> None:
    path = _write(tmp_path / "bad.jsonl", [RAGAS[0], record], jsonl=True)
    with pytest.raises(ParseError, match=message) as info:
        _quiet_read(path)
    assert str(path) in str(info.value)


def test_unknown_keys_in_ragas_records_are_still_reported(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", [{**RAGAS[0], "refrence": "typo"}], jsonl=True)
    with pytest.warns(TestSetWarning, match="unknown key 'refrence'"):
        ts = TestSet.from_file(path, corpus=CORPUS)
    assert len(ts.issues) == 1 and "did you mean" in str(ts.issues[0].message)  # with its suggestion


def test_match_contexts_equal_inside_and_nowhere() -> None:
    found, equal = match_contexts(["wrote  Hamlet around", CORPUS["c0ffee00-node-c"], "absent", ""], CORPUS)
    assert found == [["9a2b7d44-node-b"], ["c0ffee00-node-c"], [], []] and equal == [False, True, False, False]


# -- the command line ---------------------------------------------------------------------------


def test_cli_says_the_format_and_uses_the_corpus(tmp_path: Path) -> None:
    _write(tmp_path / "qa_dataset.json", LLAMAINDEX)
    _write(tmp_path / "testset.jsonl", RAGAS, jsonl=True)
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "text": t}) + "\n"
                                                   for d, t in CORPUS.items()), encoding="utf-8")
    check = cli("testset", "check", "qa_dataset.json", cwd=tmp_path, width=120)
    assert check.returncode == 0 and "LlamaIndex retrieval dataset (EmbeddingQAFinetuneDataset)" in check.stdout
    as_json = json.loads(cli("testset", "check", "testset.jsonl", "--corpus", "corpus.jsonl", "-f", "json",
                             cwd=tmp_path).stdout)
    assert as_json["format"] == "ragas" and as_json["judgments"] == 2
    assert {i["field"] for i in as_json["load_issues"]} == {"reference_contexts"}
    zh = cli("testset", "check", "testset.jsonl", cwd=tmp_path, width=120, env={"RANKSCOPE_LANG": "zh"})
    assert "RAGAS 测试集" in zh.stdout

    conv = cli("testset", "convert", "qa_dataset.json", "out.jsonl", cwd=tmp_path)
    assert conv.returncode == 0, conv.stderr
    assert whole_lines(conv.stdout).splitlines()[0] == ("qa_dataset.json: read as LlamaIndex retrieval dataset "
                                           "(EmbeddingQAFinetuneDataset)")
    back = TestSet.from_file(tmp_path / "out.jsonl")
    assert back.query_ids == list(LLAMAINDEX["queries"]) and back.judgments() == TestSet.from_file(
        tmp_path / "qa_dataset.json").judgments()

    run = cli("run", "bm25", "--testset", "testset.jsonl", "--corpus", "corpus.jsonl", "--out", "bm25.trec",
              "-m", "mrr", cwd=tmp_path, width=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "testset.jsonl: read as RAGAS test set"
    assert "no corpus document: 1 of 3" in run.stdout  # the reading's finding is in the summary
    bad = _write(tmp_path / "bad.json", {**LLAMAINDEX, "relevant_docs": [["x"]]})
    done = cli("run", "bm25", "--testset", bad, "--out", "x.trec", cwd=tmp_path)
    assert done.returncode == 2 and "relevant_docs" in done.stderr and "Traceback" not in done.stderr
