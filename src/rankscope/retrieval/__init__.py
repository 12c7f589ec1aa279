"""Evaluate a live retriever: protocol, runner (concurrency, retry, resume), chunk folding, answer matching,
and baseline retrievers (BM25, dense, hybrid fusion).

Names are imported lazily so that ``import rankscope.retrieval`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Hit": "rankscope.retrieval.protocol",
    "Retriever": "rankscope.retrieval.protocol",
    "BatchRetriever": "rankscope.retrieval.protocol",
    "as_retriever": "rankscope.retrieval.protocol",
    "evaluate_retriever": "rankscope.retrieval.runner",
    "RetrieverOptions": "rankscope.retrieval.options",
    "RetrieverEvaluation": "rankscope.retrieval.evaluation",
    "UnknownIdsWarning": "rankscope.retrieval.runner",
    "fold_chunks": "rankscope.retrieval.chunks",
    "map_chunk_ids": "rankscope.retrieval.chunks",
    "answer_qrels": "rankscope.retrieval.answers",
    "contains_answer": "rankscope.retrieval.answers",
    "normalize_text": "rankscope.retrieval.answers",
    "UnknownIds": "rankscope.retrieval.unknown",
    "unknown_ids": "rankscope.retrieval.unknown",
    "LangChainRetriever": "rankscope.retrieval.adapters",
    "LlamaIndexRetriever": "rankscope.retrieval.adapters",
    "HaystackRetriever": "rankscope.retrieval.adapters",
    "BM25Retriever": "rankscope.retrieval.bm25",
    "DenseRetriever": "rankscope.retrieval.dense",
    "OpenAIEmbeddings": "rankscope.retrieval.openai_embeddings",
    "HybridRetriever": "rankscope.retrieval.hybrid",
    "fuse": "rankscope.retrieval.fusion",
    "train_fusion": "rankscope.retrieval.fusion",
    "tune": "rankscope.retrieval.tune",
}

__all__ = [
    "RetrieverOptions",
    "BM25Retriever",
    "BatchRetriever",
    "DenseRetriever",
    "Hit",
    "HaystackRetriever",
    "HybridRetriever",
    "LangChainRetriever",
    "LlamaIndexRetriever",
    "OpenAIEmbeddings",
    "Retriever",
    "RetrieverEvaluation",
    "UnknownIds",
    "UnknownIdsWarning",
    "answer_qrels",
    "as_retriever",
    "contains_answer",
    "evaluate_retriever",
    "fold_chunks",
    "fuse",
    "map_chunk_ids",
    "normalize_text",
    "train_fusion",
    "tune",
    "unknown_ids",
]

if TYPE_CHECKING:
    from rankscope.retrieval.adapters import HaystackRetriever, LangChainRetriever, LlamaIndexRetriever
    from rankscope.retrieval.answers import answer_qrels, contains_answer, normalize_text
    from rankscope.retrieval.bm25 import BM25Retriever
    from rankscope.retrieval.chunks import fold_chunks, map_chunk_ids
    from rankscope.retrieval.dense import DenseRetriever
    from rankscope.retrieval.evaluation import RetrieverEvaluation
    from rankscope.retrieval.fusion import fuse, train_fusion
    from rankscope.retrieval.hybrid import HybridRetriever
    from rankscope.retrieval.openai_embeddings import OpenAIEmbeddings
    from rankscope.retrieval.options import RetrieverOptions
    from rankscope.retrieval.protocol import BatchRetriever, Hit, Retriever, as_retriever
    from rankscope.retrieval.runner import UnknownIdsWarning, evaluate_retriever
    from rankscope.retrieval.tune import tune
    from rankscope.retrieval.unknown import UnknownIds, unknown_ids


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
