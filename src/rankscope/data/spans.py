"""Relevance judgments on spans of text: :class:`SpanQrels`.

A span judgment says "characters ``start:end`` of document ``doc_id`` answer query
``query_id``, with grade ``grade``" (character offsets into the document's text,
end exclusive, like Python slices).  Unlike chunk qrels, span judgments do not
depend on how the documents are cut into chunks, so one set of labels serves every
chunking: :meth:`SpanQrels.to_qrels` derives chunk qrels for any
:class:`~rankscope.data.chunking.Chunking`, and the span measures
(``span_recall@k``, ``span_precision@k``, ``span_iou@k``, ``span_precision_omega``)
score retrieved chunks against the judged characters directly.

A query may have several spans, in one or several documents, with different
grades; spans may overlap (a character's grade is the highest grade of the spans
covering it).  Grade 0 (or below) marks text judged *not* relevant.

>>> sq = SpanQrels.from_records([
...     {"query_id": "q1", "doc_id": "d1", "start": 10, "end": 25, "grade": 2},
...     {"query_id": "q1", "doc_id": "d2", "start": 0, "end": 8},
... ])
>>> len(sq), sq.queries, sq.to_records()[1]
(2, ['q1'], {'query_id': 'q1', 'doc_id': 'd2', 'start': 0, 'end': 8, 'grade': 1})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.data._places import Where
from rankscope.data._spantable import (
    Locator,
    check_offsets,
    codes,
    doc_lengths,
    int_column,
    record_columns,
    sort_rows,
    str_column,
)
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _

if TYPE_CHECKING:
    from rankscope.data.chunking import Chunking
    from rankscope.data.span_rules import ChunkQrels, ChunkRule, SpanCoverage

__all__ = ["SpanQrels"]


class SpanQrels:
    """Span judgments: (query id, document id, start, end, grade) rows, character offsets, end exclusive.

    Parameters
    ----------
    query_ids, doc_ids : equally long sequences of ids (strings or integers)
    starts, ends : character offsets into the document's text (``0 <= start < end``)
    grades : integer grades (default 1 for every span)
    corpus : optional ``{doc_id: text}`` (or ``{doc_id: length}``): every document must be
        known and every span must end inside its document

    Rows are kept sorted by query, document, start, end.  An exact repeat of a
    (query, document, start, end) row is an error.  Problems name the record
    (1-based) and the field, or the file and line when read from a file.
    """

    __slots__ = ("_doc_code", "_doc_ids", "_query_code", "_query_ids", "doc", "end", "grade", "query", "start")

    def __init__(self, query_ids: Any, doc_ids: Any, starts: Any, ends: Any, grades: Any = None, *,
                 corpus: Mapping[str, Any] | None = None, _locate: Locator | None = None) -> None:
        locate = _locate or Locator()
        q = str_column(list(query_ids), "query_id", locate)
        d = str_column(list(doc_ids), "doc_id", locate)
        s = int_column(starts, "start", locate)
        e = int_column(ends, "end", locate)
        g = np.ones(len(q), dtype=np.int64) if grades is None else int_column(grades, "grade", locate)
        if not (len(q) == len(d) == len(s) == len(e) == len(g)):
            raise InvalidParameterError(_("span columns differ in length: {queries} query ids, {docs} doc ids, "
                                          "{starts} starts, {ends} ends, {grades} grades", queries=len(q), docs=len(d),
                                          starts=len(s), ends=len(e), grades=len(g)))
        check_offsets(d, s, e, locate, doc_lengths(corpus) if corpus is not None else None)
        order = sort_rows(q.astype(str), d.astype(str), s, e) if len(q) else np.empty(0, dtype=np.int64)
        self.query, self.doc, self.start, self.end, self.grade = q[order], d[order], s[order], e[order], g[order]
        if len(order) > 1:
            same = ((self.query[1:] == self.query[:-1]) & (self.doc[1:] == self.doc[:-1])
                    & (self.start[1:] == self.start[:-1]) & (self.end[1:] == self.end[:-1]))
            dup = np.flatnonzero(same)
            if len(dup):
                i = int(dup[0])
                first, again = sorted(int(order[j]) for j in (i, i + 1))
                also = locate.where(first)
                qid, doc, start, end = str(self.query[i]), str(self.doc[i]), int(self.start[i]), int(self.end[i])
                raise locate.error(again, None,
                                   _("query {query!r} judges the span {doc!r} [{start}, {end}) twice (also {also})",
                                     query=qid, doc=doc, start=start, end=end, also=Where(also)))
        self._query_ids, self._query_code = codes(self.query)
        self._doc_ids, self._doc_code = codes(self.doc)

    # -- building ---------------------------------------------------------------------
    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], *, corpus: Mapping[str, Any] | None = None,
                     source: str | None = None) -> SpanQrels:
        """Build from mappings with ``query_id``, ``doc_id``, ``start``, ``end`` and optional ``grade`` (default 1).

        Accepted field names: see :data:`rankscope.data._spantable.FIELDS` (``qid``, ``docid``,
        ``start_char``, ``end_char``, ``relevance`` ...).

        >>> SpanQrels.from_records([{"qid": "q", "doc_id": "d", "start": 3, "end": 1}])
        Traceback (most recent call last):
        ...
        rankscope.errors.ParseError: record 1, field 'end': a span needs start < end (end exclusive), got start 3, end 1
        """
        locate = Locator(source)
        cols = record_columns(records, ("query_id", "doc_id", "start", "end"), {"grade": 1}, locate)
        return cls(cols["query_id"], cols["doc_id"], cols["start"], cols["end"], cols["grade"], corpus=corpus,
                   _locate=locate)

    @classmethod
    def from_dataframe(cls, df: Any, *, corpus: Mapping[str, Any] | None = None) -> SpanQrels:
        """Build from a pandas DataFrame (or Arrow table) with the columns of :meth:`from_records`."""
        from rankscope.io.spans import spans_from_table

        return spans_from_table(df, corpus=corpus)

    @classmethod
    def from_file(cls, path: str | Path, *, corpus: Mapping[str, Any] | None = None,
                  format: str | None = None) -> SpanQrels:
        """Read JSON Lines, JSON (a list of records), CSV / TSV or Parquet (columns as in :meth:`from_records`)."""
        from rankscope.io.spans import read_span_qrels

        return read_span_qrels(path, corpus=corpus, format=format)

    @classmethod
    def from_answers(cls, testset: Any, **options: Any) -> SpanQrels:
        """Spans at every occurrence of each query's reference answers in its judged documents.

        See :func:`~rankscope.data.span_build.locate_answers` (which also returns the counts of
        answers found once, several times or not at all).
        """
        from rankscope.data.span_build import locate_answers

        return locate_answers(testset, **options).spans

    @classmethod
    def from_squad(cls, data: Any, **options: Any) -> SpanQrels:
        """Spans from SQuAD-style data (see :func:`~rankscope.data.span_build.squad_spans`)."""
        from rankscope.data.span_build import squad_spans

        return squad_spans(data, **options).spans

    # -- views ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.query)

    def __repr__(self) -> str:
        return f"SpanQrels({len(self._query_ids)} queries, {len(self)} spans in {len(self._doc_ids)} documents)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SpanQrels):
            return NotImplemented
        return all(np.array_equal(a, b) for a, b in zip(self._columns(), other._columns()))

    __hash__ = None  # type: ignore[assignment]

    def _columns(self) -> tuple[np.ndarray, ...]:
        return self.query, self.doc, self.start, self.end, self.grade

    @property
    def queries(self) -> list[str]:
        """The query ids that have a span, sorted."""
        return [str(x) for x in self._query_ids]

    @property
    def doc_ids(self) -> list[str]:
        """The documents that hold a span, sorted."""
        return [str(x) for x in self._doc_ids]

    @property
    def query_code(self) -> np.ndarray:
        """Index of each row's query in :attr:`queries`."""
        return self._query_code

    @property
    def lengths(self) -> np.ndarray:
        """``end - start`` of every span."""
        return self.end - self.start

    def to_records(self) -> list[dict[str, Any]]:
        """One ``{"query_id", "doc_id", "start", "end", "grade"}`` dict per span, in row order."""
        return [{"query_id": q, "doc_id": d, "start": s, "end": e, "grade": g}
                for q, d, s, e, g in zip(self.query.tolist(), self.doc.tolist(), self.start.tolist(),
                                         self.end.tolist(), self.grade.tolist())]

    def to_dataframe(self) -> Any:
        """A pandas DataFrame with the columns of :meth:`to_records`."""
        import pandas as pd

        return pd.DataFrame({"query_id": self.query.astype(str), "doc_id": self.doc.astype(str),
                             "start": self.start, "end": self.end, "grade": self.grade})

    def to_file(self, path: str | Path, format: str | None = None) -> None:
        """Write JSON Lines (default), CSV / TSV or Parquet, chosen by the file name or ``format``."""
        from rankscope.io.spans import write_table

        write_table(self.to_records(), path, format=format)

    def for_query(self, query_id: str) -> list[dict[str, Any]]:
        """The spans of one query as records."""
        return [r for r in self.to_records() if r["query_id"] == query_id]

    def texts(self, corpus: Mapping[str, str]) -> list[str]:
        """The judged text of every span (``corpus[doc][start:end]``)."""
        return [corpus[d][s:e] for d, s, e in zip(self.doc.tolist(), self.start.tolist(), self.end.tolist())]

    def validate(self, corpus: Mapping[str, Any]) -> SpanQrels:
        """Check every document is in ``corpus`` and every span ends inside it; returns ``self``."""
        check_offsets(self.doc, self.start, self.end, Locator(_("span judgments")),
                      doc_lengths(corpus))
        return self

    def subset(self, query_ids: Iterable[str]) -> SpanQrels:
        """The spans of the given queries only."""
        keep = np.isin(self.query.astype(str), np.asarray(list(query_ids), dtype=str))
        return SpanQrels(self.query[keep], self.doc[keep], self.start[keep], self.end[keep], self.grade[keep])

    # -- chunk level ------------------------------------------------------------------
    def to_qrels(self, chunking: Chunking, rule: str | ChunkRule = "any") -> ChunkQrels:
        """Chunk qrels for ``chunking``: a chunk is relevant when it overlaps a judged span by the ``rule``.

        See :func:`rankscope.data.span_rules.derive_qrels` (rules, grades, and the count of
        spans that no chunk covers in :attr:`ChunkQrels.coverage`).
        """
        from rankscope.data.span_rules import derive_qrels

        return derive_qrels(self, chunking, rule)

    def coverage(self, chunking: Chunking) -> SpanCoverage:
        """How the judged spans fall on the chunks: inside one chunk, cut by a boundary, outside every chunk."""
        from rankscope.data.span_rules import span_coverage

        return span_coverage(self, chunking)

