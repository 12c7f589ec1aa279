"""The metric parser: trec_eval's bare families, ir_measures' parameter syntax, and no spelling that escapes as
anything but a rankscope error."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rankscope.errors import RankscopeError
from rankscope.measures import parse_metric
from rankscope.measures.parse import parse_metrics
from rankscope.trec_eval.compute import resolve
from rankscope.trec_eval.flags import parse_args

ir_measures = pytest.importorskip("ir_measures")

BARE = ["ndcg_cut", "P", "recall", "map_cut", "success", "iprec_at_recall", "relative_P", "Rprec_mult"]


@pytest.mark.parametrize("name", BARE)
def test_a_bare_family_means_what_trec_eval_computes(name: str) -> None:
    ours = parse_metrics(name)
    columns = resolve(parse_args(["-m", name, "q", "r"]))  # `trec_eval -m NAME`
    assert [label for label, _ in ours] == [c.label for c in columns]
    assert [m for _, m in ours] == [c.measure for c in columns]


@pytest.mark.parametrize("name", ["ndcg_cut", "P", "recall", "map_cut", "success", "iprec_at_recall"])
def test_a_bare_family_means_what_ir_measures_parses(name: str) -> None:
    theirs = [parse_metric(str(m)) for m in ir_measures.parse_trec_measure(name)]
    assert [m for _, m in parse_metrics(name)] == theirs


def test_bare_ndcg_cut_is_not_the_whole_ranking() -> None:
    assert parse_metric("ndcg") != parse_metrics("ndcg_cut")[0][1]
    assert len(parse_metrics("ndcg_cut")) == 9 and len(parse_metrics("map_cut,P")) == 18


@pytest.mark.parametrize(("text", "meaning"), [
    ('nDCG(dcg="exp-log2", cutoff=20)@10', "ndcg(dcg=exp-log2)@10"),  # ir_measures: the @ wins over cutoff=
    ('nDCG(dcg="exp-log2", cutoff=20)', "ndcg(dcg=exp-log2)@20"),
    ("nDCG(dcg='log2')@5", "ndcg@5"),
    ("nDCG(cutoff=10)", "ndcg@10"),
    ('P(rel="2", cutoff=5)', "precision(rel=2)@5"),
])
def test_ir_measures_parameters_keep_their_meaning(text: str, meaning: str) -> None:
    assert parse_metric(text) == parse_metric(meaning)
    irm = ir_measures.parse_measure(text)
    assert parse_metric(text) == parse_metric(str(irm))  # the measure ir_measures reads


@pytest.mark.parametrize("text", ['nDCG(dcg="exp-log10")@10', "nDCG(judged_only=maybe)@10", "ndcg(cutoff=0)",
                                  "ndcg(cutoff=x)", "IPrec(cutoff=5)", "ndcg@nan", "ndcg@inf", "ndcg@1e400"])
def test_what_cannot_be_read_is_a_rankscope_error(text: str) -> None:
    with pytest.raises(RankscopeError):
        parse_metrics(text)


_PIECES = ["ndcg", "nDCG", "P", "p", "map", "recall", "iprec_at_recall", "IPrec", "ndcg_cut", "success", "utility",
           "relstring", "set_F", "11pt_avg", "Rprec_mult", "span_recall", "judged", "mrr", "RR", "ndcg_exp", "G",
           "(", ")", "@", "=", ",", ".", "_", " ", "-", "+", '"', "'", "{", "}", ":", "1", "0", "5", "10", "0.5",
           "1e400", "nan", "inf", "cutoff", "dcg", "rel", "gains", "exp-log2", "levels", "recall", "mult", "#", "%",
           "\\", "\x00", "é", "测", "ã€"]


_NAMES = st.sampled_from(["ndcg", "nDCG", "P", "map", "recall", "IPrec", "ndcg_cut", "success", "utility", "set_F",
                          "11pt_avg", "Rprec_mult", "span_recall", "judged", "RR", "ndcg_exp", "G", "bpref"])
_VALUES = st.sampled_from(["", "1", "0", "-1", "5", "10", "0.5", "1e400", "nan", "inf", "x", '"exp-log2"', "'log2'",
                           "1=3", "True", "{0:0}", "2,5", " 3 "])
_PARAMS = st.lists(st.tuples(st.sampled_from(["cutoff", "dcg", "rel", "gains", "levels", "recall", "mult", "beta",
                                              "judged_only", "", "a"]), _VALUES).map("=".join), max_size=3)
_GRAMMAR = st.tuples(_NAMES, st.one_of(st.just(None), _PARAMS), st.one_of(st.just(None), _VALUES)).map(
    lambda t: t[0] + ("" if t[1] is None else "(" + ",".join(t[1]) + ")") + ("" if t[2] is None else "@" + t[2]))
_SPELLINGS = st.one_of(_GRAMMAR, st.lists(st.sampled_from(_PIECES), max_size=9).map("".join), st.text(max_size=20))


def _only_rankscope_errors(text: str) -> None:
    with contextlib.suppress(RankscopeError):  # anything else escapes and fails the test
        parse_metrics(text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SPELLINGS)
def test_no_spelling_raises_anything_but_a_rankscope_error(text: str) -> None:
    _only_rankscope_errors(text)


@pytest.mark.slow
@settings(max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_SPELLINGS)
def test_no_spelling_raises_anything_but_a_rankscope_error_long(text: str) -> None:
    _only_rankscope_errors(text)
