"""Every fusion method and normalisation against ranx's own output on the same random inputs with ties.

ranx (a test dependency) is run once per module on 24 seeded random inputs: 2 or 3 runs,
3 to 6 queries, up to 12 documents per list, scores drawn from a few values so that
ties are common.  ranx ranks a run by the insertion order of its dict: each run is
handed to ranx already in trec_eval's order (score descending, ties by doc id
descending), which is the order rankscope ranks by, so ties mean the same on both
sides (lists of at most 15 documents: ranx's re-sort of a normalised run, a
numba insertion sort at that size, keeps that order).  The fused scores must be
equal (up to floating-point summation order) and rank the documents the same way.

Condorcet: ranx sorts with its pairwise comparator, whose result is only defined
where that comparator is a strict order of the candidates (with a cycle or a tied
pair, ranx's output depends on the order of a Python set of doc ids, i.e. on the
process's string hashing); those queries are compared, the others counted and
skipped, and at least 20 inputs must have compared queries.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from rankscope import Qrels, Run
from rankscope.engine.ranking import trec_order
from rankscope.retrieval.fusion import fuse, ranked_lists, train_fusion

ranx = pytest.importorskip("ranx")

N_INPUTS = 24
SCORE_VALUES = np.array([0.5, 1.0, 1.0, 2.0, 3.0, 3.0, 7.5, 10.0])  # repeated values: ties


def _random_input(seed: int, *, full: bool = False, n_runs: int | None = None
                  ) -> tuple[list[Run], Qrels, np.ndarray]:
    rng = np.random.default_rng(seed)
    n_runs = n_runs or int(rng.integers(2, 4))
    n_q = int(rng.integers(3, 7))
    vocab = [f"d{i}" for i in range(12)]
    runs = []
    for r in range(n_runs):
        data: dict[str, dict[str, float]] = {}
        for q in range(n_q):
            docs = list(rng.choice(vocab, size=int(rng.integers(1, 13)), replace=False))
            data[f"q{q}"] = {d: float(rng.choice(SCORE_VALUES) * (1 + r)) for d in docs}
        runs.append(Run.from_dict(data, name=f"r{r}"))
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_q):
        rel = rng.choice(vocab, size=int(rng.integers(1, 5)), replace=False)
        qrels[f"q{q}"] = {str(d): int(rng.integers(0, 3)) for d in rel}  # grade 0 too: some queries lack a relevant
    weights = rng.integers(1, 6, size=n_runs).astype(float)
    return runs, Qrels.from_dict(qrels), weights


def _condorcet_input(seed: int) -> list[Run]:
    """Three runs that mostly agree (noisy copies of one order, integer scores: ties), some lists partial."""
    rng = np.random.default_rng(seed)
    runs = []
    base = {f"q{q}": rng.permutation(6) for q in range(int(rng.integers(3, 7)))}
    for r in range(3):
        data: dict[str, dict[str, float]] = {}
        for q, order in base.items():
            scores = {f"d{i}": float(6 - pos + rng.integers(0, 3)) for pos, i in enumerate(order)}
            if rng.random() < 0.3:  # a partial list: the run misses its last documents
                keep = sorted(scores, key=lambda d: -scores[d])[: int(rng.integers(2, 6))]
                scores = {d: scores[d] for d in keep}
            data[q] = scores
        runs.append(Run.from_dict(data, name=f"r{r}"))
    return runs


def _ranx_run(run: Run) -> Any:
    """A ranx Run holding ``run``'s lists in trec_eval order (ranx ranks by insertion order)."""
    from numba import types
    from numba.typed import Dict as TypedDict

    lists = ranked_lists(run)
    outer = TypedDict.empty(key_type=types.unicode_type, value_type=types.DictType(types.unicode_type, types.float64))
    for q in sorted(lists):
        inner = TypedDict.empty(key_type=types.unicode_type, value_type=types.float64)
        for d, s in lists[q]:
            inner[d] = s
        outer[q] = inner
    out = ranx.Run()
    out.run = outer
    out.sorted = True
    out.name = run.name
    return out


def _ranx_norm(runs: list[Any], norm: str | None) -> list[Any]:
    from ranx.normalization import norm_switch

    if norm is None:
        return runs
    return norm_switch(norm)(runs) if norm == "borda" else [norm_switch(norm)(r) for r in runs]


def _train(method: str, qrels: Any, runs: list[Any], norm: str | None, params: dict[str, Any]) -> dict[str, Any]:
    """ranx's training of a supervised method on the normalised runs (as ``optimize_fusion`` does)."""
    from ranx import fusion

    normed = _ranx_norm(runs, norm)
    if method == "probfuse":
        return {"probs": fusion.probfuse_train(qrels, normed, params["n_segments"])}
    if method == "slidefuse":
        return {"probs": fusion.slidefuse_train(qrels, normed), "w": params["w"]}
    if method == "bayesfuse":
        return {"log_odds": fusion.bayesfuse_train(qrels, normed)}
    if method == "mapfuse":
        return {"map_scores": fusion.mapfuse_train(qrels, normed)}
    return {"probs": getattr(fusion, f"{method}_train")(qrels, normed)}


