"""Adapters for LangChain and LlamaIndex retrievers (optional extras, imported lazily).

* LangChain: a retriever (``BaseRetriever``: ``invoke(query)`` returns
  ``Document`` objects) or a vector store (``similarity_search_with_score``,
  asked for ``k``).
* LlamaIndex: a retriever (``retrieve(query)`` returns ``NodeWithScore``) or an
  index (``as_retriever(similarity_top_k=k)``).

A configured *retriever* of either library is evaluated as configured: its
own top-k (LangChain ``search_kwargs={"k": 3}``, LlamaIndex
``similarity_top_k``, default 4 and 2) is never overridden, because that is
what the application retrieves; the hits are cut at the evaluation's ``k``.
When it returns fewer than ``k`` hits for most queries the evaluation warns
(metrics ``@k`` then see fewer hits): set the retriever's top-k, or evaluate
at its k.  A vector store or an index (no top-k of its own) is asked for ``k``.

The id of a hit is, in this order: ``metadata[id_key]`` when ``id_key`` is
given, the object's own id (``Document.id`` / ``node.node_id``), the first of
``id``, ``doc_id``, ``_id``... in its metadata.  The document a LlamaIndex node
came from is kept as ``metadata["ref_doc_id"]``, so chunk hits can be folded
with ``chunk_to_doc="metadata:ref_doc_id"``; its character offsets in that document
as ``metadata["start_char_idx"]`` / ``["end_char_idx"]``.  A LangChain document split
with ``add_start_index=True`` carries ``metadata["start_index"]``.  With these the
span measures know where each retrieved chunk lies (see
:func:`rankscope.data.chunking.hit_location`): no separate chunk table is needed.

Neither library is imported by this module; objects are recognised by the
module their class (or a base class) comes from.

>>> adapt(object()) is None
True
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from rankscope.i18n import _
from rankscope.retrieval.protocol import _ID_KEYS, Hit, RetrieverContractError, _as_id, _as_score, dedupe, normalise

__all__ = ["LangChainRetriever", "LlamaIndexRetriever", "adapt", "langchain_hit", "llamaindex_hit"]


def _from_library(obj: Any, prefix: str) -> bool:
    return any(c.__module__.startswith(prefix) for c in type(obj).__mro__)


def _metadata_id(meta: Mapping[str, Any] | None, id_key: str | None) -> Any:
    if not meta:
        return None
    if id_key is not None:
        return meta.get(id_key)
    for key in _ID_KEYS:
        if meta.get(key) is not None:
            return meta[key]
    return None


def langchain_hit(doc: Any, score: Any, id_key: str | None = None) -> Hit:
    """A LangChain ``Document`` (and optional score) as a :class:`Hit`."""
    meta = dict(getattr(doc, "metadata", None) or {})
    ident = _metadata_id(meta, id_key) if id_key else None
    if ident is None and not id_key:
        ident = getattr(doc, "id", None) or _metadata_id(meta, None)
    if ident is None and id_key:
        raise RetrieverContractError(_("a LangChain document has no metadata[{id_key!r}]; give the documents ids "
                                       "or pass id_key=", id_key=id_key))
    if ident is None:
        raise RetrieverContractError(_("a LangChain document has no id (Document.id or metadata 'id'/'doc_id'); "
                                       "give the documents ids or pass id_key="))
    return Hit(_as_id(ident, "langchain"), _as_score(score, "langchain"), text=doc.page_content, metadata=meta)


def llamaindex_hit(item: Any, id_key: str | None = None) -> Hit:
    """A LlamaIndex ``NodeWithScore`` as a :class:`Hit` (``ref_doc_id`` kept in the metadata)."""
    node = item.node
    meta = dict(getattr(node, "metadata", None) or {})
    ref = getattr(node, "ref_doc_id", None)
    if ref is not None:
        meta.setdefault("ref_doc_id", ref)
    for key in ("start_char_idx", "end_char_idx"):  # where the chunk lies in its document
        if getattr(node, key, None) is not None:
            meta.setdefault(key, getattr(node, key))
    ident = _metadata_id(meta, id_key) if id_key else node.node_id
    if ident is None:
        raise RetrieverContractError(_("a LlamaIndex node has no metadata[{id_key!r}]; set it on the documents or "
                                       "change id_key", id_key=id_key))
    get_content = getattr(node, "get_content", None)
    text = get_content() if callable(get_content) else getattr(node, "text", None)
    return Hit(_as_id(ident, "llamaindex"), _as_score(item.score, "llamaindex"), text=text, metadata=meta)


class LangChainRetriever:
    """A LangChain retriever or vector store as a rankscope retriever.

    Parameters
    ----------
    obj : a ``BaseRetriever`` (``invoke``) or a ``VectorStore`` (``similarity_search_with_score``)
    id_key : metadata key that holds the id to evaluate (default: ``Document.id``)
    """

    batched = False

    def __init__(self, obj: Any, id_key: str | None = None) -> None:
        self.obj = obj
        self.id_key = id_key
        self.name = str(getattr(obj, "name", None) or type(obj).__name__)
        self._store = hasattr(obj, "similarity_search_with_score") and not hasattr(obj, "invoke")

    def search_raw(self, query: str, k: int) -> list[Hit]:
        if self._store:
            pairs = self.obj.similarity_search_with_score(query, k=k)
            hits = [langchain_hit(doc, score, self.id_key) for doc, score in pairs]
        else:
            docs = self.obj.invoke(query)  # as configured: its own search_kwargs decide how many
            if docs is None:
                return normalise(None, self.name)
            hits = [langchain_hit(doc, (doc.metadata or {}).get("score"), self.id_key)
                    if hasattr(doc, "page_content") else doc for doc in docs]  # a Runnable may return ids
        return normalise(hits, self.name)

    def search(self, query: str, k: int) -> list[Hit]:
        return dedupe(self.search_raw(query, k), k)[0]


class LlamaIndexRetriever:
    """A LlamaIndex retriever (``retrieve``) or index (``as_retriever``) as a rankscope retriever.

    For an index, one retriever per ``k`` is made with ``similarity_top_k=k``.
    """

    batched = False

    def __init__(self, obj: Any, id_key: str | None = None) -> None:
        self.obj = obj
        self.id_key = id_key
        self.name = type(obj).__name__
        self._is_index = not hasattr(obj, "retrieve") and hasattr(obj, "as_retriever")
        self._by_k: dict[int, Any] = {}
        self._lock = threading.Lock()

    def _retriever(self, k: int) -> Any:
        if not self._is_index:
            return self.obj
        with self._lock:
            if k not in self._by_k:
                self._by_k[k] = self.obj.as_retriever(similarity_top_k=k)
            return self._by_k[k]

    def search_raw(self, query: str, k: int) -> list[Hit]:
        nodes = self._retriever(k).retrieve(query)
        if nodes is None:
            return normalise(None, self.name)
        return normalise([llamaindex_hit(n, self.id_key) for n in nodes], self.name)

    def search(self, query: str, k: int) -> list[Hit]:
        return dedupe(self.search_raw(query, k), k)[0]


def adapt(obj: Any) -> Any:
    """The adapter for ``obj`` if it is a LangChain or LlamaIndex object, else ``None``."""
    if _from_library(obj, "langchain") and (hasattr(obj, "invoke") or hasattr(obj, "similarity_search_with_score")):
        return LangChainRetriever(obj)
    if _from_library(obj, "llama_index") and (hasattr(obj, "retrieve") or hasattr(obj, "as_retriever")):
        return LlamaIndexRetriever(obj)
    return None
