"""How fast rankscope.tune searches: 1,000 candidate settings x 5 folds on a 1,000-query test set.

    .venv/bin/python bench/bench_tune.py                      # 1,000 queries, 2 runs x 100 docs, 1,000 settings
    .venv/bin/python bench/bench_tune.py --queries 300 --metric mrr

Data (seeded): per query 1-3 relevant documents among 300; two runs of depth 100
whose scores are the relevance plus Gaussian noise of different widths (a
"lexical" and a "dense" run that retrieve overlapping but different documents).
Candidates: ``wsum`` with weights on a grid of step 0.002 (501 weight vectors) x
norms minmax and zscore (1,002 settings), or ``--grid rrf`` for RRF's k from 1 to
1,000.  The clock covers the whole call (pooling the runs, scoring every setting
on every query, the 5-fold selection, the paired tests and the bootstrap).
Also printed: a check that the chosen setting's in-sample mean equals
``rankscope.evaluate`` on ``rankscope.fuse``'s output (the fast path is exact).
Wall and CPU times are printed; on a shared machine the CPU time is the steadier.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def data(n_queries: int, seed: int = 0) -> tuple[object, list[object]]:
    from rankscope import Qrels, Run

    rng = np.random.default_rng(seed)
    n_docs, depth = 300, 100
    qs, ds, gs = [], [], []
    rel = {}
    for q in range(n_queries):
        r = rng.choice(n_docs, size=int(rng.integers(1, 4)), replace=False)
        rel[q] = set(r.tolist())
        qs += [f"q{q}"] * len(r)
        ds += [f"d{d}" for d in r]
        gs += [1] * len(r)
    qrels = Qrels(qs, ds, np.array(gs))
    runs = []
    for name, noise in (("lexical", 0.8), ("dense", 1.0)):
        rq, rd, rs = [], [], []
        for q in range(n_queries):
            base = np.array([1.0 if d in rel[q] else 0.0 for d in range(n_docs)])
            s = base + rng.normal(0, noise, n_docs)
            top = np.argsort(-s)[:depth]
            rq += [f"q{q}"] * depth
            rd += [f"d{d}" for d in top]
            rs += s[top].tolist()
        runs.append(Run(rq, rd, np.array(rs), name))
    return qrels, runs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--metric", default="ndcg@10")
    ap.add_argument("--grid", choices=("wsum", "rrf"), default="wsum")
    args = ap.parse_args()
    from rankscope import evaluate, fuse, tune

    qrels, runs = data(args.queries)
    if args.grid == "wsum":
        method, grid = "wsum", {"norm": ["minmax", "zscore"]}
        step = 0.002
    else:
        method, grid, step = "rrf", {"k": list(range(1, 1001))}, 0.1
    wall, cpu = time.perf_counter(), time.process_time()
    result = tune(qrels, runs, method, grid, metric=args.metric, folds=5, seed=0, weight_step=step)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{result.candidates} settings x 5 folds, {result.queries} queries, {args.metric}: "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU")
    fused = fuse(runs, result.chosen.method, **result.chosen.fuse_kwargs())
    direct = evaluate(qrels, fused, [args.metric]).mean()[args.metric]
    print(f"chosen {result.chosen.label()}: in-sample {result.in_sample:.6f}; evaluate(fuse(...)) {direct:.6f}")
    print(f"out of fold {result.oof_mean:.4f}")


if __name__ == "__main__":
    main()
