"""Per-query analysis: first-relevant ranks, failing queries, biggest wins and losses.

Ranks are 1-based; ``0`` means no relevant document was retrieved (within the
depth/cutoff considered).  Everything is computed with numpy over all queries
at once; ties between equal differences are broken by query id so the output
order is deterministic.

>>> import numpy as np
>>> ranks = np.array([1, 3, 0, 1, 12])
>>> s = summarize_first_ranks(ranks)
>>> s.found, s.median, s.q1, s.q3, s.at_rank_1
(4, 1, 1, 3, 2)
>>> [(b.label, b.count) for b in s.histogram][:3], s.histogram[-1].count
([('1', 2), ('2', 0), ('3', 1)], 1)
>>> failing_queries(np.array(["a", "b", "c", "d", "e"], dtype=object), ranks, k=10)
['c', 'e']
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rankscope.engine.policies import Policies, PolicyValues

__all__ = [
    "FirstRankSummary",
    "HistogramBin",
    "QueryDelta",
    "first_relevant_ranks",
    "ranks_from_reciprocal",
    "summarize_first_ranks",
    "failing_queries",
    "biggest_differences",
    "RANK_BINS",
]

# histogram bins of the first-relevant rank: (label, lowest rank, highest rank)
_OPEN = 2**62  # upper end of the open last bin
RANK_BINS: tuple[tuple[str, int, int], ...] = (
    ("1", 1, 1), ("2", 2, 2), ("3", 3, 3), ("4", 4, 4), ("5", 5, 5),
    ("6-10", 6, 10), ("11-20", 11, 20), ("21-50", 21, 50), ("51-100", 51, 100), (">100", 101, _OPEN),
)


@dataclass(frozen=True)
class HistogramBin:
    """Queries whose first relevant document is at a rank in ``[low, high]`` (``low=0``: not found)."""

    label: str
    low: int
    high: int
    count: int


@dataclass(frozen=True)
class FirstRankSummary:
    """Distribution of the rank of the first relevant document over queries.

    ``median``, ``q1``, ``q3`` are observed ranks (inverted-CDF quantiles) of the
    queries where a relevant document was found; ``None`` when there is none.
    The histogram's last bin (label ``none``) counts queries with no relevant
    document retrieved.
    """

    n: int
    found: int
    median: int | None
    q1: int | None
    q3: int | None
    at_rank_1: int
    histogram: tuple[HistogramBin, ...]

    @property
    def not_found(self) -> int:
        """Queries with no relevant document retrieved."""
        return self.n - self.found

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "n": self.n, "found": self.found, "not_found": self.not_found, "median": self.median,
            "q1": self.q1, "q3": self.q3, "at_rank_1": self.at_rank_1,
            "histogram": [{"label": b.label, "low": b.low, "high": b.high if b.high < _OPEN else None, "count": b.count}
                          for b in self.histogram],
        }


@dataclass(frozen=True)
class QueryDelta:
    """One query's values under systems A and B and the difference ``b - a``."""

    query_id: str
    a: float
    b: float
    diff: float


def first_relevant_ranks(
    qrels: Any,
    run: Any,
    policies: Policies | Mapping[str, Any] | None = None,
    **values: Unpack[PolicyValues],
) -> tuple[np.ndarray, np.ndarray]:
    """Exact 1-based rank of the first relevant document per evaluated query (0: none).

    The registered measure ``first_rel_rank``, computed by the engine (same join and
    ranking as every metric: score descending, ties by doc id descending) under the
    evaluation ``policies`` (a :class:`~rankscope.engine.policies.Policies`, a result's
    ``policies``, or the policy keywords of :func:`rankscope.evaluate`): relevant means
    grade >= ``relevance_level``, condensed lists rank only judged documents.
    Returns ``(query_ids, ranks)``.

    >>> from rankscope import Qrels, Run
    >>> q = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 2}})
    >>> r = Run.from_ranked_lists({"q1": ["x", "a"], "q2": ["y"]})
    >>> ids, ranks = first_relevant_ranks(q, r)
    >>> ids.tolist(), ranks.tolist()
    (['q1', 'q2', 'q3'], [2, 0, 0])
    >>> first_relevant_ranks(q, r, unjudged="condense")[1].tolist()  # x and y are unjudged: removed
    [1, 0, 0]
    """
    from rankscope.engine.evaluator import Evaluator
    from rankscope.engine.policies import Policies

    if policies is not None and values:
        raise TypeError("first_relevant_ranks() takes policies or policy keywords, not both")
    chosen = Policies.of("first_relevant_ranks", **values) if policies is None else Policies.coerce(policies)
    res = Evaluator(qrels, ["first_rel_rank"], policies=chosen).evaluate(run)
    return res.per_query.query_ids, res.per_query.values[:, 0].astype(np.int64)


