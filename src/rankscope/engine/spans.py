"""Span judgments in the engine: :class:`SpanSource` turns (span qrels, chunking) into what kernels read.

When :func:`~rankscope.engine.evaluate` is given span judgments and a chunking,

* the ordinary measures score the chunk qrels derived with the rule
  (:meth:`~rankscope.data.spans.SpanQrels.to_qrels`, default ``chars>=1``); a query whose
  spans no chunk of the chunking touches is still evaluated (it scores 0), through one
  judged-non-relevant placeholder;
* the span measures read :class:`~rankscope.measures._spans.SpanInput`: the judged spans of
  the evaluated queries and, for every retrieved row, where its chunk lies — the same rows,
  ranks and depth cut as every other measure;
* the result states the rule, the chunking and the span coverage (``result.spans``).

A retrieved id that is not a chunk of the chunking is an error for the span measures
(its text, and so its cost, is unknown).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from rankscope.data._columns import arrow_ints
from rankscope.data.chunking import Chunking
from rankscope.data.qrels import Qrels
from rankscope.data.span_rules import ChunkRule
from rankscope.data.spans import SpanQrels
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _
from rankscope.measures._spans import SpanArrays, SpanInput

if TYPE_CHECKING:
    from rankscope.engine.prepared import Prepared

__all__ = ["SpanSource", "NO_CHUNK"]

NO_CHUNK = "\x00rankscope:no-chunk"  # placeholder judgment of a query whose spans no chunk touches


class SpanSource:
    """Span judgments + chunking, prepared once for many runs."""

    def __init__(self, spans: SpanQrels, chunking: Any, rule: str | ChunkRule = "any") -> None:
        if not isinstance(spans, SpanQrels):
            raise InvalidParameterError(_("span judgments must be SpanQrels, got {type}", type=type(spans).__name__))
        if not isinstance(chunking, Chunking):
            raise InvalidParameterError(_("span judgments need chunking= (a rankscope Chunking: chunk id -> "
                                          "document, start, end), got {type}", type=type(chunking).__name__))
        if len(spans) == 0:
            raise InvalidParameterError(_("the span judgments hold no span"))
        self.spans = spans
        self.chunking = chunking
        self.rule = ChunkRule.parse(rule)
        derived = spans.to_qrels(chunking, self.rule)
        self.coverage = derived.coverage
        missing = sorted(set(spans.queries) - set(derived.queries))
        self.queries_without_chunk = len(missing)
        self.qrels: Qrels = derived
        if missing:
            self.qrels = Qrels(np.concatenate([derived.query_column(), np.asarray(missing, dtype=object)]),
                               derived.doc_column().to_pylist() + [NO_CHUNK] * len(missing),
                               np.concatenate([derived.grades, np.zeros(len(missing), dtype=np.int64)]))
        self.doc_ids = np.union1d(np.asarray(chunking.doc_ids, dtype=str), np.asarray(spans.doc_ids, dtype=str))
        self.chunk_doc = np.searchsorted(self.doc_ids, chunking.doc.astype(str))
        self.span_doc = np.searchsorted(self.doc_ids, spans.doc.astype(str))
        corpus = chunking.corpus
        self.corpus = {d: corpus[d] for d in self.doc_ids.tolist() if d in corpus} if corpus is not None else None
        if self.corpus is not None and len(self.corpus) < len(self.doc_ids):
            self.corpus = None  # token units then say that texts are missing

    def policy(self) -> dict[str, Any]:
        """What the result says about the spans: chunking, rule, coverage."""
        return {"chunking": self.chunking.name, "chunk_rule": str(self.rule), "coverage": self.coverage.to_dict(),
                "queries_without_chunk": self.queries_without_chunk}

    def input_for(self, prepared: Prepared) -> SpanInput:
        """The span arrays of ``prepared``'s queries and retrieved rows (complete view)."""
        cv = prepared.complete_view()
        qids = np.asarray(prepared.query_ids, dtype=str)
        sq = self.spans.query.astype(str)
        pos = np.minimum(np.searchsorted(qids, sq), max(len(qids) - 1, 0))
        keep = (qids[pos] == sq) if len(qids) else np.zeros(len(sq), dtype=bool)
        if len(cv.qidx):
            docs = cv.doc_ids.take(arrow_ints(cv.dcode))
            row = self.chunking.lookup(docs)
        else:
            docs = pa.array([], type=pa.string())
            row = np.empty(0, dtype=np.int64)
        unknown = np.flatnonzero(row < 0)
        if len(unknown):
            examples = Items(tuple(docs[int(i)].as_py() for i in unknown[:3]), quote=True)
            raise InvalidParameterError(_("{n} of {total} retrieved ids are not chunks of chunking {chunking!r} "
                                          "(e.g. {examples}); span measures need the place of every retrieved "
                                          "chunk: use the chunk ids of that chunking in the run", n=len(unknown),
                                          total=len(row), chunking=self.chunking.name, examples=examples))
        ch = self.chunking
        arrays = SpanArrays(
            n=prepared.n, span_q=pos[keep], span_doc=self.span_doc[keep], span_start=self.spans.start[keep],
            span_end=self.spans.end[keep], span_grade=self.spans.grade[keep], row_q=cv.qidx.astype(np.int64),
            row_rank=cv.rank.astype(np.int64), row_doc=self.chunk_doc[row], row_start=ch.start[row],
            row_end=ch.end[row], chunk_doc=self.chunk_doc, chunk_start=ch.start, chunk_end=ch.end)
        return SpanInput(arrays, self.doc_ids.tolist(), self.corpus)
