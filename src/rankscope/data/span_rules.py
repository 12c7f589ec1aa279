"""From span judgments to chunk judgments: :class:`ChunkRule`, :func:`derive_qrels`, :func:`span_coverage`.

:meth:`SpanQrels.to_qrels(chunking, rule) <rankscope.data.spans.SpanQrels.to_qrels>`
judges every chunk of every document that holds a judged span of the query:

* a chunk is **relevant** when it overlaps a judged span (grade >= 1) as the rule asks:
  ``"chars>=N"`` (at least N shared characters; ``"any"`` = ``"chars>=1"``, the default),
  ``"fraction>=F"`` (the chunk holds at least F of the span's characters) or
  ``"contains"`` (= ``"fraction>=1"``, the whole span); its grade is the highest grade
  of the spans it meets the rule with;
* every other chunk of such a document is judged **non-relevant** (grade 0): the
  document was read and only the judged spans answer the query;
* chunks of documents the query has no span in stay unjudged.

Spans are also counted by how the chunking treats them (:class:`SpanCoverage`):
inside one chunk, cut by a chunk boundary (covered only by several chunks
together), partly outside every chunk, or outside every chunk — a span that is not
inside any one chunk cannot be retrieved whole by a single chunk.

>>> from rankscope.data.spans import SpanQrels
>>> from rankscope.data.chunking import Chunking
>>> ch = Chunking.from_records([{"chunk_id": f"d#{i}", "doc_id": "d", "start": 10 * i, "end": 10 * i + 10}
...                             for i in range(3)])
>>> sq = SpanQrels.from_records([{"query_id": "q", "doc_id": "d", "start": 8, "end": 14, "grade": 2}])
>>> sq.to_qrels(ch).to_dict()
{'q': {'d#0': 2, 'd#1': 2, 'd#2': 0}}
>>> sq.to_qrels(ch, "chars>=3").to_dict()
{'q': {'d#0': 0, 'd#1': 2, 'd#2': 0}}
>>> sq.coverage(ch)
SpanCoverage(spans=1, contained=0, cut=1, partial=0, outside=0)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.data._intervals import merge, overlap_pairs
from rankscope.data.qrels import Qrels
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _

if TYPE_CHECKING:
    from rankscope.data.chunking import Chunking
    from rankscope.data.spans import SpanQrels

__all__ = ["ChunkRule", "ChunkQrels", "SpanCoverage", "derive_qrels", "span_coverage", "DEFAULT_RULE"]

_RULE = re.compile(r"^\s*(chars|fraction)\s*(?:>=|:|=)\s*([0-9.]+)\s*$")


@dataclass(frozen=True)
class ChunkRule:
    """When a chunk counts as relevant to a judged span: ``chars >= value`` or ``fraction >= value``.

    >>> ChunkRule.parse("any"), ChunkRule.parse("fraction>=0.5"), str(ChunkRule.parse("contains"))
    (ChunkRule(kind='chars', value=1.0), ChunkRule(kind='fraction', value=0.5), 'fraction>=1')
    """

    kind: str = "chars"
    value: float = 1.0

    def __post_init__(self) -> None:
        if self.kind not in ("chars", "fraction"):
            raise InvalidParameterError(_("a chunk rule is 'chars' or 'fraction', got {value!r}", value=self.kind))
        if self.kind == "chars" and (self.value < 1 or self.value != int(self.value)):
            raise InvalidParameterError(_("rule chars>=N needs a whole number N >= 1, got {value!r}", value=self.value))
        if self.kind == "fraction" and not 0 < self.value <= 1:
            raise InvalidParameterError(_("rule fraction>=F needs 0 < F <= 1, got {value!r}", value=self.value))

    @classmethod
    def parse(cls, rule: str | ChunkRule) -> ChunkRule:
        """A rule from ``"any"``, ``"contains"``, ``"chars>=N"`` or ``"fraction>=F"`` (``:`` also accepted)."""
        if isinstance(rule, ChunkRule):
            return rule
        if not isinstance(rule, str):
            raise InvalidParameterError(_("rule must be a string such as 'chars>=20', got {value!r}", value=rule))
        text = rule.strip().lower()
        if text in ("any", "overlap"):
            return cls("chars", 1.0)
        if text == "contains":
            return cls("fraction", 1.0)
        m = _RULE.match(text)
        if m is None:
            raise InvalidParameterError(_("unknown chunk rule {rule!r}; use 'any', 'contains', 'chars>=N' or "
                                          "'fraction>=F'", rule=rule))
        try:
            value = float(m.group(2))
        except ValueError:
            raise InvalidParameterError(_("unknown chunk rule {rule!r}: {value!r} is not a number", rule=rule,
                                          value=m.group(2))) from None
        return cls(m.group(1), value)

    def __str__(self) -> str:
        return f"{self.kind}>={int(self.value) if self.kind == 'chars' else f'{self.value:g}'}"

    def holds(self, overlap: np.ndarray, span_length: np.ndarray) -> np.ndarray:
        """Per (span, chunk) pair: does the overlap satisfy the rule?"""
        if self.kind == "chars":
            return overlap >= self.value
        return overlap >= self.value * span_length - 1e-9 * span_length


DEFAULT_RULE = ChunkRule()


@dataclass(frozen=True)
class SpanCoverage:
    """How the relevant spans (grade >= 1) fall on a chunking.

    ``contained``: inside one chunk; ``cut``: covered only by several chunks together
    (a chunk boundary cuts it); ``partial``: some characters are in no chunk;
    ``outside``: no character is in a chunk (including spans in documents the chunking
    lacks).  ``unmatched``: spans no chunk meets the rule for (only after
    :func:`derive_qrels`, else None).  ``spans = contained + cut + partial + outside``.
    """

    spans: int
    contained: int
    cut: int
    partial: int
    outside: int
    unmatched: int | None = None

    @property
    def not_in_one_chunk(self) -> int:
        """Spans that no single chunk holds whole."""
        return self.cut + self.partial + self.outside

    def to_dict(self) -> dict[str, Any]:
        """The counts as a dict (``unmatched`` omitted when unknown)."""
        out = {"spans": self.spans, "contained": self.contained, "cut": self.cut, "partial": self.partial,
               "outside": self.outside}
        if self.unmatched is not None:
            out["unmatched"] = self.unmatched
        return out

    def message(self, lang: str = "en") -> str:
        """One sentence for reports (English or Chinese)."""

        text = _("{spans} judged spans: {contained} inside one chunk, {cut} cut by a chunk boundary, {partial} "
                 "partly outside every chunk, {outside} outside every chunk.", spans=self.spans,
                 contained=self.contained, cut=self.cut, partial=self.partial, outside=self.outside).text(lang)
        if self.unmatched:
            text += _(" {n} of them make no chunk relevant under the rule.", n=self.unmatched).text(lang)
        return text

    def __repr__(self) -> str:
        extra = f", unmatched={self.unmatched}" if self.unmatched is not None else ""
        return (f"SpanCoverage(spans={self.spans}, contained={self.contained}, cut={self.cut}, "
                f"partial={self.partial}, outside={self.outside}{extra})")


class ChunkQrels(Qrels):
    """Chunk qrels derived from span judgments: a :class:`~rankscope.data.Qrels` that also knows the
    ``rule`` it was derived with and the span ``coverage`` (so results can say both)."""

    __slots__ = ("coverage", "rule")

    rule: ChunkRule
    coverage: SpanCoverage

    def __repr__(self) -> str:
        return (f"ChunkQrels({len(self.query_ids)} queries, {len(self)} judgments, rule {self.rule}, "
                f"{self.coverage.not_in_one_chunk} of {self.coverage.spans} spans not inside one chunk)")


@dataclass(frozen=True)
class _Pairs:
    """Spans and chunks on a common line of (document, position) coordinates, and their overlapping pairs."""

    span_rows: np.ndarray  # spans whose document the chunking has
    span_doc: np.ndarray  # chunking doc code of every span (-1: document not chunked)
    ia: np.ndarray  # pair -> index into span_rows
    ib: np.ndarray  # pair -> chunk row
    overlap: np.ndarray
    stride: int


def _doc_codes(spans: SpanQrels, chunking: Chunking) -> np.ndarray:
    """The chunking's doc code of every span's document, -1 when the chunking has no chunk of it."""
    docs = np.asarray(chunking.doc_ids, dtype=str)
    if len(docs) == 0:
        return np.full(len(spans), -1, dtype=np.int64)
    sdoc = spans.doc.astype(str)
    pos = np.minimum(np.searchsorted(docs, sdoc), len(docs) - 1)
    return np.where(docs[pos] == sdoc, pos, -1).astype(np.int64)


def _pairs(spans: SpanQrels, chunking: Chunking) -> _Pairs:
    sdoc = _doc_codes(spans, chunking)
    rows = np.flatnonzero(sdoc >= 0)
    stride = int(max(spans.end.max(initial=0), chunking.end.max(initial=0))) + 1
    base_s = sdoc[rows] * stride
    base_c = chunking.dcode * stride
    ia, ib, ov = overlap_pairs(base_s + spans.start[rows], base_s + spans.end[rows],
                               base_c + chunking.start, base_c + chunking.end)
    return _Pairs(rows, sdoc, ia, ib, ov, stride)


def _coverage(spans: SpanQrels, chunking: Chunking, pairs: _Pairs) -> SpanCoverage:
    relevant = spans.grade >= 1
    n = len(spans)
    length = spans.lengths
    # inside one chunk: some pair overlaps by the whole span
    whole = np.zeros(n, dtype=bool)
    span_of_pair = pairs.span_rows[pairs.ia]
    whole[span_of_pair[pairs.overlap == length[span_of_pair]]] = True
    # covered by the union of the document's chunks
    base_c = chunking.dcode * pairs.stride
    us, ue, __ = merge(base_c + chunking.start, base_c + chunking.end)
    base_s = pairs.span_doc[pairs.span_rows] * pairs.stride
    ja, __, jov = overlap_pairs(base_s + spans.start[pairs.span_rows], base_s + spans.end[pairs.span_rows], us, ue)
    covered = np.zeros(n, dtype=np.int64)
    np.add.at(covered, pairs.span_rows[ja], jov)
    contained = int((relevant & whole).sum())
    cut = int((relevant & ~whole & (covered == length)).sum())
    outside = int((relevant & (covered == 0)).sum())
    partial = int((relevant & (covered > 0) & (covered < length)).sum())
    return SpanCoverage(int(relevant.sum()), contained, cut, partial, outside)


def span_coverage(spans: SpanQrels, chunking: Chunking) -> SpanCoverage:
    """Count how the relevant spans fall on ``chunking`` (see :class:`SpanCoverage`)."""
    return _coverage(spans, chunking, _pairs(spans, chunking))


def derive_qrels(spans: SpanQrels, chunking: Chunking, rule: str | ChunkRule = DEFAULT_RULE) -> ChunkQrels:
    """Chunk qrels for ``chunking`` (see the module doc); vectorised over spans and chunks."""
    rule = ChunkRule.parse(rule)
    pairs = _pairs(spans, chunking)
    coverage = _coverage(spans, chunking, pairs)
    n_chunks = len(chunking)
    qcode = spans.query_code
    # every chunk of every (query, document) that holds a span: grade 0 ...
    judged = np.unique(qcode[pairs.span_rows] * max(len(chunking.doc_ids), 1) + pairs.span_doc[pairs.span_rows])
    jq, jd = np.divmod(judged, max(len(chunking.doc_ids), 1))
    by_doc = np.argsort(chunking.dcode, kind="stable")
    doc_start = np.searchsorted(chunking.dcode[by_doc], np.arange(len(chunking.doc_ids) + 1))
    counts = doc_start[jd + 1] - doc_start[jd]
    total = int(counts.sum())
    base_rows = by_doc[np.repeat(doc_start[jd], counts) + np.arange(total) - np.repeat(np.cumsum(counts) - counts,
                                                                                        counts)]
    base_q = np.repeat(jq, counts)
    # ... raised to the best grade of the spans the chunk meets the rule with
    span_of_pair = pairs.span_rows[pairs.ia]
    ok = rule.holds(pairs.overlap, spans.lengths[span_of_pair]) & (spans.grade[span_of_pair] >= 1)
    hit_q, hit_c, hit_g = qcode[span_of_pair[ok]], pairs.ib[ok], spans.grade[span_of_pair[ok]]
    keys = np.concatenate([base_q * n_chunks + base_rows, hit_q * n_chunks + hit_c])
    grades = np.concatenate([np.zeros(total, dtype=np.int64), hit_g])
    order = np.lexsort((grades, keys))
    keys, grades = keys[order], grades[order]
    last = np.ones(len(keys), dtype=bool)
    last[:-1] = keys[1:] != keys[:-1]
    keys, grades = keys[last], grades[last]
    q, c = np.divmod(keys, max(n_chunks, 1))
    matched = np.zeros(len(spans), dtype=bool)
    matched[span_of_pair[ok]] = True
    unmatched = int(((spans.grade >= 1) & ~matched).sum())
    qrels = ChunkQrels(np.asarray(spans.queries, dtype=object)[q] if len(q) else [],
                       chunking.chunk[c] if len(c) else [], grades)
    qrels.rule = rule
    qrels.coverage = SpanCoverage(coverage.spans, coverage.contained, coverage.cut, coverage.partial,
                                  coverage.outside, unmatched)
    return qrels
