"""TREC reader: the fast (Arrow) path and the exact line parser agree on values and on every error."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from conftest import TREC_TESTS, require
from rankscope.errors import DuplicateEntryError, DuplicateLineError, EmptyInputError, ParseError
from rankscope.io import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run
from rankscope.io._source import read_bytes
from rankscope.io._trec_fast import fast_columns, normalise_whitespace


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def _both(reader, path: Path, **kw):  # type: ignore[no-untyped-def]
    """Read with both paths; return (fast result or error text, slow result or error text)."""
    out = []
    for fast in (True, False):
        try:
            obj = reader(path, fast=fast, **kw)
            out.append((type(obj).__name__, obj.to_dict(), getattr(obj, "name", None)))
        except Exception as exc:
            out.append((type(exc).__name__, str(exc)))
    return out


# -- real trec_eval test files ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["results.test", "results.trunc", "results.comment.test"])
def test_real_runs_fast_equals_slow(name: str) -> None:
    path = require(TREC_TESTS / name)
    fast, slow = _both(read_trec_run, path)
    assert fast == slow
    run = read_trec_run(path)
    assert run.name == ("comment.test" if name == "results.comment.test" else "STANDARD")


@pytest.mark.parametrize(
    "name", ["qrels.test", "qrels.test.with-comments", "qrels.rel_level", "qrels.comment.test", "qrels.123"]
)
def test_real_qrels_fast_equals_slow(name: str) -> None:
    path = require(TREC_TESTS / name)
    fast, slow = _both(read_trec_qrels, path)
    assert fast == slow


def test_results_test_counts_and_fast_path_taken() -> None:
    path = require(TREC_TESTS / "results.test")  # tabs + padded spaces: normalised, then Arrow
    assert fast_columns(read_bytes(path), "run", str(path)) is not None
    run = read_trec_run(path)
    assert len(run) == 1500 and run.queries == ["301", "302", "303"]
    # the rank column is ignored: scores come from column 5
    first = run.to_dict()["301"]["FR940202-2-00150"]
    assert first == pytest.approx(2.129133)


def test_comments_and_hash_inside_doc_ids() -> None:
    q = read_trec_qrels(require(TREC_TESTS / "qrels.test.with-comments")).to_dict()
    plain = read_trec_qrels(require(TREC_TESTS / "qrels.test")).to_dict()
    # the file differs from qrels.test by its comment lines and one doc id with a '#' inside
    assert q["301"].pop("CR#93E-1860") == plain["301"].pop("CR93E-1860") == 0
    assert q == plain
    docs = read_trec_qrels(require(TREC_TESTS / "qrels.comment.test")).doc_column().to_pylist()
    assert any("#" in d for d in docs)


# -- whitespace variants ---------------------------------------------------------------------------
RUN = "q1 Q0 d1 1 0.5 tagA\nq1 Q0 d2 2 0.25 tagA\nq2 Q0 d1 1 3 tagA\n"


@pytest.mark.parametrize(
    "text",
    [
        RUN,
        RUN.replace(" ", "\t"),
        RUN.replace(" ", " \t  "),
        RUN.replace("\n", "\r\n"),
        "\n\n" + RUN.replace("\n", "\n   \n"),
        "# header comment\n" + RUN + "  # indented comment\n",
        RUN.replace("tagA\n", "tagA extra columns here\n"),
        RUN.rstrip("\n"),
        "\ufeff" + RUN,
        "  " + RUN.replace("\n", "  \n"),
    ],
)
def test_whitespace_variants_same_run(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path, "run.txt", text)
    fast, slow = _both(read_trec_run, path)
    assert fast == slow
    assert fast[1] == {"q1": {"d1": 0.5, "d2": 0.25}, "q2": {"d1": 3.0}} and fast[2] == "tagA"


FAST = {  # which inputs the Arrow path handles itself (the others go to the line parser)
    "clean": (RUN, True),
    "tabs and padding": (RUN.replace(" ", "\t  "), True),
    "double spaces": (RUN.replace(" ", "  "), True),
    "crlf": (RUN.replace("\n", "\r\n"), True),
    "blank lines": ("\n" + RUN.replace("\n", "\n\n"), True),
    "seven columns": (RUN.replace("tagA\n", "tagA x\n"), True),
    "comment": ("# c\n" + RUN, False),
    "ragged columns": (RUN.replace("tagA\n", "tagA x\n", 1), False),
    "plus sign": (RUN.replace("0.5", "+0.5"), True),
    "nan": (RUN.replace("0.5", "nan"), None),
}


@pytest.mark.parametrize("case", list(FAST))
def test_fast_path_taken(case: str) -> None:
    text, expected = FAST[case]
    if expected is None:
        with pytest.raises(ParseError, match=":1: score must be a finite number"):
            fast_columns(text.encode(), "run", "x")
        return
    cols = fast_columns(text.encode(), "run", "x")
    assert (cols is not None) == expected
    if cols is not None:
        assert cols.tag == "tagA"
        assert list(cols.lines()) == ([2, 4, 6] if case == "blank lines" else [1, 2, 3])


def test_gzip(tmp_path: Path) -> None:
    path = _write(tmp_path, "run.trec.gz", gzip.compress(RUN.encode()))
    assert read_trec_run(path).to_dict() == {"q1": {"d1": 0.5, "d2": 0.25}, "q2": {"d1": 3.0}}
    # gzip recognised by its magic bytes even without the suffix
    path2 = _write(tmp_path, "run_gz_without_suffix", gzip.compress(RUN.encode()))
    assert len(read_trec_run(path2)) == 3


def test_normalise_whitespace_keeps_newlines() -> None:
    data = b" a\t b \r\n\n c  d\n"
    out = normalise_whitespace(data)
    assert out == b"a b\n\nc d\n" and out.count(b"\n") == data.count(b"\n")


def test_random_whitespace_fast_equals_slow(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    seps = [" ", "\t", "  ", " \t", "\t\t "]
    for trial in range(20):
        lines = []
        for i in range(40):
            toks = [f"q{i % 5}", "Q0", f"d{i}", str(i), f"{rng.normal():.5g}", "tag"]
            if rng.random() < 0.2:
                toks.append("extra")
            sep = seps[rng.integers(len(seps))]
            line = sep.join(toks)
            if rng.random() < 0.1:
                line = " " + line + " "
            lines.append(line)
            if rng.random() < 0.05:
                lines.append("")
        path = _write(tmp_path, f"r{trial}.txt", "\n".join(lines) + "\n")
        fast, slow = _both(read_trec_run, path)
        assert fast == slow, trial


# -- errors: identical in both paths, with file and line --------------------------------------------
BAD_RUNS = {
    "non-numeric score": ("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 abc t\n", ParseError, ":2: score must be a number, got 'abc'"),
    "nan score": ("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 NaN t\n", ParseError, ":2: score must be a finite number, got 'NaN'"),
    "inf score": ("q1 Q0 d1 1 0.5 t\n\nq1 Q0 d2 2 -inf t\n", ParseError, ":3: score must be a finite number"),
    "too few columns": ("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 0.5 t\n", ParseError, ":2: expected at least 6"),
    "one column": ("q1 Q0 d1 1 0.5 t\nq1\n", ParseError, ":2: expected at least 6"),
    "duplicate": (
        "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.4 t\n# c\nq1 Q0 d1 3 0.3 t\n",
        DuplicateLineError,
        ":4: duplicate run entry for query 'q1', document 'd1' (first at line 1)",
    ),
    "duplicate after blank lines": (
        "q1 Q0 d1 1 0.5 t\n\n\nq1 Q0 d1 3 0.3 t\n",
        DuplicateLineError,
        ":4: duplicate run entry for query 'q1', document 'd1' (first at line 1)",
    ),
    "underscore number": ("q1 Q0 d1 1 1_0 t\n", ParseError, ":1: score must be a number, got '1_0'"),
}


@pytest.mark.parametrize("case", list(BAD_RUNS))
def test_bad_run(tmp_path: Path, case: str) -> None:
    text, exc_type, fragment = BAD_RUNS[case]
    path = _write(tmp_path, "bad.run", text)
    fast, slow = _both(read_trec_run, path)
    assert fast == slow
    with pytest.raises(exc_type) as info:
        read_trec_run(path)
    assert str(info.value).startswith(str(path) + ":")
    assert fragment in str(info.value)
    assert isinstance(info.value, ParseError) and info.value.source == str(path) and info.value.line is not None


BAD_QRELS = {
    "non-integer grade": ("q1 0 d1 1\nq1 0 d2 x\n", ":2: relevance must be an integer, got 'x'"),
    "fractional grade": ("q1 0 d1 1\nq1 0 d2 1.5\n", ":2: relevance must be an integer, got '1.5'"),
    "hex grade": ("q1 0 d1 0x10\n", ":1: relevance must be an integer, got '0x10'"),
    "five columns": ("q1 0 d1 1\nq1 0 d2 1 extra\n", ":2: expected 4 whitespace-separated columns"),
    "three columns": ("q1 0 d1\n", ":1: expected 4"),
    "duplicate": (
        "q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n",
        ":3: duplicate qrels entry for query 'q1', document 'd1' (first at line 1)",
    ),
}


@pytest.mark.parametrize("case", list(BAD_QRELS))
def test_bad_qrels(tmp_path: Path, case: str) -> None:
    text, fragment = BAD_QRELS[case]
    path = _write(tmp_path, "bad.qrels", text)
    fast, slow = _both(read_trec_qrels, path)
    assert fast == slow
    with pytest.raises(ParseError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        read_trec_qrels(path)


def test_signed_grades_accepted(tmp_path: Path) -> None:
    path = _write(tmp_path, "q.txt", "q1 0 d1 +2\nq1 0 d2 -1\n")
    fast, slow = _both(read_trec_qrels, path)
    assert fast == slow and fast[1] == {"q1": {"d1": 2, "d2": -1}}


@pytest.mark.parametrize("text", ["", "\n\n  \n", "# only a comment\n"])
def test_empty_files(tmp_path: Path, text: str) -> None:
    path = _write(tmp_path, "empty.txt", text)
    for fast in (True, False):
        with pytest.raises(EmptyInputError, match="no entries"):
            read_trec_run(path, fast=fast)
        with pytest.raises(EmptyInputError, match="no entries"):
            read_trec_qrels(path, fast=fast)


def test_not_utf8_names_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "latin1.txt", b"q1 Q0 d1 1 0.5 t\nq1 Q0 d\xe9 2 0.4 t\n")
    fast, slow = _both(read_trec_run, path)
    assert fast == slow
    with pytest.raises(ParseError, match=r":2: not UTF-8"):
        read_trec_run(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ParseError, match="no such file"):
        read_trec_run(tmp_path / "nope.trec")


def test_duplicates_keep_best(tmp_path: Path) -> None:
    path = _write(tmp_path, "dup.run", "q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.9 t\nq1 Q0 d2 3 0.1 t\n")
    with pytest.raises(DuplicateEntryError):
        read_trec_run(path)
    for fast in (True, False):
        run = read_trec_run(path, duplicates="keep_best", fast=fast)
        assert run.to_dict() == {"q1": {"d1": 0.9, "d2": 0.1}}


# -- writers -----------------------------------------------------------------------------------------
def test_write_read_round_trip(tmp_path: Path) -> None:
    run = read_trec_run(require(TREC_TESTS / "results.test"))
    write_trec_run(run, tmp_path / "out.run")
    again = read_trec_run(tmp_path / "out.run")
    assert again.to_dict() == run.to_dict() and again.name == "STANDARD"
    qrels = read_trec_qrels(require(TREC_TESTS / "qrels.rel_level"))
    write_trec_qrels(qrels, tmp_path / "out.qrels")
    assert read_trec_qrels(tmp_path / "out.qrels").to_dict() == qrels.to_dict()


def test_non_ascii_ids_fast_and_slow(tmp_path: Path) -> None:
    text = RUN.replace("d1", "文档1").replace("q2", "查询2")
    cols = fast_columns(text.encode(), "run", "x")
    assert cols is not None  # valid UTF-8 stays on the Arrow path (validated there)
    path = _write(tmp_path, "zh.run", text)
    fast, slow = _both(read_trec_run, path)
    assert fast == slow
    assert fast[1] == {"q1": {"文档1": 0.5, "d2": 0.25}, "查询2": {"文档1": 3.0}}
