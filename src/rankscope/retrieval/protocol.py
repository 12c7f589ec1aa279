"""What a retriever is to rankscope: :class:`Hit`, :class:`Retriever`, :func:`as_retriever`.

A retriever answers ``search(query, k)`` with a ranked list of :class:`Hit`
(best first).  It may also offer ``search_batch(queries, k)``; the runner then
sends queries in batches, which is what CPU-bound retrievers (BM25, a local
embedding model) need.

:func:`as_retriever` accepts more than that, so that a retriever need not be
rewritten for rankscope:

* an object with ``search(query, k)`` and/or ``search_batch(queries, k)``
  returning hits, ``(id, score)`` pairs, bare ids, or dicts with ``id`` and
  ``score`` keys;
* a plain callable ``fn(query, k)`` or ``fn(query)`` returning any of those;
* ``async`` versions of both (each call is awaited in its own event loop, so
  the runner's threads still overlap the waiting);
* a LangChain retriever (anything with ``invoke``) or vector store, and a
  LlamaIndex retriever (anything with ``retrieve``) or index: see
  :mod:`rankscope.retrieval.adapters`.

The order of the returned list is the ranking.  Scores are kept when they
strictly decrease down the list; otherwise (no scores, ties, distances that
grow) the run gets rank-based scores ``n, n-1, ..., 1`` so that the ranking
the retriever produced is exactly the ranking that is scored.

>>> r = as_retriever(lambda q, k: [("d2", 0.9), ("d1", 0.4)][:k])
>>> r.search("anything", 1)
[Hit(id='d2', score=0.9, text=None, metadata=None)]
"""

from __future__ import annotations

import inspect
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rankscope.errors import InvalidParameterError, RankscopeError

__all__ = ["Hit", "Retriever", "BatchRetriever", "as_retriever", "to_hits", "ranking_scores"]

_ID_KEYS = ("id", "doc_id", "docid", "_id", "chunk_id", "corpus_id", "corpus-id", "pid")
_SCORE_KEYS = ("score", "similarity", "sim", "relevance_score")
_TEXT_KEYS = ("text", "content", "page_content", "passage", "chunk")


@dataclass(frozen=True)
class Hit:
    """One retrieved item: its id, its score, and optionally its text and metadata.

    >>> Hit("doc1#0", 0.83, text="Paris is the capital of France.")
    Hit(id='doc1#0', score=0.83, text='Paris is the capital of France.', metadata=None)
    """

    id: str
    score: float
    text: str | None = None
    metadata: Mapping[str, Any] | None = None


@runtime_checkable
class Retriever(Protocol):
    """Anything with ``search(query, k) -> list[Hit]`` (best first, at most ``k`` hits)."""

    def search(self, query: str, k: int) -> list[Hit]: ...


@runtime_checkable
class BatchRetriever(Protocol):
    """A retriever that can also answer many queries in one call."""

    def search(self, query: str, k: int) -> list[Hit]: ...

    def search_batch(self, queries: list[str], k: int) -> list[list[Hit]]: ...


