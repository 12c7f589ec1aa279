"""One grammar for every metric list (API, CLI, service), results keyed by Measure, declared policies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from prose import unwrap
from rankscope import Qrels, Run, evaluate
from rankscope.engine import Evaluator, Policies
from rankscope.errors import InvalidParameterError, MetricNotFoundError, RankscopeError, UnknownMetricError
from rankscope.measures import parse_metric, parse_metrics

QRELS = Qrels.from_dict({"q1": {"a": 1, "b": 2}, "q2": {"c": 1}})
RUN = Run.from_ranked_lists({"q1": ["x", "a", "b"], "q2": ["c", "y"]})


# -- several cutoffs and comma-separated lists -----------------------------------------------
def test_several_cutoffs_in_one_name() -> None:
    res = evaluate(QRELS, RUN, ["nDCG@1,3,5", "map"])
    assert res.labels == ("nDCG@1", "nDCG@3", "nDCG@5", "map")
    assert [str(m) for m in res.measures] == ["ndcg@1", "ndcg@3", "ndcg@5", "map"]
    assert res["ndcg@3"] == evaluate(QRELS, RUN, ["ndcg@3"])["ndcg@3"]
    assert [lb for lb, _ in parse_metrics("precision(rel=2)@1,2")] == ["precision(rel=2)@1", "precision(rel=2)@2"]
    assert [str(m) for _, m in parse_metrics("IPrec@0.1,0.5")] == ["iprec_at_recall(recall=0.1)",
                                                                    "iprec_at_recall(recall=0.5)"]


def test_comma_separated_lists() -> None:
    pairs = parse_metrics("ndcg@10,map, P.5,10,utility(a=2,b=-1),ndcg.1=3,2=9")
    assert [lb for lb, _ in pairs] == ["ndcg@10", "map", "precision@5", "precision@10", "utility(a=2,b=-1)",
                                       "ndcg.1=3,2=9"]
    assert evaluate(QRELS, RUN, "mrr,P@1").labels == ("mrr", "P@1")


def test_malformed_cutoff_names_the_syntax_that_works() -> None:
    with pytest.raises(InvalidParameterError, match=r"ndcg@1,3,5"):
        parse_metric("ndcg@1;3")


@pytest.mark.parametrize(("name", "hint"), [("recall5", "recall@5"), ("ndcg10", "ndcg@10"), ("ndcg_10", "ndcg@10"),
                                            ("P10", "P@10"), ("mrr10", "mrr@10")])
def test_cutoff_glued_to_the_name_gets_the_cutoff_syntax(name: str, hint: str) -> None:
    with pytest.raises(UnknownMetricError) as info:
        parse_metric(name)
    assert info.value.suggestions[0] == hint
    assert f"did you mean: {hint}" in str(info.value)


def test_trec_eval_grammar_in_the_library() -> None:
    assert [str(m) for _, m in parse_metrics("P.5,5,10")] == ["precision@5", "precision@10"]  # deduplicated
    assert parse_metric("set_F.0.5") == parse_metric("SetF(beta=0.5)") == parse_metric("set_f(beta=0.5)")
    assert parse_metric("utility.2,-1,0,0") == parse_metric("utility(a=2)")
    with pytest.raises(RankscopeError, match="takes no parameters"):
        parse_metric("map.5")
    with pytest.raises(RankscopeError, match="exactly 4 parameters"):
        parse_metric("utility.1,2")
    with pytest.raises(RankscopeError, match="gain map"):
        parse_metric("ndcg.1=x")
    with pytest.raises(UnknownMetricError):
        parse_metric("P_5.5")


# -- results keyed by Measure ---------------------------------------------------------------
def test_any_spelling_finds_a_value() -> None:
    res = evaluate(QRELS, RUN, ["nDCG@10", "P@1"])
    v = res["nDCG@10"]
    assert res["ndcg@10"] == res["ndcg_cut_10"] == res[parse_metric("ndcg@10")] == v
    np.testing.assert_array_equal(res.per_query["ndcg@10"], res.per_query["nDCG@10"])
    np.testing.assert_array_equal(res.per_query["ndcg_cut_10"], res.per_query["nDCG@10"])
    assert res["P_1"] == res["precision@1"] == res.mean()["P@1"]
    assert "ndcg_cut_10" in res and "map" not in res and "map" not in res.per_query
    assert list(res.mean()) == ["nDCG@10", "P@1"]  # means keep the caller's labels


@pytest.mark.parametrize("key", ["map", "bogus_metric", "ndcg@5"])
def test_a_missing_metric_names_those_present(key: str) -> None:
    res = evaluate(QRELS, RUN, ["nDCG@10", "P@1"])
    for lookup in (lambda: res[key], lambda: res.per_query[key]):
        with pytest.raises(MetricNotFoundError, match=r"it holds: nDCG@10, P@1") as info:
            lookup()
        assert isinstance(info.value, RankscopeError) and isinstance(info.value, KeyError)
    with pytest.raises(RankscopeError, match="no query 'q9'"):
        res.per_query.row("q9")


# -- policies ---------------------------------------------------------------------------------
def test_policies_are_one_validated_value_carried_by_results() -> None:
    res = evaluate(QRELS, RUN, ["map"], relevance_level=np.int64(2), depth=np.int32(2))
    assert res.policies == Policies(relevance_level=2, depth=2)
    assert type(res.policies.depth) is int and type(res.policies.relevance_level) is int
    assert res.to_dict()["policies"] == {"relevance_level": 2, "missing": "zero", "depth": 2,
                                         "score_precision": "float32", "duplicates": "error", "ties": "doc_id_desc",
                                         "unjudged": "keep"}
    assert dict(res.policies)["depth"] == 2 and res.policies["missing"] == "zero"
    from rankscope.measures import get_spec

    assert get_spec("ndcg").measure(np.int64(10)) == parse_metric("ndcg@10")  # numpy integer cutoffs too
    assert get_spec("utility").measure(None, n_docs=np.int32(5)).param("n_docs") == 5


@pytest.mark.parametrize(("kw", "message"), [
    ({"depth": 0}, r"'depth' parameter of evaluate must be an int in the range \[1, inf\) or None; got 0"),
    ({"depth": 2.5}, r"'depth' .* got 2.5"),
    ({"depth": True}, r"'depth' .* got True"),
    ({"relevance_level": "1"}, r"'relevance_level' parameter of evaluate must be an int"),
    ({"missing": "skip"}, r"'missing' parameter of evaluate must be one of 'zero', 'ignore'; got 'skip'"),
    ({"score_precision": "float16"}, r"must be one of 'float32', 'float64'; got 'float16'"),
    ({"duplicates": "first"}, r"must be one of 'error', 'keep_best'"),
])
def test_policy_errors_come_from_the_declaration(kw: dict, message: str) -> None:
    with pytest.raises(InvalidParameterError, match=message):
        evaluate(QRELS, RUN, ["map"], **kw)
    with pytest.raises(InvalidParameterError, match=message.replace("of evaluate", "of Evaluator")):
        Evaluator(QRELS, ["map"], **kw)


def test_duplicates_policy_applies_to_tables() -> None:
    table = {"query_id": ["q1", "q1", "q1"], "doc_id": ["a", "a", "b"], "score": [1.0, 3.0, 2.0]}
    import pandas as pd

    df = pd.DataFrame(table)
    with pytest.raises(RankscopeError, match="duplicate"):
        evaluate(QRELS, df, ["mrr"])
    assert evaluate(QRELS, df, ["mrr"], duplicates="keep_best")["mrr"] == pytest.approx(0.5)


def test_choices_are_declared_once() -> None:
    from rankscope import choices
    from rankscope.engine import DEFAULT_METRICS
    from rankscope.interpret.i18n import LANGS
    from rankscope.stats.corrections import CORRECTIONS
    from rankscope.stats.paired import TESTS

    assert (TESTS, CORRECTIONS, LANGS, DEFAULT_METRICS) == (choices.TESTS, choices.CORRECTIONS, choices.LANGS,
                                                            choices.DEFAULT_METRICS)
    from typing import get_args

    # the Literal spellings library signatures are typed with say what the enums say
    assert get_args(choices.MissingPolicy) == choices.MISSING_POLICIES
    assert get_args(choices.ScorePrecisionValue) == choices.SCORE_PRECISIONS
    assert get_args(choices.DuplicatePolicy) == choices.DUPLICATE_POLICIES
    assert get_args(choices.TieBreakValue) == choices.TIE_BREAKS
    assert get_args(choices.UnjudgedPolicy) == choices.UNJUDGED_POLICIES
    from rankscope.data.run import DuplicatePolicy

    assert get_args(DuplicatePolicy) == choices.DUPLICATE_POLICIES
    from rankscope.cli import compare_cmd, options

    assert (options.PairedTest, options.Missing, compare_cmd.Correction, options.Lang) == (
        choices.PairedTest, choices.Missing, choices.Correction, choices.Lang)
    fastapi = pytest.importorskip("fastapi")
    del fastapi
    from rankscope.service.api import analysis, schemas

    assert list(choices.DEFAULT_METRICS) == schemas.DEFAULT_METRICS
    from typing import get_args

    fields = analysis.ComparisonCreate.model_fields
    for name, enum in (("test", choices.PairedTest), ("correction", choices.Correction)):
        annotation = fields[name].annotation
        assert annotation is enum or enum in get_args(annotation)


# -- command line -------------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n")
    run = tmp_path / "a.run"  # q1: a and b tie as float32, a first as float64
    run.write_text("q1 Q0 a 1 0.99999952 t\nq1 Q0 b 2 0.99999951 t\nq2 Q0 c 1 1.0 t\n")
    run2 = tmp_path / "b.run"
    run2.write_text("q1 Q0 b 1 2.0 u\nq2 Q0 y 1 1.0 u\nq2 Q0 c 2 0.5 u\n")
    return qrels, run, run2


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from rankscope.cli.app import main

    with pytest.raises(SystemExit) as info:
        main(args)
    out = capsys.readouterr()
    return int(info.value.code or 0), out.out, out.err


def test_cli_metric_lists_and_notice(files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run, _ = files
    code, out, err = _cli(["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "ndcg@1,3,map",
                           "-f", "json"], capsys)
    assert code == 0, err
    data = json.loads(out)
    assert data["metrics"] == ["ndcg@1", "ndcg@3", "map"]
    assert data["queries"]["float32_reordered"] == 1 and data["policies"]["score_precision"] == "float32"
    assert err.count("note:") == 1 and "float32" in err and "1 of 2 queries" in unwrap(err)  # one note, on stderr
    code, out, err = _cli(["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "mrr"], capsys)
    assert code == 0 and "1 of 2 queries" in unwrap(out) and err == ""
    code, out, err = _cli(["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", "mrr", "-f", "json",
                           "--score-precision", "float64"], capsys)
    assert json.loads(out)["mean"]["mrr"] == 1.0 and err == ""


@pytest.mark.parametrize(("metric", "needle"), [("recall5", "did you mean: recall@5"),
                                                ("ndcg@1;3", "ndcg@1,3,5"), ("ndgc@10", "did you mean: ndcg@10")])
def test_cli_metric_errors_are_one_line(files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str],
                                        metric: str, needle: str) -> None:
    qrels, run, _ = files
    code, out, err = _cli(["evaluate", "--qrels", str(qrels), "--run", str(run), "-m", metric], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("rankscope: error: ") and needle in err


def test_cli_compare_notice_and_choices(files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run, run2 = files
    code, out, err = _cli(["compare", str(run), str(run2), "--qrels", str(qrels), "-m", "mrr,P@1", "-f", "json"],
                          capsys)
    assert code == 0, err
    assert json.loads(out)["metrics"] == ["mrr", "P@1"]
    notes = [ln for ln in unwrap(err).split("note: ")[1:] if "float32" in ln]
    assert len(notes) == 1 and "1 of 2 queries" in notes[0]  # run a only
    code, _, err = _cli(["compare", str(run), str(run2), "--qrels", str(qrels), "--test", "ttest"], capsys)
    assert code == 2 and "'--test'" in err and "'t'" in err and "'wilcoxon'" in err


def test_trec_eval_output_has_no_notice(files: tuple[Path, Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    from rankscope.trec_eval import main

    qrels, run, _ = files
    assert main(["-m", "recip_rank", str(qrels), str(run)]) == 0
    out = capsys.readouterr()
    assert out.out == "recip_rank            \tall\t0.7500\n" and out.err == ""
