"""A simulated production canary: a retriever whose rankings vary from round to round, and that may degrade.

What the drop alert is checked against (``tests/monitor/test_simulation.py``,
``bench/monitor_simulation.py``): every round asks the same test set; each query's ranking is the
base ranking with adjacent documents swapped at random (``noise``: the chance of each swap, top
down), as an approximate-nearest-neighbour index, a cache or a load balancer makes a live
retriever vary; from round ``degrade_at`` on, a ``fraction`` of the queries (fixed at random)
returns a worse ranking: its top ``shift`` documents moved to the bottom of the list.  Each round
is scored by the engine and checked by a ``drop`` rule against the first round (the baseline).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.monitor.alerts import Check, Rule, RuleState, check_sequential, paired_differences

__all__ = ["Simulation", "simulate_canary", "synthetic_base"]


@dataclass
class Simulation:
    """The outcome of one simulated stream: the round the alert opened (None: never), and every round's check."""

    alert_round: int | None
    degrade_at: int | None
    checks: list[Check] = field(default_factory=list)
    means: list[float] = field(default_factory=list)

    @property
    def rounds_to_alert(self) -> int | None:
        """Degraded rounds seen up to and including the one that alerted (None: not alerted, or no degradation)."""
        if self.alert_round is None or self.degrade_at is None or self.alert_round < self.degrade_at:
            return None
        return self.alert_round - self.degrade_at + 1

    @property
    def false_alarm(self) -> bool:
        """An alert before any degradation."""
        return self.alert_round is not None and (self.degrade_at is None or self.alert_round < self.degrade_at)


def synthetic_base(qrels: Any, *, depth: int = 20, hit: float = 0.7, top: float = 0.35,
                   seed: int = 0) -> dict[str, list[str]]:
    """A base ranking per query of ``qrels``: each relevant document is retrieved with probability ``hit``, at a rank
    drawn from a geometric distribution (parameter ``top``: most land in the top 5); the other ranks hold
    documents judged for other queries (not relevant to this one)."""
    t = qrels.to_arrow()
    q = np.asarray(t["query_id"].to_pylist(), dtype=object)
    d = np.asarray(t["doc_id"].to_pylist(), dtype=object)
    g = t["relevance"].to_numpy()
    rng = np.random.default_rng(seed)
    pool = np.unique(d)
    out: dict[str, list[str]] = {}
    for qid in np.unique(q):
        rel = list(d[(q == qid) & (g > 0)])
        own = set(d[q == qid])
        fillers = [x for x in rng.choice(pool, size=min(len(pool), 3 * depth), replace=False) if x not in own]
        slots: list[Any] = [None] * depth
        for x in rel:
            if rng.random() >= hit:
                continue
            r = min(int(rng.geometric(top)) - 1, depth - 1)
            while r < depth and slots[r] is not None:
                r += 1
            if r < depth:
                slots[r] = x
        it = iter(fillers)
        out[str(qid)] = [str(x if x is not None else next(it)) for x in slots]
    return out


def _rankings(base: dict[str, list[str]], rounds: int, noise: float, degrade_at: int | None, fraction: float,
              shift: int, rng: np.random.Generator) -> tuple[list[str], list[np.ndarray]]:
    queries = sorted(base)
    depth = max(len(v) for v in base.values())
    perm = np.broadcast_to(np.arange(depth), (rounds, len(queries), depth)).copy()
    for i in range(depth - 1):  # top-down adjacent swaps
        swap = rng.random((rounds, len(queries))) < noise
        a, b = perm[..., i].copy(), perm[..., i + 1].copy()
        perm[..., i] = np.where(swap, b, a)
        perm[..., i + 1] = np.where(swap, a, b)
    if degrade_at is not None:
        worse = rng.random(len(queries)) < fraction
        rolled = np.roll(perm, -shift, axis=-1)
        perm[degrade_at:, worse] = rolled[degrade_at:, worse]
    return queries, [perm[r] for r in range(rounds)]


def simulate_canary(qrels: Any, base: dict[str, list[str]], *, rounds: int = 30, degrade_at: int | None = None,
                    fraction: float = 0.3, noise: float = 0.1, shift: int = 5, metric: str = "ndcg@10",
                    margin: float = 0.02, alpha: float = 0.05, seed: int = 0) -> Simulation:
    """Simulate ``rounds`` canary rounds (round 0 is the baseline) and check a ``drop`` rule on each later round."""
    from rankscope.data import Qrels, Run
    from rankscope.engine import Evaluator

    rng = np.random.default_rng(seed)
    queries, perms = _rankings(base, rounds, noise, degrade_at, fraction, shift, rng)
    t = qrels.to_arrow()
    qq = np.asarray(t["query_id"].to_pylist(), dtype=object)
    dd = np.asarray(t["doc_id"].to_pylist(), dtype=object)
    gg = t["relevance"].to_numpy()
    wanted = np.isin(qq, queries)
    qq, dd, gg = qq[wanted], dd[wanted], gg[wanted]
    rq = np.concatenate([qq + f"#{r}" for r in range(rounds)])
    rep = Qrels.from_arrays(rq, np.tile(dd, rounds), np.tile(gg, rounds))
    depth = max(len(v) for v in base.values())
    docs = np.array([base[qid] + [""] * (depth - len(base[qid])) for qid in queries], dtype=object)
    rows = np.arange(len(queries))[:, None]
    ranked = np.stack([docs[rows, perm] for perm in perms])  # (rounds, queries, depth)
    qids = np.array([[f"{qid}#{r}" for qid in queries] for r in range(rounds)], dtype=object)
    rows_q = np.repeat(qids.ravel(), depth)
    rows_d = ranked.reshape(-1)
    rows_s = np.tile(np.arange(depth, 0, -1, dtype=np.float64), rounds * len(queries))
    ok = rows_d != ""
    rows_q, rows_d, rows_s = rows_q[ok], rows_d[ok], rows_s[ok]
    res = Evaluator(rep, [metric]).evaluate(Run.from_arrays(rows_q, rows_d, rows_s, "canary"))
    values = {str(q): float(v) for q, v in zip(res.per_query.query_ids, res.per_query.values[:, 0])}
    by_round = [{qid: values.get(f"{qid}#{r}", 0.0) for qid in queries} for r in range(rounds)]
    rule = Rule("drop", metric, margin=margin, alpha=alpha)
    state = RuleState()
    sim = Simulation(None, degrade_at)
    for r in range(1, rounds):
        ids, diffs, _ = paired_differences(by_round[r], by_round[0])
        check = check_sequential(rule, state, diffs, ids=ids, label=str(r), seed=seed, bound=False)
        sim.checks.append(check)
        sim.means.append(float(np.mean(list(by_round[r].values()))))
        if check.opened and sim.alert_round is None:
            sim.alert_round = r
    return sim
