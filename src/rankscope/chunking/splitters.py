r"""rankscope's own splitters: fixed windows (characters or tokens), recursive separators, sentences, paragraphs.

Every splitter takes a corpus ``{doc_id: text}`` and returns a
:class:`~rankscope.data.chunking.Chunking` whose chunks are character ranges of
the documents (chunk ids ``"<doc_id>#<n>"``), so span judgments score it directly.
Chinese and English text are both handled: sentence ends are ``。！？；…`` and
``.!?;`` (a period only before whitespace or the end, so ``3.14`` stays whole),
clause breaks ``，、,``.

A splitter is also named by a short spec (the CLI's ``--chunking``), parsed by
:func:`parse_spec`:

=================================  ===================================================
spec                               chunks
=================================  ===================================================
``fixed:256`` / ``fixed:256:64``   256-character windows, 64 characters of overlap
``tokens:128:16:jieba``            128-token windows, 16 tokens overlap (unit ``words``
                                   by default; any unit of :mod:`rankscope.data.units`)
``recursive:512:64``               at most 512 characters, cut at the coarsest
                                   separator that fits (paragraph, line, sentence,
                                   clause, space, anywhere), 64 characters of overlap
``sentences:256`` / ``sentences``  whole sentences packed up to 256 characters (one
                                   sentence per chunk without a size)
``paragraphs`` / ``paragraphs:800`` blank-line separated paragraphs (long ones cut by
                                   the recursive splitter)
=================================  ===================================================

>>> ch = split({"d": "第一句。第二句很长很长。Third one. 3.14 stays."}, "sentences")
>>> [ch.corpus["d"][s:e] for s, e in zip(ch.start, ch.end)]
['第一句。', '第二句很长很长。', 'Third one.', '3.14 stays.']
>>> fixed({"d": "x" * 10}, 4, 1).to_records()[-1]
{'chunk_id': 'd#2', 'doc_id': 'd', 'start': 6, 'end': 10}
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rankscope.data.chunking import Chunking
from rankscope.data.units import TokenIndex, check_unit
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import _

__all__ = ["fixed", "fixed_tokens", "recursive", "sentences", "paragraphs", "split", "parse_spec", "SplitSpec",
           "SEPARATORS"]

_SENTENCE_END = r"(?:[。！？!?；;…]+|\.(?=\s|$))[”’」』）)\"']*"
# coarse to fine; each is a regular expression whose match ends a piece
SEPARATORS: tuple[str, ...] = (r"\n\s*\n", r"\n", _SENTENCE_END, r"[，、,：:]", r"\s+")
_SENTENCE = re.compile(_SENTENCE_END + r"|\n+")
_PARAGRAPH = re.compile(r"\n\s*\n")


def _positive(value: int, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InvalidParameterError(_("{name} must be an integer >= {minimum}, got {value!r}", name=name,
                                             minimum=minimum, value=value))
    return int(value)


def _overlap(overlap: int, size: int) -> int:
    overlap = _positive(overlap, "overlap", 0)
    if overlap >= size:
        raise InvalidParameterError(_("overlap ({overlap}) must be smaller than the chunk size ({size})",
                                      overlap=overlap, size=size))
    return overlap


def _windows(lengths: np.ndarray, size: int, step: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Windows ``[s, min(s + size, L))``, ``s = 0, step, ...`` until one reaches ``L``: ``(doc, start, end)``."""
    lengths = np.asarray(lengths, dtype=np.int64)
    n = np.where(lengths > size, -(-(lengths - size) // step) + 1, (lengths > 0).astype(np.int64))
    doc = np.repeat(np.arange(len(lengths)), n)
    idx = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    start = idx * step
    return doc, start, np.minimum(start + size, lengths[doc])


def _chunking(corpus: Mapping[str, str], doc_ids: Sequence[str], doc: np.ndarray, start: np.ndarray,
              end: np.ndarray, name: str) -> Chunking:
    doc = np.asarray(doc, dtype=np.int64)
    first = np.r_[True, doc[1:] != doc[:-1]] if len(doc) else np.zeros(0, dtype=bool)
    run_start = np.maximum.accumulate(np.where(first, np.arange(len(doc)), 0)) if len(doc) else doc
    number = np.arange(len(doc)) - run_start
    ids = np.asarray(doc_ids, dtype=object)[doc] if len(doc) else np.empty(0, dtype=object)
    chunk_ids = [f"{d}#{n}" for d, n in zip(ids.tolist(), number.tolist())]
    return Chunking(chunk_ids, ids, start, end, corpus=corpus, name=name)


def fixed(corpus: Mapping[str, str], size: int, overlap: int = 0, *, name: str | None = None) -> Chunking:
    """Windows of ``size`` characters, each starting ``size - overlap`` after the previous one.

    The last window of a document ends at its end (no window lies inside another);
    empty documents get no chunk.  Vectorised over all documents.
    """
    size = _positive(size, "size")
    overlap = _overlap(overlap, size)
    doc_ids = list(corpus)
    lengths = np.fromiter((len(corpus[d]) for d in doc_ids), dtype=np.int64, count=len(doc_ids))
    doc, start, end = _windows(lengths, size, size - overlap)
    return _chunking(corpus, doc_ids, doc, start, end, name or f"fixed:{size}" + (f":{overlap}" if overlap else ""))


def fixed_tokens(corpus: Mapping[str, str], size: int, overlap: int = 0, unit: str = "words", *,
                 name: str | None = None) -> Chunking:
    """Windows of ``size`` tokens (``unit``, see :mod:`rankscope.data.units`), ``overlap`` tokens shared.

    A chunk runs from its first token's first character to its last token's last
    character.
    """
    size = _positive(size, "size")
    overlap = _overlap(overlap, size)
    unit = check_unit(unit)
    if unit == "chars":
        return fixed(corpus, size, overlap, name=name)
    doc_ids = list(corpus)
    index = TokenIndex(corpus, unit, doc_ids)
    counts = np.diff(index.first)
    doc, t0, t1 = _windows(counts, size, size - overlap)
    g0 = index.first[doc] + t0
    g1 = index.first[doc] + t1 - 1
    base = doc * index.width
    start, end = index.starts[g0] - base, index.ends[g1] - base
    label = name or f"tokens:{size}" + (f":{overlap}" if overlap else "") + f":{unit}"
    return _chunking(corpus, doc_ids, doc, start, end, label)


def _cuts(text: str, lo: int, hi: int, pattern: re.Pattern[str]) -> list[int]:
    """Positions in ``(lo, hi)`` where ``pattern`` ends a piece."""
    return [m.end() for m in pattern.finditer(text, lo, hi) if lo < m.end() < hi]


def _pieces(text: str, lo: int, hi: int, size: int, level: int, patterns: Sequence[re.Pattern[str]]
            ) -> list[tuple[int, int]]:
    """``[lo, hi)`` cut into pieces of at most ``size`` characters, at the coarsest separator possible."""
    if hi - lo <= size:
        return [(lo, hi)]
    if level >= len(patterns):
        return [(s, min(s + size, hi)) for s in range(lo, hi, size)]
    bounds = [lo, *_cuts(text, lo, hi, patterns[level]), hi]
    out: list[tuple[int, int]] = []
    for a, b in itertools.pairwise(bounds):
        out.extend(_pieces(text, a, b, size, level + 1, patterns) if b - a > size else [(a, b)])
    return out


def _pack(pieces: list[tuple[int, int]], size: int, overlap: int) -> list[tuple[int, int]]:
    """Consecutive pieces joined into chunks of at most ``size``; a new chunk repeats up to ``overlap``
    characters of whole trailing pieces of the previous one."""
    chunks: list[tuple[int, int]] = []
    i = 0
    while i < len(pieces):
        j = i
        while j + 1 < len(pieces) and pieces[j + 1][1] - pieces[i][0] <= size:
            j += 1
        chunks.append((pieces[i][0], pieces[j][1]))
        if j + 1 >= len(pieces):
            break
        k = j + 1  # back up over trailing pieces while they fit in the overlap and leave progress
        while k - 1 > i and pieces[j][1] - pieces[k - 1][0] <= overlap and \
                pieces[j + 1][1] - pieces[k - 1][0] <= size:
            k -= 1
        i = k
    return chunks


def _trim(text: str, ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Drop leading / trailing whitespace of each range; drop ranges that are only whitespace."""
    out = []
    for s, e in ranges:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


def _per_document(corpus: Mapping[str, str], name: str, cut: object) -> Chunking:
    doc_ids = list(corpus)
    docs: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    for i, d in enumerate(doc_ids):  # text splitting is per document by nature (done once per chunking)
        ranges = cut(corpus[d])  # type: ignore[operator]
        docs.extend([i] * len(ranges))
        starts.extend(s for s, __ in ranges)
        ends.extend(e for __, e in ranges)
    return _chunking(corpus, doc_ids, np.asarray(docs, dtype=np.int64), np.asarray(starts, dtype=np.int64),
                     np.asarray(ends, dtype=np.int64), name)


def recursive(corpus: Mapping[str, str], size: int, overlap: int = 0, *, separators: Sequence[str] = SEPARATORS,
              name: str | None = None) -> Chunking:
    """Chunks of at most ``size`` characters cut at the coarsest separator that makes pieces fit.

    ``separators`` are regular expressions from coarse to fine (default: blank line,
    line break, sentence end, clause break, whitespace); a piece still too long is cut
    every ``size`` characters.  Pieces are packed greedily; a new chunk starts with up
    to ``overlap`` characters of the previous chunk's last whole pieces.  Leading and
    trailing whitespace is left out of each chunk.
    """
    size = _positive(size, "size")
    overlap = _overlap(overlap, size)
    patterns = [re.compile(p) for p in separators]

    def cut(text: str) -> list[tuple[int, int]]:
        return _trim(text, _pack(_pieces(text, 0, len(text), size, 0, patterns), size, overlap))

    return _per_document(corpus, name or f"recursive:{size}" + (f":{overlap}" if overlap else ""), cut)


def sentences(corpus: Mapping[str, str], max_size: int | None = None, *, name: str | None = None) -> Chunking:
    """One sentence per chunk, or consecutive sentences packed up to ``max_size`` characters.

    A sentence longer than ``max_size`` is cut by the recursive splitter.
    """
    if max_size is not None:
        max_size = _positive(max_size, "max_size")
    fine = [re.compile(p) for p in SEPARATORS[3:]]

    def cut(text: str) -> list[tuple[int, int]]:
        bounds = [0, *_cuts(text, 0, len(text), _SENTENCE), len(text)]
        sents = _trim(text, list(itertools.pairwise(bounds)))
        if max_size is None:
            return sents
        pieces = [p for s, e in sents for p in _pieces(text, s, e, max_size, 0, fine)]
        return _trim(text, _pack(pieces, max_size, 0))

    return _per_document(corpus, name or "sentences" + (f":{max_size}" if max_size else ""), cut)


def paragraphs(corpus: Mapping[str, str], max_size: int | None = None, *, name: str | None = None) -> Chunking:
    """One paragraph (blank-line separated) per chunk; paragraphs longer than ``max_size`` are cut recursively."""
    if max_size is not None:
        max_size = _positive(max_size, "max_size")
    patterns = [re.compile(p) for p in SEPARATORS[1:]]

    def cut(text: str) -> list[tuple[int, int]]:
        bounds = [0, *_cuts(text, 0, len(text), _PARAGRAPH), len(text)]
        paras = _trim(text, list(itertools.pairwise(bounds)))
        if max_size is None:
            return paras
        return _trim(text, [p for s, e in paras for p in _pieces(text, s, e, max_size, 0, patterns)])

    return _per_document(corpus, name or "paragraphs" + (f":{max_size}" if max_size else ""), cut)


@dataclass(frozen=True)
class SplitSpec:
    """A splitter and its settings, from a spec such as ``"fixed:256:64"`` (see the module doc)."""

    kind: str
    size: int | None = None
    overlap: int = 0
    unit: str = "words"

    def __str__(self) -> str:
        parts = [self.kind]
        if self.size is not None:
            parts.append(str(self.size))
        if self.overlap or (self.kind == "tokens" and self.unit != "words"):
            parts.append(str(self.overlap))
        if self.kind == "tokens" and self.unit != "words":
            parts.append(self.unit)
        return ":".join(parts)

    def apply(self, corpus: Mapping[str, str], name: str | None = None) -> Chunking:
        """Split ``corpus``."""
        label = name or str(self)
        if self.kind == "fixed":
            return fixed(corpus, self.size or 0, self.overlap, name=label)
        if self.kind == "tokens":
            return fixed_tokens(corpus, self.size or 0, self.overlap, self.unit, name=label)
        if self.kind == "recursive":
            return recursive(corpus, self.size or 0, self.overlap, name=label)
        if self.kind == "sentences":
            return sentences(corpus, self.size, name=label)
        return paragraphs(corpus, self.size, name=label)


_KINDS = ("fixed", "tokens", "recursive", "sentences", "paragraphs")


def parse_spec(spec: str | SplitSpec) -> SplitSpec:
    """Parse ``kind[:size[:overlap[:unit]]]`` (see the module doc).

    >>> parse_spec("fixed:256:64"), str(parse_spec("tokens:128:16:jieba"))
    (SplitSpec(kind='fixed', size=256, overlap=64, unit='words'), 'tokens:128:16:jieba')
    """
    if isinstance(spec, SplitSpec):
        return spec
    parts = str(spec).strip().split(":")
    kind = parts[0].lower()
    if kind not in _KINDS:
        import difflib

        close = difflib.get_close_matches(kind, _KINDS, n=1)
        kinds = Items(_KINDS)
        if close:
            raise InvalidParameterError(_("unknown splitter {kind!r} in {spec!r}: use one of {kinds} (e.g. "
                                          "fixed:256:64); did you mean {close!r}?", kind=parts[0], spec=spec,
                                          kinds=kinds, close=close[0]))
        raise InvalidParameterError(_("unknown splitter {kind!r} in {spec!r}: use one of {kinds} (e.g. "
                                      "fixed:256:64)", kind=parts[0], spec=spec, kinds=kinds))
    limit = 4 if kind == "tokens" else (3 if kind in ("fixed", "recursive") else 2)
    if len(parts) > limit:
        form = {4: "size[:overlap[:unit]]", 3: "size[:overlap]", 2: "[max size]"}[limit]
        raise InvalidParameterError(_("too many fields in {spec!r}; {kind} takes {form}", spec=spec, kind=kind,
                                      form=form))
    try:
        size = int(parts[1]) if len(parts) > 1 and parts[1] else None
        overlap = int(parts[2]) if len(parts) > 2 and parts[2] else 0
    except ValueError:
        raise InvalidParameterError(_("sizes in {spec!r} must be whole numbers", spec=spec)) from None
    if kind in ("fixed", "tokens", "recursive") and size is None:
        raise InvalidParameterError(_("{kind} needs a size, e.g. {kind}:256", kind=kind))
    if size is not None:
        _positive(size, "size")
        _overlap(overlap, size)
    unit = check_unit(parts[3]) if len(parts) > 3 else "words"
    return SplitSpec(kind, size, overlap, unit)


def split(corpus: Mapping[str, str], spec: str | SplitSpec, name: str | None = None) -> Chunking:
    """Split ``corpus`` with the splitter ``spec`` names (``"fixed:256:64"``, ``"sentences"`` ...)."""
    return parse_spec(spec).apply(corpus, name)
