"""LangChain and LlamaIndex adapters, offline: in-memory stores with a deterministic keyword embedding."""

from __future__ import annotations

import math

import pytest

from rankscope.data.testset import TestSet
from rankscope.retrieval import Hit, LangChainRetriever, LlamaIndexRetriever, as_retriever, evaluate_retriever

VOCAB = ["python", "java", "docker", "kubernetes", "database", "index", "neural", "network"]

DOCS = {
    "py": "python is a programming language; python code",
    "jv": "java runs on the jvm",
    "k8s": "kubernetes schedules docker containers",
    "db": "a database uses an index",
    "nn": "a neural network learns",
}


def keyword_vector(text: str) -> list[float]:
    """Counts of the vocabulary words, L2-normalised (a small epsilon keeps empty texts valid)."""
    words = text.lower().replace(";", " ").split()
    v = [float(words.count(w)) for w in VOCAB] + [1e-3]
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


QUESTIONS = ["how to write python", "docker and kubernetes", "which database index", "neural network"]
RELEVANT = [["py"], ["k8s"], ["db"], ["nn"]]


def _testset() -> TestSet:
    return TestSet.from_annotations(QUESTIONS, RELEVANT)


# -- LangChain ------------------------------------------------------------------------


def _langchain_store():  # type: ignore[no-untyped-def]
    lc_docs = pytest.importorskip("langchain_core.documents")
    lc_emb = pytest.importorskip("langchain_core.embeddings")
    lc_vs = pytest.importorskip("langchain_core.vectorstores")

    class KeywordEmbeddings(lc_emb.Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [keyword_vector(t) for t in texts]

        def embed_query(self, text: str) -> list[float]:
            return keyword_vector(text)

    store = lc_vs.InMemoryVectorStore(KeywordEmbeddings())
    docs = [lc_docs.Document(page_content=text, id=doc_id, metadata={"source": f"{doc_id}.txt"})
            for doc_id, text in DOCS.items()]
    store.add_documents(docs)
    return store


def test_langchain_retriever_and_vector_store() -> None:
    store = _langchain_store()
    retriever = store.as_retriever(search_kwargs={"k": 2})
    adapted = as_retriever(retriever)
    assert isinstance(adapted, LangChainRetriever)
    hits = adapted.search("how to write python", 3)  # evaluated as configured: its own k=2, never overridden
    assert [h.id for h in hits][:1] == ["py"] and len(hits) == 2
    assert hits[0].text == DOCS["py"] and hits[0].metadata == {"source": "py.txt"}

    ev = evaluate_retriever(retriever, _testset(), ["mrr", "recall@1"], k=2, progress=False)
    assert ev.result.mean() == {"mrr": 1.0, "recall@1": 1.0} and ev.errors == {}

    # the vector store itself (similarity_search_with_score): scores kept, ids from Document.id
    ev_store = evaluate_retriever(store, _testset(), ["mrr"], k=2, progress=False)
    assert ev_store.result.mean() == {"mrr": 1.0}
    by_source = LangChainRetriever(store, id_key="source").search("neural network", 1)
    assert by_source[0].id == "nn.txt" and by_source[0].score == pytest.approx(1.0)


def test_langchain_documents_from_a_plain_function() -> None:
    lc_docs = pytest.importorskip("langchain_core.documents")

    def search(query: str, k: int):  # type: ignore[no-untyped-def]
        return [lc_docs.Document(page_content="x", metadata={"doc_id": "py"})]

    (hit,) = as_retriever(search).search("q", 5)
    assert (hit.id, hit.text, hit.metadata) == ("py", "x", {"doc_id": "py"}) and math.isnan(hit.score)
    assert isinstance(hit, Hit)


# -- LlamaIndex ------------------------------------------------------------------------


def _llama_index():  # type: ignore[no-untyped-def]
    core = pytest.importorskip("llama_index.core")
    base = pytest.importorskip("llama_index.core.base.embeddings.base")

    class KeywordEmbedding(base.BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return keyword_vector(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return keyword_vector(text)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return keyword_vector(query)

    docs = [core.Document(text=text, id_=doc_id, metadata={"doc_id": doc_id}) for doc_id, text in DOCS.items()]
    return core.VectorStoreIndex.from_documents(docs, embed_model=KeywordEmbedding(model_name="keyword"))


def test_llamaindex_retriever_and_index() -> None:
    index = _llama_index()
    retriever = index.as_retriever(similarity_top_k=2)
    adapted = as_retriever(retriever)
    assert isinstance(adapted, LlamaIndexRetriever)
    hits = adapted.search("docker and kubernetes", 2)
    assert hits[0].metadata is not None and hits[0].metadata["ref_doc_id"] == "k8s"
    assert hits[0].text == DOCS["k8s"]

    # node ids are chunk ids; fold them to documents through the node's ref_doc_id
    ev = evaluate_retriever(retriever, _testset(), ["mrr"], k=2, chunk_to_doc="metadata:ref_doc_id", progress=False)
    assert ev.doc_result is not None and ev.doc_result.mean() == {"mrr": 1.0}
    assert ev.result.mean() == {"mrr": 0.0}  # node ids are not the judged document ids

    # the index itself: one retriever per k; ids taken from metadata
    ev_index = evaluate_retriever(LlamaIndexRetriever(index, id_key="doc_id"), _testset(), ["mrr", "P@3"], k=3,
                                  progress=False)
    assert ev_index.result.mean()["mrr"] == 1.0
    assert ev_index.result.mean()["P@3"] == pytest.approx(1 / 3)
    assert all(len(ranked) == 3 for ranked in ev_index.run.to_dict().values())


def test_langchain_runnable_returning_ids() -> None:
    runnables = pytest.importorskip("langchain_core.runnables")
    chain = runnables.RunnableLambda(lambda q: ["k8s", "py"] if "docker" in q else ["py", "k8s"])
    adapted = as_retriever(chain)
    assert isinstance(adapted, LangChainRetriever)
    ts = TestSet.from_annotations(["docker", "python"], [["k8s"], ["k8s"]])
    ev = evaluate_retriever(chain, ts, ["mrr"], progress=False)
    assert ev.result.per_query.to_dict() == {"q1": {"mrr": 1.0}, "q2": {"mrr": 0.5}}
