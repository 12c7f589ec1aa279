"""Unjudged documents: judged@10 of every run, the condensed-list policy, model labels in the top k, and
inputs that would give a clean wrong 0.0 (an empty run, no common query, ids that never match)."""

from __future__ import annotations

import ir_measures
import numpy as np
import pytest
import pytrec_eval

from conftest import DATA, require
from rankscope import Qrels, Run, compare, evaluate
from rankscope.engine import Policies
from rankscope.errors import EmptyInputError, InvalidParameterError, NoOverlapError
from rankscope.io import read_qrels, read_run
from rankscope.labels.provenance import Label, Labels

DLH = DATA / "runs_dl_hard" / "dataset"


def _kinds(result: object) -> list[str]:
    return [w.kind for w in result.warnings()]  # type: ignore[attr-defined]


# -- judged@10 --------------------------------------------------------------------------------------
def test_every_result_reports_judged_at_10() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 0, "n": -1}, "q2": {"c": 1}, "q3": {"e": 1}})
    run = Run.from_ranked_lists({"q1": ["a", "x", "n", "b"], "q2": ["c", "z"]})
    res = evaluate(qrels, run, ["P@1"])
    j = res.judged
    # q1: a and b judged, n (negative grade) and x not: 2 of 4; q2: 1 of 2; q3 retrieved nothing
    assert (j.k, j.queries, j.retrieved, j.judged, j.mean) == (10, 2, 6, 3, 0.5)
    assert np.isnan(j.per_query[2]) and j.per_query[:2].tolist() == [0.5, 0.5]
    d = res.to_dict()
    assert d["judged"]["judged@10"] == 0.5 and d["judged"]["mostly_unjudged"] is False
    assert res.to_dict(per_query=True)["judged"]["per_query"] == {"q1": 0.5, "q2": 0.5, "q3": None}
    assert "mostly_unjudged" not in _kinds(res)


def test_a_mostly_unjudged_run_is_warned_about() -> None:
    # pooled qrels (old systems' top documents judged, mostly non-relevant); a new retriever finds others
    pool = {f"q{i}": {"a": 1, **{f"p{j}": 0 for j in range(12)}} for i in (1, 2)}
    qrels = Qrels.from_dict(pool)
    old = Run.from_ranked_lists({q: ["a", *[f"p{j}" for j in range(9)]] for q in pool}, name="bm25")
    new = Run.from_ranked_lists({"q1": ["x", "y", "a", "z"], "q2": ["p1", "u", "v", "w"]}, name="dense")
    assert evaluate(qrels, old, ["ndcg@10"]).judged.mean == 1.0
    res = evaluate(qrels, new, ["ndcg@10"])
    assert res.judged.mean == 0.25 and res.judged.attainable == 1.0 and res.judged.mostly_unjudged
    [w] = [w for w in res.warnings() if w.kind == "mostly_unjudged"]
    text = w.text()
    assert "dense" in text and "judged@10 = 0.250" in text and "condense" in text
    assert "判断" in w.text("zh") or "评判" in w.text("zh")
    assert res.to_dict()["warnings"][0]["kind"] == "mostly_unjudged"


def test_sparse_labels_report_judged_at_k_without_a_warning() -> None:
    # one relevant id per query (MS MARCO, a synthetic test set): a top 10 can be at most 10% judged
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    run = Run.from_ranked_lists({"q1": ["a", *"cdefghijk"], "q2": [*"cdefghijk", "x"]})
    res = evaluate(qrels, run, ["mrr"])
    assert (res.judged.mean, res.judged.attainable) == (0.05, 0.1)
    assert not res.judged.mostly_unjudged and res.warnings() == []


def test_judged_at_k_measure_agrees_with_ir_measures_on_short_rankings() -> None:
    # a RAG retriever returning 3 documents, all judged: judged@10 is 1, not 0.3
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": 0}})
    run = Run.from_ranked_lists({"q1": ["a", "b", "c"]})
    assert evaluate(qrels, run, ["judged@10"])["judged@10"] == 1.0
    ref = ir_measures.calc_aggregate([ir_measures.Judged @ 10], qrels.to_dict(), run.to_dict())
    assert ref[ir_measures.Judged @ 10] == 1.0


def test_judged_at_10_matches_ir_measures_on_dl_hard() -> None:
    qrels = read_qrels(require(DLH / "dl_hard-passage.qrels"))
    qd = qrels.to_dict()
    assert min(g for q in qd.values() for g in q.values()) >= 0  # ir_measures counts a negative grade as judged
    for name in ("bm25", "bm25+bert(zs)"):
        run = read_run(DLH / "baselines" / "passage" / f"{name}.run")
        res = evaluate(qrels, run, ["judged@10"], missing="ignore")
        ref = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Judged @ 10], qd, run.to_dict())}
        ours = dict(zip(res.per_query.query_ids, res.judged.per_query))
        assert set(ours) == set(ref)
        for q, v in ref.items():
            assert ours[q] == pytest.approx(v) and res.per_query.row(q)["judged@10"] == pytest.approx(v)
        assert res.judged.mean == pytest.approx(np.mean(list(ref.values())))


