"""Chunkings of a corpus and their fair comparison.

* splitters (:mod:`rankscope.chunking.splitters`): fixed windows of characters or
  tokens with overlap, recursive separators, sentences, paragraphs — Chinese and
  English — each returning a :class:`~rankscope.data.chunking.Chunking`;
* :func:`compare_chunkings` (:mod:`rankscope.chunking.compare`): one test set with
  span judgments, several chunkings, one retriever factory, and a comparison with
  paired tests, multiple-testing correction and the context each chunking costs.

Names are imported lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rankscope._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "split": "rankscope.chunking.splitters",
    "parse_spec": "rankscope.chunking.splitters",
    "fixed": "rankscope.chunking.splitters",
    "fixed_tokens": "rankscope.chunking.splitters",
    "recursive": "rankscope.chunking.splitters",
    "sentences": "rankscope.chunking.splitters",
    "paragraphs": "rankscope.chunking.splitters",
    "compare_chunkings": "rankscope.chunking.compare",
    "ChunkingComparison": "rankscope.chunking.compare",
    "make_factory": "rankscope.chunking.retrievers",
}

__all__ = ["ChunkingComparison", "compare_chunkings", "fixed", "fixed_tokens", "make_factory",
           "paragraphs", "parse_spec", "recursive", "sentences", "split"]

if TYPE_CHECKING:
    from rankscope.chunking.compare import ChunkingComparison, compare_chunkings
    from rankscope.chunking.retrievers import make_factory
    from rankscope.chunking.splitters import fixed, fixed_tokens, paragraphs, parse_spec, recursive, sentences, split

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
