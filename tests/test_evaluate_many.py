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
    assert [r["run"] for r in rows] == [p.name for p in runs]  # one TREC tag for all: the file names
    for row, run in zip(rows, runs):
        expected = evaluate(qrels, read_run(run), ["ndcg@10", "map"], relevance_level=2)
        assert float(row["map"]) == pytest.approx(expected["map"], abs=5e-6)
        assert int(row["evaluated"]) == expected.queries.evaluated
        assert int(row["no_relevant"]) == expected.queries.no_relevant
        assert expected.judged is not None and float(row["judged@10"]) == pytest.approx(expected.judged.mean, abs=5e-6)
        lines = (tmp_path / f"{run.name}.tsv").read_text().splitlines()
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
    assert float(keep["new.trec"]["P@1"]) == 0 and float(condensed["new.trec"]["P@1"]) == 1  # not ignored
    assert "Condensed lists" in err