# -- condensed lists --------------------------------------------------------------------------------
def _random_case(seed: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    docs = [f"d{i}" for i in range(40)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(12):
        judged = rng.choice(docs, size=int(rng.integers(1, 15)), replace=False)
        qrels[f"q{q}"] = {str(d): int(rng.choice([-1, 0, 0, 1, 2, 3])) for d in judged}
        qrels[f"q{q}"][str(judged[0])] = 1
        if q < 10:  # two qrels queries the run lacks
            ret = rng.choice(docs, size=int(rng.integers(1, 30)), replace=False)
            run[f"q{q}"] = {str(d): float(rng.integers(0, 8)) for d in ret}  # many ties
    return qrels, run


def _filtered(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The run without its unjudged documents (absent from the qrels, or a negative grade)."""
    return {q: {d: s for d, s in docs.items() if qrels.get(q, {}).get(d, -1) >= 0} for q, docs in run.items()}


METRICS = ["ndcg@10", "ndcg", "map", "mrr", "P@5", "recall@10", "Rprec", "bpref", "num_ret", "success@3", "infAP"]


@pytest.mark.parametrize("seed", range(6))
def test_condensed_evaluation_equals_evaluating_the_run_without_unjudged_documents(seed: int) -> None:
    qrels, run = _random_case(seed)
    for level in (1, 2):
        cond = evaluate(qrels, run, METRICS, unjudged="condense", relevance_level=level)
        plain = evaluate(qrels, _filtered(qrels, run), METRICS, relevance_level=level)
        assert cond.policies.unjudged == "condense" and plain.policies.unjudged == "keep"
        np.testing.assert_allclose(cond.per_query.values, plain.per_query.values, atol=1e-12)
    # with a depth cut, the ranking is cut first, then condensed (trec_eval -J's order)
    cut = {q: dict(sorted(d.items(), key=lambda x: (-x[1], tuple(-ord(c) for c in x[0])))[:5]) for q, d in run.items()}
    np.testing.assert_allclose(evaluate(qrels, run, METRICS, unjudged="condense", depth=5).per_query.values,
                               evaluate(qrels, _filtered(qrels, cut), METRICS).per_query.values, atol=1e-12)


def test_condensing_changes_ap_but_not_bpref() -> None:
    qrels, run = _random_case(11)
    keep = evaluate(qrels, run, ["map", "bpref"])
    cond = evaluate(qrels, run, ["map", "bpref"], unjudged="condense")
    assert keep["bpref"] == pytest.approx(cond["bpref"])  # bpref only looks at judged documents
    assert cond["map"] > keep["map"]


def test_condensed_evaluation_agrees_with_pytrec_eval_and_ir_measures_on_dl_hard() -> None:
    qrels = read_qrels(require(DLH / "dl_hard-passage.qrels"))
    qd = qrels.to_dict()
    run = read_run(DLH / "baselines" / "passage" / "bm25.run")
    res = evaluate(qrels, run, ["ndcg@10", "map", "P@10", "mrr@10"], unjudged="condense", missing="ignore")
    filtered = _filtered(qd, run.to_dict())
    ref = pytrec_eval.RelevanceEvaluator(qd, {"ndcg_cut.10", "map", "P.10"}).evaluate(filtered)
    for q, row in ref.items():
        ours = res.per_query.row(q)
        assert ours["ndcg@10"] == pytest.approx(row["ndcg_cut_10"], abs=1e-9)
        assert ours["map"] == pytest.approx(row["map"], abs=1e-9)
        assert ours["P@10"] == pytest.approx(row["P_10"], abs=1e-9)
    rr = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.RR @ 10], qd, filtered)}
    for q, v in rr.items():
        assert res.per_query.row(q)["mrr@10"] == pytest.approx(v, abs=1e-9)
    # judged@10 describes the run as given, not the condensed one
    assert res.judged.mean == evaluate(qrels, run, ["P@1"], missing="ignore").judged.mean < 1


def test_the_condense_policy_is_declared_validated_and_stated() -> None:
    qrels, run = _random_case(3)
    with pytest.raises(InvalidParameterError, match=r"'unjudged' parameter of evaluate must be one of 'keep', "
                                                    r"'condense'; got 'drop'"):
        evaluate(qrels, run, ["map"], unjudged="drop")  # type: ignore[arg-type]
    assert Policies(unjudged="condense").to_dict()["unjudged"] == "condense"
    res = evaluate(qrels, run, ["map"], unjudged="condense")
    assert res.to_dict()["policies"]["unjudged"] == "condense"
    [w] = [w for w in res.warnings() if w.kind == "condensed"]
    assert "Condensed lists" in w.text() and "unjudged=condense" in w.text() and "压缩列表" in w.text("zh")
    c = compare(qrels, {"a": run, "b": _filtered(qrels, run)}, ["map"], unjudged="condense")
    assert c.means["a"]["map"] == pytest.approx(c.means["b"]["map"])
    assert "condensed" in [w.kind for w in c.warnings]
    assert c.to_dict()["policies"]["unjudged"] == "condense"


# -- model labels -----------------------------------------------------------------------------------
def test_share_of_model_labels_in_the_top_k() -> None:
    labels = Labels.from_records([
        Label("q1", "a", 2), Label("q1", "b", 0, "model", "m", "umbrela-1/en"),
        Label("q1", "c", 1, "model", "m", "umbrela-1/en"), Label("q1", "f", None, "model", "m", "p", "no grade"),
        Label("q2", "e", 1),
    ])
    run = Run.from_ranked_lists({"q1": ["a", "b", "c", "f"], "q2": ["e", "x"]}, name="bm25")
    res = evaluate(labels, run, ["ndcg@10"])
    assert res["ndcg@10"] == evaluate(labels.qrels, run, ["ndcg@10"])["ndcg@10"]
    j = res.judged
    # q1: a human, b c model, f failed (unjudged): model 2/4; q2: 0/2
    assert (j.judged, j.model, j.mean, j.model_mean) == (4, 2, 0.625, 0.25)
    [w] = [w for w in res.warnings() if w.kind == "model_labels"]
    assert "bm25" in w.text() and "25.0%" in w.text() and "37.5%" in w.text() and w.text("zh")
    assert evaluate(labels.qrels, run, ["ndcg@10"]).judged.model is None  # without provenance: not known
    c = compare(labels, {"a": run, "b": run}, ["ndcg@10"])
    assert c.results["a"].judged.model == 2 and "model_labels" in [w.kind for w in c.warnings]


# -- inputs that gave a clean 0.0 ---------------------------------------------------------------------
def test_an_empty_run_is_an_error_with_a_hint() -> None:
    qrels = Qrels.from_dict({"q1": {"d1": 1}})
    with pytest.raises(EmptyInputError, match=r"the run .run. holds no ranking.*hint"):
        evaluate(qrels, {})
    with pytest.raises(EmptyInputError, match=r"the run .a. holds no ranking"):
        compare(qrels, {"a": {}, "b": {"q1": {"d1": 1.0}}})


def test_no_common_query_is_an_error_naming_both_sides_and_a_hint() -> None:
    qrels = Qrels.from_dict({"1": {"d1": 1}, "2": {"d2": 1}})
    with pytest.raises(NoOverlapError, match=r"no query in common.*'q1'.*'1'.*prefix 'q'"):
        evaluate(qrels, {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}})
    with pytest.raises(NoOverlapError, match=r"hint") as one:
        evaluate(qrels, {"x9": {"d1": 1.0}})
    assert "(run: 1 query such as 'x9'; qrels: 2 queries such as '1')" in str(one.value)  # one, not "1 queries"
    assert "结果中 1 个查询，例如 'x9'；qrels 中 2 个查询，例如 '1'" in one.value.text("zh")


@pytest.mark.parametrize(("run_docs", "qrels_docs", "cause", "words"), [
    (["D1#0", "D1#1", "D2#0"], ["D1", "D2"], "chunk", "chunk ids"),
    (["msmarco_passage_D1", "msmarco_passage_D2"], ["D1", "D2"], "prefix", "'msmarco_passage_'"),
    (["D1", "D2"], ["doc:D1", "doc:D2"], "prefix", "'doc:'"),
    (["D9", "D8"], ["D1", "D2"], "collection", "different collection"),
])
def test_nothing_judged_names_the_likely_cause_and_an_example(run_docs: list[str], qrels_docs: list[str],
                                                              cause: str, words: str) -> None:
    qrels = Qrels.from_dict({"q1": {qrels_docs[0]: 1}, "q2": {qrels_docs[1]: 2}})
    run = Run.from_ranked_lists({"q1": run_docs, "q2": run_docs[::-1]}, name="chunks")
    res = evaluate(qrels, run, ["ndcg@10"])
    assert res["ndcg@10"] == 0.0
    mm = res.judged.mismatch
    assert res.judged.nothing_judged and mm is not None and mm.cause == cause
    assert (mm.query_id, mm.run_doc, mm.qrels_doc) == ("q1", run_docs[0], qrels_docs[0])
    [w] = [w for w in res.warnings() if w.kind == "nothing_judged"]
    text = w.text()
    assert words in text and repr(run_docs[0]) in text and repr(qrels_docs[0]) in text and "chunks" in text
    assert repr(run_docs[0]) in w.text("zh")
    assert "mostly_unjudged" not in _kinds(res)  # one warning, the one that says why


def test_document_ids_judged_under_other_queries() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    res = evaluate(qrels, {"q1": {"b": 1.0}, "q2": {"a": 1.0}})
    assert res.judged.mismatch is not None and res.judged.mismatch.cause == "queries"
    assert "other queries" in res.warnings()[0].text()
