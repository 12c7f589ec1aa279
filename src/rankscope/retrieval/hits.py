"""A retrieved item as rankscope reads it: :class:`Hit`, and :func:`to_hit` / :func:`normalise`, which read the
items a retriever returns (hits, ``(id, score)`` pairs, ids, dicts, LangChain / LlamaIndex / Haystack documents).

The bottom of :mod:`rankscope.retrieval`: the adapters, the runner's calls (:mod:`~rankscope.retrieval.execute`) and
:mod:`~rankscope.retrieval.protocol` (what a retriever is) build on it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from rankscope.errors import Items, Message, RankscopeError
from rankscope.i18n import _

__all__ = ["Hit", "Retriever", "BatchRetriever", "RetrieverContractError", "to_hit", "to_hits", "normalise", "dedupe",
           "ranking_scores", "langchain_hit", "llamaindex_hit", "haystack_hit", "RETRIEVER"]

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
        return langchain_hit(item, None)
    if hasattr(item, "node") and hasattr(item, "score"):  # LlamaIndex NodeWithScore
        return llamaindex_hit(item)
    if hasattr(item, "content") and hasattr(item, "meta") and hasattr(item, "id"):  # Haystack Document
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


def haystack_hit(doc: Any, id_key: str | None = None) -> Hit:
    """A Haystack ``Document`` as a :class:`Hit` (its ``meta`` kept as the metadata, its ``score`` as the score)."""
    meta = dict(getattr(doc, "meta", None) or {})
    ident = meta.get(id_key) if id_key else getattr(doc, "id", None)
    if ident is None and id_key:
        raise RetrieverContractError(_("a Haystack document has no meta[{id_key!r}]; set it on the documents or "
                                       "change id_key", id_key=id_key))
    if ident is None:
        raise RetrieverContractError(_("a Haystack document has no id; give the documents ids or pass id_key="))
    return Hit(_as_id(ident, "haystack"), _as_score(getattr(doc, "score", None), "haystack"),
               text=getattr(doc, "content", None), metadata=meta)


