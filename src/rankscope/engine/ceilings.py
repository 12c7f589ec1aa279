"""What a perfect ranking reaches on given qrels: the ceiling of every bounded metric.

Recall@5 is below 1 for a query with more than 5 relevant documents, P@5 for one with
fewer than 5, and every metric is 0 on a query without a relevant document.  Ratings
compare a mean with this ceiling (collection-aware bands), so that a perfect run is
never rated below the best band it can reach.

The perfect run holds every document judged with a positive grade, ranked by grade;
it is scored with the evaluation's own relevance level and depth (``missing="zero"``),
through the one scoring function.  Its kernel input is built straight from the qrels
index's ideal grades (:func:`perfect_input`): no run, no join, no string work — the
same values as evaluating :func:`perfect_run`, at a small fraction of the cost.

>>> from rankscope.data import Qrels
>>> from rankscope.engine.policies import Policies
>>> from rankscope.engine.prepare import QrelsIndex
>>> from rankscope.measures import parse_metric
>>> q = Qrels.from_dict({"a": {"d1": 1}, "b": {"d2": 1, "d3": 1}, "c": {"d4": 0}})
>>> c = Ceilings(QrelsIndex(q), Policies(), [parse_metric("P@2"), parse_metric("mrr")])
>>> c.means(q.query_ids)
{0: 0.5, 1: 0.6666666666666666}
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from rankscope.engine.policies import Policies
from rankscope.engine.prepare import QrelsIndex
from rankscope.engine.scoring import score
from rankscope.measures.base import Measure
from rankscope.measures.kernel_input import KernelInput, count_relevant

__all__ = ["Ceilings", "CeilingMeans", "perfect_run", "perfect_input", "has_ceiling"]


def has_ceiling(m: Measure) -> bool:
    """Whether ``m`` is a built-in metric bounded in [0, 1] and higher-is-better (span measures have their own
    ceiling, diversity measures read subtopic judgments the perfect run lacks; a registered metric's kernel is
    never called on anything but the caller's runs)."""
    spec = m.spec
    return (spec.builtin and spec.bounds == (0.0, 1.0) and spec.higher_is_better
            and spec.family not in ("span", "diversity"))


def perfect_run(qrels: Any) -> Any:
    """Every document judged with a positive grade, ranked by grade (the ideal ranking of each query)."""
    from rankscope.data import Run

    keep = np.flatnonzero(qrels.grades > 0)
    return Run(qrels.query_column()[keep], qrels.doc_column().take(keep), qrels.grades[keep].astype(np.float64),
               "perfect")


def perfect_input(index: QrelsIndex, policies: Policies, lo: int = 0, hi: int | None = None) -> KernelInput:
    """The kernel input of :func:`perfect_run` over the qrels queries ``lo:hi`` (default: all; ``missing="zero"``),
    cut at the depth.

    The ideal grades of a query are sorted descending, so its positive grades are a prefix
    of its ideal segment: they are the perfect ranking (every row judged, rank 0, 1, ...).
    """
    n_all = len(index.ideal_offsets) - 1
    hi = n_all if hi is None else hi
    a, b = int(index.ideal_offsets[lo]), int(index.ideal_offsets[hi])
    ideal = index.ideal_grade[a:b]
    ideal_q = index.ideal_query[a:b] - np.int32(lo) if lo else index.ideal_query[a:b]
    ideal_offsets = index.ideal_offsets[lo : hi + 1] - a
    n = hi - lo
    keep = ideal > 0
    qidx = ideal_q[keep].astype(np.int32)
    grade = ideal[keep].astype(np.int64)
    counts = np.bincount(qidx, minlength=n).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    rank = np.arange(len(qidx), dtype=np.int64) - np.repeat(starts, counts)
    num_ret = counts
    if policies.depth is not None:
        cut = rank < policies.depth
        qidx, grade, rank = qidx[cut], grade[cut], rank[cut]
        num_ret = np.minimum(counts, policies.depth)
    return KernelInput(
        offsets=np.concatenate(([0], np.cumsum(num_ret))).astype(np.int64),
        qidx=qidx, rank=rank, grade=grade, judged=np.ones(len(qidx), dtype=bool), num_ret=num_ret,
        ideal_offsets=ideal_offsets, ideal_grade=ideal, ideal_query=ideal_q,
        relevant=count_relevant(ideal, ideal_q, policies.relevance_level, n),
        in_run=counts > 0, relevance_level=policies.relevance_level, all_rows=True,
    )


#: judgments scored at a time: the kernels' temporaries stay small (a query's values depend on its rows only)
CHUNK_JUDGMENTS = 1 << 19


class Ceilings:
    """The per-query values of a perfect ranking for ``measures`` (those with a ceiling), scored once."""

    def __init__(self, index: QrelsIndex, policies: Policies, measures: Sequence[Measure]) -> None:
        self.columns = [j for j, m in enumerate(measures) if has_ceiling(m)]
        self.query_ids = np.asarray(index.query_ids)
        self.values = np.zeros((len(self.query_ids), len(self.columns)))
        if self.columns and len(self.query_ids):
            ms = [measures[j] for j in self.columns]
            # queries in chunks of about CHUNK_JUDGMENTS judgments (a query is never split)
            cuts = np.searchsorted(index.ideal_offsets, np.arange(0, int(index.ideal_offsets[-1]), CHUNK_JUDGMENTS))
            bounds = np.unique(np.concatenate(([0], cuts, [len(self.query_ids)]))).tolist()
            for lo, hi in itertools.pairwise(bounds):
                self.values[lo:hi] = score(perfect_input(index, policies, lo, hi), ms)

    def means(self, query_ids: Any) -> dict[int, float]:
        """``{measure column: mean ceiling over query_ids}`` (a query unknown to the qrels counts 0)."""
        if not self.columns or len(query_ids) == 0:
            return {}
        ids = np.asarray(query_ids, dtype=object)
        if len(ids) == len(self.query_ids) and np.array_equal(ids, self.query_ids):  # every qrels query
            return {j: float(self.values[:, i].mean()) for i, j in enumerate(self.columns)}
        pos = np.searchsorted(self.query_ids, ids)
        pos = np.minimum(pos, max(len(self.query_ids) - 1, 0))
        known = self.query_ids[pos] == ids if len(self.query_ids) else np.zeros(len(ids), dtype=bool)
        vals = np.where(known[:, None], self.values[pos], 0.0)
        return {j: float(vals[:, i].mean()) for i, j in enumerate(self.columns)}


class CeilingMeans(Mapping[str, float]):
    """``{metric label: mean ceiling}`` of one result, scored on first read.

    Most evaluations never read their ceilings (a tuning loop, a notebook printing means); the ratings
    and reports that do read them pay for the perfect ranking then, once per :class:`Evaluator`. A copy or
    a pickle holds the values (a plain dict), not the qrels they were computed from.

    >>> m = CeilingMeans(lambda: {"P@5": 0.4})
    >>> m["P@5"], dict(m), m == {"P@5": 0.4}
    (0.4, {'P@5': 0.4}, True)
    """

    __slots__ = ("_compute", "_values")

    def __init__(self, compute: Callable[[], dict[str, float]]) -> None:
        self._compute: Callable[[], dict[str, float]] | None = compute
        self._values: dict[str, float] | None = None

    def _get(self) -> dict[str, float]:
        if self._values is None:
            assert self._compute is not None
            self._values = self._compute()
            self._compute = None  # let the qrels go
        return self._values

    def __getitem__(self, key: str) -> float:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())

    def __repr__(self) -> str:
        return repr(self._get())

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (self._get(),)
