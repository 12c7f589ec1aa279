"""A small run is prepared in Python (engine/small.py), a larger one with numpy / Arrow passes: the same
Prepared, to the dtype, on random runs with every policy."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import rankscope.engine.prepare as prepare_module
from rankscope import Qrels, Run
from rankscope.engine.policies import Policies
from rankscope.engine.prepare import QrelsIndex, prepare
from rankscope.engine.scoring import score
from rankscope.measures import parse_metric

MEASURES = [parse_metric(m) for m in ("ndcg@10", "map", "mrr", "recall@100", "P@10", "P@3", "bpref", "judged@5",
                                      "P(judged_only=True)@5", "ndcg(gains='0=1,2=5')", "num_ret", "Rprec")]
IDS = ["a", "b", "ab", "é", "b\u00e9", "z", "A", "10", "9", "d-1", "d#1", "日本", "x" * 30, "x" * 29 + "y"]


def _random(rng: np.random.Generator, grouped: bool) -> tuple[Qrels, Run, np.ndarray]:
    n_q = int(rng.integers(1, 6))
    queries = [f"q{i}" for i in rng.permutation(8)[:n_q]]
    qq, qd, qg = [], [], []
    for q in queries[: max(1, n_q - int(rng.integers(0, 2)))]:  # sometimes a run query the qrels lack
        for d in rng.choice(IDS, size=int(rng.integers(1, 8)), replace=False):
            qq.append(q)
            qd.append(str(d))
            qg.append(int(rng.integers(-1, 4)))
    extra = [f"q{i}" for i in range(8, 8 + int(rng.integers(0, 3)))]  # qrels queries the run lacks
    for q in extra:
        qq.append(q)
        qd.append("a")
        qg.append(1)
    rq, rd, rs = [], [], []
    base = float(rng.choice([0.5, 1.0, 1e6]))
    for q in queries:
        docs = rng.choice(IDS, size=int(rng.integers(0, len(IDS))), replace=False)
        # float64 ties, float32-only ties (differences below single precision) and distinct scores
        scores = base + rng.integers(0, 4, size=len(docs)) * float(rng.choice([1e-9, 0.25, 1e-12]))
        for d, s in zip(docs, scores):
            rq.append(q)
            rd.append(str(d))
            rs.append(float(s))
    if not rq:
        rq, rd, rs = [queries[0]], ["a"], [1.0]
    order = np.arange(len(rq))
    if grouped:  # a run file: grouped by query, scores descending within a query
        order = np.lexsort((-np.asarray(rs), np.asarray(rq)))
    else:
        rng.shuffle(order)
    run = Run([rq[i] for i in order], [rd[i] for i in order], [rs[i] for i in order], "r")
    model = rng.random(len(qq)) < 0.5
    return Qrels(qq, qd, qg), run, model


def _same(a: object, b: object, what: str) -> None:
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b), what
    else:
        assert a == b, what


@pytest.mark.parametrize("seed", range(60))
def test_small_runs_are_prepared_as_large_ones(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(seed)
    qrels, run, model = _random(rng, grouped=bool(seed % 2))
    pol = Policies.of("prepare", relevance_level=int(rng.integers(0, 3)), missing=str(rng.choice(["zero", "ignore"])),
                      depth=[None, 3, 6][seed % 3], score_precision=str(rng.choice(["float32", "float64"])),
                      unjudged=str(rng.choice(["keep", "condense"])))
    results = []
    for small in (True, False):
        monkeypatch.setattr(prepare_module, "SMALL_ROWS", 10**6 if small else -1)
        index = QrelsIndex(qrels, model=model)
        results.append(prepare(index, run, pol))
    (a, ca), (b, cb) = results
    assert ca == cb
    _same(a.query_ids, b.query_ids, "query_ids")
    for f in dataclasses.fields(a.data):
        _same(getattr(a.data, f.name), getattr(b.data, f.name), f.name)
    _same(a.rows, b.rows, "source rows")
    assert a.top_counts is not None and b.top_counts is not None
    for f in dataclasses.fields(a.top_counts):
        _same(getattr(a.top_counts, f.name), getattr(b.top_counts, f.name), f.name)
    assert a.ranking is not None and b.ranking is not None
    _same(a.ranking.ranked_rows().astype(np.int64), b.ranking.ranked_rows().astype(np.int64), "ranked rows")
    _same(a.ranking.num_ret, b.ranking.num_ret, "num_ret")
    _same(a.complete_view().rows.astype(np.int64), b.complete_view().rows.astype(np.int64), "complete rows")
    assert a.doc_strings() == b.doc_strings()
    _same(score(a.data, MEASURES), score(b.data, MEASURES), "scores")
