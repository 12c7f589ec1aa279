"""Does the system ranking change when model labels replace human labels?

:func:`ranking_agreement` scores the same runs twice — against the human and
against the model labels, each restricted to the queries both label sets
cover — with :func:`rankscope.compare` (same test, α, correction and seed), and
reports per metric:

Kendall's τ
    τ-b between the systems' mean scores under the two label sets
    (:func:`kendall_tau_b`, equal to :func:`scipy.stats.kendalltau`; ties in either
    ranking handled by τ-b).
τ_AP
    Yilmaz, Aslam & Robertson (2008): walk the ranking under model labels from
    the top; for the system at position ``i`` (``i = 2..N``) let ``C(i)`` count the
    systems above it that the human labels also rank above it;
    ``τ_AP = 2/(N-1) · Σ C(i)/(i-1) - 1``.  Swaps near the top cost more than swaps
    near the bottom.  Ties: a tie under human labels counts one half in ``C(i)``;
    systems tied under model labels have no order of their own, so τ_AP is the
    *mean over every order of each tie* — computed exactly, not by enumeration: a
    system of a tie of ``g`` systems starting at position ``p`` stands at
    ``p + r`` for ``r = 0..g-1`` with probability ``1/g``, with a uniformly random
    ``r`` of the ``g - 1`` others above it, so its expected term is
    ``1/g · Σ_r (A + r·a/(g-1)) / (p + r - 1)`` where ``A`` counts (with halves) the
    systems above the tie that the human labels rank above it and ``a`` the same
    among the other members of its tie.  The result does not depend on the order
    the runs are given in.
Intervals
    The queries are resampled with replacement (``resamples`` times, one set of
    resamples shared by both label sets and every system, so that the systems'
    means stay paired); τ and τ_AP are computed on each resample's means and the
    percentile interval at level ``1 - alpha`` is reported.  The readings
    (:mod:`rankscope.labels.reading`) use the interval, not the point value alone.
Flipped verdicts
    For every pair of runs, the verdict of the paired test under each label set:
    ``+1`` (the second run is significantly better), ``-1`` (significantly worse) or
    ``0`` (no significant difference).  A pair whose verdict differs is a flip:
    ``reversed`` (+1 ↔ -1), ``lost`` (significant with human labels only) or
    ``gained`` (significant with model labels only).

>>> float(tau_ap(np.array([3.0, 2.0, 1.0]), np.array([0.9, 0.8, 0.7])))
1.0
>>> round(float(tau_ap(np.array([3.0, 2.0, 1.0]), np.array([0.8, 0.9, 0.7]))), 3)  # top two swapped
0.0
>>> float(tau_ap(np.array([3.0, 2.0, 1.0]), np.array([0.8, 0.8, 0.7])))  # tied: the mean of 1.0 and 0.0
0.5
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.errors import InvalidParameterError, NoOverlapError
from rankscope.i18n import _
from rankscope.labels.provenance import Labels

__all__ = ["MetricRanking", "PairVerdict", "RankingAgreement", "kendall_tau_b", "ranking_agreement", "tau_ap"]


def kendall_tau_b(reference: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """Kendall's τ-b of each row of ``estimate`` against the same row of ``reference`` (shape ``(..., N)``);
    NaN where one side ties every system.

    >>> float(kendall_tau_b(np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])))
    0.3333333333333333
    """
    r = np.asarray(reference, dtype=np.float64)
    e = np.asarray(estimate, dtype=np.float64)
    i, j = np.triu_indices(r.shape[-1], k=1)
    x = np.sign(r[..., i] - r[..., j])
    y = np.sign(e[..., i] - e[..., j])
    pairs = len(i)
    with np.errstate(divide="ignore", invalid="ignore"):
        denom = np.sqrt((pairs - (x == 0).sum(-1)) * (pairs - (y == 0).sum(-1)).astype(np.float64))
        tau = (x * y).sum(-1) / denom
    return np.where(denom > 0, tau, np.nan)


def tau_ap(reference: np.ndarray, estimate: np.ndarray, higher_is_better: bool = True) -> Any:
    """τ_AP of the ranking by ``estimate`` against the ranking by ``reference`` (module docstring: ties in
    ``estimate`` are averaged over their orders); a float for 1-D input, an array for rows ``(..., N)``.
    NaN for fewer than 2 systems."""
    ref = np.asarray(reference, dtype=np.float64)
    est = np.asarray(estimate, dtype=np.float64)
    n = ref.shape[-1]
    if n < 2:
        return float("nan") if ref.ndim == 1 else np.full(ref.shape[:-1], np.nan)
    sign = 1.0 if higher_is_better else -1.0
    r, e = sign * ref, sign * est
    other = ~np.eye(n, dtype=bool)
    above = e[..., :, None] > e[..., None, :]  # [t, s]: t above s under the estimate
    tied = (e[..., :, None] == e[..., None, :]) & other
    right = (r[..., :, None] > r[..., None, :]) + 0.5 * ((r[..., :, None] == r[..., None, :]) & other)
    ahead = above.sum(-2)
    group = tied.sum(-2) + 1
    a_above = (above * right).sum(-2)
    a_tied = (tied * right).sum(-2)
    steps = np.arange(n)
    pos = ahead[..., None] + steps  # systems above, at each place r of the tie
    valid = (steps < group[..., None]) & (pos > 0)
    share = a_tied / np.maximum(group - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(valid, (a_above[..., None] + steps * share[..., None]) / np.where(pos > 0, pos, 1), 0.0)
    out = 2.0 / (n - 1) * (terms.sum(-1) / group).sum(-1) - 1.0
    return float(out) if np.ndim(out) == 0 else out


@dataclass(frozen=True)
class MetricRanking:
    """One metric: the systems' means under human and model labels, τ and τ_AP with their intervals over
    resampled queries, the share of resamples with τ below 0.9, and each system's shift (model − human mean)
    with its interval."""

    metric: str
    systems: tuple[str, ...]
    human_means: tuple[float, ...]
    model_means: tuple[float, ...]
    tau: float
    tau_ap: float
    higher_is_better: bool
    tau_interval: tuple[float, float] = (float("nan"), float("nan"))
    tau_ap_interval: tuple[float, float] = (float("nan"), float("nan"))
    tau_below: float = float("nan")
    shifts: tuple[tuple[float, float, float], ...] = ()

    def order(self, which: str) -> list[str]:
        """The systems best first under ``"human"`` or ``"model"`` labels (ties keep the run order)."""
        means = np.array(self.human_means if which == "human" else self.model_means)
        sign = 1.0 if self.higher_is_better else -1.0
        return [self.systems[i] for i in np.argsort(-sign * means, kind="stable")]

    def to_dict(self) -> dict[str, Any]:
        def opt(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {"metric": self.metric, "kendall_tau": opt(self.tau), "tau_ap": opt(self.tau_ap),
                "kendall_tau_interval": [opt(x) for x in self.tau_interval],
                "tau_ap_interval": [opt(x) for x in self.tau_ap_interval],
                "share_of_resamples_tau_below_0.9": opt(self.tau_below),
                "human_order": self.order("human"), "model_order": self.order("model"),
                "means": {s: {"human": h, "model": m, "model_minus_human": opt(d[0]),
                              "model_minus_human_interval": [opt(d[1]), opt(d[2])]}
                          for s, h, m, d in zip(self.systems, self.human_means, self.model_means,
                                                self.shifts or [(np.nan,) * 3] * len(self.systems))}}


@dataclass(frozen=True)
class PairVerdict:
    """The paired-test verdict on ``b`` vs ``a`` under each label set (see the module docstring)."""

    metric: str
    a: str
    b: str
    human: int
    model: int
    human_p: float
    model_p: float
    human_diff: float
    model_diff: float

    @property
    def kind(self) -> str | None:
        """``None`` when both agree, else ``"reversed"``, ``"lost"`` or ``"gained"``."""
        if self.human == self.model:
            return None
        if self.human and self.model:
            return "reversed"
        return "lost" if self.human else "gained"

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "a": self.a, "b": self.b, "human_verdict": self.human,
                "model_verdict": self.model, "human_p_adjusted": self.human_p, "model_p_adjusted": self.model_p,
                "human_diff": self.human_diff, "model_diff": self.model_diff, "flip": self.kind}


@dataclass(frozen=True)
class RankingAgreement:
    """The outcome of :func:`ranking_agreement`."""

    rankings: tuple[MetricRanking, ...]
    verdicts: tuple[PairVerdict, ...]
    queries: int
    human_only_queries: int
    model_only_queries: int
    test: str
    alpha: float
    correction: str
    seed: int | None
    resamples: int = 0

    @property
    def flips(self) -> list[PairVerdict]:
        """The pairs whose verdict differs between human and model labels."""
        return [v for v in self.verdicts if v.kind is not None]

    def to_dict(self) -> dict[str, Any]:
        return {"queries": self.queries, "human_only_queries": self.human_only_queries,
                "model_only_queries": self.model_only_queries, "test": self.test, "alpha": self.alpha,
                "correction": self.correction, "seed": self.seed,
                "bootstrap": {"resamples": self.resamples, "over": "queries", "level": 1 - self.alpha},
                "rankings": [r.to_dict() for r in self.rankings],
                "pairs": [v.to_dict() for v in self.verdicts], "flips": len(self.flips)}


def _restrict(qrels: Qrels, keep: pa.Array) -> Qrels:
    t = qrels.to_arrow()
    t = t.filter(pc.is_in(t["query_id"], value_set=keep))
    return Qrels(t["query_id"], t["doc_id"], t["relevance"].to_numpy())


def _verdict(diff: float, significant: bool, higher_is_better: bool) -> int:
    if not significant or diff == 0:
        return 0
    return 1 if (diff > 0) == higher_is_better else -1


def ranking_agreement(
    human: Qrels | Labels,
    model: Qrels | Labels,
    runs: Mapping[str, Run] | Sequence[Run],
    metrics: Iterable[str] | None = None,
    *,
    test: str = "t",
    alpha: float = 0.05,
    correction: str = "holm",
    relevance_level: int = 1,
    depth: int | None = None,
    permutations: int = 10_000,
    rng: int | None = 0,
    resamples: int = 1000,
) -> RankingAgreement:
    """Compare the system rankings and pairwise verdicts under ``human`` and ``model`` labels (module docstring).

    ``metrics`` default to ``ndcg@10``; ``test``, ``alpha``, ``correction``, ``permutations``, ``rng``,
    ``relevance_level`` and ``depth`` are passed to :func:`rankscope.compare` for both label sets; ``resamples``
    query resamples give the intervals of τ, τ_AP and of each system's shift.
    """
    from rankscope.comparison import compare
    from rankscope.labels.agreement import query_resamples

    h = human.qrels if isinstance(human, Labels) else human
    m = model.qrels if isinstance(model, Labels) else model
    hq, mq = set(h.queries), set(m.queries)
    common = sorted(hq & mq)
    if not common:
        raise NoOverlapError(_("agreement: the human and the model labels share no query"))
    n_runs = len(runs)
    if n_runs < 2:
        raise InvalidParameterError(_("ranking agreement needs at least 2 runs, got {n}", n=n_runs))
    keep = pa.array(common, type=pa.string())
    options: dict[str, Any] = {"test": test, "alpha": alpha, "correction": correction, "rng": rng,
                               "permutations": permutations, "relevance_level": relevance_level, "depth": depth}
    wanted = list(metrics) if metrics is not None else ["ndcg@10"]
    ch = compare(_restrict(h, keep), runs, wanted, **options)
    cm = compare(_restrict(m, keep), runs, wanted, **options)
    rankings = []
    gen = np.random.default_rng(rng)
    for label, measure in zip(ch.labels, ch.measures):
        hib = measure.spec.higher_is_better
        hm = np.array([ch.means[s][label] for s in ch.systems])
        mm = np.array([cm.means[s][label] for s in ch.systems])
        tau = float(kendall_tau_b(hm, mm))
        hq_ids, hs = ch.per_query(label)
        mq_ids, ms = cm.per_query(label)
        shared, hi, mi = np.intersect1d(hq_ids, mq_ids, return_indices=True)
        hs, ms = hs[:, hi], ms[:, mi]
        w = query_resamples(len(shared), resamples, gen).astype(np.float64)
        hb, mb = (hs @ w.T / len(shared)).T, (ms @ w.T / len(shared)).T  # (resamples, systems)
        taus, aps = kendall_tau_b(hb, mb), tau_ap(hb, mb, hib)
        shift = mb - hb
        q = [alpha / 2, 1 - alpha / 2]

        def iv(x: np.ndarray, q: list[float] = q) -> tuple[float, float]:
            ok = x[np.isfinite(x)]
            return (float(np.quantile(ok, q[0])), float(np.quantile(ok, q[1]))) if len(ok) else (np.nan, np.nan)

        lows, highs = np.quantile(shift, q, axis=0)
        finite = taus[np.isfinite(taus)]
        rankings.append(MetricRanking(
            label, ch.systems, tuple(hm.tolist()), tuple(mm.tolist()), tau, tau_ap(hm, mm, hib), hib, iv(taus),
            iv(aps), float((finite < 0.9).mean()) if len(finite) else float("nan"),
            tuple((float(d), float(lo), float(hi)) for d, lo, hi in zip(mm - hm, lows, highs))))
    hib_of = {lb: ms.spec.higher_is_better for lb, ms in zip(ch.labels, ch.measures)}
    verdicts = []
    for ph, pm in zip(ch.pairs, cm.pairs):
        hib = hib_of[ph.metric]
        verdicts.append(PairVerdict(ph.metric, ph.a, ph.b, _verdict(ph.diff, ph.significant, hib),
                                    _verdict(pm.diff, pm.significant, hib), ph.p_adjusted, pm.p_adjusted,
                                    ph.diff, pm.diff))
    return RankingAgreement(tuple(rankings), tuple(verdicts), len(common), len(hq - mq), len(mq - hq), ch.test,
                            ch.alpha, ch.correction, ch.seed, resamples)