# (rankscope method, ranx method, params, needs weights, norms to try)
SCORE_NORMS = ("min-max", "max", "sum", "zmuv", "rank", "borda", None)
CASES: list[tuple[str, str, dict[str, Any], bool, tuple[str | None, ...]]] = [
    ("combsum", "sum", {}, False, SCORE_NORMS),
    ("combmnz", "mnz", {}, False, SCORE_NORMS),
    ("combmax", "max", {}, False, SCORE_NORMS),
    ("combmin", "min", {}, False, SCORE_NORMS),
    ("combmed", "med", {}, False, SCORE_NORMS),
    ("combanz", "anz", {}, False, SCORE_NORMS),
    ("combgmnz", "gmnz", {"gamma": 0.5}, False, ("min-max", None)),
    ("wsum", "wsum", {}, True, SCORE_NORMS),
    ("wmnz", "wmnz", {}, True, ("min-max", "zmuv")),
    ("mixed", "mixed", {}, True, ("min-max", "sum")),
    ("rrf", "rrf", {"k": 60}, False, ("min-max",)),
    ("rrf", "rrf", {"k": 5}, False, ("min-max",)),
    ("isr", "isr", {}, False, ("min-max",)),
    ("log_isr", "log_isr", {}, False, ("min-max",)),
    ("logn_isr", "logn_isr", {"sigma": 0.1}, False, ("min-max",)),
    ("rbc", "rbc", {"phi": 0.6}, False, ("min-max",)),
    ("borda", "bordafuse", {}, False, ("min-max",)),
    ("weighted_borda", "w_bordafuse", {}, True, ("min-max",)),
    ("posfuse", "posfuse", {}, False, ("min-max", "rank")),
    ("probfuse", "probfuse", {"n_segments": 3}, False, ("min-max",)),
    ("segfuse", "segfuse", {}, False, ("min-max", "sum")),
    ("slidefuse", "slidefuse", {"w": 1}, False, ("min-max",)),
    ("bayesfuse", "bayesfuse", {}, False, ("min-max",)),
    ("mapfuse", "mapfuse", {}, False, ("min-max",)),
]
SUPERVISED = {"posfuse", "probfuse", "segfuse", "slidefuse", "bayesfuse", "mapfuse"}


def _key(case: tuple[str, str, dict[str, Any], bool, tuple[str | None, ...]], norm: str | None) -> str:
    return f"{case[0]}-{case[2]}-{norm}"


@pytest.fixture(scope="module")
def outputs() -> dict[str, list[tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]]]:
    """For each case and norm: (rankscope, ranx) fused runs on every random input, computed once."""
    out: dict[str, list[Any]] = {}
    for seed in range(N_INPUTS):
        runs, qrels, weights = _random_input(seed)
        rx_runs = [_ranx_run(r) for r in runs]
        rx_qrels = ranx.Qrels(qrels.to_dict())
        for case in CASES:
            ours_name, ranx_name, params, weighted, norms = case
            for norm in norms:
                kw: dict[str, Any] = dict(params)
                rx_params: dict[str, Any] = {k: v for k, v in params.items() if ours_name not in SUPERVISED}
                if weighted:
                    kw["weights"] = list(weights)
                    rx_params["weights"] = list(weights)
                if ours_name in SUPERVISED:
                    kw["qrels"] = qrels
                    rx_params = _train(ours_name, rx_qrels, rx_runs, norm, params)
                ours = fuse(runs, ours_name, norm=norm, **kw).to_dict()
                theirs = ranx.fuse(rx_runs, norm=norm, method=ranx_name, params=rx_params).to_dict()
                out.setdefault(_key(case, norm), []).append((ours, {q: dict(v) for q, v in theirs.items()}))
    return out


def _trec_ranking(scores: dict[str, float]) -> list[str]:
    run = Run.from_dict({"q": scores})
    docs = run.doc_ids.take(__import__("pyarrow").array(run.dcode[trec_order(run)])).to_pylist()
    return [str(d) for d in docs]


@pytest.mark.parametrize(("case", "norm"), [(c, n) for c in CASES for n in c[4]], ids=lambda x: str(x)[:40])
def test_equals_ranx(outputs: dict[str, Any], case: Any, norm: str | None) -> None:
    pairs = outputs[_key(case, norm)]
    assert len(pairs) == N_INPUTS >= 20
    for ours, theirs in pairs:
        assert sorted(ours) == sorted(q for q in theirs if theirs[q])
        for q, docs in ours.items():
            assert set(docs) == set(theirs[q]), q
            for d, s in docs.items():
                assert s == pytest.approx(theirs[q][d], rel=1e-9, abs=1e-12), (q, d)
            assert _trec_ranking(docs) == _trec_ranking(theirs[q]), q


