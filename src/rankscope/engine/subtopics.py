"""Subtopic judgments in the engine: :class:`SubtopicSource` turns them into what the diversity kernels read.

When :func:`~rankscope.engine.evaluate` is given :class:`~rankscope.data.subtopics.SubtopicQrels`,

* the ordinary measures score the document qrels they derive (a document's grade is its highest over
  the subtopics, :meth:`~rankscope.data.subtopics.SubtopicQrels.to_qrels`);
* the diversity measures read :class:`~rankscope.measures._subtopics.SubtopicInput`: every subtopic
  judgment of the evaluated queries, linked to the judged row that retrieved its document — the same
  rows, ranks and depth cut as every other measure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.data.subtopics import SubtopicQrels
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.measures._subtopics import SubtopicInput

if TYPE_CHECKING:
    from rankscope.engine.prepared import Prepared

__all__ = ["SubtopicSource", "read_as_subtopics"]


class SubtopicSource:
    """Subtopic judgments prepared once for many runs."""

    def __init__(self, judgments: SubtopicQrels) -> None:
        if not isinstance(judgments, SubtopicQrels):
            raise InvalidParameterError(_("subtopic judgments must be SubtopicQrels, got {type}",
                                          type=type(judgments).__name__))
        self.judgments = judgments
        self.qrels = judgments.to_qrels()
        per_query = judgments.subtopics_per_query()
        self.single_subtopic = sum(1 for v in per_query.values() if v < 2)  # queries with one subtopic only
        self.doc_ids = np.unique(judgments.doc.astype(str))
        self.query_ids = np.asarray(judgments.query.astype(str))
        doc = np.searchsorted(self.doc_ids, judgments.doc.astype(str))
        # subtopic codes within each query, in ndeval's order (numbers, else first appearance)
        key = judgments.subtopic_order()
        qcode = np.unique(self.query_ids, return_inverse=True)[1].ravel()
        pairs, pair_of = np.unique(np.stack([qcode, key]), axis=1, return_inverse=True)
        pair_of = pair_of.ravel()
        first_of_query = np.searchsorted(pairs[0], pairs[0], side="left")
        local = (np.arange(pairs.shape[1]) - first_of_query)[pair_of]
        order = np.lexsort((local, doc, qcode))
        self._query = self.query_ids[order]
        self._doc = doc[order].astype(np.int64)
        self._subtopic = local[order].astype(np.int64)
        self._grade = judgments.grade[order]

    def policy(self) -> dict[str, Any]:
        """What the result says about the judgments."""
        return {"subtopic_judgments": len(self.judgments), "queries_with_one_subtopic": self.single_subtopic}

    def input_for(self, prepared: Prepared) -> SubtopicInput:
        """The subtopic judgments of ``prepared``'s queries, linked to its rows."""
        qids = np.asarray(prepared.query_ids, dtype=str)
        pos = np.minimum(np.searchsorted(qids, self._query), max(len(qids) - 1, 0))
        keep = (qids[pos] == self._query) if len(qids) else np.zeros(len(self._query), dtype=bool)
        query, doc = pos[keep].astype(np.int64), self._doc[keep]
        data = prepared.data
        row = np.full(len(query), -1, dtype=np.int64)
        if len(data.qidx) and len(query):
            names = np.asarray(prepared.doc_strings(), dtype=str)  # the judged rows' ids: a few per query
            at = np.minimum(np.searchsorted(self.doc_ids, names), len(self.doc_ids) - 1)
            known = self.doc_ids[at] == names
            width = len(self.doc_ids) + 1
            row_key = np.where(known, data.qidx.astype(np.int64) * width + at, -1)
            by_key = np.argsort(row_key, kind="stable")
            wanted = query * width + doc
            hit = np.minimum(np.searchsorted(row_key[by_key], wanted), len(by_key) - 1)
            found = row_key[by_key][hit] == wanted
            row[found] = by_key[hit[found]]
        return SubtopicInput(n=prepared.n, query=query, doc=doc, subtopic=self._subtopic[keep],
                             grade=self._grade[keep], row=row)


def read_as_subtopics(qrels: Any) -> Any:
    """A qrels path read as subtopic judgments (ndeval's format); anything else unchanged."""
    from pathlib import Path

    if isinstance(qrels, (str, Path)):
        from rankscope.io.subtopics import read_subtopic_qrels

        return read_subtopic_qrels(qrels)
    return qrels
