"""Agreement among three or more people: Fleiss' κ and Krippendorff's α (ordinal).

Each annotator's labels are one qrels file (the dashboard exports one per annotator with
``annotator=``); an *item* is a (query, document) pair.

Fleiss' κ (Fleiss, 1971)
    On the items every annotator graded: with ``n`` annotators, ``n_ij`` the number
    who gave item ``i`` grade ``j``, ``P_i = (Σ_j n_ij² − n) / (n (n − 1))`` and
    ``p_j`` the share of all grades that are ``j``, ``κ = (P̄ − P_e) / (1 − P_e)`` with
    ``P̄`` the mean of ``P_i`` and ``P_e = Σ_j p_j²``.  Grades are categories (a 0/3
    disagreement counts as much as 2/3).  Items some annotator did not grade are
    left out and counted.  NaN when chance agreement is total.
Krippendorff's α, ordinal (Krippendorff, 2011)
    ``α = 1 − D_o / D_e`` with the ordinal distance between grades (it grows with
    the number of grades between them, weighted by how often those are used); every
    item graded by at least two annotators counts, so missing grades are allowed.
    Computed by the ``krippendorff`` package (``llm`` extra), checked in the tests
    against the worked example of Krippendorff (2011).
Intervals
    Both come with a percentile bootstrap over *queries* (the items of a resampled
    query come along together), ``resamples`` times, level ``1 − alpha``.

>>> a = Qrels.from_dict({"q": {"d1": 0, "d2": 1, "d3": 3, "d4": 2}})
>>> b = Qrels.from_dict({"q": {"d1": 0, "d2": 1, "d3": 3, "d4": 2}})
>>> c = Qrels.from_dict({"q": {"d1": 0, "d2": 2, "d3": 3}})
>>> g = group_agreement({"a": a, "b": b, "c": c}, resamples=20)
>>> g.items_all, g.items, round(g.fleiss.value, 3), round(g.krippendorff.value, 3)
(3, 4, 0.69, 0.945)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from rankscope.data.qrels import Qrels
from rankscope.errors import InvalidParameterError, NoOverlapError
from rankscope.i18n import _
from rankscope.labels.agreement import Interval, query_resamples

__all__ = ["GroupAgreement", "fleiss_kappa", "group_agreement", "krippendorff_alpha"]


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' κ of an ``(items, categories)`` table of counts, every row summing to the number of annotators.

    >>> round(fleiss_kappa(np.array([[0, 0, 3], [0, 3, 0], [1, 1, 1]])), 3)
    0.438
    """
    c = np.asarray(counts, dtype=np.float64)
    n = c.sum(axis=1)[0] if len(c) else 0.0
    if len(c) == 0 or n < 2:
        return float("nan")
    p_i = ((c * c).sum(axis=1) - n) / (n * (n - 1))
    p_j = c.sum(axis=0) / c.sum()
    p_e = float((p_j * p_j).sum())
    return float("nan") if p_e >= 1 else float((p_i.mean() - p_e) / (1 - p_e))


def krippendorff_alpha(data: np.ndarray,
                       level: Literal["nominal", "ordinal", "interval", "ratio"] = "ordinal") -> float:
    """Krippendorff's α of ``(annotators, items)`` grades (NaN where missing), by the ``krippendorff`` package."""
    try:
        import krippendorff
    except ImportError:  # pragma: no cover - depends on the environment
        raise InvalidParameterError(_("Krippendorff's alpha needs the krippendorff package: pip install "
                                      "'rankscope[llm]'")) from None
    values = np.asarray(data, dtype=np.float64)
    if np.unique(values[np.isfinite(values)]).size < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=values, level_of_measurement=level))  # type: ignore[arg-type]


@dataclass(frozen=True)
class GroupAgreement:
    """The outcome of :func:`group_agreement` (module docstring)."""

    annotators: tuple[str, ...]
    items: int
    items_all: int
    queries: int
    grades: tuple[int, ...]
    fleiss: Interval
    krippendorff: Interval
    resamples: int
    alpha: float

    def to_dict(self) -> dict[str, Any]:
        return {"annotators": list(self.annotators), "items_graded_by_two_or_more": self.items,
                "items_graded_by_all": self.items_all, "queries": self.queries, "grades": list(self.grades),
                "fleiss_kappa": self.fleiss.to_dict(), "krippendorff_alpha_ordinal": self.krippendorff.to_dict(),
                "bootstrap": {"resamples": self.resamples, "over": "queries", "level": 1 - self.alpha}}


def group_agreement(labels: Mapping[str, Qrels], *, resamples: int = 1000, alpha: float = 0.05,
                    rng: int | None = 0) -> GroupAgreement:
    """Fleiss' κ and Krippendorff's α (ordinal) of the annotators ``{name: qrels}`` (three or more; two work too)."""
    names = list(labels)
    if len(names) < 2:
        raise InvalidParameterError(_("group agreement needs at least 2 annotators, got {n}", n=len(names)))
    tables = []
    for i, name in enumerate(names):
        t = labels[name].to_arrow()
        keep = t["relevance"].to_numpy() >= 0
        tables.append(pa.table({"query_id": t["query_id"].filter(keep), "doc_id": t["doc_id"].filter(keep),
                                "grade": pa.array(t["relevance"].to_numpy()[keep]),
                                "who": pa.array(np.full(int(keep.sum()), i))}))
    every = pa.concat_tables(tables)
    keys = np.char.add(np.char.add(np.asarray(every["query_id"].to_pylist(), dtype=str), "\x00"),
                       np.asarray(every["doc_id"].to_pylist(), dtype=str))
    item_keys, item = np.unique(keys, return_inverse=True)
    grades = every["grade"].to_numpy()
    who = every["who"].to_numpy()
    data = np.full((len(names), len(item_keys)), np.nan)
    data[who, item] = grades
    graded = np.isfinite(data).sum(axis=0)
    shared = graded >= 2
    if not shared.any():
        raise NoOverlapError(_("group agreement: no (query, doc) pair is graded by two annotators"))
    levels = np.unique(grades)
    query_of = np.unique(np.array([k.split("\x00", 1)[0] for k in item_keys]), return_inverse=True)[1]
    all_graded = graded == len(names)
    counts = np.stack([(data[:, all_graded] == g).sum(axis=0) for g in levels], axis=1)
    nq = int(query_of.max()) + 1
    gen = np.random.default_rng(rng)
    w = query_resamples(nq, resamples, gen)
    fl, kr = [], []
    for b in range(resamples):
        reps = np.repeat(np.arange(len(item_keys)), w[b][query_of])
        f_rows = reps[all_graded[reps]]
        fl.append(fleiss_kappa(np.stack([(data[:, f_rows] == g).sum(axis=0) for g in levels], axis=1))
                  if len(f_rows) else np.nan)
        kr.append(krippendorff_alpha(data[:, reps[shared[reps]]]) if len(reps) else np.nan)

    def interval(stat: list[float], point: float) -> Interval:
        ok = np.array(stat)[np.isfinite(stat)]
        if not np.isfinite(point) or len(ok) == 0:
            return Interval(point, np.nan, np.nan)
        lo, hi = np.quantile(ok, [alpha / 2, 1 - alpha / 2])
        return Interval(point, float(lo), float(hi))

    return GroupAgreement(tuple(names), int(shared.sum()), int(all_graded.sum()), nq,
                          tuple(int(g) for g in levels),
                          interval(fl, fleiss_kappa(counts) if all_graded.any() else float("nan")),
                          interval(kr, krippendorff_alpha(data[:, shared])), resamples, float(alpha))
