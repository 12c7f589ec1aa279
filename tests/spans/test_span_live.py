"""Live retrievers: the span measures read where each chunk lies from the hits (LlamaIndex, LangChain)."""

from __future__ import annotations

import pytest

import rankscope as rs
from rankscope.data.chunking import Chunking
from rankscope.data.spans import SpanQrels
from rankscope.data.testset import Query, TestSet
from rankscope.errors import InvalidParameterError

CORPUS = {
    "paris": "Paris is the capital of France. It lies on the Seine. The Louvre is a famous museum in Paris. " * 3,
    "berlin": "Berlin is the capital of Germany. The Spree flows through Berlin. Berlin has many museums. " * 3,
    "rome": "Rome is the capital of Italy. The Tiber flows through Rome. The Colosseum is in Rome. " * 3,
}


def make_testset():
    spans = SpanQrels.from_records([
        {"query_id": "q1", "doc_id": "paris", "start": 32, "end": 55},      # "It lies on the Seine."
        {"query_id": "q2", "doc_id": "berlin", "start": 34, "end": 66},     # "The Spree flows through Berlin."
        {"query_id": "q3", "doc_id": "rome", "start": 60, "end": 86, "grade": 2},
    ], corpus=CORPUS)
    queries = [Query("q1", "Seine river"), Query("q2", "Spree flows"), Query("q3", "Colosseum")]
    return TestSet(queries, None, CORPUS, "cities", spans=spans)


def overlap_score(query, text):
    words = set(query.lower().split())
    return sum(w.strip(".,") in words for w in text.lower().split())


@pytest.fixture(scope="module")
def nodes():
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter

    docs = [Document(text=t, id_=d) for d, t in CORPUS.items()]
    return SentenceSplitter(chunk_size=40, chunk_overlap=8).get_nodes_from_documents(docs)


def test_llamaindex_hits_carry_their_place(nodes, tmp_path):
    from llama_index.core.schema import NodeWithScore

    def retrieve(query, k):
        scored = sorted(nodes, key=lambda n: (-overlap_score(query, n.text), n.node_id))
        return [NodeWithScore(node=n, score=float(overlap_score(query, n.text))) for n in scored[:k]]

    metrics = ["span_recall@2", "span_precision@2", "span_precision_omega", "ndcg@2"]
    ts = make_testset()
    ev = rs.evaluate_retriever(retrieve, ts, metrics, k=3, progress=False, cache=tmp_path / "c.jsonl")
    assert ev.relevance == "spans" and ev.result.mean()["span_recall@2"] > 0.5
    # the same numbers as an offline evaluation with the chunk table
    offline = rs.evaluate(ts.spans, ev.run, metrics, chunking=Chunking.from_llamaindex(nodes, corpus=CORPUS))
    assert offline.mean() == pytest.approx(ev.result.mean(), abs=0)
    # resumed from the cache: the places are cached too
    again = rs.evaluate_retriever(retrieve, ts, metrics, k=3, progress=False, cache=tmp_path / "c.jsonl",
                                cache_check=0)
    assert again.from_cache == 3 and again.result.mean() == ev.result.mean()


def test_langchain_documents_with_start_index():
    from langchain_core.documents import Document

    size, step = 60, 45
    docs = [Document(page_content=t[s:s + size], id=f"{d}:{s}", metadata={"source": d, "start_index": s})
            for d, t in CORPUS.items() for s in range(0, len(t), step)]

    def search(query, k):
        return sorted(docs, key=lambda doc: (-overlap_score(query, doc.page_content), doc.id))[:k]

    ts = make_testset()
    ev = rs.evaluate_retriever(search, ts, ["span_recall@3", "span_iou@3", "mrr"], k=3, progress=False)
    offline = rs.evaluate(ts.spans, ev.run, ["span_recall@3", "span_iou@3", "mrr"],
                          chunking=Chunking.from_langchain(docs, corpus=CORPUS))
    assert offline.mean() == ev.result.mean()
    assert ev.result.to_dict()["spans"]["chunking"] == "retrieved hits"


def test_hits_without_places_are_named():
    def search(query, k):
        return [("mystery", 1.0)]

    with pytest.raises(InvalidParameterError, match=r"not chunks of chunking 'retrieved hits'.*'mystery'"):
        rs.evaluate_retriever(search, make_testset(), ["span_recall@1"], k=1, progress=False)
    with pytest.raises(rs.RankscopeError, match="no span judgments"):
        rs.evaluate_retriever(search, TestSet([Query("q", "x")], {"q": {"a": 1}}), ["span_recall@1"], k=1,
                              progress=False)
