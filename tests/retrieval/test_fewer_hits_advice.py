"""The fewer-than-k warning gives the advice of the retriever at hand: BM25's is not LangChain's search_kwargs."""

from __future__ import annotations

import warnings

import pytest

import rankscope
from rankscope.data.testset import TestSet


def _ts() -> TestSet:
    corpus = {f"d{i}": f"word{i} common text" for i in range(4)} | {f"x{i}": f"other{i}" for i in range(20)}
    return TestSet.from_annotations(["word1", "word2", "word3"], [["d1"], ["d2"], ["d3"]], corpus=corpus)


def _fewer(ev: rankscope.retrieval.RetrieverEvaluation) -> str:
    return next(w.text() for w in ev.warnings if w.code == "fewer_hits")


def test_bm25_says_it_returns_matching_documents_only() -> None:
    pytest.importorskip("bm25s")
    from rankscope.retrieval.bm25 import BM25Retriever

    ts = _ts()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = rankscope.evaluate_retriever(BM25Retriever(ts.corpus), ts, ["mrr"], k=10, progress=False)
    text = _fewer(ev)
    assert "BM25 returns only the documents that share a word with the query" in text
    assert "search_kwargs" not in text and "similarity_top_k" not in text
    assert "share a word" not in _fewer(rankscope.evaluate_retriever(lambda q, k: ["d1"], ts, ["mrr"], k=10,
                                                                     progress=False))
