"""Retriever factories for chunking comparisons: one retriever built per chunking from its chunk texts.

A factory is any callable ``factory(chunks: {chunk_id: text}) -> retriever`` (anything
:func:`~rankscope.retrieval.protocol.as_retriever` accepts).  Named ones:

``"bm25"``
    :class:`~rankscope.retrieval.bm25.BM25Retriever` (jieba for Chinese, stemming for English);
``"e5"``
    :class:`~rankscope.retrieval.dense.DenseRetriever` with multilingual-e5-small (4-bit, CPU,
    no torch; extra ``rankscope[e5]``): the Chinese / multilingual dense baseline;
``"dense"``
    :class:`~rankscope.retrieval.dense.DenseRetriever` with its default model (all-MiniLM-L6-v2, English);
``"hybrid"``
    reciprocal rank fusion of ``bm25`` and ``e5``.

The dense factories keep each chunking's embeddings in ``cache_dir`` (the dense
retriever's own cache, keyed by model and chunk texts), so running a comparison again
embeds nothing.

>>> factory = make_factory("bm25")
>>> [h.id for h in factory({"a#0": "支持中文的检索", "a#1": "English text"}).search("中文", 1)]
['a#0']
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _

__all__ = ["make_factory", "FACTORY_NAMES"]

FACTORY_NAMES = ("bm25", "e5", "dense", "hybrid")
Factory = Callable[[dict[str, str]], Any]


def make_factory(retriever: str | Factory, *, cache_dir: str | Path | None = None) -> Factory:
    """A factory from a name (see the module doc) or a callable (returned as it is)."""
    if callable(retriever):
        return retriever
    if retriever not in FACTORY_NAMES:
        import difflib

        close = difflib.get_close_matches(str(retriever), FACTORY_NAMES, n=1)
        names = Items(FACTORY_NAMES)
        if close:
            raise InvalidParameterError(_("unknown retriever {name!r}: use one of {names} or a function chunk "
                                          "texts -> retriever; did you mean {close!r}?", name=retriever, names=names,
                                          close=close[0]))
        raise InvalidParameterError(_("unknown retriever {name!r}: use one of {names} or a function chunk texts -> "
                                      "retriever", name=retriever, names=names))

    def bm25(chunks: dict[str, str]) -> Any:
        from rankscope.retrieval.bm25 import BM25Retriever

        return BM25Retriever(chunks, name="bm25")

    def dense(model: str, name: str) -> Factory:
        def build(chunks: dict[str, str]) -> Any:
            from rankscope.retrieval.dense import DenseRetriever

            return DenseRetriever(chunks, model, cache_dir=cache_dir, name=name)
        return build

    e5 = dense("multilingual-e5-small", "e5")
    if retriever == "bm25":
        return bm25
    if retriever == "dense":
        from rankscope.retrieval.dense import DEFAULT_MODEL

        return dense(DEFAULT_MODEL, "dense")
    if retriever == "e5":
        return e5

    def hybrid(chunks: dict[str, str]) -> Any:
        from rankscope.retrieval.hybrid import HybridRetriever

        return HybridRetriever({"bm25": bm25(chunks), "e5": e5(chunks)}, method="rrf", name="hybrid")

    return hybrid
