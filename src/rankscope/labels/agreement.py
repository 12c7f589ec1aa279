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
    Percentile bootstrap over *queries* (a cluster bootstrap: ``resamples``
    times, level ``1 - alpha``): the labels of one query are not independent —
    one query's documents are judged in one context, and a judge that misreads a
    query misreads all its documents — so whole queries are resampled with
    replacement.  Each query contributes its own confusion matrix; a resample is
    the count-weighted sum of those matrices, one matrix product for all
    resamples.  (``over="pairs"`` resamples the pairs as if independent, a
    multinomial draw of the cells; on DL-HARD its intervals are 2–6 times
    narrower than the honest ones.)
Bias
    ``shift`` is the mean of (model grade − human grade) over the pairs both
    judged, with its interval from the same query resamples: a judge that
    grades one step too high shows a shift near +1.  ``stuart_maxwell`` is the
    Stuart–Maxwell test of marginal homogeneity of the confusion matrix (do the
    two sides use the grades equally often?): with ``d`` the differences of the
    row and column margins for all grades but the last and ``S`` their
    covariance (``S_ii = r_i + c_i − 2 n_ii``, ``S_ij = −(n_ij + n_ji)``),
    ``χ² = dᵀ S⁻¹ d`` on ``k − 1`` degrees of freedom (a pseudo-inverse and its
    rank when a grade is unused; as statsmodels' ``SquareTable(table, shift_zeros=False).homogeneity()``).
    It treats pairs as independent, so with many documents per query its p-value
    is on the small side; the shift's interval is the one that resamples queries.
    The judge is read as *biased* when the shift's interval excludes 0 or the test
    rejects at ``alpha``.
Excluded
    Pairs judged by one side only are counted, not compared; a negative grade
    (trec_eval: pooled, not judged) on either side is left out and counted.
Provenance
    Given :class:`~rankscope.labels.provenance.Labels`, each side keeps its own
    source only: the model side its model labels, the human side its human
    labels; the others are left out and counted (``left_out``).  A model side
    with no model label at all, or whose only overlap with the human side is
    human labels (a combined file, where human labels won), is refused with a
    hint: comparing people's labels with themselves measures nothing.

>>> from rankscope.data import Qrels
>>> human = Qrels.from_dict({"q1": {"a": 0, "b": 1, "c": 2, "d": 3}, "q2": {"a": 0, "b": 3}})
>>> model = Qrels.from_dict({"q1": {"a": 0, "b": 2, "c": 2, "d": 3}, "q2": {"a": 1, "b": 3, "x": 1}})
>>> agr = label_agreement(human, model, resamples=200)
>>> agr.pairs, agr.model_only, round(agr.kappa_binary.value, 3), round(agr.kappa_weighted.value, 3)
(6, 1, 0.571, 0.75)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data.qrels import Qrels
from rankscope.errors import InvalidParameterError, Items, NoOverlapError
from rankscope.i18n import _
from rankscope.labels.provenance import Labels

__all__ = ["WEIGHTS", "Interval", "LabelAgreement", "kappa_from_confusion", "label_agreement", "own_labels",
           "query_resamples", "stuart_maxwell"]

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


def _opt(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def stuart_maxwell(confusion: np.ndarray) -> tuple[float, int, float]:
    """``(χ², df, p)`` of the Stuart–Maxwell test of marginal homogeneity of a square table (module docstring);
    ``(0, 0, 1)`` when the two sides agree on every pair.

    >>> chi2, df, p = stuart_maxwell(np.array([[20, 10, 0], [2, 30, 5], [0, 1, 12]]))
    >>> round(chi2, 3), df, round(p, 4)
    (8.0, 2, 0.0183)
    """
    from scipy.stats import chi2 as chi2_dist

    n = np.asarray(confusion, dtype=np.float64)
    d = (n.sum(1) - n.sum(0))[:-1]
    s = -(n + n.T)[:-1, :-1]
    np.fill_diagonal(s, (n.sum(1) + n.sum(0) - 2 * np.diag(n))[:-1])
    df = int(np.linalg.matrix_rank(s)) if s.size else 0
    if df == 0:
        return 0.0, 0, 1.0
    stat = float(d @ np.linalg.pinv(s) @ d)
    return stat, df, float(chi2_dist.sf(stat, df))


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
    left_out: dict[str, int] = field(default_factory=dict)
    shift: Interval = Interval(float("nan"), float("nan"), float("nan"))
    stuart_maxwell: tuple[float, int, float] = (float("nan"), 0, float("nan"))
    queries: int = 0
    over: str = "queries"

    @property
    def biased(self) -> bool:
        """True when the shift's interval excludes 0 or the Stuart–Maxwell test rejects at ``alpha``."""
        lo, hi = self.shift.low, self.shift.high
        shifted = bool(np.isfinite(lo) and np.isfinite(hi) and (lo > 0 or hi < 0))
        p = self.stuart_maxwell[2]
        return shifted or bool(np.isfinite(p) and p < self.alpha)

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
            "bootstrap": {"resamples": self.resamples, "alpha": self.alpha, "seed": self.seed, "over": self.over,
                          "queries": self.queries},
            "left_out_by_provenance": dict(self.left_out),
            "bias": {"mean_grade_shift": self.shift.to_dict(), "stuart_maxwell": {
                "chi2": _opt(self.stuart_maxwell[0]), "df": self.stuart_maxwell[1],
                "p_value": _opt(self.stuart_maxwell[2])}, "biased": self.biased},
        }


def _table(labels: Qrels | Labels) -> pa.Table:
    if isinstance(labels, Labels):
        labels = labels.qrels
    t = labels.to_arrow()
    return t.rename_columns(["query_id", "doc_id", "grade"])


def own_labels(human: Qrels | Labels, model: Qrels | Labels) -> tuple[Qrels, Qrels, dict[str, int]]:
    """Each side's own labels by provenance (module docstring) and how many of the others were left out:
    ``{"human_side_model_labels": n, "model_side_human_labels": n}``; refuses a model side without model labels
    or one that overlaps the human side with human labels only."""
    left = {"human_side_model_labels": 0, "model_side_human_labels": 0}
    h, m = human, model
    if isinstance(human, Labels):
        left["human_side_model_labels"] = human.counts()["model"]
        h = human.of_source("human").qrels
    if isinstance(model, Labels):
        counts = model.counts()
        left["model_side_human_labels"] = counts["human"]
        if counts["model"] == 0 and counts["human"] > 0:
            raise InvalidParameterError(_("agreement: the judged labels hold no model label (their provenance says "
                                          "all {n} are people's); give the labels rankscope judge wrote",
                                          n=counts["human"]))
        m = model.of_source("model").qrels
        if counts["human"]:
            hp, own, people = _table(h), _table(m), _table(model.of_source("human").qrels)
            overlap_own = hp.join(own, keys=["query_id", "doc_id"], join_type="inner", use_threads=False).num_rows
            overlap_people = hp.join(people, keys=["query_id", "doc_id"], join_type="inner",
                                     use_threads=False).num_rows
            if overlap_own == 0 and overlap_people > 0:
                raise NoOverlapError(_("agreement: the judged labels hold {human} people's labels and {model} "
                                       "model labels, and no model label is on a pair the human labels judge: a "
                                       "combined file (human labels won where both judged) cannot measure the "
                                       "model; give the model's own labels (the file rankscope judge wrote)",
                                       human=counts["human"], model=counts["model"]))
    assert isinstance(h, Qrels) and isinstance(m, Qrels)
    return h, m, left


def query_resamples(queries: int, resamples: int, gen: np.random.Generator) -> np.ndarray:
    """``(resamples, queries)`` counts: how often each query is drawn in each bootstrap resample of the queries.

    >>> query_resamples(3, 2, np.random.default_rng(0)).sum(axis=1).tolist()
    [3, 3]
    """
    return gen.multinomial(queries, np.full(queries, 1.0 / queries), size=resamples)


def label_agreement(
    human: Qrels | Labels,
    model: Qrels | Labels,
    *,
    relevance_level: int = 1,
    weights: str = "linear",
    resamples: int = 1000,
    alpha: float = 0.05,
    rng: np.random.Generator | int | None = 0,
    over: str = "queries",
) -> LabelAgreement:
    """Cohen's κ (binary and weighted), the confusion matrix, agreement rates and the bias of ``model`` against
    ``human`` on the (query, doc) pairs both judged; see the module docstring.  ``over`` is what the bootstrap
    resamples: ``"queries"`` (default) or ``"pairs"``."""
    _weights(2, weights)
    if over not in ("queries", "pairs"):
        choices = Items(("queries", "pairs"))
        raise InvalidParameterError(_("over must be one of {choices}, got {value!r}", choices=choices, value=over))
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise InvalidParameterError(_("{name} must be an integer >= {low}, got {value!r}", name="resamples", low=1,
                                      value=resamples))
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InvalidParameterError(_("alpha must be a number between 0 and 1, got {value!r}", value=alpha))
    hq, mq, left = own_labels(human, model)
    h, m = _table(hq), _table(mq).rename_columns(["query_id", "doc_id", "model_grade"])
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
    __, qi = np.unique(both["query_id"].to_numpy(zero_copy_only=False), return_inverse=True)
    nq = int(qi.max()) + 1
    per_query = np.bincount(qi * k * k + (hg - lo) * k + (mg - lo), minlength=nq * k * k).reshape(nq, k * k)
    diff = np.bincount(qi, weights=(mg - hg).astype(np.float64), minlength=nq)
    if over == "queries":
        w = query_resamples(nq, resamples, gen).astype(np.float64)
        draws = (w @ per_query).reshape(resamples, k, k)
    else:
        draws = gen.multinomial(n, confusion.ravel() / n, size=resamples).reshape(resamples, k, k).astype(np.float64)
        w = query_resamples(nq, resamples, gen).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        shifts = (w @ diff) / (w @ per_query.sum(axis=1))

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
        resamples=resamples, alpha=float(alpha), seed=seed, left_out=left,
        shift=interval(shifts, float((mg - hg).mean())), stuart_maxwell=stuart_maxwell(confusion), queries=nq,
        over=over,
    )
