"""Span measures through rs.evaluate: hand-computed values, the stated rule, errors, token units."""

from __future__ import annotations

import pytest

import rankscope as rs
from rankscope.data.chunking import Chunking
from rankscope.data.spans import SpanQrels
from rankscope.errors import InvalidParameterError, UnknownMetricError

TEXT = {"d1": "0123456789" * 4, "d2": "abcdefghij" * 2}
# d1: a [0,10) b [8,20) c [20,30) d [30,40); d2: e [0,20)
CHUNKS = Chunking.from_records(
    [{"chunk_id": c, "doc_id": d, "start": s, "end": e}
     for c, d, s, e in [("a", "d1", 0, 10), ("b", "d1", 8, 20), ("c", "d1", 20, 30), ("d", "d1", 30, 40),
                        ("e", "d2", 0, 20)]], corpus=TEXT, name="hand")
SPANS = SpanQrels.from_records([
    {"query_id": "overlap", "doc_id": "d1", "start": 5, "end": 12},               # inside a ∪ b, shared by both
    {"query_id": "adjacent", "doc_id": "d1", "start": 22, "end": 26, "grade": 1},
    {"query_id": "adjacent", "doc_id": "d1", "start": 26, "end": 32, "grade": 2},  # touches, crosses c|d
    {"query_id": "other_doc", "doc_id": "d2", "start": 2, "end": 6},
], corpus=TEXT)
RUN = rs.Run.from_ranked_lists({"overlap": ["a", "b", "e"], "adjacent": ["c", "a", "d"], "other_doc": ["a", "e"]})
M = ["span_recall@1", "span_recall@2", "span_precision@2", "span_iou@2", "span_precision_omega", "span_iou_omega",
     "span_recall(weight=graded)@1", "span_recall(rel=2)@1", "context_size@2", "recall@2", "ndcg@3"]


def test_hand_computed_values():
    res = rs.evaluate(SPANS, RUN, M, chunking=CHUNKS)
    got = res.per_query.to_dict()
    # overlap: R = [5,12) (7); a = [0,10) holds 5; a + b hold all 7 with 10 + 12 = 22 retrieved characters
    assert got["overlap"]["span_recall@1"] == 5 / 7
    assert got["overlap"]["span_recall@2"] == 1.0
    assert got["overlap"]["span_precision@2"] == 7 / 22
    assert got["overlap"]["span_iou@2"] == 7 / (7 + 22 - 7)
    assert got["overlap"]["span_precision_omega"] == 7 / 22  # a and b are both needed
    # adjacent: R = [22,32) (10); c [20,30) holds 8; Ω: c + d = 20 characters
    assert got["adjacent"]["span_recall@1"] == 0.8
    assert got["adjacent"]["span_precision@2"] == 8 / 20   # c + a, a holds nothing of R
    assert got["adjacent"]["span_precision_omega"] == 10 / 20
    assert got["adjacent"]["span_iou_omega"] == 10 / (10 + 20 - 10)
    # graded: [22,26) weighs 1/2, [26,32) weighs 1; c holds 4 * 0.5 + 4 * 1 = 6 of 2 + 6 = 8
    assert got["adjacent"]["span_recall(weight=graded)@1"] == 6 / 8
    assert got["adjacent"]["span_recall(rel=2)@1"] == 4 / 6
    # other_doc: a is in d1, holds nothing; e [0,20) of d2 holds the span
    assert got["other_doc"]["span_recall@1"] == 0.0
    assert got["other_doc"]["span_recall@2"] == 1.0
    assert got["other_doc"]["context_size@2"] == 30.0
    # ordinary measures on the derived chunk qrels (any overlap): overlap -> a, b relevant; adjacent -> c, d
    assert got["overlap"]["recall@2"] == 1.0 and got["adjacent"]["recall@2"] == 0.5
    spans = res.to_dict()["spans"]
    assert spans["chunk_rule"] == "chars>=1" and spans["chunking"] == "hand"
    assert spans["coverage"] == {"spans": 4, "contained": 2, "cut": 2, "partial": 0, "outside": 0, "unmatched": 0}


def test_rule_changes_only_the_chunk_qrels():
    strict = rs.evaluate(SPANS, RUN, ["recall@2", "span_recall@2"], chunking=CHUNKS, rule="contains")
    loose = rs.evaluate(SPANS, RUN, ["recall@2", "span_recall@2"], chunking=CHUNKS)
    assert strict.per_query["span_recall@2"].tolist() == loose.per_query["span_recall@2"].tolist()
    assert strict.to_dict()["spans"]["chunk_rule"] == "fraction>=1"
    # no single chunk contains the 'overlap' span: under 'contains' it has no relevant chunk
    assert strict.per_query.row("overlap")["recall@2"] == 0.0


