r"""The arithmetic of the span measures, vectorised over all queries, chunks and spans.

Inputs are flat arrays (:class:`SpanArrays`): the judged spans of every evaluated
query and the retrieved chunks of every ranking, each as (query index, document
code, start, end) in one unit (characters, or tokens after
:mod:`rankscope.measures._units`), and the whole chunking for the Ω measures.
Nothing loops over queries, chunks or spans in Python: intervals of every
(query, document) pair are laid on one number line and merged with one sort
(:mod:`rankscope.data._intervals`).

For a query, R is the union of its judged ranges with grade >= ``rel`` and C the
union of its retrieved chunks at ranks 1..k:

* ``inter`` = \|R ∩ C\| = \|R\| + \|C\| − \|R ∪ C\|,
* ``relevant`` = \|R\|,
* ``retrieved`` = Σ\|chunk_i\| over the top k (shared text counted once per chunk).

Graded: a judged character weighs g / g_max (g: the highest grade of the spans
covering it, g_max: the query's highest grade), computed layer by layer
(Σ over grade levels L of (L − L_prev) · \|R_{>=L} ∩ C\|); retrieved text weighs 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from rankscope.data._intervals import intersect_disjoint, merge, on_line, overlap_pairs, range_min, union_length
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _

__all__ = ["SpanArrays", "SpanInput", "span_counts", "omega_counts", "ratio"]


@dataclass(frozen=True)
class SpanArrays:
    """Spans and retrieved chunks of the evaluated queries (``n`` of them), in one unit.

    span_q, span_doc, span_start, span_end, span_grade : the judged spans
    row_q, row_rank, row_doc, row_start, row_end : the retrieved chunks (rank 0-based;
        ``row_doc`` -1 for an id the chunking does not know, which then holds no text)
    chunk_doc, chunk_start, chunk_end : every chunk of the chunking (for the Ω measures)
    """

    n: int
    span_q: np.ndarray
    span_doc: np.ndarray
    span_start: np.ndarray
    span_end: np.ndarray
    span_grade: np.ndarray
    row_q: np.ndarray
    row_rank: np.ndarray
    row_doc: np.ndarray
    row_start: np.ndarray
    row_end: np.ndarray
    chunk_doc: np.ndarray
    chunk_start: np.ndarray
    chunk_end: np.ndarray
    _cache: dict[object, object] = field(default_factory=dict, compare=False, repr=False)

    @property
    def stride(self) -> int:
        """One more than every end: the width of a document on the number line."""
        ends = [a.max() for a in (self.span_end, self.row_end, self.chunk_end) if len(a)]
        return int(max(ends)) + 1 if ends else 1

    @property
    def n_docs(self) -> int:
        docs = [a.max() for a in (self.span_doc, self.row_doc, self.chunk_doc) if len(a)]
        return int(max(docs)) + 1 if docs else 1

    def layers(self, rel: int, graded: bool) -> tuple[list[tuple[int, int]], np.ndarray]:
        """``([(level, increment), ...], divisor per query)``: binary is one layer ``(rel, 1)``, divisor 1;
        graded has a layer per grade level >= ``rel`` and divides by the query's highest grade."""
        if not graded:
            return [(rel, 1)], np.ones(self.n)
        g = self.span_grade
        keep = g >= rel
        gmax = np.zeros(self.n)
        np.maximum.at(gmax, self.span_q[keep], g[keep].astype(np.float64))
        out, prev = [], 0
        for level in np.unique(g[keep]).tolist():  # a handful of grade levels, not one per span
            out.append((int(level), int(level - prev)))
            prev = level
        return out, np.where(gmax > 0, gmax, 1.0)


def _groups(q: np.ndarray, doc: np.ndarray, n_docs: int) -> np.ndarray:
    return q.astype(np.int64) * n_docs + doc.astype(np.int64)