def ranks_from_reciprocal(rr: np.ndarray) -> np.ndarray:
    """First-relevant ranks from per-query reciprocal ranks (``1/RR``, exact for RR = 1/r; 0 when RR = 0).

    >>> ranks_from_reciprocal(np.array([1.0, 0.5, 0.0, 1 / 3])).tolist()
    [1, 2, 0, 3]
    """
    rr = np.asarray(rr, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(rr > 0, np.rint(1.0 / np.where(rr > 0, rr, 1.0)), 0).astype(np.int64)


def _quantile(found: np.ndarray, q: float) -> int:
    return int(np.quantile(found, q, method="inverted_cdf"))


def summarize_first_ranks(ranks: np.ndarray) -> FirstRankSummary:
    """Median, quartiles, rank-1 count and histogram of first-relevant ranks (0: not found)."""
    ranks = np.asarray(ranks, dtype=np.int64)
    found = ranks[ranks > 0]
    bins = [HistogramBin(label, lo, hi, int(((found >= lo) & (found <= hi)).sum())) for label, lo, hi in RANK_BINS]
    bins.append(HistogramBin("none", 0, 0, int((ranks <= 0).sum())))
    has = len(found) > 0
    return FirstRankSummary(
        n=len(ranks),
        found=len(found),
        median=_quantile(found, 0.5) if has else None,
        q1=_quantile(found, 0.25) if has else None,
        q3=_quantile(found, 0.75) if has else None,
        at_rank_1=int((found == 1).sum()),
        histogram=tuple(bins),
    )


def failing_queries(query_ids: np.ndarray, ranks: np.ndarray, k: int | None = None) -> list[str]:
    """Queries with no relevant document in the top ``k`` (all retrieved when ``k`` is None), sorted."""
    ranks = np.asarray(ranks)
    fail = ranks <= 0
    if k is not None:
        fail |= ranks > k
    return sorted(str(q) for q in np.asarray(query_ids)[fail])


def biggest_differences(
    query_ids: np.ndarray, a: np.ndarray, b: np.ndarray, n: int = 5
) -> tuple[list[QueryDelta], list[QueryDelta]]:
    """The ``n`` queries where B beats A the most and the ``n`` where B loses the most.

    Only strictly positive (wins) / negative (losses) differences ``b - a`` are listed;
    equal differences are ordered by query id.

    >>> ids = np.array(["q1", "q2", "q3", "q4"], dtype=object)
    >>> wins, losses = biggest_differences(ids, np.array([0.5, 1.0, 0.2, 0.3]), np.array([1.0, 0.0, 0.2, 0.8]), n=3)
    >>> [(d.query_id, d.diff) for d in wins], [(d.query_id, d.diff) for d in losses]
    ([('q1', 0.5), ('q4', 0.5)], [('q2', -1.0)])
    """
    ids = np.asarray(query_ids).astype(str)
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    d = b - a
    order_id = np.argsort(ids, kind="stable")
    # sort by -diff (wins) and +diff (losses); stable on the id order for ties
    win_order = order_id[np.argsort(-d[order_id], kind="stable")]
    loss_order = order_id[np.argsort(d[order_id], kind="stable")]

    def pick(order: np.ndarray, sign: int) -> list[QueryDelta]:
        sel = order[(sign * d[order]) > 0][:n]
        return [QueryDelta(str(ids[i]), float(a[i]), float(b[i]), float(d[i])) for i in sel]

    return pick(win_order, 1), pick(loss_order, -1)
