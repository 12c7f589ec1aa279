"""Adapters for LangChain, LlamaIndex and Haystack retrievers (optional extras, imported lazily).

* LangChain: a retriever (``BaseRetriever``: ``invoke(query)`` returns
  ``Document`` objects) or a vector store (``similarity_search_with_score``,
  asked for ``k``).
* LlamaIndex: a retriever (``retrieve(query)`` returns ``NodeWithScore``) or an
  index (``as_retriever(similarity_top_k=k)``).
* Haystack 2.x: a retriever component (``run(query=...)`` returns ``{"documents": [Document]}``,
  e.g. ``InMemoryBM25Retriever``), an embedding retriever component (``run(query_embedding=...)``)
  with the text embedder that makes its query vectors (``HaystackRetriever(retriever,
  embedder=...)``), or a ``Pipeline`` whose output holds ``documents``: each of its required text
  inputs (a retriever's ``query``, an embedder's ``text``) gets the query.

A configured *retriever* of any of them is evaluated as configured: its
own top-k (LangChain ``search_kwargs={"k": 3}``, LlamaIndex
``similarity_top_k``, Haystack ``top_k``; default 4, 2 and 10) is never overridden, because that is
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
with ``add_start_index=True`` carries ``metadata["start_index"]``.  A Haystack chunk made by
``DocumentSplitter`` keeps its document's id in ``meta["source_id"]`` and its offset in
``meta["split_idx_start"]``.  With these the
span measures know where each retrieved chunk lies (see
:func:`rankscope.data.chunking.hit_location`): no separate chunk table is needed.

No library is imported by this module; objects are recognised by the module their class (or a
base class) comes from and by the methods they have (:func:`recognises`).

>>> adapt(object()) is None
True
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Mapping
from typing import Any

from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _
from rankscope.retrieval.hits import (
    Hit,
    dedupe,
    haystack_hit,
    langchain_hit,
    llamaindex_hit,
    normalise,
)

__all__ = ["LangChainRetriever", "LlamaIndexRetriever", "HaystackRetriever", "adapt", "recognises", "langchain_hit",
           "llamaindex_hit", "haystack_hit"]


def _from_library(obj: Any, prefix: str) -> bool:
    return any(c.__module__.startswith(prefix) for c in type(obj).__mro__)


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


def _run_parameters(obj: Any) -> list[str]:
    try:
        return list(inspect.signature(obj.run).parameters)
    except (TypeError, ValueError):  # pragma: no cover - a component always has a signature
        return []


class HaystackRetriever:
    """A Haystack 2.x retriever component or pipeline as a rankscope retriever (see the module documentation).

    Parameters
    ----------
    obj : a retriever component (``run(query=...)`` or ``run(query_embedding=...)``) or a ``Pipeline``
    embedder : for an embedding retriever component: the text embedder that makes the query vector
        (``run(text=...)`` returns ``{"embedding": [...]}``, e.g. ``SentenceTransformersTextEmbedder``)
    id_key : meta key that holds the id to evaluate (default: ``Document.id``)
    documents_from : for a pipeline: the component whose ``documents`` are the ranking (default: the one
        component whose output has ``documents``)
    """

    batched = False

    def __init__(self, obj: Any, embedder: Any = None, id_key: str | None = None,
                 documents_from: str | None = None) -> None:
        self.obj, self.embedder, self.id_key, self.documents_from = obj, embedder, id_key, documents_from
        self.name = type(obj).__name__
        self._pipeline = hasattr(obj, "inputs") and hasattr(obj, "add_component")
        self._inputs: dict[str, dict[str, str]] = {}
        self._mode = "pipeline"
        if self._pipeline:
            self._inputs, self._source = self._pipeline_plan()
        else:
            params = _run_parameters(obj)
            if "query" in params:
                self._mode = "query"
            elif "query_embedding" in params:
                if embedder is None:
                    raise InvalidParameterError(_("{name} searches by query_embedding: pass the text embedder that "
                                                  "makes the query vectors, HaystackRetriever({name}(...), "
                                                  "embedder=...), or a Pipeline that embeds and retrieves",
                                                  name=self.name))
                self._mode = "embedding"
            else:
                shown = Items(tuple(params))
                raise InvalidParameterError(_("{name}.run takes neither query nor query_embedding (it takes "
                                              "{params}): pass a retriever component or a Pipeline", name=self.name,
                                              params=shown))
        for part in (obj, embedder):  # once, before the worker threads share them
            warm_up = getattr(part, "warm_up", None)
            if callable(warm_up):
                warm_up()

    def _pipeline_plan(self) -> tuple[dict[str, dict[str, str]], str]:
        """``({component: {text input: ""}}, component whose documents are the ranking)`` of a pipeline."""
        inputs: dict[str, dict[str, str]] = {}
        other: list[str] = []
        for component, sockets in self.obj.inputs().items():
            for socket, info in sockets.items():
                if not info.get("is_mandatory"):
                    continue
                if info.get("type") is str:
                    inputs.setdefault(component, {})[socket] = ""
                else:
                    other.append(f"{component}.{socket}")
        if other:
            shown = Items(tuple(other))
            raise InvalidParameterError(_("rankscope gives a pipeline the query as its text inputs; this one also "
                                          "needs {inputs}", inputs=shown))
        if not inputs:
            raise InvalidParameterError(_("this pipeline takes no text input to give the query to"))
        if self.documents_from is not None:
            names = list(self.obj.graph.nodes) if hasattr(self.obj, "graph") else []
            if names and self.documents_from not in names:
                shown = Items(tuple(names), quote=True)
                raise InvalidParameterError(_("documents_from={name!r} is not a component of the pipeline ({names})",
                                              name=self.documents_from, names=shown))
            return inputs, self.documents_from
        leaves = [c for c, sockets in self.obj.outputs().items() if "documents" in sockets]
        if not leaves:
            raise InvalidParameterError(_("the pipeline's output has no documents: pass documents_from= naming the "
                                          "retriever"))
        if len(leaves) > 1:
            shown = Items(tuple(leaves), quote=True)
            raise InvalidParameterError(_("several components of the pipeline output documents ({names}): pass "
                                          "documents_from= naming the one to evaluate", names=shown))
        return inputs, leaves[0]

    def _documents(self, query: str) -> Any:
        if self._mode == "query":
            return self.obj.run(query=query)
        if self._mode == "embedding":
            vector = self.embedder.run(text=query)["embedding"]
            return self.obj.run(query_embedding=vector)
        data = {component: dict.fromkeys(sockets, query) for component, sockets in self._inputs.items()}
        out = self.obj.run(data, include_outputs_from={self._source})
        return out.get(self._source) if isinstance(out, Mapping) else None

    def search_raw(self, query: str, k: int) -> list[Hit]:
        out = self._documents(query)  # as configured: the component's own top_k decides how many
        if not isinstance(out, Mapping) or "documents" not in out:
            return normalise(None, self.name)
        docs = out["documents"]
        if docs is None:
            return normalise(None, self.name)
        return normalise([haystack_hit(d, self.id_key) if hasattr(d, "content") else d for d in docs], self.name)

    def search(self, query: str, k: int) -> list[Hit]:
        return dedupe(self.search_raw(query, k), k)[0]


def _kind(obj: Any) -> str | None:
    if _from_library(obj, "langchain") and (hasattr(obj, "invoke") or hasattr(obj, "similarity_search_with_score")):
        return "langchain"
    if _from_library(obj, "llama_index") and (hasattr(obj, "retrieve") or hasattr(obj, "as_retriever")):
        return "llamaindex"
    if _from_library(obj, "haystack") and hasattr(obj, "run"):
        return "haystack"
    return None


def recognises(obj: Any) -> bool:
    """True for a LangChain, LlamaIndex or Haystack object that :func:`adapt` evaluates as a retriever.

    >>> recognises(object())
    False
    """
    return _kind(obj) is not None


def adapt(obj: Any) -> Any:
    """The adapter for ``obj`` if it is a LangChain, LlamaIndex or Haystack retriever, else ``None``.

    A Haystack document store (no ``run``) raises :class:`~rankscope.errors.InvalidParameterError`: its
    retriever component is what searches it.
    """
    kind = _kind(obj)
    if kind == "langchain":
        return LangChainRetriever(obj)
    if kind == "llamaindex":
        return LlamaIndexRetriever(obj)
    if kind == "haystack":
        return HaystackRetriever(obj)
    if _from_library(obj, "haystack") and hasattr(obj, "filter_documents"):
        name = type(obj).__name__
        raise InvalidParameterError(_("a Haystack {name} is a document store, not a retriever: evaluate the "
                                      "retriever component that searches it, e.g. "
                                      "InMemoryBM25Retriever(document_store=store)", name=name))
    return None
