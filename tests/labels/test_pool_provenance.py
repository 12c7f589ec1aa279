"""Pooling, judged@k (against ir_measures' Judged@k), provenance files and combining labels."""

from __future__ import annotations

import json
from pathlib import Path

import ir_measures
import pytest

from conftest import DATA, require
from rankscope.data import Qrels, Run
from rankscope.errors import ParseError, RankscopeError
from rankscope.io import read_qrels, read_run
from rankscope.labels.pool import build_pool, judged_at_k, read_pool, top_k
from rankscope.labels.provenance import Label, Labels, combine, read_labels, sidecar_path

DLH = DATA / "runs_dl_hard" / "dataset"


def test_top_k_follows_trec_eval_order() -> None:
    run = Run.from_dict({"q1": {"a": 0.5, "b": 0.5, "c": 0.9, "d": 0.1}, "q0": {"x": 1.0}})
    assert top_k(run, 3).to_pydict() == {"query_id": ["q0", "q1", "q1", "q1"], "doc_id": ["x", "c", "b", "a"],
                                         "rank": [1, 1, 2, 3]}


def test_pool_records_runs_and_ranks() -> None:
    a = Run.from_ranked_lists({"q1": ["d1", "d2", "d3", "d9"], "q2": ["e1"]}, name="a")
    b = Run.from_ranked_lists({"q1": ["d3", "d1", "d4"], "q2": ["e2", "e1"]}, name="b")
    qrels = Qrels.from_dict({"q1": {"d1": 0}, "q2": {"e9": 1, "e2": -1}})  # -1: pooled, not judged
    pool = build_pool({"a": a, "b": b}, qrels, depth=3)
    assert list(pool.records()) == [
        {"query_id": "q1", "doc_id": "d3", "best_rank": 1, "runs": {"b": 1, "a": 3}},
        {"query_id": "q1", "doc_id": "d2", "best_rank": 2, "runs": {"a": 2}},
        {"query_id": "q1", "doc_id": "d4", "best_rank": 3, "runs": {"b": 3}},
        {"query_id": "q2", "doc_id": "e1", "best_rank": 1, "runs": {"a": 1, "b": 2}},
        {"query_id": "q2", "doc_id": "e2", "best_rank": 1, "runs": {"b": 1}},
    ]
    sa, sb = pool.summaries
    assert (sa.retrieved, sa.judged, sa.per_query) == (4, 1, (1 / 3, 0.0))
    assert sa.judged_at_k == pytest.approx(1 / 6) and sa.mostly_unjudged
    assert sb.to_dict()["judged@3"] == pytest.approx((1 / 3 + 0) / 2)
    assert pool.queries == 2 and len(pool) == 5


def test_pool_without_qrels_is_every_top_document() -> None:
    a = Run.from_ranked_lists({"q1": ["d1", "d2"]}, name="a")
    pool = build_pool([a], None, depth=5)
    assert pool.pairs() == [("q1", "d1"), ("q1", "d2")] and pool.summaries[0].judged_at_k == 0.0


def test_judged_at_k_matches_ir_measures_on_dl_hard() -> None:
    qrels = read_qrels(require(DLH / "dl_hard-passage.qrels"))
    qd = qrels.to_dict()
    for name in ("bm25", "bm25+rm3", "bm25+bert(zs)"):
        run = read_run(DLH / "baselines" / "passage" / f"{name}.run")
        for k in (1, 10, 100):
            ours = judged_at_k(run, qrels, k)
            ref = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Judged @ k], qd, run.to_dict())}
            assert set(ref) == set(ours.query_ids)  # every query of these runs has judgments
            for q, v in zip(ours.query_ids, ours.per_query):
                assert v == pytest.approx(ref[q]), (name, k, q)