def test_queries_whose_spans_no_chunk_touches_still_count():
    spans = SpanQrels.from_records([{"query_id": "q1", "doc_id": "d1", "start": 0, "end": 5},
                                    {"query_id": "q2", "doc_id": "d9", "start": 0, "end": 5}])
    run = rs.Run.from_ranked_lists({"q1": ["a"], "q2": ["a"]})
    res = rs.evaluate(spans, run, ["span_recall@1", "mrr"], chunking=CHUNKS)
    assert res.queries.evaluated == 2 and res.per_query.row("q2") == {"span_recall@1": 0.0, "mrr": 0.0}
    assert res.to_dict()["spans"]["queries_without_chunk"] == 1
    assert res.to_dict()["spans"]["coverage"]["outside"] == 1


def test_token_units():
    text = {"d": "检索 增强 生成 是 RAG 的 核心"}
    ch = Chunking.from_records([{"chunk_id": "x", "doc_id": "d", "start": 0, "end": 8},
                                {"chunk_id": "y", "doc_id": "d", "start": 8, "end": len(text["d"])}], corpus=text)
    spans = SpanQrels.from_records([{"query_id": "q", "doc_id": "d", "start": 6, "end": 12}])  # "生成 是 R"
    run = rs.Run.from_ranked_lists({"q": ["x"]})
    res = rs.evaluate(spans, run, ["span_recall(unit=words)@1", "context_size(unit=words)@1", "span_recall@1"],
                      chunking=ch)
    # words: 检 索 增 强 生 成 | 是 RAG 的 核 心; the span touches 生 成 是 RAG -> 2 of 4 in x
    assert res.mean() == {"span_recall(unit=words)@1": 0.5, "context_size(unit=words)@1": 6.0,
                          "span_recall@1": 2 / 6}
    with pytest.raises(InvalidParameterError, match="needs the document texts"):
        rs.evaluate(spans, run, ["span_recall(unit=words)@1"], chunking=Chunking.from_records(ch.to_records()))


def test_errors():
    with pytest.raises(InvalidParameterError, match=r"span_recall@5 needs span judgments"):
        rs.evaluate(rs.Qrels.from_dict({"q": {"a": 1}}), RUN, ["span_recall@5"])
    with pytest.raises(InvalidParameterError, match="chunking= goes with span judgments"):
        rs.evaluate(rs.Qrels.from_dict({"q": {"a": 1}}), RUN, ["mrr"], chunking=CHUNKS)
    with pytest.raises(InvalidParameterError, match="need chunking="):
        rs.evaluate(SPANS, RUN, ["mrr"])
    bad = rs.Run.from_ranked_lists({"overlap": ["a", "zz"]})
    with pytest.raises(InvalidParameterError, match=r"1 of 2 retrieved ids are not chunks of chunking 'hand'"):
        rs.evaluate(SPANS, bad, ["span_recall@2"], chunking=CHUNKS)
    assert rs.evaluate(SPANS, bad, ["mrr"], chunking=CHUNKS).mean()["mrr"] >= 0  # ordinary measures: unjudged
    with pytest.raises(InvalidParameterError, match="'binary' or 'graded'"):
        rs.parse_metric("span_recall(weight=heavy)@5")
    with pytest.raises(InvalidParameterError, match="unknown unit"):
        rs.parse_metric("span_recall(unit=bytes)@5")
    with pytest.raises(UnknownMetricError, match="span_recall"):
        rs.parse_metric("span_recal@5")


def test_spellings_parse_to_one_measure():
    assert rs.parse_metric("span_recall@5") == rs.parse_metric("SPAN_RECALL@5")
    assert str(rs.parse_metric("precision_omega")) == "span_precision_omega"
    assert str(rs.parse_metric("span_recall(weight=graded,unit=jieba)@5")) == "span_recall(unit=jieba,weight=graded)@5"


def test_compare_runs_on_span_judgments():
    other = rs.Run.from_ranked_lists({"overlap": ["b", "a"], "adjacent": ["d", "c"], "other_doc": ["e"]})
    c = rs.compare(SPANS, {"one": RUN, "two": other}, ["span_recall@1", "ndcg@2"], chunking=CHUNKS)
    assert c.means["one"]["span_recall@1"] == rs.evaluate(SPANS, RUN, ["span_recall@1"], chunking=CHUNKS).mean()[
        "span_recall@1"]
    assert "span_recall@1" not in c.ceilings and "ndcg@2" in c.ceilings
