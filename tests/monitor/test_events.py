"""Production events: JSON Lines and OTLP (protobuf and JSON) read, checked, bad ones rejected with a reason."""

from __future__ import annotations

import json

import pytest

from rankscope.monitor.events import MAX_RESULTS, EventRejected, parse_event, parse_jsonl, parse_time
from rankscope.monitor.otlp import decode_otlp


def test_a_full_event_is_read() -> None:
    ev = parse_event({"time": "2026-05-01T12:00:00Z", "query": "what is bm25", "retriever": "v2", "latency_ms": 41.5,
                      "query_id": 7, "results": [{"id": "d1", "score": 12.3, "text": "BM25 is"}, {"id": 5}]})
    assert ev.time == parse_time("2026-05-01T12:00:00+00:00")
    assert ev.ids == ("d1", "5") and ev.results[0].text == "BM25 is" and ev.results[1].score is None
    assert ev.retriever == "v2" and ev.latency_ms == 41.5 and ev.query_id == "7"
    assert parse_event(ev.to_dict()) == ev and parse_event(ev.to_dict()).key == ev.key


@pytest.mark.parametrize(("obj", "reason"), [
    ([1, 2], "not_an_object"),
    ({"query": "q", "reslts": []}, "unknown_field"),
    ({"query": "q", "results": [{"id": "a", "scroe": 1}]}, "unknown_field"),
    ({"results": []}, "no_query"),
    ({"query": "   "}, "no_query"),
    ({"query": "q", "results": {"id": "a"}}, "bad_results"),
    ({"query": "q", "results": [{"score": 1.0}]}, "bad_results"),
    ({"query": "q", "results": [{"id": "a", "score": "high"}]}, "bad_score"),
    ({"query": "q", "results": [{"id": "a", "score": float("nan")}]}, "bad_score"),
    ({"query": "q", "results": [{"id": "a", "text": "x" * 100_001}]}, "oversized_document"),
    ({"query": "q", "results": ["a"] * (MAX_RESULTS + 1)}, "too_many_results"),
    ({"query": "q", "time": "yesterday"}, "bad_time"),
    ({"query": "q", "time": True}, "bad_time"),
    ({"query": "q", "latency_ms": -3}, "bad_latency"),
    ({"query": "q", "retriever": ""}, "bad_retriever"),
])
def test_bad_events_are_rejected_with_a_reason(obj: object, reason: str) -> None:
    with pytest.raises(EventRejected) as info:
        parse_event(obj)
    assert info.value.reason == reason
    assert info.value.text("zh") != str(info.value)  # said in Chinese too


def test_a_misspelt_field_suggests_the_right_one() -> None:
    with pytest.raises(EventRejected, match="did you mean 'results'"):
        parse_event({"query": "q", "reslts": []})


def test_jsonl_keeps_the_good_lines_and_names_the_bad_ones() -> None:
    body = "\n".join([json.dumps({"query": "a", "results": ["d1"]}), "", "{not json",
                      json.dumps({"query": "b", "results": [], "extra": 1}), json.dumps({"query": "c"})])
    good, bad = parse_jsonl(body.encode(), source="events.jsonl")
    assert [e.query for e in good] == ["a", "c"]
    assert [(r.where, r.reason) for r in bad] == [("events.jsonl:3", "malformed"), ("events.jsonl:4", "unknown_field")]


def _span(attrs: dict[str, object], start: int = 1_700_000_000_000_000_000, ms: float = 12.5) -> object:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.trace.v1.trace_pb2 import Span

    def value(v: object) -> AnyValue:
        if isinstance(v, bool):
            return AnyValue(bool_value=v)
        if isinstance(v, int):
            return AnyValue(int_value=v)
        if isinstance(v, float):
            return AnyValue(double_value=v)
        return AnyValue(string_value=str(v))

    return Span(trace_id=bytes(16), span_id=bytes.fromhex("0102030405060708"), name="retrieve",
                start_time_unix_nano=start, end_time_unix_nano=start + int(ms * 1e6),
                attributes=[KeyValue(key=k, value=value(v)) for k, v in attrs.items()])


def _export(spans: list[object], version: str | None = "v3") -> object:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource
    from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans

    res = Resource(attributes=[KeyValue(key="service.version", value=AnyValue(string_value=version))] if version
                   else [])
    return ExportTraceServiceRequest(resource_spans=[ResourceSpans(resource=res,
                                                                   scope_spans=[ScopeSpans(spans=spans)])])


RETRIEVER = {"openinference.span.kind": "RETRIEVER", "input.value": "what is bm25",
             "retrieval.documents.0.document.id": "d1", "retrieval.documents.0.document.score": 2.5,
             "retrieval.documents.0.document.content": "BM25 is a ranking function",
             "retrieval.documents.1.document.content": "Okapi",
             "retrieval.documents.1.document.metadata": json.dumps({"doc_id": "d2", "score": 1.5}),
             "retrieval.documents.2.document.content": "no id anywhere"}


def test_otlp_protobuf_retriever_spans_become_events() -> None:
    req = _export([_span(RETRIEVER), _span({"openinference.span.kind": "LLM", "input.value": "x"}),
                   _span({"openinference.span.kind": "RETRIEVER"})])
    out = decode_otlp(req.SerializeToString())  # type: ignore[attr-defined]
    assert out.ignored == 1 and [r.reason for r in out.rejected] == ["span_without_query"]
    (ev,) = out.events
    assert ev.query == "what is bm25" and ev.retriever == "v3" and ev.latency_ms == pytest.approx(12.5)
    assert ev.ids[:2] == ("d1", "d2") and ev.ids[2].startswith("text:") and out.hashed_ids == 1
    assert [h.score for h in ev.results] == [2.5, 1.5, None] and ev.time == pytest.approx(1.7e9)


def test_otlp_json_with_hex_ids_and_a_json_input() -> None:
    from google.protobuf.json_format import MessageToDict

    attrs = {**RETRIEVER, "input.value": json.dumps({"query": "dense retrieval"}),
             "input.mime_type": "application/json", "metadata": json.dumps({"retriever_version": "shadow-2"})}
    body = MessageToDict(_export([_span(attrs)], version=None))  # type: ignore[arg-type]
    span = body["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["traceId"], span["spanId"] = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"  # OTLP/JSON: hex
    out = decode_otlp(json.dumps(body).encode(), "application/json")
    (ev,) = out.events
    assert ev.query == "dense retrieval" and ev.retriever == "shadow-2"


@pytest.mark.parametrize(("body", "ctype"), [(b"\xff\x00garbage", "application/x-protobuf"),
                                             (b"{not json", "application/json"), (b"[1]", "application/json")])
def test_malformed_otlp_is_rejected_whole(body: bytes, ctype: str) -> None:
    with pytest.raises(EventRejected) as info:
        decode_otlp(body, ctype)
    assert info.value.reason == "malformed_otlp"
