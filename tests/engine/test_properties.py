"""Hypothesis properties of the engine (derandomized, bounded: runs in seconds).

* every metric registered with bounds (0, 1) stays in [0, 1];
* a perfect ranking (judged documents by grade, best first) scores 1;
* the order of the input rows (queries shuffled) changes nothing;
* adding a constant to every score changes nothing (integer scores, so exact).
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from rankscope import Qrels, Run, evaluate
from rankscope.measures import all_specs

SETTINGS = settings(derandomize=True, max_examples=60, deadline=None)

QIDS = st.sampled_from([f"q{i}" for i in range(6)])
DIDS = st.sampled_from([f"d{i}" for i in range(15)])

qrels_dicts = st.dictionaries(QIDS, st.dictionaries(DIDS, st.integers(-1, 4), min_size=1, max_size=8),
                              min_size=1, max_size=5)
run_dicts = st.dictionaries(QIDS, st.dictionaries(DIDS, st.integers(-20, 20), min_size=1, max_size=12),
                            min_size=1, max_size=5)


def _bounded_metrics() -> list[str]:
    out = []
    for spec in all_specs():
        # span measures: tests/spans; diversity measures read subtopic judgments: tests/measures
        if spec.bounds != (0.0, 1.0) or not spec.builtin or spec.family in ("span", "diversity"):
            continue
        out.append(f"{spec.name}@3" if spec.cutoff == "required" else spec.name)
        if spec.cutoff == "optional":
            out.append(f"{spec.name}@5")
    return out


BOUNDED = _bounded_metrics()


def _tables(qrels: dict, run: dict) -> tuple[Qrels, Run]:
    return Qrels.from_dict(qrels), Run.from_dict({q: {d: float(s) for d, s in docs.items()} for q, docs in run.items()})


def _overlap(qrels: dict, run: dict) -> bool:
    return bool(set(qrels) & set(run))


def test_bounded_metric_list_is_not_trivial() -> None:
    assert {"ndcg", "map", "mrr", "precision@3", "recall@3", "f1@3"} <= set(BOUNDED)


@SETTINGS
@given(qrels_dicts, run_dicts, st.integers(1, 3))
def test_bounded_metrics_stay_in_unit_interval(qrels: dict, run: dict, level: int) -> None:
    if not _overlap(qrels, run):
        return
    q, r = _tables(qrels, run)
    values = evaluate(q, r, BOUNDED, relevance_level=level).per_query.values
    assert np.all((values >= 0.0) & (values <= 1.0)), dict(zip(BOUNDED, values.min(axis=0), strict=True))


PERFECT = ["ndcg", "ndcg@3", "ndcg_exp@3", "map", "mrr", "r_precision", "set_recall", "hit_rate@1",
           "relative_precision@3", "recall@1000", "ap_rel_ret", "ndcg_ret_ideal@3"]


@SETTINGS
@given(qrels_dicts)
def test_perfect_ranking_scores_one(qrels: dict) -> None:
    qrels = {q: docs for q, docs in qrels.items() if max(docs.values()) >= 1}
    if not qrels:
        return
    # every judged document, best grade first; documents judged < 1 last
    run = {q: [d for d, _ in sorted(docs.items(), key=lambda kv: (-kv[1], kv[0]))] for q, docs in qrels.items()}
    res = evaluate(Qrels.from_dict(qrels), Run.from_ranked_lists(run), PERFECT)
    assert np.allclose(res.per_query.values, 1.0, rtol=0, atol=1e-12), res.mean()


def _rows(table: dict) -> list[tuple[str, str, int]]:
    return [(q, d, v) for q, docs in table.items() for d, v in docs.items()]


METRICS = ["ndcg@5", "map", "mrr", "P@3", "recall@5", "Rprec", "num_rel_ret", "bpref", "f1@3", "judged@5"]


@SETTINGS
@given(qrels_dicts, run_dicts, st.randoms(use_true_random=False))
def test_row_and_query_order_change_nothing(qrels: dict, run: dict, rnd) -> None:  # type: ignore[no-untyped-def]
    if not _overlap(qrels, run):
        return
    metrics = [m for m in METRICS if m != "bpref" or "bpref" in {s.name for s in all_specs()}]
    base = evaluate(*_tables(qrels, run), metrics)
    qrows, rrows = _rows(qrels), _rows(run)
    rnd.shuffle(qrows)
    rnd.shuffle(rrows)
    shuffled = evaluate(
        Qrels([r[0] for r in qrows], [r[1] for r in qrows], [r[2] for r in qrows]),
        Run([r[0] for r in rrows], [r[1] for r in rrows], np.array([r[2] for r in rrows], dtype=np.float64)),
        metrics,
    )
    assert list(shuffled.per_query.query_ids) == list(base.per_query.query_ids)
    assert np.array_equal(shuffled.per_query.values, base.per_query.values)


@SETTINGS
@given(qrels_dicts, run_dicts, st.integers(-10**6, 10**6))
def test_adding_a_constant_to_scores_changes_nothing(qrels: dict, run: dict, shift: int) -> None:
    if not _overlap(qrels, run):
        return
    metrics = [m for m in METRICS if m != "bpref" or "bpref" in {s.name for s in all_specs()}]
    base = evaluate(*_tables(qrels, run), metrics)
    moved = {q: {d: s + shift for d, s in docs.items()} for q, docs in run.items()}
    assert np.array_equal(evaluate(*_tables(qrels, moved), metrics).per_query.values, base.per_query.values)


def test_duplicates_are_found_in_large_runs_grouped_or_not() -> None:
    import pytest

    from rankscope.errors import DuplicateEntryError

    n = 6000  # above the size where the fingerprint pre-check is used
    qs = [f"q{i // 3}" for i in range(n)]
    ds = [f"doc-{i % 3}-{'x' * (i % 40)}" for i in range(n)]  # ids from 6 to 45 bytes long
    scores = np.arange(n, 0, -1, dtype=np.float64)
    assert len(Run(qs, ds, scores)) == n
    rng = np.random.default_rng(0)
    # (q7, doc of row 22) repeated inside q7's block (rows 21-23), with a worse score
    q2, d2 = [*qs[:24], "q7", *qs[24:]], [*ds[:24], ds[22], *ds[24:]]
    s2 = np.concatenate((scores[:24], [scores[23] - 0.5], scores[24:]))
    for grouped in (True, False):
        order = np.arange(n + 1) if grouped else rng.permutation(n + 1)
        qa, da, sa = [q2[i] for i in order], [d2[i] for i in order], s2[order]
        with pytest.raises(DuplicateEntryError, match="'q7'"):
            Run(qa, da, sa)
        best = Run(qa, da, sa, duplicates="keep_best")
        assert len(best) == n
        assert best.to_dict()["q7"][ds[22]] == scores[22]
