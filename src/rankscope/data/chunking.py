"""Where each chunk comes from: :class:`Chunking` maps chunk id -> (document id, start, end).

A chunking is what a RAG pipeline's splitter produced: every chunk is the text
``corpus[doc_id][start:end]`` (character offsets, end exclusive).  With it, span
judgments (:class:`~rankscope.data.spans.SpanQrels`) score any chunking, and two
chunkings of the same corpus can be compared fairly.

Built from a table (:meth:`Chunking.from_records`, :meth:`~Chunking.from_dataframe`,
:meth:`~Chunking.from_file`), from LlamaIndex nodes (``ref_doc_id``,
``start_char_idx``, ``end_char_idx``), from LangChain documents split with
``add_start_index=True`` (``metadata["start_index"]`` + the text length), from
retrieved hits that carry those offsets (:meth:`~Chunking.from_hits`), or by
rankscope's own splitters (:mod:`rankscope.chunking`).

>>> ch = Chunking.from_records([{"chunk_id": "d1#0", "doc_id": "d1", "start": 0, "end": 100},
...                             {"chunk_id": "d1#1", "doc_id": "d1", "start": 80, "end": 180}])
>>> len(ch), ch.sizes.tolist(), ch.summary()["overlap_chars"]
(2, [100, 100], 20)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data._places import Where
from rankscope.data._spantable import (
    Locator,
    check_offsets,
    codes,
    doc_lengths,
    int_column,
    record_columns,
    str_column,
)
from rankscope.errors import InvalidParameterError, Message, RankscopeError
from rankscope.i18n import _, ngettext

__all__ = ["Chunking"]


class Chunking:
    """Chunks as (chunk id, document id, start, end) rows; chunk ids are unique.

    Parameters
    ----------
    chunk_ids, doc_ids : equally long sequences of ids
    starts, ends : character offsets of each chunk in its document (``0 <= start < end``)
    corpus : optional ``{doc_id: text}``: documents must be known and chunks must end inside them;
        kept (as :attr:`corpus`) so that chunk texts and token units are available
    name : a label for reports (e.g. ``"fixed-256/64"``)
    """

    __slots__ = ("_doc_ids", "_index", "chunk", "corpus", "dcode", "doc", "end", "name", "start")

    def __init__(self, chunk_ids: Any, doc_ids: Any, starts: Any, ends: Any, *,
                 corpus: Mapping[str, str] | None = None, name: str | None = None,
                 _locate: Locator | None = None) -> None:
        locate = _locate or Locator()
        self.chunk = str_column(list(chunk_ids), "chunk_id", locate)
        self.doc = str_column(list(doc_ids), "doc_id", locate)
        self.start = int_column(starts, "start", locate)
        self.end = int_column(ends, "end", locate)
        if not (len(self.chunk) == len(self.doc) == len(self.start) == len(self.end)):
            raise InvalidParameterError(_("chunk columns differ in length: {chunks} chunk ids, {docs} doc ids, "
                                          "{starts} starts, {ends} ends", chunks=len(self.chunk), docs=len(self.doc),
                                          starts=len(self.start), ends=len(self.end)))
        lengths = None
        if corpus is not None and all(isinstance(v, int) for v in corpus.values()):
            lengths, corpus = doc_lengths(corpus), None
        elif corpus is not None:
            lengths = doc_lengths(corpus)
        check_offsets(self.doc, self.start, self.end, locate, lengths, what="chunk")
        self._index = pa.array(self.chunk.tolist(), type=pa.string())
        if len(self.chunk):
            uniq, counts = np.unique(self.chunk.astype(str), return_counts=True)
            rep = np.flatnonzero(counts > 1)
            if len(rep):
                dup = str(uniq[rep[0]])
                rows = np.flatnonzero(self.chunk == dup)
                also = locate.where(int(rows[0]))
                raise locate.error(int(rows[1]), "chunk_id",
                                   _("chunk id {id!r} occurs twice (also {also})", id=dup, also=Where(also)),
                                   len(rep) - 1)
        self._doc_ids, self.dcode = codes(self.doc)
        self.corpus: dict[str, str] | None = dict(corpus) if corpus is not None else None
        self.name = name or "chunking"

    # -- building ---------------------------------------------------------------------
    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], *, corpus: Mapping[str, str] | None = None,
                     name: str | None = None, source: str | Message | None = None) -> Chunking:
        """Build from mappings with ``chunk_id``, ``doc_id``, ``start``, ``end`` (aliases as in
        :data:`rankscope.data._spantable.FIELDS`: ``node_id``, ``ref_doc_id``, ``start_char_idx`` ...).

        >>> Chunking.from_records([{"chunk_id": "a", "doc_id": "d", "start": 0, "end": 5},
        ...                        {"chunk_id": "a", "doc_id": "d", "start": 5, "end": 9}])
        Traceback (most recent call last):
        ...
        rankscope.errors.ParseError: record 2, field 'chunk_id': chunk id 'a' occurs twice (also record 1)
        """
        locate = Locator(source)
        cols = record_columns(records, ("chunk_id", "doc_id", "start", "end"), {}, locate)
        return cls(cols["chunk_id"], cols["doc_id"], cols["start"], cols["end"], corpus=corpus, name=name,
                   _locate=locate)

    @classmethod
    def from_dataframe(cls, df: Any, *, corpus: Mapping[str, str] | None = None, name: str | None = None) -> Chunking:
        """Build from a pandas DataFrame (or Arrow table) with the columns of :meth:`from_records`."""
        from rankscope.io.spans import chunking_from_table

        return chunking_from_table(df, corpus=corpus, name=name)

    @classmethod
    def from_file(cls, path: str | Path, *, corpus: Mapping[str, str] | None = None, name: str | None = None,
                  format: str | None = None) -> Chunking:
        """Read JSON Lines, JSON (a list of records), CSV / TSV or Parquet (columns as in :meth:`from_records`)."""
        from rankscope.io.spans import read_chunking

        return read_chunking(path, corpus=corpus, name=name, format=format)

    @classmethod
    def from_llamaindex(cls, nodes: Iterable[Any], *, corpus: Mapping[str, str] | None = None,
                        name: str | None = None) -> Chunking:
        """Build from LlamaIndex nodes: ``node_id``, ``ref_doc_id``, ``start_char_idx``, ``end_char_idx``.

        A node without offsets (``start_char_idx`` is None: the splitter could not place
        its text) is an error naming the node.
        """
        records = []
        for node in nodes:
            node = getattr(node, "node", node)  # NodeWithScore
            records.append({"chunk_id": node.node_id, "doc_id": node.ref_doc_id,
                            "start": node.start_char_idx, "end": node.end_char_idx})
        return cls.from_records(records, corpus=corpus, name=name, source=_("LlamaIndex nodes"))

    @classmethod
    def from_langchain(cls, documents: Iterable[Any], *, doc_id_key: str = "source", id_key: str | None = None,
                       corpus: Mapping[str, str] | None = None, name: str | None = None) -> Chunking:
        """Build from LangChain documents split with ``add_start_index=True``.

        The chunk id is ``metadata[id_key]`` when given, else ``Document.id``; the document
        id is ``metadata[doc_id_key]``; the offsets are ``metadata["start_index"]`` and
        ``start_index + len(page_content)``.
        """
        records = []
        for doc in documents:
            meta = dict(getattr(doc, "metadata", None) or {})
            ident = meta.get(id_key) if id_key else getattr(doc, "id", None)
            start = meta.get("start_index")
            records.append({"chunk_id": ident, "doc_id": meta.get(doc_id_key), "start": start,
                            "end": None if start is None else int(start) + len(doc.page_content)})
        return cls.from_records(records, corpus=corpus, name=name, source=_("LangChain documents"))

    @classmethod
    def from_hits(cls, hits: Iterable[Any], *, corpus: Mapping[str, str] | None = None,
                  name: str | None = None) -> Chunking:
        """Build from retrieved hits whose metadata carries the chunk's place (see :func:`hit_location`).

        A hit without a place is an error; the same chunk retrieved twice (by two queries) must
        have the same place.
        """
        ids, places = [], []
        for i, hit in enumerate(hits):
            loc = hit_location(hit)
            if loc is None:
                ident = getattr(hit, "id", "?")
                raise RankscopeError(_("hit {n} ({id!r}) carries no document offsets (metadata "
                                       "'ref_doc_id'/'doc_id' + 'start_char_idx'/'start_index')", n=i + 1, id=ident))
            ids.append(hit.id)
            places.append(loc)
        return cls.from_places(ids, places, corpus=corpus, name=name)

    @classmethod
    def from_places(cls, chunk_ids: Iterable[str], places: Iterable[Sequence[Any] | None], *,
                    corpus: Mapping[str, str] | None = None, name: str | None = None) -> Chunking:
        """Build from chunk ids and their ``(doc_id, start, end)`` (None: unknown, left out), repeats allowed
        when they agree (e.g. the hits of many queries).

        >>> Chunking.from_places(["a", "b", "a"], [("d", 0, 5), None, ("d", 0, 5)]).to_records()
        [{'chunk_id': 'a', 'doc_id': 'd', 'start': 0, 'end': 5}]
        """
        seen: dict[str, tuple[str, int, int]] = {}
        for cid, loc in zip(chunk_ids, places):
            if loc is None:
                continue
            got = (str(loc[0]), int(loc[1]), int(loc[2]))
            if seen.setdefault(cid, got) != got:
                raise RankscopeError(_("chunk {id!r} was returned at two places: {first} and {second}", id=cid,
                                       first=seen[cid], second=got))
        return cls(list(seen), [v[0] for v in seen.values()], [v[1] for v in seen.values()],
                   [v[2] for v in seen.values()], corpus=corpus, name=name)

    # -- views ------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.chunk)

    def __repr__(self) -> str:
        return f"Chunking({self.name!r}, {len(self)} chunks of {len(self._doc_ids)} documents)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Chunking):
            return NotImplemented
        return all(np.array_equal(a, b) for a, b in
                   zip((self.chunk, self.doc, self.start, self.end), (other.chunk, other.doc, other.start, other.end)))

    __hash__ = None  # type: ignore[assignment]

    @property
    def doc_ids(self) -> list[str]:
        """The documents that hold a chunk, sorted (what :attr:`dcode` indexes)."""
        return [str(x) for x in self._doc_ids]

    @property
    def sizes(self) -> np.ndarray:
        """``end - start`` of every chunk."""
        return self.end - self.start

    def lookup(self, chunk_ids: pa.Array | pa.ChunkedArray | Sequence[str]) -> np.ndarray:
        """Row of each given chunk id in this chunking, or -1 when it is not a chunk of it (vectorised)."""
        arr = chunk_ids if isinstance(chunk_ids, (pa.Array, pa.ChunkedArray)) else pa.array(list(chunk_ids),
                                                                                               type=pa.string())
        pos = pc.index_in(arr, value_set=self._index)
        if isinstance(pos, pa.ChunkedArray):
            pos = pos.combine_chunks()
        return np.asarray(pos.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)

    def texts(self, corpus: Mapping[str, str] | None = None) -> dict[str, str]:
        """``{chunk_id: text}`` cut from ``corpus`` (default: the corpus the chunking was built with)."""
        corpus = corpus if corpus is not None else self.corpus
        if corpus is None:
            raise InvalidParameterError(_("chunk texts need the corpus: pass corpus= (doc id -> text)"))
        missing = sorted(set(self.doc_ids) - set(corpus))
        if missing:
            raise InvalidParameterError(ngettext("{n} document of the chunking is not in the corpus, e.g. {id!r}",
                                                 "{n} documents of the chunking are not in the corpus, e.g. {id!r}",
                                                 len(missing), id=missing[0]))
        return {c: corpus[d][s:e] for c, d, s, e in zip(self.chunk.tolist(), self.doc.tolist(),
                                                      self.start.tolist(), self.end.tolist())}

    def to_records(self) -> list[dict[str, Any]]:
        """One ``{"chunk_id", "doc_id", "start", "end"}`` dict per chunk."""
        return [{"chunk_id": c, "doc_id": d, "start": s, "end": e}
                for c, d, s, e in zip(self.chunk.tolist(), self.doc.tolist(), self.start.tolist(),
                                      self.end.tolist())]

    def to_dataframe(self) -> Any:
        """A pandas DataFrame with the columns of :meth:`to_records`."""
        import pandas as pd

        return pd.DataFrame({"chunk_id": self.chunk.astype(str), "doc_id": self.doc.astype(str),
                             "start": self.start, "end": self.end})

    def to_file(self, path: str | Path, format: str | None = None) -> None:
        """Write JSON Lines (default), CSV / TSV or Parquet, chosen by the file name or ``format``."""
        from rankscope.io.spans import write_table

        write_table(self.to_records(), path, format=format)

    def summary(self) -> dict[str, Any]:
        """Counts and sizes: chunks, documents, mean / median / max size, characters held twice or more.

        ``overlap_chars`` = total chunk length − length of the union of chunks (text that
        several chunks share, counted once per extra copy).
        """
        from rankscope.data._intervals import on_line, union_length

        sizes = self.sizes
        if len(sizes) == 0:
            return {"chunks": 0, "documents": 0, "mean_size": 0.0, "median_size": 0.0, "max_size": 0,
                    "total_chars": 0, "overlap_chars": 0}
        s, e = on_line(self.dcode, self.start, self.end)
        covered = float(union_length(s, e, np.zeros(len(s), dtype=np.int64), 1)[0])
        return {"chunks": len(self), "documents": len(self._doc_ids), "mean_size": float(sizes.mean()),
                "median_size": float(np.median(sizes)), "max_size": int(sizes.max()),
                "total_chars": int(sizes.sum()), "overlap_chars": int(sizes.sum() - covered)}


_DOC_KEYS = ("ref_doc_id", "doc_id", "document_id", "source_id", "source")
_START_KEYS = ("start_char_idx", "start_index", "split_idx_start", "start_char", "start")
_END_KEYS = ("end_char_idx", "end_char", "end")


def hit_location(hit: Any) -> tuple[str, int, int] | None:
    """``(doc_id, start, end)`` of a retrieved chunk from its metadata, or None.

    The document is the first of ``ref_doc_id`` (LlamaIndex), ``doc_id``, ``document_id``,
    ``source_id``, ``source``; the start the first of ``start_char_idx`` (LlamaIndex),
    ``start_index`` (LangChain ``add_start_index=True``), ``split_idx_start`` (Haystack), ``start_char``,
    ``start``; the end ``end_char_idx``, ``end_char``, ``end``, or start + the length of the hit's text.

    >>> from rankscope.retrieval import Hit
    >>> hit_location(Hit("c1", 0.5, text="abc", metadata={"source": "d1", "start_index": 10}))
    ('d1', 10, 13)
    """
    meta = getattr(hit, "metadata", None) or {}
    doc = next((meta[k] for k in _DOC_KEYS if meta.get(k) is not None), None)
    start = next((meta[k] for k in _START_KEYS if meta.get(k) is not None), None)
    end = next((meta[k] for k in _END_KEYS if meta.get(k) is not None), None)
    if doc is None or start is None:
        return None
    if end is None:
        text = getattr(hit, "text", None)
        if text is None:
            return None
        end = int(start) + len(text)
    return str(doc), int(start), int(end)

