"""How retrievers are run and scored: the :class:`RetrieverOptions` value, shared by
:func:`~rankscope.retrieval.runner.evaluate_retriever` and :func:`rankscope.compare`.

Every option is one field, declared once with the values it accepts (:data:`CONSTRAINTS`,
checked by :mod:`rankscope.constraints` when the value is built: the same declaration writes
the error message).  Both functions take the value (``options=``) and the same keywords, which
override it, so that one set of options runs one retriever or several alike::

    opts = RetrieverOptions(k=20, chunk_to_doc="{doc_id}#{chunk}", workers=8)
    evaluate_retriever(faiss_retriever, testset, options=opts)
    compare(testset, {"faiss": faiss_retriever, "bm25": bm25}, options=opts)

>>> RetrieverOptions(k=5).replace(workers=2).k, RetrieverOptions().on_bad_answer
(5, 'fail')
>>> RetrieverOptions(k=0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankscope.errors.InvalidParameterError: the 'k' parameter of evaluate_retriever must be an int ... or None; got 0
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal

from rankscope.constraints import Constraint, Interval, Kind, OneOf, check
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.retrieval.chunks import ChunkToDoc

__all__ = ["RetrieverOptions", "CONSTRAINTS", "OPTION_NAMES", "resolve_options", "default_k"]

Relevance = Literal["auto", "qrels", "answers", "spans"]
BadAnswer = Literal["fail", "count"]

CONSTRAINTS: dict[str, tuple[Constraint, ...]] = {
    "k": (Interval(int, 1, None), None),
    "workers": (Interval(int, 1, None),),
    "retries": (Interval(int, 0, None),),
    "retry_wait": (Interval(float, 0, None),),
    "batch_size": (Interval(int, 1, None),),
    "cache": (Kind((str, os.PathLike), "path"), None),
    "overwrite_cache": (Kind((bool,), "bool"),),
    "cache_key": (Kind((str,), "str"), None),
    "cache_check": (Interval(int, 0, None),),
    "chunk_to_doc": (Kind((str, Mapping), "chunk_to_doc", call=True), None),
    "relevance": (OneOf(("auto", "qrels", "answers", "spans")),),
    "relevance_level": (Interval(int, None, None),),
    "progress": (Kind((bool,), "bool"), None),
    "chunking": (Kind((object,), "any"), None),
    "rule": (Kind((str,), "str"),),
    "on_bad_answer": (OneOf(("fail", "count")),),
}


@dataclass(frozen=True, kw_only=True)
class RetrieverOptions:
    """How a retriever is run and scored (validated on construction; see the module doc).

    k : hits asked for and kept per query (default: the largest cutoff of the metrics, at least 10)
    workers : threads for retrievers without ``search_batch``; concurrent calls of an ``async`` retriever
    retries : extra attempts for a failing call; ``retry_wait`` seconds before the first retry, doubling
    batch_size : queries per ``search_batch`` call (``1``: each query timed on its own)
    cache : JSONL file to append finished queries to and resume from (``compare``: one file per retriever,
        ``NAME.jsonl`` becoming ``NAME.<retriever>.jsonl``)
    overwrite_cache : start ``cache`` afresh even when it holds another evaluation
    cache_key : your own name for what the retriever answers from (an index version): a cache written
        under another key is refused
    cache_check : cached queries asked again (a seeded sample) before the cache is used: answers that
        differ refuse the cache (``0``: trust it)
    chunk_to_doc : fold chunk hits into documents: pattern ``"{doc_id}#{chunk}"``, dict, function, or
        ``"metadata:KEY"`` (the document id is ``hit.metadata[KEY]``)
    relevance : ``"qrels"``, ``"answers"``, ``"spans"`` or ``"auto"``
    relevance_level : minimum grade counted as relevant by binary metrics
    progress : show a progress bar (default: when stderr is a terminal)
    chunking, rule : with span judgments: where the retrieved chunks lie and the chunk-qrels rule
    on_bad_answer : a retriever that returns ``None`` or no ranking (an HTTP wrapper on a timeout): ``"fail"``
        stops the evaluation (a bug in the retriever), ``"count"`` retries it like a raised error, then counts
        the query as failed (scored as an empty ranking; said in every output)
    """

    k: int | None = None
    workers: int = 4
    retries: int = 2
    retry_wait: float = 0.0
    batch_size: int = 64
    cache: str | Path | None = None
    overwrite_cache: bool = False
    cache_key: str | None = None
    cache_check: int = 3
    chunk_to_doc: ChunkToDoc | None = None
    relevance: Relevance = "auto"
    relevance_level: int = 1
    progress: bool | None = None
    chunking: Any = None
    rule: str = "any"
    on_bad_answer: BadAnswer = "fail"

    def __post_init__(self) -> None:
        for f in fields(self):
            value = check(f.name, getattr(self, f.name), CONSTRAINTS[f.name], "evaluate_retriever")
            object.__setattr__(self, f.name, value)

    def replace(self, **changes: Any) -> RetrieverOptions:
        """A copy with ``changes`` (validated)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The options as shown in outputs (a path or a function as text)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value if value is None or isinstance(value, (bool, int, float, str)) else repr(value)
        return out


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(RetrieverOptions))


def default_k(metrics: Any) -> int:
    """The ``k`` of an evaluation that gives none: the largest cutoff of ``metrics``, at least 10.

    >>> default_k(["ndcg@20", "mrr"]), default_k(["map"]), default_k(None)
    (20, 10, 10)
    """
    from rankscope.measures.parse import parse_metrics

    if metrics is None:
        return 10
    pairs = parse_metrics(metrics if isinstance(metrics, str) else list(metrics))
    return max([10, *(m.cutoff for __, m in pairs if m.cutoff is not None)])


def resolve_options(options: RetrieverOptions | None, given: Mapping[str, Any], where: str) -> RetrieverOptions:
    """``options`` (default: the defaults) with the keywords ``given`` applied (each overrides the value's field)."""
    if options is not None and not isinstance(options, RetrieverOptions):
        raise InvalidParameterError(_("options must be a RetrieverOptions value, got {type}",
                                      type=type(options).__name__))
    unknown = sorted(set(given) - set(OPTION_NAMES))
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    base = options or RetrieverOptions()
    return base.replace(**given) if given else base
