"""Does the system ranking change when model labels replace human labels?

:func:`ranking_agreement` scores the same runs twice — against the human and
against the model labels, each restricted to the queries both label sets
cover — with :func:`rankscope.compare` (same test, α, correction and seed), and
reports per metric:

Kendall's τ
    τ-b between the systems' mean scores under the two label sets
    (:func:`scipy.stats.kendalltau`; ties in either ranking handled by τ-b).
τ_AP
    Yilmaz, Aslam & Robertson (2008): walk the ranking under model labels from
    the top; for the system at position ``i`` (``i = 2..N``) let ``C(i)`` count the
    systems above it that the human labels also rank above it;
    ``τ_AP = 2/(N-1) · Σ C(i)/(i-1) - 1``.  Swaps near the top cost more than swaps
    near the bottom.  Systems tied under model labels keep the given run order;
    a tie under human labels counts one half.
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

__all__ = ["MetricRanking", "PairVerdict", "RankingAgreement", "ranking_agreement", "tau_ap"]


def tau_ap(reference: np.ndarray, estimate: np.ndarray, higher_is_better: bool = True) -> float:
    """τ_AP of the ranking by ``estimate`` against the ranking by ``reference`` (NaN for fewer than 2 systems)."""
    ref = np.asarray(reference, dtype=np.float64)
    est = np.asarray(estimate, dtype=np.float64)
    n = len(ref)
    if n < 2:
        return float("nan")
    sign = 1.0 if higher_is_better else -1.0
    order = np.argsort(-sign * est, kind="stable")
    r = sign * ref[order]
    above = (r[:, None] > r[None, :]) + 0.5 * (r[:, None] == r[None, :])  # above[j, i]: j truly above i
    correct = np.triu(above, k=1).sum(axis=0)[1:]  # over j < i, for i = 1..n-1 (0-based)
    return float(2.0 / (n - 1) * (correct / np.arange(1, n)).sum() - 1.0)


@dataclass(frozen=True)
class MetricRanking:
    """One metric: the systems' means under human and model labels, τ and τ_AP."""

    metric: str
    systems: tuple[str, ...]
    human_means: tuple[float, ...]
    model_means: tuple[float, ...]
    tau: float
    tau_ap: float
    higher_is_better: bool

    def order(self, which: str) -> list[str]:
        """The systems best first under ``"human"`` or ``"model"`` labels (ties keep the run order)."""
        means = np.array(self.human_means if which == "human" else self.model_means)
        sign = 1.0 if self.higher_is_better else -1.0
        return [self.systems[i] for i in np.argsort(-sign * means, kind="stable")]

    def to_dict(self) -> dict[str, Any]:
        def opt(x: float) -> float | None:
            return float(x) if np.isfinite(x) else None

        return {"metric": self.metric, "kendall_tau": opt(self.tau), "tau_ap": opt(self.tau_ap),
                "human_order": self.order("human"), "model_order": self.order("model"),
                "means": {s: {"human": h, "model": m}
                          for s, h, m in zip(self.systems, self.human_means, self.model_means)}}


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

    @property
    def flips(self) -> list[PairVerdict]:
        """The pairs whose verdict differs between human and model labels."""
        return [v for v in self.verdicts if v.kind is not None]

    def to_dict(self) -> dict[str, Any]:
        return {"queries": self.queries, "human_only_queries": self.human_only_queries,
                "model_only_queries": self.model_only_queries, "test": self.test, "alpha": self.alpha,
                "correction": self.correction, "seed": self.seed,
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
) -> RankingAgreement:
    """Compare the system rankings and pairwise verdicts under ``human`` and ``model`` labels (module docstring).

    ``metrics`` default to ``ndcg@10``; ``test``, ``alpha``, ``correction``, ``permutations``, ``rng``,
    ``relevance_level`` and ``depth`` are passed to :func:`rankscope.compare` for both label sets.
    """
    from scipy.stats import kendalltau

    from rankscope.comparison import compare

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
    for label, measure in zip(ch.labels, ch.measures):
        hib = measure.spec.higher_is_better
        hm = np.array([ch.means[s][label] for s in ch.systems])
        mm = np.array([cm.means[s][label] for s in ch.systems])
        tau = float(kendalltau(hm, mm).statistic) if n_runs > 1 else float("nan")
        rankings.append(MetricRanking(label, ch.systems, tuple(hm.tolist()), tuple(mm.tolist()), tau,
                                      tau_ap(hm, mm, hib), hib))
    hib_of = {lb: ms.spec.higher_is_better for lb, ms in zip(ch.labels, ch.measures)}
    verdicts = []
    for ph, pm in zip(ch.pairs, cm.pairs):
        hib = hib_of[ph.metric]
        verdicts.append(PairVerdict(ph.metric, ph.a, ph.b, _verdict(ph.diff, ph.significant, hib),
                                    _verdict(pm.diff, pm.significant, hib), ph.p_adjusted, pm.p_adjusted,
                                    ph.diff, pm.diff))
    return RankingAgreement(tuple(rankings), tuple(verdicts), len(common), len(hq - mq), len(mq - hq), ch.test,
                            ch.alpha, ch.correction, ch.seed)
