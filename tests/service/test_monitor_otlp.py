"""A real LangChain retriever instrumented with openinference-instrumentation-langchain exports its spans by
OTLP/HTTP to the service; they become events, a sample is judged by the fake OpenAI-compatible judge of the labels
tests, and the window is scored."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from labels.fake_llm import FakeLLM

from .live_server import LiveServer
from .monitor_helpers import wait_for

#: the fake judge gives the grade a passage names (grade=N): even documents are relevant
DOCS = {f"doc{i}": f"Passage number {i:03d}, grade={3 if i % 2 == 0 else 0}." for i in range(40)}


def _langchain_retriever() -> Any:
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class KeywordRetriever(BaseRetriever):
        """Returns five documents chosen by the query's number (a stand-in for a vector store)."""

        def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                    ) -> list[Document]:
            n = int(query.split()[-1])
            ids = [f"doc{(n + j) % 40}" for j in range(5)]
            return [Document(page_content=DOCS[i], metadata={"id": i, "score": 1.0 - j / 10})
                    for j, i in enumerate(ids)]

    return KeywordRetriever()


@pytest.mark.slow
def test_langchain_spans_over_otlp_become_judged_events(tmp_path: Path) -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    with FakeLLM() as llm, LiveServer(f"sqlite:///{tmp_path / 's.sqlite3'}", monitor_poll_seconds=0.1,
                                      judge_url=llm.url, judge_model="fake-judge",
                                      judge_cache=str(tmp_path / "judge.sqlite3")) as server:
        r = httpx.post(f"{server.url}/api/v1/monitors", json={
            "name": "rag-app", "kind": "traffic", "window_seconds": 3,
            "judge": {"metrics": ["precision@5", "hit_rate@1"], "sample": {"per_window": 8}, "budget": {"calls": 500}},
            "rules": ["precision@5 >= 0.2", "empty_rate <= 0.5"]})
        assert r.status_code == 201, r.text
        mid = r.json()["id"]
        provider = TracerProvider(resource=Resource.create({"service.name": "rag-app", "service.version": "v7"}))
        exporter = OTLPSpanExporter(endpoint=f"{server.url}/api/v1/monitors/{mid}/v1/traces")
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        instrumentor = LangChainInstrumentor()
        instrumentor.instrument(tracer_provider=provider)
        try:
            retriever = _langchain_retriever()
            for i in range(12):
                retriever.invoke(f"question {i}")
        finally:
            instrumentor.uninstrument()
            provider.shutdown()
        status = wait_for("the events", lambda: (s := httpx.get(f"{server.url}/api/v1/monitors/{mid}").json())
                          ["events"] >= 12 and s)
        assert status["rejected"] == {}
        windows = wait_for("a judged window", lambda: [w for w in httpx.get(
            f"{server.url}/api/v1/monitors/{mid}/windows").json() if w["closed"] and w["judged"]], timeout=60)
        judged = {}
        for w in windows:
            assert w["retriever"] == "v7"
            judged[w["id"]] = w["judged"]
        total_scored = sum(j["scored"] for j in judged.values())
        assert 1 <= total_scored <= 12 and all(j["calls"] <= 40 for j in judged.values())
        p5 = next(j["metrics"]["precision@5"] for j in judged.values() if j["scored"])
        # each query gets 5 consecutive docs: 2 or 3 of them have an even number (grade 3)
        assert 0.4 <= p5["mean"] <= 0.6 and p5["lower"] <= p5["mean"] <= p5["upper"]
        assert llm.requests, "the judge was asked"
        spent = httpx.get(f"{server.url}/api/v1/monitors/{mid}").json()["judge"]
        assert spent["budget"] == {"calls": 500} and 0 < spent["spent_today"]["calls"] <= 500
        assert spent["spent_today"]["tokens"] > 0
        ev_page = httpx.get(f"{server.url}/monitors/{mid}")
        assert ev_page.status_code == 200 and "v7" in ev_page.text and 'id="judge-budget"' in ev_page.text


def test_otlp_to_the_standard_path_finds_the_monitor_by_name(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from monitor.test_events import RETRIEVER, _export, _span

    from .conftest import make_client

    with make_client(f"sqlite:///{tmp_path / 's.sqlite3'}", monitor_poll_seconds=0.1) as c:
        assert isinstance(c, TestClient)
        assert c.post("/api/v1/monitors", json={"name": "svc", "kind": "traffic"}).status_code == 201
        req = _export([_span(RETRIEVER, start=int(time.time() * 1e9)), _span({"openinference.span.kind": "RETRIEVER"})])
        from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

        req.resource_spans[0].resource.attributes.append(  # type: ignore[attr-defined]
            KeyValue(key="service.name", value=AnyValue(string_value="svc")))
        r = c.post("/v1/traces", content=req.SerializeToString(),  # type: ignore[attr-defined]
                   headers={"content-type": "application/x-protobuf"})
        assert r.status_code == 200, r.text
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

        answer = ExportTraceServiceResponse.FromString(r.content)
        assert answer.partial_success.rejected_spans == 1
        assert "without a query" in answer.partial_success.error_message
        status = c.get("/api/v1/monitors/1").json()
        assert status["events"] == 1 and status["rejected"] == {"span_without_query": 1}
        other = c.post("/v1/traces", content=_export([]).SerializeToString(),  # type: ignore[attr-defined]
                       headers={"content-type": "application/x-protobuf"})
        assert other.status_code == 404


def test_gzip_otlp_is_decompressed_within_the_limit(tmp_path: Path) -> None:
    import gzip

    from monitor.test_events import RETRIEVER, _export, _span

    from .conftest import make_client

    with make_client(f"sqlite:///{tmp_path / 's.sqlite3'}", monitor_poll_seconds=0.1, max_data_bytes=100_000) as c:
        mid = c.post("/api/v1/monitors", json={"name": "gz", "kind": "traffic"}).json()["id"]
        body = _export([_span(RETRIEVER, start=int(time.time() * 1e9))]).SerializeToString()  # type: ignore[attr-defined]
        headers = {"content-type": "application/x-protobuf", "content-encoding": "gzip"}
        ok = c.post(f"/api/v1/monitors/{mid}/v1/traces", content=gzip.compress(body), headers=headers)
        assert ok.status_code == 200 and c.get(f"/api/v1/monitors/{mid}").json()["events"] == 1
        bomb = gzip.compress(b"\x00" * 5_000_000)  # 5 MB of zeros in a few kB
        assert len(bomb) < 100_000
        r = c.post(f"/api/v1/monitors/{mid}/v1/traces", content=bomb, headers=headers)
        assert r.status_code == 413
        cut = c.post(f"/api/v1/monitors/{mid}/v1/traces", content=gzip.compress(body)[:-10], headers=headers)
        assert cut.status_code == 400
