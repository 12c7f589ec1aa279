"""Hybrid retrieval: ask several retrievers, fuse their rankings (:class:`HybridRetriever`).

Each query goes to every retriever for its top ``depth`` hits (their
``search_batch`` when they have one); the rankings are fused with
:func:`~rankscope.retrieval.fusion.fuse` (RRF by default) and the top ``k``
fused documents are returned, best first in trec_eval order.  A hit keeps
the text and metadata of the first retriever that returned it.

A retriever's own scores are fused as they are when they are all finite;
otherwise (no scores) its list order gives rank scores ``n, ..., 1``.

>>> from rankscope.retrieval.protocol import Hit
>>> class Fixed:
...     def __init__(self, ids): self.ids = ids
...     def search(self, query, k): return [Hit(d, 1.0 / (i + 1)) for i, d in enumerate(self.ids[:k])]
>>> hybrid = HybridRetriever([Fixed(["a", "b", "c"]), Fixed(["c", "a"])], method="rrf")
>>> [(h.id, round(h.score, 4)) for h in hybrid.search("q", k=2)]
[('a', 0.0325), ('c', 0.0323)]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from rankscope.data.run import Run
from rankscope.errors import EmptyInputError, InvalidParameterError, RankscopeError
from rankscope.i18n import _
from rankscope.retrieval.fusion import _check_options, fuse, ranked_lists
from rankscope.retrieval.protocol import Hit, as_retriever, ranking_scores
from rankscope.retrieval.searcher import BatchSearcher, check_k

__all__ = ["HybridRetriever"]


class HybridRetriever(BatchSearcher):
    """Fuse the results of several retrievers (see the module docstring).

    Parameters
    ----------
    retrievers:
        A list of retrievers or ``{name: retriever}``; anything
        :func:`~rankscope.retrieval.protocol.as_retriever` accepts.
    method, norm, k, weights, params:
        As for :func:`~rankscope.retrieval.fusion.fuse` (``k`` is the RRF constant; ``params`` the method's
        other parameters, e.g. ``phi=0.9`` for ``"rbc"``); the supervised methods need runs and judgments
        (``fuse(runs, ..., qrels=...)``), not live retrievers.
    depth:
        Hits asked from each retriever per query (default 100); at least the ``k`` of a search.
    name:
        Run name (default ``"hybrid-<method>"``).
    """

    def __init__(
        self,
        retrievers: Sequence[Any] | Mapping[str, Any],
        *,
        method: str = "rrf",
        norm: str | None = "minmax",
        k: float = 60,
        weights: Sequence[float] | None = None,
        depth: int = 100,
        name: str | None = None,
        **params: float,
    ) -> None:
        if isinstance(retrievers, Mapping):
            items = [(str(n), r) for n, r in retrievers.items()]
        elif isinstance(retrievers, Sequence) and not isinstance(retrievers, (str, bytes)):
            items = [(str(getattr(r, "name", None) or f"retriever{i + 1}"), r) for i, r in enumerate(retrievers)]
        else:
            mapping = "{name: retriever}"
            raise InvalidParameterError(_("retrievers must be a list or {mapping} mapping, got {type}",
                                          mapping=mapping, type=type(retrievers).__name__))
        if not items:
            raise EmptyInputError(_("HybridRetriever needs at least one retriever"))
        names = [n for n, __ in items]
        if len(set(names)) != len(names):
            names = [f"{n}{i + 1}" for i, n in enumerate(names)]
        self.weights = _check_options(method, norm, k, weights, len(items), depth)
        from rankscope.retrieval.fusion.registry import check_params, get_method

        self.params: dict[str, Any] = {n: v for n, v in check_params(get_method(method), params).items() if n != "k"}
        self._weights_given = weights is not None  # a method that takes no weights is not given the default ones
        self.depth = check_k(depth)
        self.method, self.norm, self.k = method, norm, k
        self.retrievers = {n: as_retriever(r) for n, (__, r) in zip(names, items)}
        self.name = name or f"hybrid-{method}"

    def fingerprint(self) -> str:
        """The identity for resume caches: the method, its options and each retriever's identity."""
        from rankscope.retrieval.protocol import retriever_identity

        parts = ",".join(f"{n}={retriever_identity(r)}" for n, r in self.retrievers.items())
        extra = "".join(f"|{n}={v}" for n, v in sorted(self.params.items()))
        return f"HybridRetriever[{self.method}|{self.norm}|k={self.k}|{self.weights}|depth={self.depth}{extra}|{parts}]"

    def __repr__(self) -> str:
        return f"HybridRetriever({list(self.retrievers)}, method={self.method!r}, depth={self.depth})"

    def _search_batch(self, queries: list[str], k: int) -> list[list[Hit]]:
        """Each retriever's top ``max(depth, k)`` hits, fused."""
        depth = max(self.depth, k)
        qids = [str(i) for i in range(len(queries))]
        runs: dict[str, Run] = {}
        known: dict[str, Hit] = {}
        for name, retriever in self.retrievers.items():
            if hasattr(retriever, "search_batch"):
                results = retriever.search_batch(list(queries), depth)
                if len(results) != len(queries):
                    raise RankscopeError(_("{name}: search_batch returned {got} lists for {n} queries", name=name,
                                           got=len(results), n=len(queries)))
            else:
                results = [retriever.search(q, depth) for q in queries]
            qs: list[str] = []
            ds: list[str] = []
            ss: list[float] = []
            for qid, hits in zip(qids, results):
                scores = [h.score for h in hits]
                if not all(math.isfinite(s) for s in scores):
                    scores = ranking_scores(hits)
                qs.extend([qid] * len(hits))
                ds.extend(h.id for h in hits)
                ss.extend(scores)
                for h in hits:
                    known.setdefault(h.id, h)
            runs[name] = Run(qs, ds, ss, name, duplicates="keep_best")
        fused = fuse(runs, self.method, norm=self.norm, k=self.k, weights=self.weights if self._weights_given else None,
                     name=self.name, **self.params)
        lists = ranked_lists(fused, k)
        out: list[list[Hit]] = []
        for qid in qids:
            out.append(
                [Hit(d, s, known[d].text, known[d].metadata) for d, s in lists.get(qid, [])]
            )
        return out
