"""One Evaluator scoring many runs gives each run what a fresh evaluation gives it: what the index keeps between runs
(the ideal DCG of every qrels query, per cutoff and gain map; the per-query doc dicts of small runs) never leaks
one run's ranking into another's scores."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import rankscope as rs
from rankscope.engine.prepare import QrelsIndex, prepare
from rankscope.engine.scoring import score

METRICS = ["ndcg@10", "ndcg@3", "ndcg", "ndcg(gains=1=3,2=9)@5", "ndcg(dcg=exp-log2)@10", "dcg@5", "map", "mrr",
           "P@5", "recall@20"]


def _qrels(rng: np.random.Generator, n_q: int) -> dict[str, dict[str, int]]:
    return {f"q{q}": {f"d{d}": int(rng.integers(-1, 3)) for d in rng.choice(60, size=int(rng.integers(1, 12)),
                                                                             replace=False)}
            for q in range(n_q)}


def _run(rng: np.random.Generator, n_q: int, rows: int) -> rs.Run:
    qs = rng.choice([f"q{q}" for q in range(n_q + 3)], size=rows)  # some queries the qrels do not have
    docs = np.char.add("d", rng.integers(0, 60, size=rows).astype(str)).astype(object)
    pairs = {(q, d): s for q, d, s in zip(qs, docs, rng.random(rows), strict=True)}  # one score per pair
    q, d, s = zip(*((q, d, s) for (q, d), s in pairs.items()), strict=True)
    return rs.Run(np.asarray(q, dtype=object), np.asarray(d, dtype=object), np.asarray(s))


@pytest.mark.parametrize("missing", ["zero", "ignore"])
@pytest.mark.parametrize("rows", [40, 2000])  # the small-run path and the general one
def test_one_evaluator_over_many_runs_scores_each_as_a_fresh_evaluation(missing: str, rows: int) -> None:
    rng = np.random.default_rng(11)
    qrels = _qrels(rng, 30)
    ev = rs.Evaluator(qrels, METRICS, missing=missing)  # type: ignore[arg-type]
    for _ in range(12):
        run = _run(rng, 30, rows)
        reused = ev.evaluate(run)
        fresh = rs.evaluate(qrels, run, METRICS, missing=missing)  # type: ignore[arg-type]
        assert reused.per_query.to_dict() == fresh.per_query.to_dict()
        assert reused.judged.mean == fresh.judged.mean
        # and both are what the kernels give without anything kept between runs
        prepared, __ = prepare(QrelsIndex(rs.Qrels.from_dict(qrels)), run, ev.policies)
        alone = score(replace(prepared.data, ideal_memo=None), ev.measures)
        assert np.array_equal(reused.per_query.values, alone)
