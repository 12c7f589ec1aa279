"""Test-set records whose keys are not recognised, and null / empty ids (issue 11, points 1 and 2)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from rankscope.cli.app import main
from rankscope.data.testset import TestSet, TestSetWarning
from rankscope.errors import ParseError


def _records(n: int = 15, with_answers: int = 5) -> list[dict]:
    out = []
    for i in range(n):
        rec = {"question": f"question {i}?", "relevant_doc_ids": [f"d{i}"]}
        if i < with_answers:
            rec["answer"] = f"answer {i}"
        out.append(rec)
    return out


def _write(tmp_path: Path, name: str, records: list[dict]) -> Path:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        path.write_text(json.dumps(records), encoding="utf-8")
    return path


@pytest.mark.parametrize("key", ["relevant_doc_ids", "positive_ids", "gold_ids", "context_ids",
                                 "reference_context_ids", "relevant_passage_ids"])
@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_common_spellings_of_relevant_ids_are_read(tmp_path: Path, key: str, suffix: str) -> None:
    recs = [{"question": "q?", key: ["d1", "d2"]}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: the key is known
        ts = TestSet.from_file(_write(tmp_path, "t" + suffix, recs))
    assert ts.qrels.to_dict() == {"q1": {"d1": 1, "d2": 1}}


def test_the_issue_test_set_keeps_its_judgments_and_scores_on_them(tmp_path: Path) -> None:
    """`question` / `relevant_doc_ids` / `answer`: 15 records, 5 with answers — scored on the judgments."""
    import rankscope

    ts = TestSet.from_file(_write(tmp_path, "q.json", _records()))
    assert len(ts.judged_query_ids) == 15
    ev = rankscope.evaluate_retriever(lambda q, k: ["dx"], ts, ["recall@10"], k=10, progress=False)
    assert ev.relevance == "qrels" and ev.result.queries.evaluated == 15
    assert ev.mean()["document"]["recall@10"] == 0.0


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_unknown_key_is_reported_with_a_suggestion(tmp_path: Path, suffix: str) -> None:
    recs = [{"question": f"q{i}?", "relevant_doc_idz": ["d1"], "answer": "x"} for i in range(3)]
    path = _write(tmp_path, "t" + suffix, recs)
    expected = r"unknown key 'relevant_doc_idz' in 3 records.*did you mean 'relevant_doc_ids'"
    with pytest.warns(TestSetWarning, match=expected):
        ts = TestSet.from_file(path)
    assert [i.field for i in ts.issues] == ["relevant_doc_idz"]
    assert "relevant_doc_idz" in str(ts.issues[0]) and str(path) in str(ts.issues[0])
    with pytest.raises(ParseError, match=r"unknown key 'relevant_doc_idz'.*did you mean 'relevant_doc_ids'"):
        TestSet.from_file(path, strict=True)


def test_unknown_keys_of_a_beir_folder_and_of_the_json_wrapper_are_reported(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "q", "gold_ids": ["d9"]}) + "\n")
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "d1", "text": "t", "txt": "x"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n")
    with pytest.warns(TestSetWarning) as caught:
        ts = TestSet.from_beir(folder)
    messages = " | ".join(str(w.message) for w in caught)
    assert "'gold_ids'" in messages and "queries.jsonl" in messages
    assert "'txt'" in messages and "corpus.jsonl" in messages
    assert {i.field for i in ts.issues} == {"gold_ids", "txt"}
    with pytest.raises(ParseError):
        TestSet.from_beir(folder, strict=True)

    wrapper = tmp_path / "w.json"
    wrapper.write_text(json.dumps({"name": "x", "querys": [], "queries": [{"query": "a", "relevant_ids": ["d"]}]}))
    with pytest.warns(TestSetWarning, match="unknown key 'querys'.*did you mean 'queries'"):
        TestSet.from_json(wrapper)


def test_two_spellings_of_one_field_in_one_record_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.json", [{"query": "q", "relevant_ids": ["a"], "gold_ids": ["b"]}])
    with pytest.raises(ParseError, match=r"record 0: both 'relevant_ids' and 'gold_ids'"):
        TestSet.from_file(path)


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
@pytest.mark.parametrize("bad", [[None, "d2"], ["", "d2"], ["  ", "d2"], [["d1"], "d2"]])
def test_null_or_empty_relevant_ids_are_rejected_with_location(tmp_path: Path, suffix: str, bad: list) -> None:
    recs = [{"query": "fine", "relevant_ids": ["d1"]}, {"query": "q", "relevant_ids": bad}]
    path = _write(tmp_path, "t" + suffix, recs)
    where = f"{path}:2:" if suffix == ".jsonl" else "record 1"
    with pytest.raises(ParseError) as info:
        TestSet.from_file(path)
    text = str(info.value)
    assert str(path) in text and where in text and "relevant_ids" in text


@pytest.mark.parametrize("rec", [{"id": None, "query": "q", "relevant_ids": ["a"]},
                                 {"id": "", "query": "q", "relevant_ids": ["a"]},
                                 {"query": "q", "relevance_scores": {"": 1}}])
def test_null_or_empty_query_id_and_grade_key_are_rejected(tmp_path: Path, rec: dict) -> None:
    with pytest.raises(ParseError, match="record 0"):
        TestSet.from_file(_write(tmp_path, "t.json", [rec]))


def test_null_ids_in_beir_files_are_rejected(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "q"}) + "\n"
                                          + json.dumps({"_id": None, "text": "q2"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n")
    with pytest.raises(ParseError, match=r"queries.jsonl:2: field '_id': null id"):
        TestSet.from_beir(folder)
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "q"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\td1\t1\n1\t\t1\n")
    with pytest.raises(ParseError, match=r"test.tsv:3: empty corpus-id"):
        TestSet.from_beir(folder)


def test_testset_check_reports_null_ids_and_unknown_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs = [{"query": "a", "relevant_ids": [None, "d2"]}, {"query": "b", "relevant_ids": ["d3"], "gold": 1}]
    path = _write(tmp_path, "t.json", recs)
    with pytest.raises(SystemExit) as code:
        main(["testset", "check", str(path), "--format", "json"])
    assert code.value.code == 0
    out = json.loads(capsys.readouterr().out)
    kinds = {(i["severity"], i["field"]) for i in out["load_issues"]}
    assert ("error", "relevant_ids") in kinds and ("warning", "gold") in kinds
    assert out["problems"] >= 2
    with pytest.raises(SystemExit) as code:
        main(["testset", "check", str(path)])
    table = capsys.readouterr().out
    assert "null" in table and "gold" in table
