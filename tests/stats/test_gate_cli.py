"""The CI gate (rankscope check) and the compare / power commands, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from clirun import cli
from conftest import DATA, require
from prose import whole_lines
from rankscope import Qrels, Run
from rankscope.errors import InvalidParameterError
from rankscope.gate import check, parse_max_drop, parse_requirement
from rankscope.io import write_trec_qrels, write_trec_run

D = DATA / "runs_dl_hard" / "dataset"
P = D / "baselines" / "passage"


def _verdicts(out: str) -> list[str]:
    """The PASS / FAIL lines of ``rankscope check`` (after the run names and the warnings)."""
    return [ln for ln in out.splitlines() if ln.startswith(("PASS", "FAIL"))]


def _run(*args: str | Path, columns: int | None = None) -> tuple[int, str, str]:
    """Exit code, stdout and stderr; each printed line whole (wrapped lines joined) unless ``columns`` is given: then
    as a terminal that wide shows them."""
    if columns is not None:
        res = cli(*args, width=columns)
        return res.returncode, res.stdout, res.stderr
    res = cli(*args)
    return res.returncode, whole_lines(res.stdout), whole_lines(res.stderr)


@pytest.fixture(scope="module")
def files() -> dict[str, Path]:
    return {
        "qrels": require(D / "dl_hard-passage.qrels"),
        "bm25": require(P / "bm25.run"),
        "rm3": require(P / "bm25+rm3.run"),
        "t5": require(P / "bm25+t5(zs).run"),
    }


def test_check_exit_0_when_every_requirement_holds(files: dict[str, Path], tmp_path: Path) -> None:
    summary = tmp_path / "gate.md"
    code, out, _ = _run("check", "--qrels", files["qrels"], "--run", files["t5"], "-l", "2",
                        "--require", "ndcg@10>=0.4", "--require", "mrr>0.5",
                        "--baseline", files["bm25"], "--max-drop", "ndcg@10=0.02", "--summary", summary)
    assert code == 0, out
    # the run is named by its file stem; its TREC tag differs and is shown
    assert out.splitlines()[0] == "run bm25+t5(zs) (TREC tag T5-P) against baseline bm25 (TREC tag PYSERINI)"
    warnings = [ln for ln in out.splitlines() if ln.startswith("WARNING")]
    # one DL-HARD query has no document judged at level 2: said, with its count; and about half of
    # each run's top 10 is unjudged
    assert warnings[0] == ("WARNING  1 of the 50 queries has no document judged relevant at relevance level 2: "
                           "every run scores 0 on it with most metrics, and it is not a failure of a system.")
    assert [w.split(":")[0] for w in warnings[1:]] == ["WARNING  bm25+t5(zs)", "WARNING  bm25"]
    assert "judged@10 = 0.496" in warnings[2]
    assert out.splitlines()[-2] == ("Judged share of each run's top 10 (judged@10; unjudged documents count as "
                                    "non-relevant): bm25+t5(zs) 0.496, bm25 0.496.")
    lines = _verdicts(out)
    assert lines[0] == "PASS  ndcg@10 >= 0.4: 0.4084"
    assert lines[1].startswith("PASS  mrr > 0.5: 0.")
    assert lines[2].startswith("PASS  ndcg@10 drop <= 0.02 vs baseline: 0.4084 vs 0.3037")
    assert out.splitlines()[-1].startswith("gate passed")
    md = summary.read_text(encoding="utf-8")
    assert "## rankscope gate passed" in md and "| ✅ | `ndcg@10 >= 0.4` | 0.4084 |" in md


def test_check_exit_1_when_one_fails(files: dict[str, Path], tmp_path: Path) -> None:
    out_json = tmp_path / "gate.json"
    code, out, _ = _run("check", "--qrels", files["qrels"], "--run", files["t5"], "-l", "2",
                        "--require", "ndcg@10>=0.4", "--require", "mrr>=0.7", "--json", out_json)
    assert code == 1
    assert "FAIL  mrr >= 0.7: 0.5910" in out.splitlines()
    assert json.loads(out_json.read_text())["passed"] is False


def test_check_preset_production_good(files: dict[str, Path]) -> None:
    code, out, _ = _run("check", "--qrels", files["qrels"], "--run", files["t5"], "--preset", "production:good")
    assert code == 1
    assert _verdicts(out)[:3] == [
        # DL-HARD queries have many relevant passages: no ranking reaches recall@5 = 0.8
        "FAIL  recall@5 >= 0.8: 0.1173 [production:good] (unreachable: a perfect ranking scores 0.4500 on these qrels)",
        "FAIL  precision@5 >= 0.75: 0.4560 [production:good]",
        "FAIL  mrr >= 0.7: 0.6572 [production:good]",
    ]


def test_check_non_inferiority_fails_on_a_real_drop(files: dict[str, Path]) -> None:
    # bm25+rm3 loses 0.031 ndcg@10 against bm25: a 0.02 margin is not shown, a 0.2 margin is
    base = ["check", "--qrels", files["qrels"], "--run", files["rm3"], "-l", "2", "--baseline", files["bm25"]]
    code, out, _ = _run(*base, "--max-drop", "ndcg@10=0.02")
    assert code == 1 and _verdicts(out)[0].startswith("FAIL  ndcg@10 drop <= 0.02")
    code, out, _ = _run(*base, "--max-drop", "ndcg@10=0.2", "--test", "randomization")
    assert code == 0, out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--require", "ndcg@ten>=0.4"], "cutoff in 'ndcg@ten'"),
        (["--require", "ndcg@10=>0.4"], "cannot read the requirement"),
        (["--require", "ndcg@10>=high"], "must be a number"),
        (["--require", "nope@3>=0.1"], "unknown metric"),
        ([], "nothing to check"),
        (["--max-drop", "ndcg@10=0.02"], "--max-drop needs --baseline"),
        (["--preset", "production:perfect"], "unknown standard"),
        (["--require", "mrr>=0.1", "--summary", "/nonexistent/dir/x.md"], "does not exist"),
    ],
)
def test_check_exit_2_on_bad_input(files: dict[str, Path], args: list[str], message: str) -> None:
    code, out, err = _run("check", "--qrels", files["qrels"], "--run", files["bm25"], *args)
    assert code == 2
    assert err.startswith("rankscope: error: ") and message in err, err
    assert out == ""


def test_check_exit_2_on_missing_file(files: dict[str, Path], tmp_path: Path) -> None:
    code, _, err = _run("check", "--qrels", files["qrels"], "--run", tmp_path / "none.run", "--require", "mrr>=0")
    assert code == 2 and "no such file" in err


def test_gate_api_identical_run_is_undecided() -> None:
    # every per-query difference is 0: nothing varies, so no test can bound the mean (it used to pass any margin)
    qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 1} for i in range(20)})
    run = Run.from_ranked_lists({f"q{i}": ["a", "x", "b"] if i % 2 else ["x", "a"] for i in range(20)})
    for test in ("betting", "t", "randomization", "bootstrap"):
        for margin in ("0.01", "0"):
            g = check(qrels, run, baseline=run, max_drops=[f"ndcg@10={margin}"], test=test)
            assert not g.passed and g.exit_code == 3 and g.outcomes[0].undecided == "no_variance", (test, g.lines())


def test_parsers() -> None:
    r = parse_requirement("precision(rel=2)@5 < 50%")
    assert (str(r.measure), r.op, r.threshold) == ("precision(rel=2)@5", "<", 0.5)
    d = parse_max_drop("precision(rel=2)@5=0.1")
    assert str(d.measure) == "precision(rel=2)@5" and d.max_drop == 0.1
    with pytest.raises(InvalidParameterError, match="must be >= 0"):
        parse_max_drop("mrr=-0.1")
    with pytest.raises(InvalidParameterError, match="METRIC=DROP"):
        parse_max_drop("mrr")


def test_compare_command_json_and_report(files: dict[str, Path], tmp_path: Path) -> None:
    code, out, err = _run("compare", "--qrels", files["qrels"], files["bm25"], files["t5"], files["rm3"],
                          "-m", "ndcg@10", "--baseline", "bm25.run", "--test", "randomization",
                          "--permutations", "2000", "--correction", "bh", "--format", "json", "-l", "2")
    assert code == 0, err
    d = json.loads(out)
    # runs are named by their file stem; the TREC tag column (PYSERINI, PYSERINI, T5-P) is kept where it differs
    assert d["systems"] == ["bm25", "bm25+t5(zs)", "bm25+rm3"] and d["baseline"] == "bm25"
    assert d["tags"] == {"bm25": "PYSERINI", "bm25+t5(zs)": "T5-P", "bm25+rm3": "PYSERINI"}
    assert d["test"] == "randomization" and d["correction"] == "bh" and d["permutations"] == 2000
    assert [p["a"] for p in d["pairs"]] == [d["systems"][0]] * 2
    code, _, err = _run("compare", "--qrels", files["qrels"], files["bm25"], files["t5"], "-m", "mrr",
                        "--report", tmp_path / "out.md")
    assert code == 0, err
    assert (tmp_path / "out.md").stat().st_size > 0


def test_compare_command_bad_input(files: dict[str, Path]) -> None:
    code, _, err = _run("compare", "--qrels", files["qrels"], files["bm25"])
    assert code == 2 and "at least 2 run files" in err
    code, _, err = _run("compare", "--qrels", files["qrels"], files["bm25"], files["t5"], "--baseline", "zz")
    assert code == 2 and "--baseline 'zz'" in err
    # a TREC tag shared by two runs is an ambiguous name: both are listed
    code, _, err = _run("compare", "--qrels", files["qrels"], files["bm25"], files["rm3"], files["t5"],
                        "--baseline", "PYSERINI")
    assert code == 2 and "ambiguous" in err and "bm25.run" in err and "bm25+rm3.run" in err
    code, _, err = _run("compare", "--qrels", files["qrels"], files["bm25"], files["t5"], "--test", "tukey-hsd",
                        "--correction", "holm")
    assert code == 2 and "family-wise" in err


def test_compare_knows_a_run_by_its_stem_or_its_tag(files: dict[str, Path]) -> None:
    args = ["compare", "--qrels", files["qrels"], files["bm25"], files["t5"], files["rm3"], "-m", "mrr",
            "--format", "json", "-l", "2"]
    for name in ("bm25+t5(zs)", "T5-P", str(files["t5"])):
        code, out, err = _run(*args, "--baseline", name)
        assert code == 0, err
        assert json.loads(out)["baseline"] == "bm25+t5(zs)"


def test_compare_with_tukey_hsd_in_the_terminal_and_reports(files: dict[str, Path], tmp_path: Path) -> None:
    code, out, err = _run("compare", "--qrels", files["qrels"], files["bm25"], files["t5"], files["rm3"],
                          "-m", "ndcg@10", "-m", "mrr", "-l", "2", "--test", "tukey-hsd", "--permutations", "2000",
                          "--report", tmp_path / "r.md", "--report", tmp_path / "r.tex",
                          "--report", tmp_path / "r.json")
    assert code == 0, err
    assert "randomized Tukey HSD" in out and "groups" in out.lower()
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    groups = report["comparison"]["groups"]
    assert set(groups) == {"ndcg@10", "mrr"} and set(groups["mrr"]) == {"bm25", "bm25+t5(zs)", "bm25+rm3"}
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "randomized Tukey HSD" in md and groups["mrr"]["bm25+t5(zs)"] in md
    assert "Tukey HSD" in (tmp_path / "r.tex").read_text(encoding="utf-8")


def test_power_command(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    qrels = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(40)})
    runs = []
    for j in range(2):
        lists = {f"q{i}": [f"n{k}" for k in range(int(rng.integers(0, 4)))] + ["a"] for i in range(40)}
        run = Run.from_ranked_lists(lists, name=f"r{j}")
        path = tmp_path / f"r{j}.trec"
        write_trec_run(run, path)
        runs.append(path)
    write_trec_qrels(qrels, tmp_path / "qrels.txt")
    code, out, err = _run("power", "--qrels", tmp_path / "qrels.txt", *runs, "-m", "mrr", "--delta", "0.05")
    assert code == 0, err
    assert "40 queries" in out and "queries needed for power 0.8" in out
    code, out, _ = _run("power", "--sd", "1", "--delta", "0.5")
    assert code == 0 and out.startswith("queries needed: 34 ")
    code, _, err = _run("power", "--sd", "1")
    assert code == 2 and "--delta" in err
    # two runs: the effect to detect must be stated too (no "observed power")
    code, _, err = _run("power", "--qrels", tmp_path / "qrels.txt", *runs, "-m", "mrr")
    assert code == 2 and "--delta" in err and "observed power" in err
    code, out, err = _run("power", "--qrels", tmp_path / "qrels.txt", runs[0], runs[0], "-m", "mrr",
                          "--delta", "0.05")
    assert code == 0 and "standard deviation is 0" in err
    code, out, err = _run("power", "--sd", "0", "--delta", "0.05")
    assert code == 0 and "standard deviation is 0" in err


def test_the_example_of_docs_ci_gate_prints_what_the_doc_shows(files: dict[str, Path]) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ci-gate.md").read_text(encoding="utf-8")
    block = doc.split("$ rankscope check --qrels $D/dl_hard-passage.qrels", 1)[1].split("$ echo $?")[0]
    shown = [ln for ln in block.splitlines()[3:] if ln.strip()]
    code, out, _ = _run("check", "--qrels", files["qrels"], "--run", files["rm3"], "-l", "2",
                        "--require", "ndcg@10>=0.25", "--require", "mrr>=0.5", "--preset", "production:good",
                        "--baseline", files["bm25"], "--max-drop", "ndcg@10=0.05", "--max-drop", "recall@100=2%",
                        columns=100)  # the doc's width (conftest.py)
    assert code == 1
    assert out.splitlines() == shown
