"""A run joined with the qrels: :class:`Prepared`, the kernel input and the links back to the run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from rankscope.data._columns import arrow_ints
from rankscope.measures.kernel_input import KernelInput

if TYPE_CHECKING:
    from rankscope.data import Run
    from rankscope.engine.judged import TopCounts
    from rankscope.engine.ranking import Ranking

__all__ = ["Prepared"]


@dataclass
class Prepared:
    """A run joined with the qrels: the kernel input plus the links back to the run.

    ``data`` is the :class:`~rankscope.measures.kernel_input.KernelInput` the
    metric kernels read (:func:`~rankscope.engine.prepare.prepare` returns the
    judged view; :meth:`complete_view` the one with every retrieved row); its
    fields and helpers are also read through this object (``p.rank``,
    ``p.is_rel()``).  The links (``run``, ``ranking``) give each row's doc id and
    score, which no kernel needs but the trec_eval front end (``-J``) and
    diagnostics do.

    Attributes
    ----------
    data : KernelInput              what the kernels read
    query_ids : object array (n,)   evaluated query ids, sorted
    score : float64 (rows,)         retrieval score (a property: gathered from the run on first use)
    dcode : int (rows,)             index into ``doc_ids``: ``doc_ids.take(dcode)`` are the rows'
                                    doc ids (``doc_ids`` is the run's doc dictionary, or its
                                    per-row doc strings when no dictionary was built)
    """

    data: KernelInput
    query_ids: np.ndarray
    run: Run | None = field(default=None, repr=False)
    ranking: Ranking | None = field(default=None, repr=False)
    depth: int | None = None
    source_rows: np.ndarray | None = field(default=None, repr=False)
    top_counts: TopCounts | None = field(default=None, repr=False)  # judged@k counts, before any condensing
    _complete: Prepared | None = field(default=None, init=False, repr=False)
    _score: np.ndarray | None = field(default=None, init=False, repr=False)

    def __getattr__(self, name: str) -> Any:
        # the kernel input's fields and helpers (only called when normal lookup fails)
        if name.startswith("__") or name == "data":
            raise AttributeError(name)
        return getattr(self.data, name)

    @property
    def n(self) -> int:
        """Number of evaluated queries."""
        return self.data.n

    def complete_view(self) -> Prepared:
        """Every retrieved row, judged or not (built once, then kept).

        >>> from rankscope import Qrels, Run
        >>> from rankscope.engine.prepare import QrelsIndex, prepare
        >>> p, _ = prepare(QrelsIndex(Qrels.from_dict({"q": {"a": 1}})), Run.from_ranked_lists({"q": ["x", "a"]}))
        >>> p.rank.tolist(), p.complete_view().rank.tolist(), p.complete_view().grade.tolist()
        ([1], [0, 1], [0, 1])
        """
        if self.data.all_rows:
            return self
        if self._complete is None:
            self._complete = Prepared(self.data.complete_view(), self.query_ids, run=self.run, ranking=self.ranking,
                                      depth=self.depth)
        return self._complete

    def condensed_view(self) -> Prepared:
        """Only the judged rows, re-ranked (Sakai's condensed lists, trec_eval ``-J``; see
        :meth:`KernelInput.condensed_view <rankscope.measures.kernel_input.KernelInput.condensed_view>`).

        >>> from rankscope import Qrels, Run
        >>> from rankscope.engine.prepare import QrelsIndex, prepare
        >>> p, _ = prepare(QrelsIndex(Qrels.from_dict({"q": {"a": 1}})), Run.from_ranked_lists({"q": ["x", "a"]}))
        >>> c = p.condensed_view()
        >>> c.rank.tolist(), c.num_ret.tolist(), c.doc_strings()
        ([0], [1], ['a'])
        """
        keep = self.data.judged
        return Prepared(self.data.condensed_view(), self.query_ids, run=self.run, ranking=self.ranking,
                        depth=self.depth, source_rows=self.rows[keep], top_counts=self.top_counts)

    @property
    def rows(self) -> np.ndarray:
        """The run row of each row (what ``score``, ``dcode`` and ``doc_ids`` read)."""
        if self.source_rows is None:
            if self.ranking is None:
                raise ValueError("this Prepared was built without its run")
            order = self.ranking.ranked_rows()  # complete view: every ranked row
            if self.depth is not None:
                order = order[_depth_rows(self.ranking.num_ret, self.depth)]
            self.source_rows = order
        return self.source_rows

    @property
    def score(self) -> np.ndarray:
        """Retrieval score of every row (float64), gathered from the run on first use."""
        if self._score is None:
            self._score = self._run().scores[self.rows]
        return self._score

    @property
    def doc_ids(self) -> pa.Array | pa.ChunkedArray:
        """What ``dcode`` indexes: the run's doc dictionary, or its per-row doc strings."""
        run = self._run()
        return run.doc_ids if run.docs_encoded else run.doc_column()

    @property
    def dcode(self) -> np.ndarray:
        """Index of each row's doc id in :attr:`doc_ids`."""
        run = self._run()
        return run.dcode[self.rows] if run.docs_encoded else self.rows

    def doc_strings(self) -> list[str]:
        """The doc id of every row."""
        return self.doc_ids.take(arrow_ints(self.dcode)).to_pylist()

    def _run(self) -> Run:
        if self.run is None:
            raise ValueError("this Prepared was built without its run")
        return self.run


def _depth_rows(num_ret: np.ndarray, depth: int) -> np.ndarray:
    """Positions in a ranked order (queries of ``num_ret`` rows each) of the first ``depth`` rows of each query."""
    offsets = np.concatenate(([0], np.cumsum(num_ret)[:-1])).astype(np.int64)
    kept = np.minimum(num_ret, depth)
    return np.repeat(offsets, kept) + (np.arange(int(kept.sum())) - np.repeat(np.cumsum(kept) - kept, kept))
