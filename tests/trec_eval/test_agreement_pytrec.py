"""Per-query agreement with pytrec_eval (trec_eval's C code) to 1e-12.

Randomized qrels and runs, generated from fixed seeds, cover the corners where
evaluators disagree: tied scores (trec_eval breaks them by doc id descending, in
string order), negative and zero grades, unjudged documents, queries present on
only one side, empty rankings, cutoffs larger than the ranking and relevance
levels other than 1.  Real runs (DL-HARD passage runs with heavy ties, LeCaRD)
are checked the same way.

pytrec_eval evaluates every query that appears in the run dict and in the qrels
(a query mapped to an empty dict scores 0), so its output is compared with
rankscope's ``missing="zero"`` result on those queries; the other qrels queries
must score 0, and ``missing="ignore"`` must give the same values on the queries
with a non-empty ranking.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from conftest import DATA, require
from random_runs import random_case
from rankscope import Qrels, Run, evaluate
from rankscope.errors import UnknownMetricError
from rankscope.io import read_qrels, read_run
from rankscope.measures import parse_metric

pytrec_eval = pytest.importorskip("pytrec_eval")

# pytrec_eval measure families to request; every key they produce is a valid rankscope name
TREC_FAMILIES = {
    "map", "ndcg", "ndcg_cut.1,3,5,10,20,50", "recip_rank", "P.1,3,5,10,20,50", "recall.1,3,5,10,20,50",
    "Rprec", "set_P", "set_recall", "set_F", "set_map", "set_relative_P", "success.1,5,10",
    "relative_P.1,5,10,50", "map_cut.1,5,10,50", "num_rel_ret", "num_ret", "num_rel", "num_q",
    "num_nonrel_judged_ret", "gm_map",
}
# families another part of the project may add later: checked when they are registered
OPTIONAL_FAMILIES = {"bpref", "iprec_at_recall", "11pt_avg", "Rprec_mult", "ndcg_rel", "Rndcg", "binG", "G"}
TOL = 1e-12


def _known(key: str) -> bool:
    try:
        parse_metric(key)
    except UnknownMetricError:
        return False
    return True


def _families() -> set[str]:
    extra = set()
    probe = {"q": {"d": 1}}
    for fam in OPTIONAL_FAMILIES:
        keys = pytrec_eval.RelevanceEvaluator(probe, {fam}).evaluate({"q": {"d": 1.0}})["q"]
        if all(_known(k) for k in keys):
            extra.add(fam)
    return TREC_FAMILIES | extra


FAMILIES = _families()


def _ours(qrels: Qrels, run: Run, names: list[str], level: int, missing: str) -> dict[str, dict[str, float]]:
    res = evaluate(qrels, run, names, relevance_level=level, missing=missing)  # type: ignore[arg-type]
    pq = res.per_query
    return {str(q): dict(zip(names, map(float, row), strict=True)) for q, row in zip(pq.query_ids, pq.values,
                                                                                     strict=True)}


def _run_from_dict(run: dict[str, dict[str, float]]) -> Run:
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    return Run([r[0] for r in rows], [r[1] for r in rows], np.array([r[2] for r in rows], dtype=np.float64))


def compare(qrels_d: dict, run_d: dict, level: int, qrels: Qrels | None = None, run: Run | None = None) -> int:
    """Assert agreement; return the number of (query, measure) values compared."""
    expected = pytrec_eval.RelevanceEvaluator(qrels_d, FAMILIES, relevance_level=level).evaluate(run_d)
    if not expected:
        return 0
    names = sorted(next(iter(expected.values())))
    qrels = qrels or Qrels.from_dict(qrels_d)
    run = run or _run_from_dict(run_d)
    if len(run) == 0:
        return 0
    got = _ours(qrels, run, names, level, "zero")
    n = 0
    for q, exp in expected.items():
        for name, value in exp.items():
            mine = got[q][name]
            if name == "gm_map":  # pytrec_eval reports log(max(AP, 1e-5)) per query
                mine = math.log(max(mine, 1e-5))
            if math.isnan(value):  # pytrec_eval's iprec_at_recall_0.00 of an empty ranking; trec_eval -c gives 0
                assert not run_d[q] and mine == 0.0, f"query {q!r} {name}: pytrec_eval NaN, rankscope {mine!r}"
                n += 1
                continue
            assert abs(mine - value) <= TOL, f"query {q!r} {name}: rankscope {mine!r} != pytrec_eval {value!r}"
            n += 1
    for q in set(got) - set(expected):  # qrels queries absent from the run score 0 under missing="zero"
        for name, value in got[q].items():
            if name not in ("num_q", "num_rel"):
                assert value == 0.0, f"missing query {q!r} {name} = {value}"
    nonempty = {q for q, docs in run_d.items() if docs and q in expected}
    ignored = _ours(qrels, run, names, level, "ignore")
    assert set(ignored) == nonempty
    for q in nonempty:
        assert ignored[q] == got[q]
    return n


@pytest.mark.parametrize("level", [1, 2, 3])
def test_random_agreement(level: int) -> None:
    compared = 0
    for seed in range(150):
        qrels_d, run_d = random_case(1000 * level + seed)
        if not any(run_d.values()):
            continue
        shared = set(qrels_d) & {q for q, d in run_d.items() if d}
        if not shared:
            continue
        compared += compare(qrels_d, run_d, level)
    assert compared > 10_000


def _dict_of(table: Qrels | Run) -> dict[str, dict]:
    return table.to_dict()


def _dl_hard_runs() -> list[Path]:
    base = require(DATA / "runs_dl_hard" / "dataset" / "baselines" / "passage")
    return sorted(base.glob("*.run"))


@pytest.mark.parametrize("level", [1, 2])
def test_dl_hard_passage_runs(level: int) -> None:
    qrels = read_qrels(require(DATA / "runs_dl_hard" / "dataset" / "dl_hard-passage.qrels"))
    qrels_d = _dict_of(qrels)
    runs = _dl_hard_runs()
    assert len(runs) == 6
    for path in runs[:3] if level == 2 else runs:
        run = read_run(path)
        assert compare(qrels_d, _dict_of(run), level, qrels, run) > 1000


def test_lecard_runs() -> None:
    base = require(DATA / "zh_lecard_qrels_runs")
    qrels = read_qrels(base / "qrels.trec")
    qrels_d = _dict_of(qrels)
    runs = sorted((base / "runs").glob("*.trec"))
    assert len(runs) == 8
    for path in runs:
        run = read_run(path)
        for level in (1, 3):
            assert compare(qrels_d, _dict_of(run), level, qrels, run) > 100


# -- score precision: trec_eval keeps every score in a C float ------------------------------------------

def _near_float32_scores(rng: np.random.Generator, k: int, kind: int) -> np.ndarray:
    """Scores that differ as doubles but often collide as float32 (the classes seen in real runs)."""
    if kind == 0:  # reranker probabilities near 1 (float32 spacing below 1 is 6e-8)
        return 1.0 - rng.integers(0, 40, size=k) * 1.1e-8 - rng.random(size=k) * 1e-9
    if kind == 1:  # sigmoid of large logits
        return 1.0 / (1.0 + np.exp(-rng.uniform(14.0, 19.0, size=k)))
    if kind == 2:  # large BM25-like scores differing past the 7th significant digit
        return 1006.66 + rng.integers(0, 30, size=k) * 1.3e-5 + rng.random(size=k) * 1e-9
    if kind == 3:  # negative scores (log-probabilities, negated distances)
        return -(25.123 + rng.integers(0, 30, size=k) * 7e-7 + rng.random(size=k) * 1e-10)
    # magnitudes that float32 flushes to zero or that overflow it, mixed with zero and exact ties
    return rng.choice(np.array([0.0, -0.0, 1e-46, -1e-46, 3e-45, 1e39, 2e39, 0.5]), size=k)


def float32_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random qrels and a run whose scores tie as float32 but not as float64, doc ids in random order."""
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in rng.choice(50, size=int(rng.integers(1, 8)), replace=False)]
    dpool = [f"d{i}" for i in rng.choice(500, size=int(rng.integers(5, 40)), replace=False)]
    grades = np.array([-1, 0, 0, 1, 1, 2, 2, 3])
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in qids:
        judged = rng.choice(dpool, size=int(rng.integers(1, len(dpool) + 1)), replace=False)
        qrels[q] = {str(d): int(rng.choice(grades)) for d in judged}
        if max(qrels[q].values()) < 0:
            qrels[q][str(judged[0])] = 1
        docs = rng.choice(dpool, size=int(rng.integers(1, len(dpool) + 1)), replace=False)
        scores = _near_float32_scores(rng, len(docs), int(rng.integers(0, 5)))
        run[q] = {str(d): float(s) for d, s in zip(docs, scores, strict=True)}
    return qrels, run


