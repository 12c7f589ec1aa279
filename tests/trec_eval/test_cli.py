"""trec_eval command-line parsing, measure selection and error handling."""

from __future__ import annotations

from pathlib import Path

import pytest

from rankscope.trec_eval import main, run_trec_eval
from rankscope.trec_eval.compute import resolve
from rankscope.trec_eval.flags import TrecUsageError, parse_args


def labels(*argv: str) -> list[str]:
    return [c.label for c in resolve(parse_args([*argv, "q", "r"]))]


def test_attached_separate_and_long_values() -> None:
    a = parse_args(["-M100", "-l2", "-N", "5", "-mP.5", "--measure=map", "-Jn", "q", "r"])
    assert (a.depth, a.relevance_level, a.num_docs, a.measures) == (100, 2, 5, ["P.5", "map"])
    assert a.judged_only and not a.summary
    b = parse_args(["--Max_ret", "7", "q", "--", "-r"])  # unique prefix; '--' ends options
    assert (b.depth, b.qrels, b.run) == (7, "q", "-r")
    assert parse_args(["-o", "q", "r"]).qrels == "q"  # -o: accepted, no effect


def test_measure_order_params_and_nicknames() -> None:
    assert labels() == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                        "recip_rank", *[f"iprec_at_recall_{x / 10:.2f}" for x in range(11)],
                        *[f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]]
    # catalogue order, whatever the command-line order; cutoffs sorted, truncated like atol
    assert labels("-m", "ndcg_cut.20,3.9", "-m", "P.10,5") == ["P_5", "P_10", "ndcg_cut_3", "ndcg_cut_20"]
    assert labels("-m", "P.5", "-m", "P.10") == ["P_5"]  # trec_eval keeps the first parameter list
    assert labels("-m", "set") == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P",
                                   "set_relative_P", "set_recall", "set_map", "set_F"]
    assert labels("-m", "utility.2,-1,0,0", "-m", "Rprec_mult.1") == ["Rprec_mult_1.00", "utility_2,-1,0,0"]
    assert len(labels("-m", "all_trec")) == 95  # the 94 summary lines of out.test.a + relstring


@pytest.mark.parametrize(("argv", "message"), [
    (["-m", "bogus"], "illegal measure 'bogus'"),
    (["-m", "P.0"], "cutoffs must be positive"),
    (["-m", "P.5,5"], "duplicate cutoffs"),
    (["-m", "P."], "improper measure"),
    (["-m", "utility.1,2"], "exactly 4 parameters"),
    (["-m", "ndcg_cut_10"], r"illegal measure 'ndcg_cut_10'; did you mean ndcg_cut\.10\?"),
    (["-m", "P_5"], r"did you mean P\.5\?"),
    (["-m", "ndcg@10"], r"did you mean ndcg_cut\.10\?"),
    (["-m", "mrr"], "did you mean recip_rank"),
    (["-m", "iprec_at_recall_0.10"], r"did you mean iprec_at_recall\.0\.1\?"),
    (["-m", "ndgc"], "did you mean ndcg"),
    (["-m", "p.5"], "illegal measure 'p.5'"),  # trec_eval's names are case-sensitive
    (["-m", "prefs_simp"], "not supported"),
    (["-R", "prefs"], "only the 'qrels' relevance format"),
    (["-Z", "zfile"], "not supported"),
    (["-M", "x"], "-M needs an integer"),
    (["-M0"], "positive"),
    (["-x"], "invalid option"),
])
def test_bad_command_lines(argv: list[str], message: str) -> None:
    with pytest.raises(TrecUsageError, match=message):
        resolve(parse_args([*argv, "q", "r"]))
    with pytest.raises(TrecUsageError, match="requires an argument"):
        parse_args(["q", "r", "-m"])


def test_main_prints_one_line_and_returns_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-m", "bogus", "q", "r"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rankscope: error: ") and err.count("\n") == 1
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 b\n")
    assert main([str(qrels), str(tmp_path / "missing.run")]) == 2
    assert "qrels:2" in capsys.readouterr().err  # malformed qrels line is named
    assert main(["-v"]) == 0 and "9.0.8" in capsys.readouterr().out


def _files(tmp_path: Path, qrels: str, run: str) -> list[str]:
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    return [str(tmp_path / "qrels"), str(tmp_path / "run")]


def test_judged_only_drops_unjudged_after_the_depth_cut(tmp_path: Path) -> None:
    files = _files(tmp_path, "1 0 a 1\n1 0 n 0\n", "1 Q0 x 1 3 t\n1 Q0 a 2 2 t\n1 Q0 n 3 1 t\n")
    assert run_trec_eval(["-m", "P.1", *files]) == "P_1                   \tall\t0.0000\n"
    assert run_trec_eval(["-J", "-m", "P.1", *files]) == "P_1                   \tall\t1.0000\n"
    # -M1 keeps only x, which -J then removes: an empty ranking, still evaluated
    out = run_trec_eval(["-J", "-M1", "-m", "num_ret", "-m", "num_q", *files])
    assert out == "num_q                 \tall\t1\nnum_ret               \tall\t0\n"


def test_complete_flag_averages_over_qrels_queries(tmp_path: Path) -> None:
    files = _files(tmp_path, "1 0 a 1\n2 0 b 2\n2 0 c 1\n", "1 Q0 a 1 1 t\n")
    assert run_trec_eval(["-m", "map", "-m", "num_q", *files]).splitlines()[1].endswith("\t1.0000")
    out = run_trec_eval(["-c", "-l2", "-q", "-m", "map", "-m", "num_q", "-m", "num_rel", "-m", "gm_map", *files])
    assert out.splitlines() == [
        "num_rel               \t1\t0",  # per query with -l2
        "map                   \t1\t0.0000",
        "num_q                 \tall\t2",
        "num_rel               \tall\t3",  # trec_eval 9 -c: every positive qrels grade, ignoring -l
        "map                   \tall\t0.0000",
        "gm_map                \tall\t0.0000",
    ]
