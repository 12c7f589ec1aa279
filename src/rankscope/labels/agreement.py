"""How far model labels agree with human labels, on the documents both judged.

Cohen's κ
    ``κ = 1 - Σ w·O / Σ w·E`` over the confusion matrix ``O`` (human grade ×
    model grade, counts) and the matrix ``E`` expected by chance (outer product of
    the marginals over ``n``); ``w`` is the disagreement weight: ``0`` on the
    diagonal and ``1`` elsewhere (plain κ), ``|i - j|`` (linear) or ``(i - j)²``
    (quadratic) for grades ``i``, ``j``.  The confusion matrix has a row and a
    column for every integer grade from the lowest to the highest seen, so the
    weights follow the grade values (as scikit-learn's ``cohen_kappa_score`` with
    ``labels=range(lo, hi + 1)``).

    * binary κ: plain κ on ``grade >= relevance_level`` (relevant or not);
    * weighted κ: on the grades, linear weights by default.

    κ is undefined (NaN) when chance agreement is total (both sides give a
    single label to everything).
Intervals
    Percentile bootstrap over the judged pairs (``resamples`` times, level
    ``1 - alpha``): resampling pairs with replacement is a multinomial draw of
    the confusion matrix' cells, so each resample costs one matrix, not one pass
    over the pairs.  Labels of one query are not independent; the interval is
    therefore on the narrow side for queries with many judged documents.
Excluded
    Pairs judged by one side only are counted, not compared; a negative grade
    (trec_eval: pooled, not judged) on either side is left out and counted.

>>> from rankscope.data import Qrels
>>> human = Qrels.from_dict({"q1": {"a": 0, "b": 1, "c": 2, "d": 3}, "q2": {"a": 0, "b": 3}})
>>> model = Qrels.from_dict({"q1": {"a": 0, "b": 2, "c": 2, "d": 3}, "q2": {"a": 1, "b": 3, "x": 1}})
>>> agr = label_agreement(human, model, resamples=200)
>>> agr.pairs, agr.model_only, round(agr.kappa_binary.value, 3), round(agr.kappa_weighted.value, 3)
(6, 1, 0.571, 0.75)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data.qrels import Qrels
from rankscope.errors import InvalidParameterError, Items, NoOverlapError
from rankscope.i18n import _
from rankscope.labels.provenance import Labels

__all__ = ["WEIGHTS", "Interval", "LabelAgreement", "kappa_from_confusion", "label_agreement"]

WEIGHTS = ("none", "linear", "quadratic")


@dataclass(frozen=True)
class Interval:
    """A value and its bootstrap percentile interval (NaN when undefined)."""

    value: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float | None]:
        def opt(x: float) -> float | None:
            return None if not np.isfinite(x) else float(x)

        return {"value": opt(self.value), "low": opt(self.low), "high": opt(self.high)}


def _weights(k: int, weights: str) -> np.ndarray:
    i, j = np.indices((k, k))
    if weights == "none":
        return (i != j).astype(np.float64)
    if weights == "linear":
        return np.abs(i - j).astype(np.float64)
    if weights == "quadratic":
        return ((i - j) ** 2).astype(np.float64)
    choices = Items(WEIGHTS)
    raise InvalidParameterError(_("weights must be one of {choices}, got {value!r}", choices=choices, value=weights))


def kappa_from_confusion(confusion: np.ndarray, weights: str = "none") -> np.ndarray:
    """Cohen's κ of one ``(k, k)`` confusion matrix or of a stack ``(..., k, k)``; NaN where undefined.

    >>> float(kappa_from_confusion(np.array([[20, 5], [10, 15]])))
    0.4
    """
    c = np.asarray(confusion, dtype=np.float64)
    k = c.shape[-1]
    w = _weights(k, weights)
    n = c.sum(axis=(-2, -1))
    rows, cols = c.sum(axis=-1), c.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = rows[..., :, None] * cols[..., None, :] / n[..., None, None]
        observed_w = (w * c).sum(axis=(-2, -1))
        expected_w = (w * expected).sum(axis=(-2, -1))
        kappa = 1.0 - observed_w / expected_w
    return np.where(expected_w > 0, kappa, np.nan)


def _binary(confusion: np.ndarray, grades: np.ndarray, level: int) -> np.ndarray:
    """Collapse grade confusion matrices ``(..., k, k)`` into relevant/not ``(..., 2, 2)``."""
    rel = (grades >= level).astype(np.int64)
    m = np.zeros((len(grades), 2))
    m[np.arange(len(grades)), rel] = 1.0
    return np.einsum("ia,...ij,jb->...ab", m, confusion, m)


@dataclass(frozen=True)
class LabelAgreement:
    """The outcome of :func:`label_agreement` (see the module docstring)."""

    pairs: int
    human_only: int
    model_only: int
    negative: int
    relevance_level: int
    grades: tuple[int, ...]
    confusion: np.ndarray
    kappa_binary: Interval
    kappa_weighted: Interval
    weights: str
    exact: float
    binary: float
    resamples: int
    alpha: float
    seed: int | None

    def binary_confusion(self) -> np.ndarray:
        """``[[both non-relevant, only model relevant], [only human relevant, both relevant]]``."""
        return _binary(self.confusion, np.array(self.grades), self.relevance_level).astype(np.int64)

    def to_dict(self) -> dict[str, Any]:
        return {
            "pairs_judged_by_both": self.pairs, "human_only": self.human_only, "model_only": self.model_only,
            "negative_grades_left_out": self.negative, "relevance_level": self.relevance_level,
            "grades": list(self.grades), "confusion": self.confusion.astype(int).tolist(),
            "confusion_rows": "human", "confusion_columns": "model",
            "binary_confusion": self.binary_confusion().tolist(),
            "kappa_binary": self.kappa_binary.to_dict(), "kappa_weighted": self.kappa_weighted.to_dict(),
            "weights": self.weights, "exact_agreement": self.exact, "binary_agreement": self.binary,
            "bootstrap": {"resamples": self.resamples, "alpha": self.alpha, "seed": self.seed, "over": "pairs"},
        }


def _table(labels: Qrels | Labels) -> pa.Table:
    if isinstance(labels, Labels):
        labels = labels.qrels
    t = labels.to_arrow()
    return t.rename_columns(["query_id", "doc_id", "grade"])


def label_agreement(
    human: Qrels | Labels,
    model: Qrels | Labels,
    *,
    relevance_level: int = 1,
    weights: str = "linear",
    resamples: int = 1000,
    alpha: float = 0.05,
    rng: np.random.Generator | int | None = 0,
) -> LabelAgreement:
    """Cohen's κ (binary and weighted), the confusion matrix and agreement rates of ``model`` against
    ``human`` on the (query, doc) pairs both judged; see the module docstring."""
    _weights(2, weights)
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InvalidParameterError(_("{name} must be an integer >= {low}, got {value!r}", name="resamples", low=1,
                                      value=resamples))
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InvalidParameterError(_("alpha must be a number between 0 and 1, got {value!r}", value=alpha))
    h, m = _table(human), _table(model).rename_columns(["query_id", "doc_id", "model_grade"])
    both = h.join(m, keys=["query_id", "doc_id"], join_type="inner", use_threads=False)
    negative_mask = pc.or_(pc.less(both["grade"], 0), pc.less(both["model_grade"], 0))
    negative = int(pc.sum(negative_mask).as_py() or 0)
    both = both.filter(pc.invert(negative_mask))
    n = both.num_rows
    if n == 0:
        raise NoOverlapError(_("agreement: no (query, doc) pair is judged by both label sets (were the model "
                               "labels made for this pool?)"))
    hg = both["grade"].to_numpy()
    mg = both["model_grade"].to_numpy()
    lo, hi = int(min(hg.min(), mg.min())), int(max(hg.max(), mg.max()))
    k = hi - lo + 1
    confusion = np.bincount((hg - lo) * k + (mg - lo), minlength=k * k).reshape(k, k).astype(np.float64)
    grades = np.arange(lo, hi + 1)
    gen = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    seed = None if isinstance(rng, np.random.Generator) else rng
    draws = gen.multinomial(n, confusion.ravel() / n, size=resamples).reshape(resamples, k, k).astype(np.float64)

    def interval(stat: np.ndarray, point: float) -> Interval:
        ok = stat[np.isfinite(stat)]
        if not np.isfinite(point) or len(ok) == 0:
            return Interval(point, np.nan, np.nan)
        low, high = np.quantile(ok, [alpha / 2, 1 - alpha / 2])
        return Interval(point, float(low), float(high))

    kb = float(kappa_from_confusion(_binary(confusion, grades, relevance_level)))
    kw = float(kappa_from_confusion(confusion, weights))
    binary_cm = _binary(confusion, grades, relevance_level)
    return LabelAgreement(
        pairs=n, human_only=h.num_rows - both.num_rows - negative, model_only=m.num_rows - both.num_rows - negative,
        negative=negative, relevance_level=relevance_level, grades=tuple(int(g) for g in grades),
        confusion=confusion,
        kappa_binary=interval(kappa_from_confusion(_binary(draws, grades, relevance_level)), kb),
        kappa_weighted=interval(kappa_from_confusion(draws, weights), kw),
        weights=weights, exact=float(np.trace(confusion) / n), binary=float(np.trace(binary_cm) / n),
        resamples=resamples, alpha=float(alpha), seed=seed,
    )
