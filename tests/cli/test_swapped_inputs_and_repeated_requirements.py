"""Issue 17 §1: swapped qrels and run say what to type; ``check`` counts a repeated requirement once."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from clirun import cli
from clirun import outcome as _outcome
from rankscope import Qrels, Run, evaluate
from rankscope.errors import RankscopeError, WrongKindError
from rankscope.gate import check
from rankscope.io import read_qrels, read_run

QRELS = "q1 0 d1 1\nq2 0 d2 1\n"
RUN = "q1 Q0 d1 1 2.0 a\nq2 Q0 d3 1 1.0 a\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "a.run"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return qrels, run



def test_readers_say_the_file_is_of_the_other_kind(files: tuple[Path, Path], tmp_path: Path) -> None:
    qrels, run = files
    with pytest.raises(WrongKindError, match=r"looks like a run .* swapped") as info:
        read_qrels(run)
    assert info.value.looks_like == "run"
    with pytest.raises(WrongKindError, match=r"looks like qrels .* swapped"):
        read_run(qrels)
    tsv = tmp_path / "qrels.dev.tsv"  # MS MARCO qrels as a run
    tsv.write_text("1\t0\td1\t1\n")
    with pytest.raises(WrongKindError, match="looks like qrels"):
        read_run(tsv)
    with pytest.raises(RankscopeError, match=r"swapped\? The judgments come first: evaluate\(qrels, run\)"):
        evaluate(Run.from_dict({"q1": {"d1": 1.0}}), Qrels.from_dict({"q1": {"d1": 1}}))


@pytest.mark.parametrize("command", ["evaluate", "check", "compare"])
def test_cli_swapped_files_one_line_with_what_to_type(files: tuple[Path, Path], tmp_path: Path, command: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = files
    other = tmp_path / "b.run"
    other.write_text(RUN)
    args = {"evaluate": ["evaluate", "--qrels", str(run), "--run", str(qrels)],
            "check": ["check", "--qrels", str(run), "--run", str(qrels), "-r", "mrr>=0.1"],
            "compare": ["compare", str(qrels), str(other), "--qrels", str(run)]}[command]
    code, out, err = _outcome(cli(*args, width=80))
    assert code == 2 and out == "", err
    lines = err.splitlines()
    assert len(lines) == 1 and "the qrels and the run are swapped" in lines[0] and "type: rankscope" in lines[0]
    typed = shlex.split(lines[0].split("type: ", 1)[1])[1:]  # what the error says to type, without 'rankscope'
    code, out, err = _outcome(cli(*typed, width=80))  # as written: the requirements typed are kept
    assert code in (0, 1) and err == "", err


def test_check_counts_a_repeated_requirement_once(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    qrels, run = files
    gate = check(read_qrels(qrels), read_run(run), ["mrr>=0.5", "MRR >= 50%", "recall@5>=0.4"],
                 preset="production:minimum")
    labels = [(o.label.lower(), o.op, o.threshold) for o in gate.outcomes]
    assert len(labels) == len(set(labels)) == 4  # mrr>=0.5 once, recall@5>=0.4, and the preset's recall, P@5
    mrr = next(o for o in gate.outcomes if o.label.lower() == "mrr")
    assert mrr.source == "--require, production:minimum"
    baseline = tmp_path / "b.run"
    baseline.write_text(RUN)
    out_json = tmp_path / "gate.json"
    code, out, _ = _outcome(cli(
        *["check", "--qrels", str(qrels), "--run", str(run), "-r", "mrr>=0.5", "-r", "mrr >= 0.5",
                             "--baseline", str(baseline), "--max-drop", "mrr=0.1", "--max-drop", "MRR=0.1",
                             "--json", str(out_json)], width=80))
    assert code == 3  # the baseline is the run itself: no variation, the drop is undecided
    assert "gate UNDECIDED: 1 of 2 requirements could not be decided" in out
    assert len(json.loads(out_json.read_text())["outcomes"]) == 2