def span_counts(a: SpanArrays, k: int | None, rel: int, graded: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query: ``(inter, relevant, retrieved)`` at cutoff ``k`` (None: every retrieved chunk).

    >>> a = _example()
    >>> [x.tolist() for x in span_counts(a, 2, 1, False)]
    [[5.0], [10.0], [20.0]]
    """
    key = ("counts", k, rel, graded)
    hit = a._cache.get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    top = (a.row_rank < k) if k is not None else np.ones(len(a.row_rank), dtype=bool)
    top &= a.row_doc >= 0
    nd, stride = a.n_docs, a.stride
    retrieved = np.bincount(a.row_q[top], weights=(a.row_end[top] - a.row_start[top]).astype(np.float64),
                            minlength=a.n)[:a.n]
    cs, ce = on_line(_groups(a.row_q[top], a.row_doc[top], nd), a.row_start[top], a.row_end[top], stride)
    cq = a.row_q[top].astype(np.int64)
    c_len = union_length(cs, ce, cq, a.n)
    inter = np.zeros(a.n)
    relevant = np.zeros(a.n)
    layers, divisor = a.layers(rel, graded)
    for level, weight in layers:
        sel = a.span_grade >= level
        rs, re = on_line(_groups(a.span_q[sel], a.span_doc[sel], nd), a.span_start[sel], a.span_end[sel], stride)
        rq = a.span_q[sel].astype(np.int64)
        r_len = union_length(rs, re, rq, a.n)
        both = union_length(np.concatenate([rs, cs]), np.concatenate([re, ce]), np.concatenate([rq, cq]), a.n)
        inter += weight * (r_len + c_len - both)
        relevant += weight * r_len
    out = (inter / divisor, relevant / divisor, retrieved)
    a._cache[key] = out
    return out


def omega_counts(a: SpanArrays, rel: int, graded: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per query: ``(reachable, relevant, cost)`` for the Ω measures.

    ``reachable`` is the judged text some chunk holds (R ∩ the union of all chunks, the
    most any retriever can recall with this chunking, weighted when graded) and
    ``cost`` the least total length of a set of chunks that holds all of it — the
    context a perfect retriever must send.  Found exactly by dynamic programming over
    the chunks that overlap R, sorted by end: cost[j] = |chunk_j| + min cost[i] over
    chunks i of the same (query, document) ending in [need_j, end_j), need_j being
    the end of the reachable text before chunk j starts; relaxed for all chunks at once
    until nothing changes (as many rounds as the longest chain of chunks).

    >>> a = _example()
    >>> [x.tolist() for x in omega_counts(a, 1, False)]
    [[10.0], [10.0], [20.0]]
    """
    key = ("omega", rel, graded)
    hit = a._cache.get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    nd, stride = a.n_docs, a.stride
    # the union U of all chunks, per document (document line)
    cds, cde = on_line(a.chunk_doc, a.chunk_start, a.chunk_end, stride)
    us, ue, __ = merge(cds, cde)
    reachable = np.zeros(a.n)
    layers, divisor = a.layers(rel, graded)
    for level, weight in layers:
        g, ps, pe = _merged(a, a.span_grade >= level, nd, stride)
        doc = (g % nd) * stride
        ia, __, ov = overlap_pairs(doc + ps, doc + pe, us, ue)
        reachable += weight * np.bincount(g[ia] // nd, weights=ov.astype(np.float64), minlength=a.n)[:a.n]
    relevant = span_counts(a, 0, rel, graded)[1]
    # reachable pieces T = R ∩ U per (query, document), sorted by group then position
    g, ps, pe = _merged(a, a.span_grade >= rel, nd, stride)
    doc = (g % nd) * stride
    ts, te, ti = intersect_disjoint(doc + ps, doc + pe, us, ue)
    t_group = g[ti]
    t_start, t_end = ts - doc[ti], te - doc[ti]
    order = np.lexsort((t_start, t_group))
    t_group, t_start, t_end = t_group[order], t_start[order], t_end[order]
    # candidates: (group, chunk) pairs where the chunk overlaps R
    ia, ib, __ = overlap_pairs(doc + ps, doc + pe, cds, cde)
    n_chunks = max(len(a.chunk_doc), 1)
    c_group, c_chunk = np.divmod(np.unique(g[ia] * n_chunks + ib), n_chunks)
    c_start = a.chunk_start[c_chunk].astype(np.int64)
    c_end = a.chunk_end[c_chunk].astype(np.int64)
    c_len = (c_end - c_start).astype(np.float64)
    # need_j: end of the reachable text that starts before chunk j (clipped to its start), if any
    need = np.zeros(len(c_group), dtype=np.int64)
    has_prev = np.zeros(len(c_group), dtype=bool)
    if len(t_group):
        prev = np.searchsorted(t_group * stride + t_start, c_group * stride + c_start, side="left") - 1
        safe = np.maximum(prev, 0)
        has_prev = (prev >= 0) & (t_group[safe] == c_group)
        need = np.where(has_prev, np.minimum(t_end[safe], c_start), 0)
    # chunks sorted by (group, end): the predecessors of j end in [need_j, end_j)
    srt = np.lexsort((c_end, c_group))
    c_group, c_end, c_len, need, has_prev = c_group[srt], c_end[srt], c_len[srt], need[srt], has_prev[srt]
    end_key = c_group * stride + c_end
    lo = np.searchsorted(end_key, c_group * stride + need, side="left")
    hi = np.searchsorted(end_key, c_group * stride + c_end, side="left")
    cost = np.where(has_prev, np.inf, c_len)
    for _round in range(len(cost) + 1):  # stops after (longest chain + 1) rounds
        new = np.minimum(cost, c_len + range_min(cost, lo, hi))
        if np.array_equal(new, cost):
            break
        cost = new
    # a group is finished by a chunk that reaches the end of its last reachable piece
    total = np.zeros(a.n)
    if len(t_group):
        last = np.flatnonzero(np.r_[t_group[1:] != t_group[:-1], True])
        groups, last_end = t_group[last], t_end[last]
        pos = np.minimum(np.searchsorted(groups, c_group), len(groups) - 1)
        final = (groups[pos] == c_group) & (c_end >= last_end[pos])
        best = np.full(len(groups), np.inf)
        np.minimum.at(best, pos[final], cost[final])
        total = np.bincount(groups // nd, weights=best, minlength=a.n)[:a.n].astype(np.float64)
    out = (reachable / divisor, relevant, total)
    a._cache[key] = out
    return out


def _merged(a: SpanArrays, sel: np.ndarray, nd: int, stride: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The selected spans merged per (query, document): ``(group, start, end)`` sorted by group and start."""
    group = _groups(a.span_q[sel], a.span_doc[sel], nd)
    ms, me, first = merge(*on_line(group, a.span_start[sel], a.span_end[sel], stride))
    g = group[first]
    return g, ms - g * stride, me - g * stride

def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, 0 where ``den`` is 0."""
    return np.divide(num, den, out=np.zeros_like(num, dtype=np.float64), where=den > 0)


def _example() -> SpanArrays:
    """One query, one document: span [5, 15); chunks [0, 10), [8, 18), [20, 30); ranked 0, 2, 1."""
    i = np.array
    return SpanArrays(
        n=1, span_q=i([0]), span_doc=i([0]), span_start=i([5]), span_end=i([15]), span_grade=i([1]),
        row_q=i([0, 0, 0]), row_rank=i([0, 1, 2]), row_doc=i([0, 0, 0]), row_start=i([0, 20, 8]),
        row_end=i([10, 30, 18]), chunk_doc=i([0, 0, 0]), chunk_start=i([0, 8, 20]), chunk_end=i([10, 18, 30]))


class SpanInput:
    """The span part of a kernel's input: :class:`SpanArrays` in characters, and in tokens on demand.

    ``doc_ids`` names the documents the arrays' document codes index and ``corpus`` holds
    their texts (only needed for token units, see :mod:`rankscope.data.units`); each unit
    is converted once.
    """

    def __init__(self, chars: SpanArrays, doc_ids: Sequence[str], corpus: Mapping[str, str] | None) -> None:
        self.chars = chars
        self.doc_ids = list(doc_ids)
        self.corpus = corpus
        self._units: dict[str, SpanArrays] = {"chars": chars}

    def arrays(self, unit: str = "chars") -> SpanArrays:
        """The arrays measured in ``unit`` (``"chars"`` or a tokenizer name)."""
        out = self._units.get(unit)
        if out is not None:
            return out
        from rankscope.data.units import TokenIndex

        if self.corpus is None:
            raise InvalidParameterError(_("unit {unit!r} needs the document texts: build the chunking with corpus= "
                                          "(doc id -> text)", unit=unit))
        index = TokenIndex(self.corpus, unit, self.doc_ids)
        a = self.chars

        def conv(doc: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            known = doc >= 0
            s, e = start.copy(), end.copy()
            s[known], e[known] = index.convert(doc[known], start[known], end[known])
            return s, e

        ss, se = conv(a.span_doc, a.span_start, a.span_end)
        rs, re_ = conv(a.row_doc, a.row_start, a.row_end)
        cs, ce = conv(a.chunk_doc, a.chunk_start, a.chunk_end)
        out = SpanArrays(n=a.n, span_q=a.span_q, span_doc=a.span_doc, span_start=ss, span_end=se,
                         span_grade=a.span_grade, row_q=a.row_q, row_rank=a.row_rank, row_doc=a.row_doc,
                         row_start=rs, row_end=re_, chunk_doc=a.chunk_doc, chunk_start=cs, chunk_end=ce)
        self._units[unit] = out
        return out
