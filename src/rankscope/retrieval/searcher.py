"""What the built-in retrievers (BM25, dense, hybrid) share: :class:`BatchSearcher` and the corpus / ranking checks.

A :class:`BatchSearcher` answers ``search(query, k)`` as a batch of one and
checks the arguments of ``search_batch(queries, k)`` (``k`` a positive integer,
a list of queries rather than one string) before it calls the subclass's
``_search_batch``, which only ever sees a valid ``k`` and at least one query.

>>> class Echo(BatchSearcher):
...     def _search_batch(self, queries, k):
...         return [[Hit(q, 1.0)] for q in queries]
>>> Echo().search("hello", 3)
[Hit(id='hello', score=1.0, text=None, metadata=None)]
>>> Echo().search_batch([], 3)
[]
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

import numpy as np

from rankscope.errors import EmptyInputError, InvalidParameterError, RankscopeError
from rankscope.i18n import _
from rankscope.retrieval.protocol import Hit

__all__ = ["BatchSearcher", "check_corpus", "check_k", "doc_id_rank", "order_rows"]


class BatchSearcher(ABC):
    """Base of retrievers whose work is done per batch of queries; subclasses implement ``_search_batch``."""

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The top ``k`` documents for one query, best first."""
        return self.search_batch([query], k)[0]

    def search_batch(self, queries: list[str], k: int = 10) -> list[list[Hit]]:
        """The top ``k`` documents for each query, best first (one list per query, in order)."""
        k = check_k(k)
        if isinstance(queries, str):
            raise InvalidParameterError(_("search_batch expects a list of queries, got a single string"))
        if not queries:
            return []
        return self._search_batch(queries, k)

    @abstractmethod
    def _search_batch(self, queries: list[str], k: int) -> list[list[Hit]]:
        """Answer a non-empty list of queries for a valid ``k``."""


def check_corpus(corpus: Mapping[str, str], who: str) -> tuple[np.ndarray, list[str]]:
    """Validate a ``{doc_id: text}`` corpus; return ``(ids as object array, texts)``."""
    if not isinstance(corpus, Mapping):
        raise InvalidParameterError(_("{who}: corpus must be a mapping doc id -> text, got {type}", who=who,
                                      type=type(corpus).__name__))
    if len(corpus) == 0:
        raise EmptyInputError(_("{who}: the corpus is empty", who=who))
    ids = [str(k) for k in corpus]
    texts = list(corpus.values())
    bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
    if bad is not None:
        kind = type(texts[bad]).__name__
        raise RankscopeError(_("{who}: the text of document {doc_id!r} is a {type}, not a string", who=who,
                               doc_id=ids[bad], type=kind))
    return np.asarray(ids, dtype=object), texts


def check_k(k: Any) -> int:
    """Validate a result count ``k`` (a positive integer)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidParameterError(_("{name} must be a positive integer, got {value!r}", name="k", value=k))
    return int(k)


def doc_id_rank(ids: np.ndarray) -> np.ndarray:
    """For each doc (by position), its rank in ascending string order of the ids (for tie breaking)."""
    order = np.argsort(ids, kind="stable")
    rank = np.empty(len(ids), dtype=np.int64)
    rank[order] = np.arange(len(ids))
    return rank


def order_rows(scores: np.ndarray, idx: np.ndarray, id_rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sort each row of ``(scores, idx)`` by score descending, then doc id descending (trec_eval order)."""
    if scores.size == 0:
        return scores, idx
    nq, k = scores.shape
    rows = np.repeat(np.arange(nq), k)
    flat_s, flat_i = scores.ravel(), idx.ravel()
    order = np.lexsort((-id_rank[flat_i], -flat_s, rows)).reshape(nq, k)
    return flat_s[order], flat_i[order]