def _ranx_comparator_is_a_strict_order(lists: list[list[str]], cands: list[str], weights: np.ndarray) -> bool:
    """Whether ranx's Condorcet comparator orders ``cands`` without a cycle or a tied pair."""
    index = [{d: i for i, d in enumerate(lst)} for lst in lists]

    def first(x: str, y: str) -> bool:  # ranx: x goes first when its votes >= the rest
        xv = sum(w for w, ix in zip(weights, index) if ix.get(x, 10**6) < ix.get(y, 10**6))
        return xv >= weights.sum() - xv

    for x, y in itertools.permutations(cands, 2):
        if first(x, y) == first(y, x):
            return False
    beats = {(x, y) for x, y in itertools.permutations(cands, 2) if first(x, y)}
    return all((x, z) in beats for (x, y) in beats for (y2, z) in beats if y == y2 and x != z)


@pytest.mark.parametrize("weighted", [False, True])
def test_condorcet_equals_ranx_where_ranx_is_defined(weighted: bool) -> None:
    compared_inputs, skipped = 0, 0
    for seed in range(40):
        runs = _condorcet_input(1000 + seed) if seed % 2 else _random_input(1000 + seed, n_runs=3)[0]
        weights = np.array([1.0, 2.0, 4.0]) if weighted else np.ones(3)  # no subset of votes ties another
        rx_runs = [_ranx_run(r) for r in runs]
        if weighted:
            theirs = ranx.fuse(rx_runs, method="w_condorcet", params={"weights": list(weights)}).to_dict()
            ours = fuse(runs, "weighted_condorcet", weights=list(weights)).to_dict()
        else:
            theirs = ranx.fuse(rx_runs, method="condorcet").to_dict()
            ours = fuse(runs, "condorcet").to_dict()
        lists = {r.name: {q: [d for d, _ in lst] for q, lst in ranked_lists(r).items()} for r in runs}
        compared = 0
        for q, docs in ours.items():
            per_run = [lists[r.name].get(q, []) for r in runs]
            if not _ranx_comparator_is_a_strict_order(per_run, list(docs), weights):
                skipped += 1
                continue
            assert docs == pytest.approx(dict(theirs[q])), q
            compared += 1
        compared_inputs += compared > 0
    assert compared_inputs >= 20, (compared_inputs, skipped)


def test_trained_tables_equal_ranx() -> None:
    """The learned probabilities themselves (not only the fused scores) equal ranx's."""
    from ranx import fusion

    for seed in range(N_INPUTS):
        runs, qrels, _ = _random_input(seed)
        rx_runs = _ranx_norm([_ranx_run(r) for r in runs], "min-max")
        rx_qrels = ranx.Qrels(qrels.to_dict())
        ours = train_fusion(qrels, runs, "posfuse", norm="min-max").tables
        for a, b in zip(ours, fusion.posfuse_train(rx_qrels, rx_runs)):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        ours = train_fusion(qrels, runs, "probfuse", norm="min-max", n_segments=4).tables
        for a, b in zip(ours, fusion.probfuse_train(rx_qrels, rx_runs, 4)):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        ours = train_fusion(qrels, runs, "segfuse", norm="min-max").tables
        for a, b in zip(ours, fusion.segfuse_train(rx_qrels, rx_runs)):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        ours = train_fusion(qrels, runs, "bayesfuse", norm="min-max").tables
        for a, b in zip(ours, fusion.bayesfuse_train(rx_qrels, rx_runs)):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        ours = train_fusion(qrels, runs, "mapfuse", norm="min-max").tables
        np.testing.assert_allclose([t[0] for t in ours], fusion.mapfuse_train(rx_qrels, rx_runs), rtol=1e-12)


@pytest.mark.parametrize("norm", ["min-max", "min-max-inverted", "max", "sum", "zmuv", "rank", "borda"])
def test_normalisations_equal_ranx(norm: str) -> None:
    """combsum of one run (plus an empty second run for borda's candidates) is the normalised run itself."""
    for seed in range(N_INPUTS):
        runs, _, _ = _random_input(seed, n_runs=2)
        rx = _ranx_norm([_ranx_run(r) for r in runs], norm)
        ours = fuse(runs, "combsum", norm=norm, weights=[1.0, 0.0]).to_dict()
        for q, docs in ours.items():
            theirs = dict(rx[0][q])
            for d, s in docs.items():
                assert s == pytest.approx(theirs.get(d, 0.0), rel=1e-9, abs=1e-12), (norm, q, d)
