"""User mistakes on the command line: one line ``rankscope: error: ...`` on stderr, exit code 2, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from clirun import cli
from clirun import outcome as _outcome

QRELS = "q1 0 d1 1\nq2 0 d2 1\n"
RUN = "q1 Q0 d1 1 2.0 a\nq2 Q0 d3 1 1.0 a\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "qrels.txt", tmp_path / "a.run"
    qrels.write_text(QRELS, encoding="utf-8")
    run.write_text(RUN, encoding="utf-8")
    return qrels, run



def assert_one_error_line(err: str, *needles: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankscope: error: "), err
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--missing", "bogus"], "'--missing'"),
        (["--bogus"], "No such option: --bogus"),
        (["-M", "abc"], "'--depth'"),
    ],
)
def test_usage_mistakes_are_one_line(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], extra: list[str], needle: str
) -> None:
    qrels, run = files
    code, out, err = _outcome(cli(*["evaluate", "--qrels", str(qrels), "--run", str(run), *extra], width=80))
    assert code == 2 and out == ""
    assert_one_error_line(err, needle, "rankscope evaluate --help")


def test_missing_option_and_unknown_command_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _outcome(cli(*["evaluate", "--qrels", "x.qrels"], width=80))
    assert code == 2
    assert_one_error_line(err, "no run given: add --run FILE", "rankscope evaluate QRELS RUN")
    code, _, err = _outcome(cli(*["evaluate", "--run", "x.run"], width=80))  # --qrels or --span-qrels + --chunks
    assert code == 2
    assert_one_error_line(err, "give either --qrels or --span-qrels")
    code, _, err = _outcome(cli(*["evaluat"], width=80))
    assert code == 2
    assert_one_error_line(err, "No such command 'evaluat'")


def test_no_arguments_still_print_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _outcome(cli(width=80))
    assert code == 2 and "evaluate" in out and "compare" in out and err == ""


def test_success_exit_codes_pass_through(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    qrels, run = files
    assert _outcome(cli(*["evaluate", "--qrels", str(qrels), "--run", str(run), "-f", "json"], width=80))[0] == 0
    code, out, _ = _outcome(cli(*["check", "--qrels", str(qrels), "--run", str(run), "-r", "mrr>=0.9"], width=80))
    assert code == 1 and "FAIL" in out


def test_unwritable_output_is_one_line(files: tuple[Path, Path], tmp_path: Path) -> None:
    qrels, run = files
    summary = run / "summary.md"  # the "folder" is a file: NotADirectoryError, even for root
    res = cli(*["check", "--qrels", str(qrels), "--run", str(run), "-r", "mrr>=0.1",
                                   "--summary", str(summary)], width=80)
    assert res.returncode == 2
    assert_one_error_line(res.stderr, str(summary))


def test_output_in_a_missing_folder_names_the_folder(tmp_path: Path) -> None:
    source = tmp_path / "ts.json"
    source.write_text('[{"id": "q1", "query": "hello", "relevant": ["d1"]}]', encoding="utf-8")
    target = tmp_path / "nope" / "out.jsonl"
    res = cli(*["testset", "convert", str(source), str(target)], width=80)
    assert res.returncode == 2
    assert_one_error_line(res.stderr, "no such file", f"folder {target.parent} does not exist")


def test_demo_out_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    res = cli(*["demo", "--quick", "--out", str(blocker / "sub")], width=80)
    assert res.returncode == 2
    assert_one_error_line(res.stderr, str(blocker / "sub"))
