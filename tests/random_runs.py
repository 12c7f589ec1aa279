"""Random qrels and runs from a seed, shared by the oracle tests (trec_eval/) and the engine's (engine/)."""

from __future__ import annotations

import numpy as np


def random_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random qrels/run dicts: ties, grades -2..4, unjudged docs, one-sided and empty queries."""
    rng = np.random.default_rng(seed)
    # ids of different lengths so that string order differs from numeric order
    qpool = list(dict.fromkeys(f"{rng.integers(0, 200)}" for _ in range(40)))
    dpool = [f"d{i}" for i in rng.choice(300, size=int(rng.integers(5, 60)), replace=False)]
    n_q = int(rng.integers(1, min(12, len(qpool))))
    qrels_q = qpool[:n_q]
    run_q = [q for q in qrels_q if rng.random() < 0.8] + qpool[n_q : n_q + int(rng.integers(0, 3))]
    grades = np.array([-2, -1, 0, 0, 0, 1, 1, 1, 2, 2, 3, 4])
    qrels: dict[str, dict[str, int]] = {}
    for q in qrels_q:
        k = int(rng.integers(1, len(dpool) + 1))
        docs = rng.choice(dpool, size=k, replace=False)
        qrels[q] = {str(d): int(rng.choice(grades)) for d in docs}
        if max(qrels[q].values()) < 0:  # pytrec_eval crashes (segfault) on a query judged only negative
            qrels[q][str(docs[0])] = 0
    run: dict[str, dict[str, float]] = {}
    tie_heavy = rng.random() < 0.5
    for q in run_q:
        k = int(rng.integers(0, len(dpool) + 1)) if rng.random() < 0.9 else 0
        docs = rng.choice(dpool, size=k, replace=False)
        if tie_heavy:
            scores = rng.integers(-3, 4, size=k) / 2.0
        else:
            scores = rng.normal(size=k) * 10.0 ** int(rng.integers(-3, 4))
        run[q] = {str(d): float(s) for d, s in zip(docs, scores, strict=True)}
    return qrels, run
