"""Judgments per subtopic (intent) of a query: :class:`SubtopicQrels`, what diversity measures read.

A subtopic judgment says "document ``doc_id`` is relevant (``grade``) to subtopic ``subtopic_id``
of query ``query_id``", the rows of an ``ndeval`` qrels file (``topic subtopic docno judgment``,
the TREC Web track's diversity qrels).  The diversity measures (``alpha_ndcg@k``, ``err_ia@k``,
``nrbp``, ``p_ia@k``, ``subtopic_recall@k`` …) reward a ranking that covers many subtopics early;
the other measures of the same evaluation score the document qrels :meth:`SubtopicQrels.to_qrels`
derives (a document's grade is its highest grade over the subtopics, as ndeval's own MAP).

>>> sq = SubtopicQrels.from_records([("q1", "1", "d1", 1), ("q1", "2", "d1", 0), ("q1", "2", "d2", 1)])
>>> len(sq), sq.queries, sq.to_qrels().to_dict()
(3, ['q1'], {'q1': {'d1': 1, 'd2': 1}})
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from rankscope.errors import DuplicateEntryError, EmptyInputError, InvalidParameterError
from rankscope.i18n import _

__all__ = ["SubtopicQrels"]

_FIELDS = ("query_id", "subtopic_id", "doc_id", "grade")


class SubtopicQrels:
    """(query id, subtopic id, doc id, grade) rows; grades are integers, negative ones count as 0.

    Subtopics are ordered within a query numerically when every subtopic id is an integer (ndeval's
    numbers), else in the order they first appear.
    """

    def __init__(self, query: Any, subtopic: Any, doc: Any, grade: Any) -> None:
        self.query = np.asarray([str(x) for x in query], dtype=object)
        self.subtopic = np.asarray([str(x) for x in subtopic], dtype=object)
        self.doc = np.asarray([str(x) for x in doc], dtype=object)
        try:
            raw = np.asarray(grade)
            if raw.dtype.kind not in "iub" and not (raw.dtype.kind == "f" and np.all(raw == np.round(raw))):
                raw = np.asarray([int(x) for x in raw])
            self.grade = raw.astype(np.int64)
        except (TypeError, ValueError):
            raise InvalidParameterError(_("subtopic judgments: every grade must be an integer")) from None
        n = len(self.query)
        if not (len(self.subtopic) == len(self.doc) == len(self.grade) == n):
            raise InvalidParameterError(_("subtopic judgments: query, subtopic, doc and grade columns differ in "
                                          "length"))
        if n == 0:
            raise EmptyInputError(_("the subtopic judgments hold no judgment"))
        key = np.char.add(np.char.add(self.query.astype(str), "\x00"),
                          np.char.add(np.char.add(self.subtopic.astype(str), "\x00"), self.doc.astype(str)))
        order = np.argsort(key, kind="stable")
        same = np.flatnonzero(key[order][1:] == key[order][:-1])
        if len(same):
            first, second = sorted((int(order[same[0]]), int(order[same[0] + 1])))
            raise DuplicateEntryError(_("subtopic judgments: query {query!r}, subtopic {subtopic!r}, doc {doc!r} "
                                        "is judged twice (rows {first} and {second})", query=self.query[second],
                                        subtopic=self.subtopic[second], doc=self.doc[second], first=first + 1,
                                        second=second + 1)).with_rows(first, second)

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def from_records(cls, records: Iterable[Any]) -> SubtopicQrels:
        """Build from ``(query, subtopic, doc, grade)`` tuples or mappings with the keys
        ``query_id``, ``subtopic_id``, ``doc_id``, ``grade``."""
        rows = [tuple(r[f] for f in _FIELDS) if isinstance(r, Mapping) else tuple(r) for r in records]
        bad = next((i for i, r in enumerate(rows) if len(r) != 4), None)
        if bad is not None:
            raise InvalidParameterError(_("subtopic judgment {n} has {got} fields, expected 4 (query, subtopic, "
                                          "doc, grade)", n=bad + 1, got=len(rows[bad])))
        cols = list(zip(*rows)) if rows else [(), (), (), ()]
        return cls(cols[0], cols[1], cols[2], cols[3])

    # -- views -----------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.query)

    def __repr__(self) -> str:
        return f"SubtopicQrels({len(self.queries)} queries, {len(self)} judgments)"

    @property
    def queries(self) -> list[str]:
        """The query ids, sorted."""
        return sorted(set(self.query.tolist()))

    def subtopic_order(self) -> np.ndarray:
        """A sort key of each row's subtopic: its number when every id is an integer, else its first appearance."""
        ids = self.subtopic.astype(str)
        try:
            return np.asarray([int(s) for s in ids], dtype=np.int64)
        except ValueError:
            __, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
            return first[inverse.ravel()].astype(np.int64)

    def subtopics_per_query(self) -> dict[str, int]:
        """How many distinct subtopics each query has (judged relevant or not)."""
        pairs = np.unique(np.char.add(np.char.add(self.query.astype(str), "\x00"), self.subtopic.astype(str)))
        qs = [p.split("\x00", 1)[0] for p in pairs.tolist()]
        out: dict[str, int] = {}
        for q in qs:
            out[q] = out.get(q, 0) + 1
        return out

    def to_qrels(self) -> Any:
        """Document qrels: each (query, doc) with its highest grade over the subtopics (negative grades as 0)."""
        from rankscope.data.qrels import Qrels

        key = np.char.add(np.char.add(self.query.astype(str), "\x00"), self.doc.astype(str))
        uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        best = np.zeros(len(uniq), dtype=np.int64)
        np.maximum.at(best, inverse.ravel(), np.maximum(self.grade, 0))
        return Qrels(self.query[first], self.doc[first], best)