def test_pool_file_round_trip_and_errors(tmp_path: Path) -> None:
    run = Run.from_ranked_lists({"q1": ["d1", "d2"], "q2": ["d1"]}, name="bm25")
    pool = build_pool([run], None, depth=1)
    path = tmp_path / "pool.jsonl"
    pool.write_jsonl(path)
    assert read_pool(path) == [("q1", "d1"), ("q2", "d1")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query_id": "q1", "doc_id": "d1"}\n{"query_id": "q1"}\n')
    with pytest.raises(ParseError, match=r"bad.jsonl:2: doc_id must be"):
        read_pool(bad)
    bad.write_text('{"query_id": "q1", "doc_id": "d1"}\nnot json\n')
    with pytest.raises(ParseError, match=r"bad.jsonl:2: invalid JSON"):
        read_pool(bad)


MODEL = "qwen2.5-7b-instruct"
PROMPT = "graded-1/en"


def model_labels() -> Labels:
    return Labels.from_records([
        Label("q1", "d1", 0, "model", MODEL, PROMPT), Label("q1", "d2", 2, "model", MODEL, PROMPT),
        Label("q1", "d3", None, "model", MODEL, PROMPT, "unreadable reply: no grade found in the reply"),
        Label("q2", "d5", 3, "model", MODEL, PROMPT),
    ])


def test_qrels_stay_trec_and_provenance_goes_to_the_sidecar(tmp_path: Path) -> None:
    out = tmp_path / "judged.qrels"
    side = model_labels().write(out)
    assert side == sidecar_path(out)
    assert out.read_text() == "q1 0 d1 0\nq1 0 d2 2\nq2 0 d5 3\n"
    assert read_qrels(out).to_dict() == {"q1": {"d1": 0, "d2": 2}, "q2": {"d5": 3}}
    recs = [json.loads(x) for x in side.read_text().splitlines()]
    assert recs[2] == {"query_id": "q1", "doc_id": "d3", "grade": None, "source": "model", "model": MODEL,
                       "prompt": PROMPT, "error": "unreadable reply: no grade found in the reply"}
    back = read_labels(out)
    assert back.counts() == {"human": 0, "model": 3, "failed": 1}
    assert back.models() == [f"{MODEL} / {PROMPT}"]
    # a qrels file without a sidecar is human labels
    plain = tmp_path / "human.qrels"
    plain.write_text("q1 0 d1 1\n")
    assert read_labels(plain).counts() == {"human": 1, "model": 0, "failed": 0}


def test_a_sidecar_out_of_step_with_its_qrels_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "judged.qrels"
    model_labels().write(out)
    out.write_text("q1 0 d1 0\nq1 0 d2 1\nq2 0 d5 3\n")
    with pytest.raises(ParseError, match=r"'d2'\) has grade 1 in the qrels and 2 in the provenance file"):
        read_labels(out)
    out.write_text("q1 0 d1 0\nq1 0 d2 2\nq2 0 d5 3\nq3 0 d7 1\n")
    with pytest.raises(ParseError, match="is in the qrels but not in the provenance file"):
        read_labels(out)


def test_combine_human_wins() -> None:
    human = Qrels.from_dict({"q1": {"d1": 1, "d3": 2, "d9": 0}})
    both = combine(human, model_labels())
    assert (both.overridden, both.disagreements) == (1, 1)  # d1: human 1 vs model 0
    assert both.labels.qrels.to_dict() == {"q1": {"d1": 1, "d3": 2, "d9": 0, "d2": 2}, "q2": {"d5": 3}}
    src = {(r["query_id"], r["doc_id"]): r["source"] for r in both.labels.table.to_pylist()}
    assert src[("q1", "d1")] == "human" and src[("q1", "d2")] == "model"
    assert both.labels.failures() == []  # the failed d3 has a human label
    assert both.labels.counts() == {"human": 3, "model": 2, "failed": 0}


def test_model_share_in_top_k() -> None:
    human = Qrels.from_dict({"q1": {"d1": 1}})
    labels = combine(human, model_labels()).labels
    run = Run.from_ranked_lists({"q1": ["d1", "d2", "d3", "d4"], "q2": ["d5", "d6"]}, name="r")
    s = judged_at_k(run, labels, k=4)
    assert s.per_query == (0.5, 0.5)  # q1: d1 (human), d2 (model); d3 failed, d4 unjudged
    assert (s.judged, s.model, s.model_at_k) == (3, 2, pytest.approx((0.25 + 0.5) / 2))


def test_labels_refuse_duplicates_and_bad_sources() -> None:
    with pytest.raises(RankscopeError, match="labelled twice"):
        Labels.from_records([Label("q", "d", 1), Label("q", "d", 2)])
    with pytest.raises(RankscopeError, match="source must be"):
        Labels.from_records([Label("q", "d", 1, "robot")])
