"""What a perfect ranking reaches on given qrels: the ceiling of every bounded metric.

Recall@5 is below 1 for a query with more than 5 relevant documents, P@5 for one with
fewer than 5, and every metric is 0 on a query without a relevant document.  Ratings
compare a mean with this ceiling (collection-aware bands), so that a perfect run is
never rated below the best band it can reach.

The perfect run holds every document judged with a positive grade, ranked by grade;
it is scored with the evaluation's own relevance level and depth (``missing="zero"``),
through the one scoring function.

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

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from rankscope.engine.policies import Policies
from rankscope.engine.prepare import QrelsIndex, prepare
from rankscope.engine.scoring import score
from rankscope.measures.base import Measure

__all__ = ["Ceilings", "perfect_run", "has_ceiling"]


def has_ceiling(m: Measure) -> bool:
    """Whether ``m`` is a built-in metric bounded in [0, 1] and higher-is-better (span measures have their own
    ceiling; a registered metric's kernel is never called on anything but the caller's runs)."""
    spec = m.spec
    return spec.builtin and spec.bounds == (0.0, 1.0) and spec.higher_is_better and spec.family != "span"


def perfect_run(qrels: Any) -> Any:
    """Every document judged with a positive grade, ranked by grade (the ideal ranking of each query)."""
    from rankscope.data import Run

    keep = np.flatnonzero(qrels.grades > 0)
    return Run(qrels.query_column()[keep], qrels.doc_column().take(keep), qrels.grades[keep].astype(np.float64),
               "perfect")


class Ceilings:
    """The per-query values of a perfect ranking for ``measures`` (those with a ceiling), scored once."""

    def __init__(self, index: QrelsIndex, policies: Policies, measures: Sequence[Measure]) -> None:
        self.columns = [j for j, m in enumerate(measures) if has_ceiling(m)]
        self.query_ids = np.asarray(index.query_ids)
        self.values = np.zeros((len(self.query_ids), len(self.columns)))
        if not self.columns:
            return
        perfect = perfect_run(index.qrels)
        if len(perfect) == 0:
            return
        prepared, _ = prepare(index, perfect, replace(policies, missing="zero", duplicates="error"))
        matrix = score(prepared.data, [measures[j] for j in self.columns])
        pos = np.searchsorted(self.query_ids, prepared.query_ids)
        self.values[pos] = matrix

    def means(self, query_ids: Any) -> dict[int, float]:
        """``{measure column: mean ceiling over query_ids}`` (a query unknown to the qrels counts 0)."""
        if not self.columns or len(query_ids) == 0:
            return {}
        ids = np.asarray(query_ids, dtype=object)
        pos = np.searchsorted(self.query_ids, ids)
        pos = np.minimum(pos, max(len(self.query_ids) - 1, 0))
        known = self.query_ids[pos] == ids if len(self.query_ids) else np.zeros(len(ids), dtype=bool)
        vals = np.where(known[:, None], self.values[pos], 0.0)
        return {j: float(vals[:, i].mean()) for i, j in enumerate(self.columns)}