def _as_id(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise RankscopeError(f"{where}: a retrieved id must be a string or an integer, got {value!r}")


def _as_score(value: Any, where: str) -> float:
    if value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        raise RankscopeError(f"{where}: a score must be a number, got {value!r}") from None


def _first(mapping: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if key in mapping and mapping[key] is not None:
            return mapping[key]
    return None


def to_hit(item: Any, where: str = "retriever") -> Hit:
    """Normalise one returned item (Hit, id, ``(id, score)``, dict, LangChain / LlamaIndex object).

    A missing score is NaN; :func:`ranking_scores` replaces it.

    >>> to_hit({"id": 7, "score": "0.5", "text": "hi"})
    Hit(id='7', score=0.5, text='hi', metadata=None)
    """
    if isinstance(item, Hit):
        return item
    if isinstance(item, (str, int)) and not isinstance(item, bool):
        return Hit(_as_id(item, where), math.nan)
    if isinstance(item, tuple) and len(item) == 2 and not isinstance(item[0], (tuple, list)):
        head, second = item
        if hasattr(head, "page_content"):  # LangChain (Document, score)
            from rankscope.retrieval.adapters import langchain_hit

            return langchain_hit(head, second)
        return Hit(_as_id(head, where), _as_score(second, where))
    if isinstance(item, Mapping):
        ident = _first(item, _ID_KEYS)
        if ident is None:
            raise RankscopeError(f"{where}: a returned dict has no id (keys tried: {', '.join(_ID_KEYS)})")
        meta = item.get("metadata")
        return Hit(
            _as_id(ident, where),
            _as_score(_first(item, _SCORE_KEYS), where),
            text=_first(item, _TEXT_KEYS),
            metadata=meta if isinstance(meta, Mapping) else None,
        )
    if hasattr(item, "page_content"):  # LangChain Document
        from rankscope.retrieval.adapters import langchain_hit

        return langchain_hit(item, None)
    if hasattr(item, "node") and hasattr(item, "score"):  # LlamaIndex NodeWithScore
        from rankscope.retrieval.adapters import llamaindex_hit

        return llamaindex_hit(item)
    if hasattr(item, "id") and hasattr(item, "score"):  # any Hit-like record
        return Hit(_as_id(item.id, where), _as_score(item.score, where),
                   text=getattr(item, "text", None), metadata=getattr(item, "metadata", None))
    raise RankscopeError(
        f"{where}: cannot read a retrieved item of type {type(item).__name__}; "
        "return Hit objects, ids, (id, score) pairs or dicts with 'id' and 'score'"
    )


def to_hits(items: Any, k: int | None = None, where: str = "retriever") -> list[Hit]:
    """Normalise a returned list: keep the first occurrence of each id, cut at ``k``.

    >>> [h.id for h in to_hits(["a", "b", "a", "c"], k=2)]
    ['a', 'b']
    """
    if items is None:
        return []
    if isinstance(items, (str, bytes, Mapping)):
        raise RankscopeError(f"{where}: expected a list of hits, got a {type(items).__name__}")
    out: list[Hit] = []
    seen: set[str] = set()
    for item in items:
        hit = to_hit(item, where)
        if hit.id in seen:
            continue
        seen.add(hit.id)
        out.append(hit)
        if k is not None and len(out) >= k:
            break
    return out


def ranking_scores(hits: Sequence[Hit]) -> list[float]:
    """Scores that reproduce the list order when ranked by score (descending).

    The hits' own scores if they are all finite and strictly decreasing;
    otherwise ``n, n-1, ..., 1``.

    >>> ranking_scores([Hit("a", 0.9), Hit("b", 0.5)])
    [0.9, 0.5]
    >>> ranking_scores([Hit("a", 0.1), Hit("b", 0.5)])  # distances: keep the list order
    [2.0, 1.0]
    """
    scores = [h.score for h in hits]
    if all(math.isfinite(s) for s in scores) and all(a > b for a, b in itertools.pairwise(scores)):
        return scores
    n = len(hits)
    return [float(n - i) for i in range(n)]


def _resolve(out: Any) -> Any:
    """Await ``out`` if the retriever is ``async`` (its own event loop, in a helper thread when this
    thread already runs one, e.g. in Jupyter)."""
    if not inspect.isawaitable(out):
        return out
    import asyncio

    async def wait() -> Any:
        return await out

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, wait()).result()


class _CallableRetriever:
    """Wraps ``fn(query, k)`` or ``fn(query)``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self._takes_k = _accepts_two_args(fn)
        self.batched = False

    def search(self, query: str, k: int) -> list[Hit]:
        out = self.fn(query, k) if self._takes_k else self.fn(query)
        return to_hits(_resolve(out), k, where=self.name)


class _NormalisingRetriever:
    """Wraps an object with ``search`` / ``search_batch`` whose results need normalising."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        self.name = str(getattr(obj, "name", None) or type(obj).__name__)
        self.batched = hasattr(obj, "search_batch")
        self._search_takes_k = hasattr(obj, "search") and _accepts_two_args(obj.search)

    def search(self, query: str, k: int) -> list[Hit]:
        if not hasattr(self.obj, "search"):
            return self.search_batch([query], k)[0]
        out = self.obj.search(query, k) if self._search_takes_k else self.obj.search(query)
        return to_hits(_resolve(out), k, where=self.name)

    def search_batch(self, queries: list[str], k: int) -> list[list[Hit]]:
        if not self.batched:
            return [self.search(q, k) for q in queries]
        results = list(_resolve(self.obj.search_batch(queries, k)))
        if len(results) != len(queries):
            raise RankscopeError(
                f"{self.name}.search_batch returned {len(results)} result lists for {len(queries)} queries"
            )
        return [to_hits(r, k, where=self.name) for r in results]


def _accepts_two_args(fn: Callable[..., Any]) -> bool:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    positional = 0
    for p in sig.parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            return True
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 2


def as_retriever(obj: Any) -> Any:
    """Wrap ``obj`` so that it answers ``search(query, k) -> list[Hit]`` (and ``search_batch`` if it can).

    Raises :class:`~rankscope.errors.InvalidParameterError` for an object that
    is none of the accepted kinds (see the module documentation).

    >>> class Keyword:
    ...     def search(self, query, k):
    ...         return [{"id": "d1", "score": 2.0}, {"id": "d2", "score": 1.0}][:k]
    >>> [h.id for h in as_retriever(Keyword()).search("q", 5)]
    ['d1', 'd2']
    """
    if isinstance(obj, (_NormalisingRetriever, _CallableRetriever)):
        return obj
    from rankscope.retrieval import adapters

    if isinstance(obj, (adapters.LangChainRetriever, adapters.LlamaIndexRetriever)):
        return obj
    adapted = adapters.adapt(obj)  # before `search`: LangChain vector stores have an unrelated search()
    if adapted is not None:
        return adapted
    if hasattr(obj, "search") or hasattr(obj, "search_batch"):
        return _NormalisingRetriever(obj)
    if callable(obj):
        return _CallableRetriever(obj)
    raise InvalidParameterError(
        f"cannot use a {type(obj).__name__} as a retriever: give an object with search(query, k), "
        "a callable fn(query, k), a LangChain retriever or vector store, or a LlamaIndex retriever or index"
    )