def _sorted_run(run_d: dict[str, dict[str, float]]) -> Run:
    """Grouped by query, scores non-increasing (as doubles): the engine's sort-free ranking path."""
    rows = [(q, d, s) for q, docs in run_d.items() for d, s in sorted(docs.items(), key=lambda x: -x[1])]
    return Run([r[0] for r in rows], [r[1] for r in rows], np.array([r[2] for r in rows], dtype=np.float64))


def reordered_queries(run_d: dict[str, dict[str, float]], queries: set[str]) -> int:
    """Queries of ``queries`` whose trec_eval ranking differs between float32 and float64 scores."""
    n = 0
    for q in queries:
        docs = run_d.get(q, {})
        by_id = sorted(docs, reverse=True)  # ties: doc id descending (ASCII ids: str order is strcmp order)
        with np.errstate(over="ignore"):
            by32 = sorted(by_id, key=lambda d: -float(np.float32(docs[d])))
        by64 = sorted(by_id, key=lambda d: -docs[d])
        n += by32 != by64
    return n


@pytest.mark.parametrize("level", [1, 2])
def test_float32_score_agreement(level: int) -> None:
    """Per-query agreement at 1e-12 on runs whose order depends on float32 rounding, both ranking paths."""
    compared = reordered = 0
    for seed in range(120):
        qrels_d, run_d = float32_case(7000 * level + seed)
        for run in (_run_from_dict(run_d), _sorted_run(run_d)):
            compared += compare(qrels_d, run_d, level, run=run)
        res = evaluate(Qrels.from_dict(qrels_d), _run_from_dict(run_d), ["map"], relevance_level=level)
        expected = reordered_queries(run_d, set(qrels_d))
        assert res.queries.float32_reordered == expected
        assert evaluate(Qrels.from_dict(qrels_d), _sorted_run(run_d), ["map"]).queries.float32_reordered == expected
        reordered += expected
    assert compared > 10_000 and reordered > 50
