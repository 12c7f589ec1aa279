"""BM25 baseline retriever on `bm25s <https://github.com/xhluca/bm25s>`_.

Scoring (``method="lucene"``, the default, as in Lucene/Elasticsearch)::

    score(q, d) = Σ_{t ∈ q ∩ d} idf(t) · tf(t,d) / (tf(t,d) + k1 · (1 - b + b · |d| / avgdl))
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

(Lucene 8+ drops the classic constant factor ``k1 + 1``; rankings are the same.)

bm25s also offers ``"robertson"``, ``"atire"``, ``"bm25l"`` and ``"bm25+"``
(``delta`` applies to the last two).  The index is a sparse matrix of
precomputed term-document scores, so a query costs one sparse row sum.

Documents and queries go through the same tokenizer (:mod:`rankscope.retrieval.tokenize`):
``"auto"`` picks jieba for Chinese and stemming + stop words for English per
text; ``"en"``, ``"zh"`` or any callable ``str -> list[str]`` fix it.

Results: at most ``k`` hits per query, best first; documents with score 0
(no query term in common) are not returned; equal scores are ordered by
doc id descending, the order trec_eval uses, so the list order is the order
that gets evaluated.

>>> bm25 = BM25Retriever({"d1": "supersonic flow over a wing", "d2": "heat transfer in a boundary layer",
...                       "d3": "boundary layer transition at supersonic speed"})
>>> [h.id for h in bm25.search("boundary layers", k=5)]
['d2', 'd3']
>>> [[h.id for h in hits] for hits in bm25.search_batch(["wing", "heat transfer"], k=1)]
[['d1'], ['d2']]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import numpy as np

from rankscope.errors import InvalidParameterError, Items, RankscopeError
from rankscope.i18n import _
from rankscope.retrieval.protocol import Hit
from rankscope.retrieval.searcher import BatchSearcher, check_corpus, doc_id_rank, order_rows
from rankscope.retrieval.tokenize import Tokenizer, make_tokenizer

__all__ = ["BM25Retriever", "BM25_METHODS"]

BM25_METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")


class BM25Retriever(BatchSearcher):
    """BM25 over an in-memory corpus ``{doc_id: text}`` (see the module docstring).

    Parameters
    ----------
    corpus:
        Mapping doc id → text; ids become strings.
    tokenizer:
        ``"auto"`` (default), ``"en"``, ``"zh"``, a :class:`~rankscope.retrieval.tokenize.Tokenizer`,
        or any callable ``str -> list[str]``.
    k1, b:
        BM25 term-frequency saturation (``k1 >= 0``) and length normalisation (``0 <= b <= 1``).
    method:
        One of :data:`BM25_METHODS`.
    delta:
        The BM25L / BM25+ lower bound.
    name:
        The run name used when this retriever is evaluated.
    with_text:
        Put the document text into each :class:`Hit` (default ``True``).
    progress:
        Optional callback ``progress(done, total)`` called while the corpus is tokenized.
    """

    def __init__(
        self,
        corpus: Mapping[str, str],
        *,
        tokenizer: str | Callable[[str], list[str]] | Tokenizer = "auto",
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
        delta: float = 0.5,
        name: str = "bm25",
        with_text: bool = True,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        if method not in BM25_METHODS:
            choices = Items(BM25_METHODS)
            raise InvalidParameterError(_("BM25 method must be one of {choices}; got {value!r}", choices=choices,
                                          value=method))
        if not (isinstance(k1, (int, float)) and math.isfinite(k1) and k1 >= 0):
            raise InvalidParameterError(_("k1 must be a number >= 0, got {value!r}", value=k1))
        if not (isinstance(b, (int, float)) and 0 <= b <= 1):
            raise InvalidParameterError(_("b must be a number in [0, 1], got {value!r}", value=b))
        self._ids, self._texts = check_corpus(corpus, "BM25Retriever")
        self._id_rank = doc_id_rank(self._ids)
        self.tokenize = make_tokenizer(tokenizer)
        self.name = name
        self.with_text = with_text
        self.k1, self.b, self.method, self.delta = float(k1), float(b), method, delta
        self._tokenizer_label = tokenizer if isinstance(tokenizer, str) else type(tokenizer).__name__
        try:
            import bm25s
        except ImportError:  # pragma: no cover - depends on the environment
            raise RankscopeError(_("{who} needs {package}: pip install 'rankscope[{extra}]'", who="BM25Retriever",
                                   package="bm25s", extra="bm25")) from None
        tokens: list[list[str]] = []
        n = len(self._texts)
        for start in range(0, n, 256):
            tokens.extend(self.tokenize(t) for t in self._texts[start : start + 256])
            if progress is not None:
                progress(min(start + 256, n), n)
        self._index = bm25s.BM25(k1=self.k1, b=self.b, method=method, delta=delta)
        self._index.index(tokens, show_progress=False)
        self._vocab: dict[str, int] = self._index.vocab_dict

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        return f"BM25Retriever({len(self)} docs, k1={self.k1}, b={self.b}, method={self.method!r})"

    def fingerprint(self) -> str:
        """The identity of this retriever for resume caches: settings, tokenizer, corpus hash."""
        from rankscope.retrieval.dense import corpus_key

        settings = f"{self.method}|k1={self.k1}|b={self.b}|delta={self.delta}|{self._tokenizer_label}"
        return f"BM25Retriever[{settings}|{corpus_key('bm25', self._ids, self._texts, '')}]"

    def _search_batch(self, queries: list[str], k: int) -> list[list[Hit]]:
        """All queries in one bm25s call."""
        kk = min(k, len(self._ids))
        vocab = self._vocab
        token_lists = [[t for t in self.tokenize(q) if t in vocab] for q in queries]
        res = self._index.retrieve(token_lists, k=kk, show_progress=False, n_threads=0)
        scores = np.asarray(res.scores, dtype=np.float64).reshape(len(queries), kk)
        idx = np.asarray(res.documents, dtype=np.int64).reshape(len(queries), kk)
        scores, idx = order_rows(scores, idx, self._id_rank)
        return self._hits(scores, idx)

    def _hits(self, scores: np.ndarray, idx: np.ndarray) -> list[list[Hit]]:
        keep = scores != 0
        ids, texts = self._ids, self._texts
        out: list[list[Hit]] = []
        for row_s, row_i, row_k in zip(scores.tolist(), idx.tolist(), keep.tolist()):
            out.append(
                [
                    Hit(ids[i], s, texts[i] if self.with_text else None)
                    for s, i, ok in zip(row_s, row_i, row_k)
                    if ok
                ]
            )
        return out
