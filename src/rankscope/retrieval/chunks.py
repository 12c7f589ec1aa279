"""Fold chunk hits into document hits (judgments per document, retriever returns chunks).

The mapping ``chunk_to_doc`` from a chunk id to its document id is one of:

* a pattern such as ``"{doc_id}#{chunk}"`` or ``"{doc_id}::chunk{n}"``: literal
  text with ``{doc_id}`` and other ``{field}`` placeholders; ``{doc_id}`` takes
  as much as it can, so ``"a#b#3"`` gives ``"a#b"``;
* a dict ``{chunk_id: doc_id}``;
* a function ``chunk_id -> doc_id`` (called once per distinct chunk id).

A chunk id the mapping does not cover (pattern does not match, key absent,
function returns ``None``) is taken to be a document id already.

Folding: the chunks of one query are ranked as the run ranks them (score
descending, ties by id descending, like trec_eval); a document takes the rank
of its *first* chunk and later chunks of the same document are dropped.  The
folded run keeps the best chunk's score when those scores strictly decrease
within every query, otherwise it gets rank-based scores ``n, n-1, ..., 1``, so
that the folded ranking is exactly the first-chunk ranking.

Everything runs on the Run's integer columns; the mapping is applied to the
distinct chunk ids only.

>>> from rankscope.data import Run
>>> run = Run.from_ranked_lists({"q1": ["d2#0", "d1#3", "d2#1", "d3#0"]})
>>> fold_chunks(run, "{doc_id}#{chunk}").to_dict()
{'q1': {'d2': 4.0, 'd1': 3.0, 'd3': 1.0}}
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Union

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data.run import Run
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _

__all__ = ["ChunkToDoc", "map_chunk_ids", "fold_chunks", "pattern_regex", "trec_order"]

ChunkToDoc = Union[str, Mapping[str, str], Callable[[str], Any]]

_FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
#: the field a pattern must hold, and a pattern that holds it (shown in the errors)
_DOC_ID, _EXAMPLE = "{doc_id}", "'{doc_id}#{chunk}'"


def pattern_regex(pattern: str) -> str:
    """The regular expression of a ``{doc_id}...`` pattern (anchored, ``doc_id`` a named group).

    >>> pattern_regex("{doc_id}#{chunk}")
    '^(?P<doc_id>.+)\\\\#(?:.+?)$'
    """
    fields = _FIELD.findall(pattern)
    if fields.count("doc_id") != 1:
        raise InvalidParameterError(_("chunk_to_doc pattern {pattern!r} must contain {field} exactly once, e.g. "
                                      "{example}", pattern=pattern, field=_DOC_ID, example=_EXAMPLE))
    out, pos = ["^"], 0
    for m in _FIELD.finditer(pattern):
        out.append(re.escape(pattern[pos:m.start()]))
        out.append("(?P<doc_id>.+)" if m.group(1) == "doc_id" else "(?:.+?)")
        pos = m.end()
    out.append(re.escape(pattern[pos:]) + "$")
    return "".join(out)


def map_chunk_ids(ids: pa.Array, chunk_to_doc: ChunkToDoc) -> tuple[pa.Array, int]:
    """Map chunk ids to doc ids; returns ``(doc ids, number of ids the mapping did not cover)``.

    >>> docs, unmapped = map_chunk_ids(pa.array(["a#1", "b"]), "{doc_id}#{chunk}")
    >>> docs.to_pylist(), unmapped
    (['a', 'b'], 1)
    """
    if isinstance(ids, pa.ChunkedArray):
        ids = ids.combine_chunks()
    if isinstance(chunk_to_doc, str):
        if "{" not in chunk_to_doc:
            raise InvalidParameterError(_("chunk_to_doc={value!r} is not a pattern; write it like {example}",
                                          value=chunk_to_doc, example=_EXAMPLE))
        mapped = pc.struct_field(pc.extract_regex(ids, pattern=pattern_regex(chunk_to_doc)), "doc_id")
    elif isinstance(chunk_to_doc, Mapping):
        keys = pa.array([str(k) for k in chunk_to_doc], type=pa.string())
        vals = pa.array([str(v) for v in chunk_to_doc.values()], type=pa.string())
        mapped = pc.take(vals, pc.index_in(ids, value_set=keys))
    elif callable(chunk_to_doc):
        out = [chunk_to_doc(i) for i in ids.to_pylist()]
        mapped = pa.array([None if v is None else str(v) for v in out], type=pa.string())
    else:
        raise InvalidParameterError(_("chunk_to_doc must be a pattern string, a dict or a function, got {type}",
                                      type=type(chunk_to_doc).__name__))
    unmapped = int(mapped.null_count)
    return pc.coalesce(mapped, ids), unmapped


def trec_order(run: Run) -> np.ndarray:
    """Row order of ``run``: query, then score descending, then doc id descending (trec_eval's ranking).

    The engine's own ordering (:mod:`rankscope.engine.ranking`), so folding ranks exactly as scoring does.
    """
    from rankscope.engine import ranking

    return ranking.trec_order(run)


def fold_chunks(run: Run, chunk_to_doc: ChunkToDoc, name: str | None = None) -> Run:
    """The document-level run: each document at the rank of its first chunk (see the module doc)."""
    if len(run) == 0:
        return Run([], [], [], name or run.name)
    docs, __ = map_chunk_ids(run.doc_ids, chunk_to_doc)
    fcode_of_dict = pc.dictionary_encode(docs)
    fmap = fcode_of_dict.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    fdict = fcode_of_dict.dictionary

    from rankscope.engine import ranking

    order = trec_order(run)
    q = run.qcode[order].astype(np.int64)
    f = fmap[run.dcode[order]]
    keys = q * max(len(fdict), 1) + f
    _keys, first = np.unique(keys, return_index=True)
    keep = np.sort(first)  # positions in `order`, still in ranking order
    kq, kf, ks = q[keep], f[keep], run.scores[order][keep]

    # strictly decreasing within each query, also once rounded to float32 (how the folded run is ranked)?
    same = kq[1:] == kq[:-1]
    k32 = ranking.ranking_scores(ks, "float32")
    if bool(np.all(k32[1:][same] < k32[:-1][same])):
        scores = ks
    else:
        starts = np.flatnonzero(np.r_[True, ~same])
        counts = np.diff(np.r_[starts, len(kq)])
        pos = np.arange(len(kq)) - np.repeat(starts, counts)
        scores = (np.repeat(counts, counts) - pos).astype(np.float64)
    return Run(run.query_ids[kq], fdict.take(pa.array(kf)), scores, name or run.name)
