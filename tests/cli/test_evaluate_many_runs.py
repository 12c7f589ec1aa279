"""``rankscope evaluate`` with several runs: one qrels index, runs in parallel, one table, per-query files."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from conftest import DATA as SHARED
from conftest import require
from rankscope import evaluate, read_run
from rankscope.cli.app import main

DATA = SHARED / "runs_dl_hard" / "dataset"


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(args)
    out = capsys.readouterr()
    return int(done.value.code or 0), out.out, out.err


def test_many_runs_one_table_and_per_query_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = require(DATA) / "dl_hard-passage.qrels"
    runs = sorted((DATA / "baselines" / "passage").glob("*.run"))[:3]
    code, out, err = cli(["evaluate", "--qrels", str(qrels), "--run", str(runs[0]), *map(str, runs[1:]),
                                   "-m", "ndcg@10,map", "-l", "2", "-f", "csv", "--per-query-dir", str(tmp_path),
                                   "--block-rows", "7000"], capsys)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["run"] for r in rows] == [p.stem for p in runs]  # named by file, as compare and check name them
    assert {r["tag"] for r in rows} <= {"T5-P", "BERT-P", "PYSERINI"}  # and the TREC tag beside the name
    for row, run in zip(rows, runs):
        expected = evaluate(qrels, read_run(run), ["ndcg@10", "map"], relevance_level=2)
        assert float(row["map"]) == pytest.approx(expected["map"], abs=5e-6)
        assert int(row["evaluated"]) == expected.queries.evaluated
        assert int(row["no_relevant"]) == expected.queries.no_relevant
        assert expected.judged is not None and float(row["judged@10"]) == pytest.approx(expected.judged.mean, abs=5e-6)
        lines = (tmp_path / f"{run.stem}.tsv").read_text().splitlines()
        assert lines[0] == "query_id\tndcg@10\tmap" and len(lines) == 1 + expected.queries.evaluated


def test_quoted_glob_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    pattern = str(DATA / "baselines" / "passage" / "bm25+rm3*.run")
    code, out, err = cli(["evaluate", "--qrels", str(DATA / "dl_hard-passage.qrels"), "--run", pattern,
                                   "-m", "P@5", "-f", "json"], capsys)
    assert code == 0, err
    assert out.count('"run"') == len(list((DATA / "baselines" / "passage").glob("bm25+rm3*.run"))) > 1


def test_unknown_engine_is_a_user_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "q").write_text("q1 0 d1 1\n")
    (tmp_path / "r").write_text("q1 Q0 d1 1 1 t\n")
    code, _out, err = cli(["evaluate", "--qrels", str(tmp_path / "q"), "--run", str(tmp_path / "r"),
                                   "--engine", "spark"], capsys)
    assert code == 2 and "--engine must be local or ray" in err


def test_many_runs_keep_the_unjudged_policy_and_say_what_is_unjudged(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{i}_{j} {int(j == 0)}\n" for i in range(20) for j in range(10)))
    for name, doc in (("old", "d"), ("new", "x")):  # new retrieves only unjudged documents at the top
        (tmp_path / f"{name}.trec").write_text("".join(
            f"q{i} Q0 {doc}{i}_{j} {j + 1} {20 - j} t\n" for i in range(20) for j in range(10))
            + "".join(f"q{i} Q0 d{i}_0 11 1 t\n" for i in range(20) if name == "new"))
    args = ["evaluate", "--qrels", str(qrels), "--run", str(tmp_path / "old.trec"), str(tmp_path / "new.trec"),
            "-m", "P@1", "-f", "csv"]
    code, out, err = cli(args, capsys)
    assert code == 0 and "only 0.0% of its top-10 documents are judged" in err
    keep = {r["run"]: r for r in csv.DictReader(io.StringIO(out))}
    code, out, err = cli([*args, "--unjudged", "condense"], capsys)
    condensed = {r["run"]: r for r in csv.DictReader(io.StringIO(out))}
    assert float(keep["new"]["P@1"]) == 0 and float(condensed["new"]["P@1"]) == 1  # not ignored
    assert "Condensed lists" in err


def test_runs_are_named_by_their_file_in_every_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Six DL-HARD runs share two TREC tags (PYSERINI, T5-P): the table named them by file, the warnings by tag,
    so "T5-P: only 49.6% ... judged" could be any of three rows.  Every line names a run as the table does (its
    file stem, as compare and check do), with its TREC tag where that differs."""
    qrels = require(DATA) / "dl_hard-passage.qrels"
    runs = sorted((DATA / "baselines" / "passage").glob("bm25*.run"))
    code, out, err = cli(["evaluate", "--qrels", str(qrels), "--run", *map(str, runs), "-m", "ndcg@10"], capsys)
    assert code == 0, err
    stems = [p.name.removesuffix(".run") for p in runs]
    rows = [line.strip("│ ").split(" │")[0].strip() for line in out.splitlines() if line.startswith("│")]
    assert [r for r in rows if not r.startswith("(")] == stems  # each name, its TREC tag on the line below
    assert [r for r in rows if r.startswith("(")] == [f"(TREC tag {t})" for t in (
        "BERT-P", "T5-P", "T5-P", "PYSERINI", "T5-P", "PYSERINI")]
    warned = [line for line in (out + err).splitlines() if line.startswith("warning: ")]
    assert warned and all(any(line.startswith(f"warning: {s}: ") for s in stems) for line in warned), warned
    code, out, err = cli(["evaluate", "-f", "json", "--qrels", str(qrels), "--run", *map(str, runs[:2]),
                          "-m", "ndcg@10"], capsys)
    import json

    assert [(r["run"], r["tag"]) for r in json.loads(out)] == [(stems[0], "BERT-P"), (stems[1], "T5-P")]


def test_one_run_is_named_by_its_file_with_its_tag(capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = require(DATA) / "dl_hard-passage.qrels", DATA / "baselines" / "passage" / "bm25.run"
    code, out, err = cli(["evaluate", str(qrels), str(run), "-m", "ndcg@10"], capsys)
    assert code == 0, err
    assert out.splitlines()[0].strip() == "run bm25 (TREC tag PYSERINI)"
    assert "warning: bm25: only 49.6% of its top-10" in out
    code, out, err = cli(["evaluate", str(qrels), str(run), "-m", "ndcg@10", "-f", "json"], capsys)
    import json

    data = json.loads(out)
    assert (data["run"], data["tag"]) == ("bm25", "PYSERINI")
