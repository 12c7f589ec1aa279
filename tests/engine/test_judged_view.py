"""The judged view (only rows with a qrels entry) gives exactly what every retrieved row gives.

``prepare`` returns the judged rows of each query; metrics declared
``judged_view=True`` run on them, the others on ``Prepared.complete_view()``.
These tests check, on seeded random data, that

* every ``judged_view`` metric computes the same values on both views (so the
  declarations are right),
* the sort-free ranking of grouped, score-sorted input equals the lexsort path of
  the same rows shuffled, ties included,
* the fingerprint join of large runs equals the exact Arrow lookup, and the
  result does not depend on the number of threads,
* custom metrics get every row unless they declare ``judged_rows_only``.
"""

from __future__ import annotations

import numpy as np
import pytest

import rankscope.engine.prepare as prepare_mod
from random_runs import random_case
from rankscope import Qrels, Run, evaluate
from rankscope.engine.prepare import Prepared, QrelsIndex, prepare
from rankscope.errors import NoOverlapError
from rankscope.measures import register_metric, unregister_metric
from rankscope.measures.registry import all_specs

CUTOFFS = (1, 3, 10)


def _measures() -> list:
    out = []
    for spec in all_specs():
        # span measures: tests/spans; diversity measures (subtopic judgments): tests/measures
        if not spec.builtin or spec.name == "relstring" or spec.family in ("span", "diversity"):
            continue
        if spec.cutoff == "required":
            out.extend(spec.measure(k) for k in CUTOFFS)
        else:
            out.append(spec.measure())
            if spec.cutoff == "optional":
                out.extend(spec.measure(k) for k in CUTOFFS)
    return out


def _tables(qrels_d: dict, run_d: dict, sort: bool) -> tuple[Qrels, Run]:
    rows = [(q, d, s) for q, docs in run_d.items() for d, s in docs.items()]
    if sort:  # grouped by query, best score first: the sort-free ranking path
        rows.sort(key=lambda r: (r[0], -r[2]))
    run = Run([r[0] for r in rows], [r[1] for r in rows], np.array([r[2] for r in rows], dtype=np.float64))
    return Qrels.from_dict(qrels_d), run


def _same_views(a: Prepared, b: Prepared) -> None:
    for va, vb in ((a, b), (a.complete_view(), b.complete_view())):
        for name in ("qidx", "rank", "grade", "judged", "num_ret", "offsets", "score"):
            np.testing.assert_array_equal(getattr(va, name), getattr(vb, name), err_msg=name)
        assert va.doc_strings() == vb.doc_strings()


@pytest.mark.parametrize("seed", range(40))
def test_judged_view_metrics_equal_complete_view(seed: int) -> None:
    qrels_d, run_d = random_case(seed)
    if not any(run_d.values()):
        return
    measures = _measures()
    for level in (1, 2, 0):
        qrels, run = _tables(qrels_d, run_d, sort=False)
        index = QrelsIndex(qrels)
        for missing in ("zero", "ignore"):
            try:
                p, _ = prepare(index, run, relevance_level=level, missing=missing)  # type: ignore[arg-type]
            except NoOverlapError:
                continue
            full = p.complete_view()
            assert len(p.qidx) <= len(full.qidx)
            for m in measures:
                if not m.spec.judged_view:
                    continue
                got = np.asarray(m.spec.kernel(p, m), dtype=np.float64)
                want = np.asarray(m.spec.kernel(full, m), dtype=np.float64)
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=f"{m} level={level}")
            _, sorted_run = _tables(qrels_d, run_d, sort=True)
            q, _ = prepare(index, sorted_run, relevance_level=level, missing=missing)  # type: ignore[arg-type]
            _same_views(p, q)


def _large(seed: int, shuffle: bool) -> tuple[Qrels, Run]:
    """~20,000 rows: grouped by query in numeric order, heavy ties, long and short ids, one-sided queries."""
    rng = np.random.default_rng(seed)
    n_q, depth = 200, 100
    docs = np.array([f"d{i}" if i % 5 else f"a-rather-long-document-identifier-{i}" for i in range(3000)])
    q_rows, d_rows, s_rows = [], [], []
    for q in range(n_q):
        k = int(rng.integers(0, depth + 1))
        picked = rng.choice(len(docs), size=k, replace=False)
        score = np.sort(rng.integers(0, 8, size=k) / 4.0)[::-1]  # many ties
        q_rows += [f"q{q}"] * k
        d_rows += docs[picked].tolist()
        s_rows += score.tolist()
    order = rng.permutation(len(q_rows)) if shuffle else np.arange(len(q_rows))
    run = Run(np.array(q_rows)[order], np.array(d_rows)[order], np.array(s_rows)[order])
    jq = rng.integers(0, n_q + 20, size=6000)
    jd = rng.integers(0, len(docs), size=6000)
    key = np.unique(jq * 10_000 + jd)
    qrels = Qrels([f"q{k // 10_000}" for k in key], docs[key % 10_000], rng.integers(-1, 4, size=len(key)))
    return qrels, run


@pytest.mark.parametrize("seed", [1, 2])
def test_large_runs_fast_paths_equal_exact_paths(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["ndcg@10", "map", "mrr", "P@5", "recall@100", "bpref", "G", "ndcg_rel", "Rndcg", "infAP", "num_rel_ret"]
    monkeypatch.setattr(prepare_mod, "_FINGERPRINT_JOIN_MIN_ROWS", 4096)  # the fingerprint join on these runs
    qrels, grouped = _large(seed, shuffle=False)
    _, shuffled = _large(seed, shuffle=True)
    assert len(grouped) > 4096  # the fingerprint join and the fingerprint duplicate check are used
    index = QrelsIndex(qrels)
    a, _ = prepare(index, grouped, depth=50)
    assert a.ranking is not None and a.ranking.blocks
    b, _ = prepare(index, shuffled, depth=50)
    _same_views(a, b)
    base = evaluate(qrels, grouped, names).per_query.values
    np.testing.assert_array_equal(evaluate(qrels, shuffled, names).per_query.values, base)
    monkeypatch.setenv("RANKSCOPE_THREADS", "1")
    _, one_thread = _large(seed, shuffle=False)
    np.testing.assert_array_equal(evaluate(qrels, one_thread, names).per_query.values, base)
    monkeypatch.setattr(prepare_mod, "_FINGERPRINT_JOIN_MIN_ROWS", 10**12)  # exact Arrow lookup
    np.testing.assert_array_equal(evaluate(qrels, grouped, names).per_query.values, base)


def test_custom_metrics_get_every_row_unless_they_ask_for_judged_rows() -> None:
    seen: dict[str, int] = {}

    def rows_all(p: Prepared, m: object) -> np.ndarray:
        seen["all"] = len(p.qidx)
        return np.zeros(p.n)

    def rows_judged(p: Prepared, m: object) -> np.ndarray:
        seen["judged"] = len(p.qidx)
        return np.zeros(p.n)

    register_metric("rows_all", rows_all)
    register_metric("rows_judged", rows_judged, judged_rows_only=True)
    try:
        qrels = Qrels.from_dict({"q": {"a": 1}})
        evaluate(qrels, Run.from_ranked_lists({"q": ["x", "y", "a"]}), ["rows_all", "rows_judged"])
    finally:
        unregister_metric("rows_all")
        unregister_metric("rows_judged")
    assert seen == {"all": 3, "judged": 1}
