"""Core engine against trec_eval 9.0.8's expected averages (out.test.a) and hand-computed cases."""

from __future__ import annotations

from pathlib import Path

import pytest

import rankscope as rs
from rankscope.errors import DuplicateEntryError, InvalidParameterError, NoOverlapError, UnknownMetricError


def _expected(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        name, qid, value = line.split()
        if qid == "all":
            out[name] = value
    return out


TREC_NAMES = [
    "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "recip_rank",
    "P_5", "P_10", "P_1000", "recall_5", "recall_1000", "ndcg", "ndcg_cut_10", "ndcg_cut_1000",
    "map_cut_10", "map_cut_100", "relative_P_20", "success_1", "success_10", "set_P", "set_recall",
    "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
]


def test_averages_match_trec_eval_908(trec908: Path) -> None:
    qrels = rs.read_qrels(trec908 / "qrels.test")
    run = rs.read_run(trec908 / "results.test")
    expected = _expected(trec908 / "out.test.a")
    got = rs.evaluate(qrels, run, TREC_NAMES, missing="ignore").mean()
    for name in TREC_NAMES:
        value = got[name]
        text = f"{value:.4f}" if not name.startswith("num_") else str(int(value))
        assert text == expected[name], name


def test_three_spellings_are_one_measure() -> None:
    assert rs.parse_metric("ndcg@10") == rs.parse_metric("nDCG@10") == rs.parse_metric("ndcg_cut_10")
    assert rs.parse_metric("P(rel=2)@5") == rs.parse_metric("precision(rel=2)@5")
    assert rs.parse_metric("hit_rate@5") == rs.parse_metric("Success@5") == rs.parse_metric("success_5")
    assert rs.parse_metric("RR") == rs.parse_metric("mrr") == rs.parse_metric("recip_rank")
    assert rs.parse_metric("AP") == rs.parse_metric("map")
    assert rs.parse_metric("map@10") == rs.parse_metric("map_cut_10")
    assert rs.parse_metric("R@100") == rs.parse_metric("recall_100")
    assert rs.parse_metric("Rprec") == rs.parse_metric("r_precision")
    assert [str(m) for _, m in rs.parse_metrics("P.5,10")] == ["precision@5", "precision@10"]
    m = rs.parse_metric("P(rel=2)@5")
    assert rs.parse_metric(str(m)) == m and hash(m) == hash(rs.parse_metric("P(rel=2)@5"))


def test_unknown_metric_lists_close_matches() -> None:
    with pytest.raises(UnknownMetricError, match="ndcg"):
        rs.parse_metric("ndgc@10")
    with pytest.raises(InvalidParameterError, match="positive integer"):
        rs.parse_metric("ndcg@0")
    with pytest.raises(InvalidParameterError, match="positive integer"):
        rs.parse_metric("P@-3")


def test_policies_and_counts() -> None:
    qrels = rs.Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    run = rs.Run.from_ranked_lists({"q1": ["a"], "q9": ["z"]})
    zero = rs.evaluate(qrels, run, ["P@1"])
    assert zero.mean() == {"P@1": 0.5}
    assert (zero.queries.evaluated, zero.queries.missing_from_run, zero.queries.not_in_qrels) == (2, 1, 1)
    assert rs.evaluate(qrels, run, ["P@1"], missing="ignore").mean() == {"P@1": 1.0}
    with pytest.raises(NoOverlapError):
        rs.evaluate(qrels, rs.Run.from_ranked_lists({"x": ["a"]}), ["P@1"])


def test_ties_break_by_doc_id_descending() -> None:
    qrels = rs.Qrels.from_dict({"q": {"a": 1}})
    run = rs.Run.from_dict({"q": {"a": 1.0, "b": 1.0}})
    # equal scores: "b" > "a" so b ranks first
    assert rs.evaluate(qrels, run, ["mrr"]).mean() == {"mrr": 0.5}


def test_duplicates_error_or_keep_best() -> None:
    with pytest.raises(DuplicateEntryError, match="'d1'"):
        rs.Run.from_arrays(["q", "q"], ["d1", "d1"], [1.0, 2.0])
    run = rs.Run.from_arrays(["q", "q"], ["d1", "d1"], [1.0, 2.0], duplicates="keep_best")
    assert run.to_dict() == {"q": {"d1": 2.0}}


def test_parse_cache_follows_registrations() -> None:
    from rankscope.measures import register_metric, unregister_metric

    with pytest.raises(UnknownMetricError):
        rs.parse_metric("tmp_custom_metric")
    register_metric("tmp_custom_metric", lambda p, m: p.num_ret * 0.0, cutoff="none")
    try:
        assert str(rs.parse_metric("tmp_custom_metric")) == "tmp_custom_metric"
    finally:
        unregister_metric("tmp_custom_metric")
    with pytest.raises(UnknownMetricError):
        rs.parse_metric("tmp_custom_metric")


def test_pandas_columns_arrow_backed_or_object() -> None:
    pd = pytest.importorskip("pandas")
    import pyarrow as pa

    rows = {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]}
    plain = pd.DataFrame(rows)
    arrow = plain.astype({"query_id": pd.ArrowDtype(pa.string()), "doc_id": "string[pyarrow]"})
    expected = {"q1": {"a": 1.0, "b": 2.0}, "q2": {"a": 3.0}}
    assert rs.Run.from_pandas(plain).to_dict() == expected
    run = rs.Run.from_pandas(arrow)
    assert run.to_dict() == expected
    qrels = rs.Qrels.from_pandas(pd.DataFrame({"query_id": pd.Series(["q1"], dtype="string[pyarrow]"),
                                               "doc_id": ["b"], "relevance": [1]}))
    assert rs.evaluate(qrels, run, ["P@1"]).mean() == {"P@1": 1.0}
