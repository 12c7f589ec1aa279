"""SpanQrels and Chunking: building, validation messages, files, chunk qrels and coverage, builders."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from rankscope.data.chunking import Chunking, hit_location
from rankscope.data.span_build import locate_answers, squad_spans
from rankscope.data.span_rules import ChunkRule
from rankscope.data.spans import SpanQrels
from rankscope.data.testset import Query, TestSet
from rankscope.errors import EmptyInputError, InvalidParameterError, ParseError

CORPUS = {"d1": "a" * 100, "d2": "b" * 50}


def chunks(size, step, corpus=CORPUS, name=None):
    recs = [{"chunk_id": f"{d}#{s}", "doc_id": d, "start": s, "end": min(s + size, len(t))}
            for d, t in corpus.items() for s in range(0, len(t), step)]
    return Chunking.from_records(recs, corpus=corpus, name=name)


@pytest.mark.parametrize(("record", "message"), [
    ({"query_id": "q", "doc_id": "d1", "start": -2, "end": 3}, "record 2, field 'start': must be >= 0, got -2"),
    ({"query_id": "q", "doc_id": "d1", "start": 5, "end": 101},
     "record 2, field 'end': 101 is past the end of document 'd1' (100 characters)"),
    ({"query_id": "q", "doc_id": "d11", "start": 0, "end": 1},
     "record 2, field 'doc_id': unknown document 'd11' (not in the corpus); did you mean 'd1'?"),
    ({"query_id": "q", "doc_id": "d1", "start": 0.5, "end": 3}, "record 2, field 'start': must be an integer, got 0.5"),
    ({"query_id": "q", "doc_id": "d1", "start": "x", "end": 3}, "record 2, field 'start': must be an integer, got 'x'"),
    ({"query_id": "q", "doc_id": "d1", "end": 3}, "record 2: no 'start' field"),
    ({"query_id": "q", "doc_id": "d1", "start": 0, "end": 3, "grade": True}, "record 2, field 'grade'"),
    ({"query_id": "q", "doc_id": "d1", "start": 0, "end": 5}, "record 2: query 'q' judges the span 'd1' [0, 5) twice "
                                                              "(also record 1)"),
])
def test_span_validation_names_record_and_field(record, message):
    with pytest.raises(ParseError) as err:
        SpanQrels.from_records([{"query_id": "q", "doc_id": "d1", "start": 0, "end": 5}, record], corpus=CORPUS)
    assert message in str(err.value)


def test_empty_records_are_an_error():
    with pytest.raises(EmptyInputError):
        SpanQrels.from_records([])


@pytest.mark.parametrize("suffix", ["jsonl", "json", "csv", "tsv", "parquet"])
def test_files_round_trip(tmp_path, suffix):
    sq = SpanQrels.from_records([{"query_id": "q1", "doc_id": "d1", "start": 3, "end": 9, "grade": 2},
                                 {"query_id": "q2", "doc_id": "d2", "start": 0, "end": 4}])
    sq.to_file(tmp_path / f"s.{suffix}")
    assert SpanQrels.from_file(tmp_path / f"s.{suffix}", corpus=CORPUS) == sq
    ch = chunks(40, 30)
    ch.to_file(tmp_path / f"c.{suffix}")
    assert Chunking.from_file(tmp_path / f"c.{suffix}") == ch


def test_file_errors_name_line_and_field(tmp_path):
    path = tmp_path / "spans.csv"
    path.write_text("query_id,doc_id,start,end\nq1,d1,0,5\n\nq1,d1,7,6\n")
    with pytest.raises(ParseError, match=r"spans\.csv:4: field 'end': a span needs start < end"):
        SpanQrels.from_file(path)
    path = tmp_path / "chunks.jsonl"
    path.write_text('{"chunk_id": "c1", "doc_id": "d1", "start": 0, "end": 5}\n'
                    '{"chunk_id": "c1", "doc_id": "d1", "start": 5, "end": 9}\n')
    with pytest.raises(ParseError, match=r"chunks\.jsonl:2: field 'chunk_id': chunk id 'c1' occurs twice \(also line"):
        Chunking.from_file(path)
    with pytest.raises(InvalidParameterError, match="cannot tell the format"):
        SpanQrels.from_file(tmp_path / "spans.txt")


def test_dataframe_and_aliases():
    df = pd.DataFrame({"qid": ["q1"], "docid": ["d1"], "start_char": [1], "end_char": [4], "relevance": [3]})
    assert SpanQrels.from_dataframe(df).to_records() == [
        {"query_id": "q1", "doc_id": "d1", "start": 1, "end": 4, "grade": 3}]
    df = pd.DataFrame({"node_id": ["n1"], "ref_doc_id": ["d1"], "start_char_idx": [0], "end_char_idx": [9]})
    assert Chunking.from_dataframe(df).to_records() == [{"chunk_id": "n1", "doc_id": "d1", "start": 0, "end": 9}]


def test_to_qrels_rules_and_grades():
    ch = chunks(20, 20)  # d1: [0,20) [20,40) ... ; d2: [0,20) [20,40) [40,50)
    sq = SpanQrels.from_records([
        {"query_id": "q", "doc_id": "d1", "start": 15, "end": 30, "grade": 1},   # cut by the boundary at 20
        {"query_id": "q", "doc_id": "d1", "start": 22, "end": 26, "grade": 3},   # inside d1#20
        {"query_id": "q", "doc_id": "d1", "start": 90, "end": 95, "grade": 0},   # judged not relevant
    ])
    assert sq.to_qrels(ch).to_dict() == {"q": {"d1#0": 1, "d1#20": 3, "d1#40": 0, "d1#60": 0, "d1#80": 0}}
    # the chunk [0,20) holds 5 of 15 characters of the grade-1 span
    assert sq.to_qrels(ch, "chars>=6").to_dict()["q"]["d1#0"] == 0
    assert sq.to_qrels(ch, "fraction>=0.3").to_dict()["q"]["d1#0"] == 1
    assert sq.to_qrels(ch, "contains").to_dict()["q"] == {"d1#0": 0, "d1#20": 3, "d1#40": 0, "d1#60": 0,
                                                          "d1#80": 0}
    derived = sq.to_qrels(ch, "contains")
    assert str(derived.rule) == "fraction>=1" and derived.coverage.unmatched == 1
    assert derived.coverage.to_dict() == {"spans": 2, "contained": 1, "cut": 1, "partial": 0, "outside": 0,
                                          "unmatched": 1}


def test_coverage_counts_spans_outside_chunks():
    ch = Chunking.from_records([{"chunk_id": "a", "doc_id": "d1", "start": 0, "end": 10},
                                {"chunk_id": "b", "doc_id": "d1", "start": 20, "end": 30}])
    sq = SpanQrels.from_records([
        {"query_id": "q", "doc_id": "d1", "start": 2, "end": 8},      # contained
        {"query_id": "q", "doc_id": "d1", "start": 8, "end": 22},     # partly outside (10..20 in no chunk)
        {"query_id": "q", "doc_id": "d1", "start": 12, "end": 18},    # outside
        {"query_id": "q", "doc_id": "d2", "start": 0, "end": 3},      # document not chunked
    ])
    cov = sq.coverage(ch)
    assert (cov.spans, cov.contained, cov.cut, cov.partial, cov.outside) == (4, 1, 0, 1, 2)
    assert cov.message().startswith("4 judged spans: 1 inside one chunk")
    assert "块" in cov.message("zh")


@pytest.mark.parametrize("rule", ["chars>=0", "fraction>=1.5", "lots", 3])
def test_bad_rules(rule):
    with pytest.raises(InvalidParameterError):
        ChunkRule.parse(rule)


def test_locate_answers_counts_every_case():
    corpus = {"d1": "Paris is in France. Paris is big.", "d2": "Lyon is in France.", "d3": "Rome"}
    ts = TestSet([Query("q1", "capital?", answers=("Paris", "Marseille")), Query("q2", "where?", answers=("France",)),
                  Query("q3", "?", answers=("Madrid",))],
                 {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}, corpus)
    built = locate_answers(ts)
    assert built.report.counts == {"answers": 4, "found_once": 1, "found_several": 1, "not_found": 2, "spans": 3,
                                   "queries_without_span": 1}
    assert locate_answers(ts, multiple="skip").report.counts["spans"] == 1
    assert locate_answers(ts, multiple="first").spans.to_records()[0]["start"] == 0
    # the whole corpus: "France" is in d1 and d2
    assert locate_answers(ts, scope="corpus").report.counts["found_several"] == 2
    assert "2 not found" in built.report.message() and "未找到" in built.report.message("zh")


def test_squad_offsets_shift_relocate_and_fail(tmp_path):
    data = {"data": [{"title": "T", "paragraphs": [{"id": "p1", "context": "  Alpha beta gamma.", "qas": [
        {"id": "x1", "answers": [{"text": "beta", "answer_start": 8}, {"text": "beta", "answer_start": 8}]},
        {"id": "x2", "answers": [{"text": "gamma", "answer_start": 12}]},        # off by one
        {"id": "x3", "answers": [{"text": "delta", "answer_start": -1}]},        # not in the context
    ]}]}]}
    corpus = {"p1": "Title Alpha beta gamma."}  # title + " " + stripped context
    built = squad_spans(data, corpus=corpus)
    assert built.report.counts == {"answers": 4, "exact": 2, "shifted": 3, "relocated": 1, "failed": 1, "merged": 1,
                                   "spans": 2, "questions_without_span": 1}
    assert built.spans.texts(corpus) == ["beta", "gamma"]
    raw = squad_spans(data)
    assert raw.report.counts["shifted"] == 0 and raw.spans.texts(raw.corpus) == ["beta", "gamma"]
    assert squad_spans(data, corpus=corpus, relocate=False).report.counts["failed"] == 2
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(data))
    assert squad_spans(path, corpus=corpus).spans == built.spans


def test_hit_location_reads_framework_metadata():
    from rankscope.retrieval import Hit

    assert hit_location(Hit("n1", 1.0, metadata={"ref_doc_id": "d", "start_char_idx": 3, "end_char_idx": 9})) == (
        "d", 3, 9)
    assert hit_location(Hit("n1", 1.0, text="abcd", metadata={"source": "d", "start_index": 5})) == ("d", 5, 9)
    assert hit_location(Hit("n1", 1.0, text="abcd")) is None


def test_chunking_summary_and_lookup():
    ch = chunks(40, 30)
    summary = ch.summary()
    assert summary["chunks"] == 6 and summary["overlap_chars"] == summary["total_chars"] - 150
    assert ch.lookup(["d1#30", "nope", "d2#0"]).tolist() == [1, -1, 4]
    assert ch.texts()["d2#30"] == "b" * 20
