"""Test sets carry span judgments as each item's "evidence"; older files still load."""

from __future__ import annotations

import json

import pytest

from rankscope.data.spans import SpanQrels
from rankscope.data.testset import Query, TestSet
from rankscope.errors import ParseError, RankscopeError

CORPUS = {"d1": "Paris is the capital of France.", "d2": "Berlin is the capital of Germany."}


def test_json_round_trip_keeps_spans(tmp_path):
    spans = SpanQrels.from_records([{"query_id": "q1", "doc_id": "d1", "start": 0, "end": 5, "grade": 2},
                                    {"query_id": "q2", "doc_id": "d2", "start": 0, "end": 6}])
    ts = TestSet([Query("q1", "capital of France?"), Query("q2", "capital of Germany?")],
                 {"q1": {"d1": 1}, "q2": {"d2": 1}}, CORPUS, "cap", spans=spans)
    ts.to_json(tmp_path / "t.json")
    back = TestSet.from_json(tmp_path / "t.json")
    assert back.spans == spans and "2 judged spans" in repr(back)
    ts.to_jsonl(tmp_path / "t.jsonl")
    assert TestSet.from_jsonl(tmp_path / "t.jsonl", corpus=CORPUS).spans == spans
    assert ts.subset(["q2"]).spans.to_records() == [
        {"query_id": "q2", "doc_id": "d2", "start": 0, "end": 6, "grade": 1}]


def test_older_files_load_without_spans(tmp_path):
    path = tmp_path / "seed.json"
    path.write_text(json.dumps([{"query": "a?", "relevant_docs": ["d1"]}]))
    assert TestSet.from_json(path).spans is None


def write(tmp_path, evidence, corpus=CORPUS):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"queries": [{"id": "q1", "query": "x", "relevant_docs": ["d1"]},
                                            {"id": "q2", "query": "y", "evidence": evidence}],
                                "corpus": corpus}))
    return path


@pytest.mark.parametrize(("evidence", "message"), [
    ([{"doc_id": "d1", "start": 0, "end": 99}], "record 1, evidence 1, field 'end': 99 is past the end of document"),
    ([{"doc_id": "d3", "start": 0, "end": 2}], "record 1, evidence 1, field 'doc_id': unknown document 'd3'"),
    ([{"doc_id": "d1", "start": 0, "end": 2}, {"doc_id": "d1", "start": 4, "end": 4}],
     "record 1, evidence 2, field 'end': a span needs start < end"),
    ([{"doc_id": "d1", "start": 0, "end": 5, "text": "Pari"}], "record 1, evidence 1, field 'text': 'Pari' differs"),
    ([{"doc_id": "d1", "end": 5}], "record 1, evidence 1: no 'start' field"),
    ({"doc_id": "d1"}, "record 1: 'evidence' must be a list"),
])
def test_bad_evidence_names_record_and_field(tmp_path, evidence, message):
    with pytest.raises(ParseError) as err:
        TestSet.from_json(write(tmp_path, evidence))
    assert message in str(err.value) and str(tmp_path / "t.json") in str(err.value)


def test_jsonl_evidence_errors_name_the_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "q1", "query": "x", "evidence": [{"doc_id": "d1", "start": 0, "end": 3}]}\n\n'
                    '{"id": "q2", "query": "y", "evidence": [{"doc_id": "d1", "start": -1, "end": 3}]}\n')
    with pytest.raises(ParseError, match=r"t\.jsonl:3: evidence 1, field 'start': must be >= 0"):
        TestSet.from_jsonl(path)


def test_spans_of_unknown_queries_are_refused():
    spans = SpanQrels.from_records([{"query_id": "q9", "doc_id": "d1", "start": 0, "end": 5}])
    with pytest.raises(RankscopeError, match="not among the queries"):
        TestSet([Query("q1", "x")], None, CORPUS, spans=spans)
