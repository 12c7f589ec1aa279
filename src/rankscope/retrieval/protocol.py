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
* ``async`` versions of both: the runner awaits them on one event loop, at
  most ``workers`` at a time (so an ``asyncio.Semaphore`` or a shared
  ``httpx.AsyncClient`` of the retriever works);
* a LangChain retriever (anything with ``invoke``) or vector store, a
  LlamaIndex retriever (anything with ``retrieve``) or index, and a Haystack
  retriever component or pipeline (``run``): see :mod:`rankscope.retrieval.adapters`.

The order of the returned list is the ranking.  Scores are kept when they
never increase down the list (ties included: tied hits are then ranked by doc
id descending, as trec_eval ranks them, and the runner says when that differs
from the list order); otherwise (no scores, distances that grow) the run gets
rank-based scores ``n, n-1, ..., 1`` so that the list order is the ranking.

Returning ``None`` (a forgotten ``return``), a string, or items that are not
hits raises :class:`RetrieverContractError`: a bug in the retriever, not a
failure to retry — unless the evaluation says otherwise (``on_bad_answer="count"``:
an HTTP wrapper that returns ``None`` on a timeout; the query is retried, then
counted as failed).

>>> r = as_retriever(lambda q, k: [("d2", 0.9), ("d1", 0.4)][:k])
>>> r.search("anything", 1)
[Hit(id='d2', score=0.9, text=None, metadata=None)]
"""

from __future__ import annotations

import inspect
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rankscope.errors import InvalidParameterError, Items, Message, RankscopeError
from rankscope.i18n import _

__all__ = ["Hit", "Retriever", "BatchRetriever", "RetrieverContractError", "as_retriever", "to_hits", "dedupe",
           "ranking_scores", "retriever_identity", "retriever_settings"]

_ID_KEYS = ("id", "doc_id", "docid", "_id", "chunk_id", "corpus_id", "corpus-id", "pid")
_SCORE_KEYS = ("score", "similarity", "sim", "relevance_score")
_TEXT_KEYS = ("text", "content", "page_content", "passage", "chunk")
#: who returned the items, when no name is known: "retriever" (said in the reader's language)
RETRIEVER = _("retriever")

Where = str | Message


class RetrieverContractError(RankscopeError):
    """The retriever returned something that is not a ranking (``None``, a string, an item without id...).

    A bug in the retriever: the runner raises it at once instead of retrying.
    """


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

    @classmethod
    def scored(cls, id: str, score: float) -> Hit:
        """``Hit(id, score)`` made without the frozen dataclass's per-field checks (the runner makes one per
        retrieved item: a fast retriever answers in less time than ten checked constructions take).

        >>> Hit.scored("d1", 0.5) == Hit("d1", 0.5)
        True
        """
        hit = object.__new__(cls)
        hit.__dict__.update(id=id, score=score, text=None, metadata=None)
        return hit


@runtime_checkable
class Retriever(Protocol):
    """Anything with ``search(query, k) -> list[Hit]`` (best first, at most ``k`` hits)."""

    def search(self, query: str, k: int) -> list[Hit]: ...


@runtime_checkable
class BatchRetriever(Protocol):
    """A retriever that can also answer many queries in one call."""

    def search(self, query: str, k: int) -> list[Hit]: ...

    def search_batch(self, queries: list[str], k: int) -> list[list[Hit]]: ...


def _as_id(value: Any, where: Where) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise RetrieverContractError(_("{where}: a retrieved id must be a string or an integer, got {value!r}",
                                   where=where, value=value))


def _as_score(value: Any, where: Where) -> float:
    if value is None:
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        raise RetrieverContractError(_("{where}: a score must be a number, got {value!r}", where=where,
                                       value=value)) from None


def _first(mapping: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if key in mapping and mapping[key] is not None:
            return mapping[key]
    return None


def to_hit(item: Any, where: Where = RETRIEVER) -> Hit:
    """Normalise one returned item (Hit, id, ``(id, score)``, dict, LangChain / LlamaIndex / Haystack object).

    A missing score is NaN; :func:`ranking_scores` replaces it.

    >>> to_hit({"id": 7, "score": "0.5", "text": "hi"})
    Hit(id='7', score=0.5, text='hi', metadata=None)
    """
    kind = type(item)
    if kind is tuple and len(item) == 2 and type(item[0]) is str and type(item[1]) in (float, int):
        return Hit.scored(item[0], float(item[1]))  # the common (id, score) pair, read without the checks below
    if kind is str:
        return Hit.scored(item, math.nan)
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
            keys = Items(_ID_KEYS)
            raise RetrieverContractError(_("{where}: a returned dict has no id (keys tried: {keys})", where=where,
                                           keys=keys))
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
    if hasattr(item, "content") and hasattr(item, "meta") and hasattr(item, "id"):  # Haystack Document
        from rankscope.retrieval.adapters import haystack_hit

        return haystack_hit(item)
    if hasattr(item, "id") and hasattr(item, "score"):  # any Hit-like record
        return Hit(_as_id(item.id, where), _as_score(item.score, where),
                   text=getattr(item, "text", None), metadata=getattr(item, "metadata", None))
    raise RetrieverContractError(_("{where}: cannot read a retrieved item of type {type}; return Hit objects, ids, "
                                   "(id, score) pairs or dicts with 'id' and 'score'", where=where,
                                   type=type(item).__name__))


def to_hits(items: Any, k: int | None = None, where: Where = RETRIEVER) -> list[Hit]:
    """Normalise a returned list: keep the first occurrence of each id, cut at ``k``.

    ``None`` or a non-list raises :class:`RetrieverContractError`.

    >>> [h.id for h in to_hits(["a", "b", "a", "c"], k=2)]
    ['a', 'b']
    """
    return dedupe(normalise(items, where), k)[0]


def normalise(items: Any, where: Where = RETRIEVER) -> list[Hit]:
    """Every returned item as a :class:`Hit` (duplicates and all); ``None`` or a non-list raises."""
    if items is None:
        raise RetrieverContractError(_("{where} returned None instead of a list of hits (a missing 'return'?)",
                                       where=where))
    if isinstance(items, (str, bytes, Mapping)) or not hasattr(items, "__iter__"):
        raise RetrieverContractError(_("{where}: expected a list of hits, got a {type}", where=where,
                                       type=type(items).__name__))
    return [to_hit(item, where) for item in items]


def dedupe(hits: Sequence[Hit], k: int | None = None) -> tuple[list[Hit], int]:
    """``(hits without repeated ids, cut at k; how many repeats were dropped on the way)``.

    >>> hits, dropped = dedupe([Hit("a", 3), Hit("a", 2), Hit("b", 1)], k=5)
    >>> [h.id for h in hits], dropped
    (['a', 'b'], 1)
    """
    if len(hits) <= (len(hits) if k is None else k) and len({h.id for h in hits}) == len(hits):
        return list(hits), 0  # no repeat, nothing to cut
    out: list[Hit] = []
    seen: set[str] = set()
    dropped = 0
    for hit in hits:
        if k is not None and len(out) >= k:
            break
        if hit.id in seen:
            dropped += 1
            continue
        seen.add(hit.id)
        out.append(hit)
    return out, dropped


def ranking_scores(hits: Sequence[Hit]) -> list[float]:
    """Scores that reproduce the list order when ranked by score (descending), ties aside.

    The hits' own scores if they are all finite and never increase (ties kept: the
    scorer then ranks tied hits by doc id descending, like trec_eval); otherwise
    ``n, n-1, ..., 1``.

    >>> ranking_scores([Hit("a", 0.9), Hit("b", 0.5), Hit("c", 0.5)])
    [0.9, 0.5, 0.5]
    >>> ranking_scores([Hit("a", 0.1), Hit("b", 0.5)])  # distances: keep the list order
    [2.0, 1.0]
    """
    scores = [h.score for h in hits]
    if all(map(math.isfinite, scores)) and all(map(operator.ge, scores, scores[1:])):
        return scores
    n = len(hits)
    return [float(n - i) for i in range(n)]


def retriever_identity(obj: Any) -> str:
    """What identifies a retriever in a resume cache: its ``fingerprint()`` when it has one (the
    baselines hash their settings and corpus), else its module, class or function name and ``name``.

    >>> def my_search(query, k): return []
    >>> retriever_identity(my_search)
    'rankscope.retrieval.protocol.my_search'
    """
    inner = getattr(obj, "obj", None) or getattr(obj, "fn", None) or obj
    fingerprint = getattr(inner, "fingerprint", None)
    if callable(fingerprint):
        return str(fingerprint())
    kind = inner if inspect.isfunction(inner) or inspect.ismethod(inner) else type(inner)
    ident = f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', type(inner).__name__)}"
    name = getattr(inner, "name", None)
    return f"{ident}[{name}]" if isinstance(name, str) and name and name not in ident else ident


def retriever_settings(obj: Any) -> dict[str, Any] | None:
    """The settings a retriever declares about itself, as plain values (None when it declares none): a
    dataclass's fields, a pydantic model's fields (LangChain retrievers: ``search_type``, ``search_kwargs``,
    the vector store's class), or ``get_params()``.  A value that is not plain data is named by its class (two
    indexes of one class look the same here: the resume cache asks cached queries again to tell them apart).

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Hybrid:
    ...     k_rrf: int = 60
    ...     depth: int = 100
    ...     def search(self, query, k): return []
    >>> retriever_settings(Hybrid(k_rrf=1, depth=3))
    {'depth': 3, 'k_rrf': 1}
    >>> retriever_settings(lambda q, k: []) is None
    True
    """
    import dataclasses

    inner = getattr(obj, "obj", None) or getattr(obj, "fn", None) or obj
    values: dict[str, Any] | None = None
    if dataclasses.is_dataclass(inner) and not isinstance(inner, type):
        values = {f.name: getattr(inner, f.name, None) for f in dataclasses.fields(inner) if f.init and f.repr}
    elif isinstance(getattr(type(inner), "model_fields", None), dict):  # pydantic v2
        values = {name: getattr(inner, name, None) for name in type(inner).model_fields}
    elif callable(getattr(inner, "get_params", None)):
        try:
            params = inner.get_params()
        except Exception:  # a get_params that needs arguments: no declared settings
            params = None
        values = dict(params) if isinstance(params, Mapping) else None
    if not values:
        return None
    return {str(k): _plain(v) for k, v in sorted(values.items(), key=lambda kv: str(kv[0]))}


def _plain(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON-ready plain data: scalars, short lists and dicts of them; anything else by its class."""
    if value is None or isinstance(value, (bool, int, str)):
        return value if not isinstance(value, str) or len(value) <= 200 else f"<str of {len(value)} characters>"
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, (list, tuple, set, frozenset, Mapping)):
        if depth >= 2 or len(value) > 20:
            return f"<{type(value).__name__} of {len(value)}>"
        if isinstance(value, Mapping):
            return {str(k): _plain(v, depth + 1) for k, v in value.items()}
        items = [_plain(v, depth + 1) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    kind = type(value)
    return f"<{kind.__module__}.{kind.__qualname__}>"


def _resolve(out: Any) -> Any:
    """Await ``out`` when a plain function returned an awaitable (e.g. a lambda around an ``async``
    client call): on rankscope's one shared event loop, like the ``async`` retrievers."""
    if type(out) is list or not inspect.isawaitable(out):
        return out
    from rankscope.retrieval.execute import run_on_shared_loop

    async def wait() -> Any:
        return await out

    return run_on_shared_loop(wait())


def _is_async(fn: Any) -> bool:
    if fn is None:
        return False
    return inspect.iscoroutinefunction(fn) or (callable(fn) and inspect.iscoroutinefunction(type(fn).__call__))


class _CallableRetriever:
    """Wraps ``fn(query, k)`` or ``fn(query)`` (``async`` too)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)
        self._takes_k = _accepts_two_args(fn)
        self.batched = False
        self.is_async = _is_async(fn)

    def _out(self, query: str, k: int) -> Any:
        return self.fn(query, k) if self._takes_k else self.fn(query)

    def search_raw(self, query: str, k: int) -> list[Hit]:
        """The returned hits normalised, repeats and all (the runner counts and drops them)."""
        return normalise(_resolve(self._out(query, k)), self.name)

    async def asearch_raw(self, query: str, k: int) -> list[Hit]:
        out = self._out(query, k)
        return normalise(await out if inspect.isawaitable(out) else out, self.name)

    def search(self, query: str, k: int) -> list[Hit]:
        return dedupe(self.search_raw(query, k), k)[0]


class _NormalisingRetriever:
    """Wraps an object with ``search`` / ``search_batch`` whose results need normalising."""

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        self.name = str(getattr(obj, "name", None) or type(obj).__name__)
        self.batched = hasattr(obj, "search_batch")
        self._search_takes_k = hasattr(obj, "search") and _accepts_two_args(obj.search)
        self.is_async = _is_async(getattr(obj, "search", None)) or (
            not hasattr(obj, "search") and _is_async(getattr(obj, "search_batch", None)))

    def _out(self, query: str, k: int) -> Any:
        return self.obj.search(query, k) if self._search_takes_k else self.obj.search(query)

    def search_raw(self, query: str, k: int) -> list[Hit]:
        if not hasattr(self.obj, "search"):
            return self.search_batch_raw([query], k)[0]
        return normalise(_resolve(self._out(query, k)), self.name)

    async def asearch_raw(self, query: str, k: int) -> list[Hit]:
        if not hasattr(self.obj, "search"):
            out = self.obj.search_batch([query], k)
            return self._batch_lists(await out if inspect.isawaitable(out) else out, 1)[0]
        out = self._out(query, k)
        return normalise(await out if inspect.isawaitable(out) else out, self.name)

    def search(self, query: str, k: int) -> list[Hit]:
        return dedupe(self.search_raw(query, k), k)[0]

    def _batch_lists(self, results: Any, n: int) -> list[list[Hit]]:
        if results is None:
            raise RetrieverContractError(_("{name}.search_batch returned None (a missing 'return'?)", name=self.name))
        results = list(results)
        if len(results) != n:
            raise RetrieverContractError(_("{name}.search_batch returned {got} result lists for {n} queries",
                                           name=self.name, got=len(results), n=n))
        return [normalise(r, self.name) for r in results]

    def search_batch_raw(self, queries: list[str], k: int) -> list[list[Hit]]:
        if not self.batched:
            return [self.search_raw(q, k) for q in queries]
        return self._batch_lists(_resolve(self.obj.search_batch(queries, k)), len(queries))

    def search_batch(self, queries: list[str], k: int) -> list[list[Hit]]:
        return [dedupe(hits, k)[0] for hits in self.search_batch_raw(queries, k)]


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

    if isinstance(obj, (adapters.LangChainRetriever, adapters.LlamaIndexRetriever, adapters.HaystackRetriever)):
        return obj
    adapted = adapters.adapt(obj)  # before `search`: LangChain vector stores have an unrelated search()
    if adapted is not None:
        return adapted
    if hasattr(obj, "search") or hasattr(obj, "search_batch"):
        return _NormalisingRetriever(obj)
    if callable(obj):
        return _CallableRetriever(obj)
    raise InvalidParameterError(_("cannot use a {type} as a retriever: give an object with search(query, k), a "
                                  "callable fn(query, k), a LangChain retriever or vector store, a LlamaIndex "
                                  "retriever or index, or a Haystack retriever or pipeline", type=type(obj).__name__))
