"""A small comparison of three synthetic runs, shared by the report tests."""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

import rankscope as rs
from rankscope.comparison import compare


def make_inputs(n: int = 30, seed: int = 3) -> tuple[rs.Qrels, dict[str, rs.Run]]:
    rng = np.random.default_rng(seed)
    qrels = {f"q{i:02d}": {f"d{j}": int(rng.integers(1, 3)) for j in range(3)} for i in range(n)}
    runs: dict[str, dict[str, list[str]]] = {"bm25": {}, "dense_v2": {}, "hybrid": {}}
    for i in range(n):
        q = f"q{i:02d}"
        noise = [f"x{j}" for j in range(30)]
        for name, spread in (("bm25", 12), ("dense_v2", 20), ("hybrid", 5)):
            pos = sorted(rng.choice(spread, 3, replace=False))
            ranked = list(noise)
            for j, p in enumerate(pos):
                ranked.insert(min(p, len(ranked)), f"d{j}")
            if name == "dense_v2" and i % 7 == 0:
                ranked = noise  # fails: no relevant document at all
            runs[name][q] = ranked
    return rs.Qrels.from_dict(qrels), {k: rs.Run.from_ranked_lists(v, name=k) for k, v in runs.items()}


METRICS = ["ndcg@10", "recall@5", "P@5", "mrr", "hit_rate@5"]


@cache
def shared_inputs() -> tuple[rs.Qrels, dict[str, rs.Run]]:
    """The qrels and the three runs (built once per session)."""
    return make_inputs()


@cache
def shared_comparison() -> Any:
    """compare() of the three runs against bm25 (computed once per session)."""
    qrels, runs = shared_inputs()
    return compare(qrels, runs, METRICS, baseline="bm25", bootstrap=200)
