"""The TREC reader on a memory map (``read_run`` / ``read_qrels``): same values and errors as the line parser.

The mapped path converts only the query, doc and value columns of ASCII files and
decides with one vectorised scan (:func:`scan`) whether the bytes need
whitespace normalisation; these tests pin that it never accepts what the line
parser would read differently, including across the scan's and Arrow's block ends.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import rankscope.io._trec_fast as trec_fast
from rankscope.errors import EmptyInputError, ParseError
from rankscope.io import read_qrels, read_run, read_trec_qrels, read_trec_run
from rankscope.io._trec_fast import _map_file, fast_columns, read_columns, scan

RUN = "q1 Q0 d1 1 0.5 tagA\nq1 Q0 d2 2 0.25 tagA\nq2 Q0 d1 1 3 tagA\n"
QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text.encode() if isinstance(text, str) else text)
    return p


def _outcome(read: Callable[..., Any], path: Path, **kw: Any) -> tuple[Any, ...]:
    try:
        obj = read(path, **kw)
    except Exception as exc:
        return (type(exc).__name__, str(exc))
    return (type(obj).__name__, obj.to_dict(), getattr(obj, "name", None))


def _same(kind: str, path: Path) -> tuple[Any, ...]:
    """The mapped reader's outcome, asserted equal to the exact line parser's (and the bytes reader's)."""
    mapped, exact = (read_run, read_trec_run) if kind == "run" else (read_qrels, read_trec_qrels)
    got = _outcome(mapped, path, format="trec")
    assert got == _outcome(exact, path, fast=False)
    assert got == _outcome(mapped, path, format="trec", fast=False)
    assert got == _outcome(exact, path)
    return got


# -- the scan ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("data", "clean"),
    [
        (b"", True),
        (b"q1 0 d1 1", True),
        (b"q1 0 d1 1\n\n\nq2 0 d2 0\n\n", True),
        (b"\nq1 0 d1 1\n", True),
        (b"q1 0 d1 1\x7f\n", True),  # DEL is a token character for both parsers
        (b"q1 0  d1 1\n", False),
        (b"q1 0 d1 1 \n", False),
        (b"q1 0 d1 1\n q2 0 d1 1\n", False),
        (b" q1 0 d1 1\n", False),
        (b"q1 0 d1 1 ", False),
        (b"q1 0 d1 1\n \n", False),
        (b"q1\t0 d1 1\n", False),
        (b"q1 0 d1 1\r\n", False),
        (b"q1 0 d1 1\x0b\n", False),
        (b"q1 0 d1 1\x0c\n", False),
        (b"q1 0 d\x00 1\n", False),
        (b"q1 0 d\x1f 1\n", False),
        ("q1 0 dé 1\n".encode(), False),
        (b"q1 0 d\xff 1\n", False),
    ],
)
def test_scan(data: bytes, clean: bool) -> None:
    assert scan(data) == ("clean" if clean else "dirty")


@pytest.mark.parametrize("block", [1, 2, 3, 5, 7, 8])
def test_scan_across_scan_blocks(monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    monkeypatch.setattr(trec_fast, "_BLOCK", block)
    line = b"q1 0 d1 1\n"
    assert scan(line * 3) == "clean"
    assert scan(line * 3 + b"#" + line) == "comment"
    for bad in (b"  ", b" \n", b"\n ", b"\t", b"\xc3\xa9"):
        for at in range(1, 3 * len(line) - 1):
            data = line * 3
            data = data[:at] + bad + data[at:]
            assert scan(data) == "dirty", (block, bad, at)
    for at in range(0, 3 * len(line) + 1):
        data = line * 3
        assert scan(data[:at] + b"\n#" + data[at:]) != "clean", (block, at)  # a comment line, maybe also dirty


@pytest.mark.parametrize("parallel_min", [1, 7, 64])
def test_scan_on_threads(monkeypatch: pytest.MonkeyPatch, parallel_min: int) -> None:
    monkeypatch.setattr(trec_fast, "_BLOCK", 4)
    monkeypatch.setattr(trec_fast, "_PARALLEL_MIN", parallel_min)
    data = b"q1 0 d1 1\n" * 20
    assert scan(data) == "clean"
    for at in range(1, len(data) - 1):
        assert scan(data[:at] + b"  " + data[at:]) == "dirty", at
        assert scan(data[:at] + b"\xff" + data[at:]) == "dirty", at
    assert scan(data + b"# c\n" + data) == "comment"


# -- the mapped reader equals the line parser --------------------------------------------------------
VARIANTS = {
    "clean": RUN,
    "tabs": RUN.replace(" ", "\t"),
    "padding": "  " + RUN.replace(" ", " \t  ").replace("\n", "  \n"),
    "crlf": RUN.replace("\n", "\r\n"),
    "blank lines": "\n\n" + RUN.replace("\n", "\n\n"),
    "comments": "# header comment\n" + RUN + "# trailer x x x x x\n",
    "comment as first data-like line": "#q Q0 d 1 1 t\n" + RUN,
    "seven columns": RUN.replace("tagA\n", "tagA x\n"),
    "ragged columns": RUN.replace("tagA\n", "tagA x\n", 1),
    "no final newline": RUN.rstrip("\n"),
    "bom": "\ufeff" + RUN,
    "non-ascii ids": RUN.replace("d1", "文档1").replace("q2", "查询2"),
    "non-ascii tag": RUN.replace("tagA", "étiquette"),
    "control byte in a doc id": RUN.replace("d2", "d\x002"),
    "unit separator in a doc id": RUN.replace("d2", "d\x1f2"),
    "hash inside a doc id": RUN.replace("d2", "d#2"),
    "plus sign": RUN.replace("0.5", "+0.5"),
}


@pytest.mark.parametrize("case", list(VARIANTS))
def test_run_variants(tmp_path: Path, case: str) -> None:
    got = _same("run", _write(tmp_path, "r.trec", VARIANTS[case]))
    assert got[0] == "Run"


BAD_RUNS = {
    "five columns": (RUN + "q3 Q0 d1 1 0.5\n", ":4: expected at least 6"),
    "one column": (RUN + "q3\n", ":4: expected at least 6"),
    "nan": (RUN.replace("0.25", "nan"), ":2: score must be a finite number, got 'nan'"),
    "inf on the last line, no newline": (RUN + "q3 Q0 d9 1 -inf tagA", ":4: score must be a finite number"),
    "not a number": (RUN.replace("0.25", "x1"), ":2: score must be a number, got 'x1'"),
    "invalid utf-8 in the tag": (RUN + "q3 Q0 d9 1 0.5 t\xe9g\n", ":4: not UTF-8"),
    "invalid utf-8 in the rank": (RUN + "q3 Q0 d9 \xff 0.5 tagA\n", ":4: not UTF-8"),
    "duplicate": (
        RUN + "\nq1 Q0 d2 3 0.1 tagA\n",
        ":5: duplicate run entry for query 'q1', document 'd2' (first at line 2)",
    ),
}


@pytest.mark.parametrize("case", list(BAD_RUNS))
def test_bad_runs(tmp_path: Path, case: str) -> None:
    text, fragment = BAD_RUNS[case]
    path = _write(tmp_path, "bad.trec", text.encode("latin-1") if "utf-8" in case else text)
    kind, message = _same("run", path)
    assert kind in ("ParseError", "DuplicateLineError")
    assert message.startswith(f"{path}:") and fragment in message


QRELS_VARIANTS = {
    "clean": QRELS,
    "tabs": QRELS.replace(" ", "\t"),
    "signed grades": QRELS.replace(" 1\n", " +1\n").replace(" 0\n", " -0\n"),
    "five columns": QRELS + "q3 0 d1 1 x\n",
    "three columns": QRELS + "q3 0 d1\n",
    "fractional grade": QRELS.replace(" 2\n", " 2.0\n"),
    "huge grade": QRELS.replace(" 2\n", " 99999999999999999999\n"),
    "comment": "# c\n" + QRELS,
    "duplicate": QRELS + "q1 0 d1 0\n",
}


@pytest.mark.parametrize("case", list(QRELS_VARIANTS))
def test_qrels_variants(tmp_path: Path, case: str) -> None:
    _same("qrels", _write(tmp_path, "q.qrels", QRELS_VARIANTS[case]))


# -- a wrong line far into the file: every line's column count is checked ----------------------------
@pytest.mark.parametrize("bad", ["qx Q0 d7 1 0.5", "qx Q0 d7 1 0.5 tagA x", "qx Q0 d7 1 0.5 tagA x y"])
def test_wrong_column_count_in_a_later_arrow_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    monkeypatch.setattr(trec_fast, "_ARROW_BLOCK", 64)  # many blocks of Arrow's parser
    lines = [f"q{i // 10} Q0 d{i} {i % 10 + 1} {1 / (i + 1)!r} tagA" for i in range(200)]
    lines[150] = bad
    path = _write(tmp_path, "r.trec", "\n".join(lines) + "\n")
    got = _same("run", path)
    if bad.count(" ") < 5:
        assert got[0] == "ParseError" and got[1].startswith(f"{path}:151: expected at least 6")
    else:  # a longer line is valid (extra columns are ignored), the line parser reads the ragged file
        assert got[0] == "Run" and got[1]["qx"] == {"d7": 0.5}
    assert fast_columns(path.read_bytes(), "run", str(path)) is None  # the line parser decided


def test_wrong_column_count_in_qrels_later_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trec_fast, "_ARROW_BLOCK", 64)
    lines = [f"q{i // 10} 0 d{i} {i % 3}" for i in range(200)]
    lines[120] += " 7"
    path = _write(tmp_path, "q.qrels", "\n".join(lines) + "\n")
    kind, message = _same("qrels", path)
    assert kind == "ParseError" and message.startswith(f"{path}:121: expected 4")


# -- the fast path is really taken on clean files, and reads a memory map -----------------------------
def test_mapped_fast_path_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, "r.trec", "\n" + RUN)

    def refuse(*_: object) -> None:
        raise AssertionError("the line parser was used")

    monkeypatch.setattr(trec_fast, "parse_lines", refuse)
    cols = read_columns(path, "run")
    assert cols.tag == "tagA" and list(cols.lines()) == [2, 3, 4]
    assert cols.query.to_pylist() == ["q1", "q1", "q2"] and cols.values.tolist() == [0.5, 0.25, 3.0]
    assert read_run(path).to_dict() == {"q1": {"d1": 0.5, "d2": 0.25}, "q2": {"d1": 3.0}}


def test_map_file(tmp_path: Path) -> None:
    assert memoryview(_map_file(_write(tmp_path, "a", "\ufeffq1")) or b"").tobytes() == b"q1"  # BOM dropped
    assert _map_file(_write(tmp_path, "b.gz", gzip.compress(RUN.encode()))) is None  # read into memory instead
    assert _map_file(tmp_path / "missing") is None and _map_file(tmp_path) is None


def test_gzip_missing_folder_and_empty(tmp_path: Path) -> None:
    gz = _write(tmp_path, "r_without_suffix", gzip.compress(RUN.encode()))
    assert read_run(gz, format="trec").to_dict() == {"q1": {"d1": 0.5, "d2": 0.25}, "q2": {"d1": 3.0}}
    with pytest.raises(ParseError, match="no such file"):
        read_run(tmp_path / "nope.trec")
    with pytest.raises(ParseError, match="is a directory"):
        read_columns(tmp_path, "run")
    for text in ("", "\n\n", "# only a comment\n"):
        with pytest.raises(EmptyInputError, match="no entries"):
            read_run(_write(tmp_path, "e.trec", text))
        with pytest.raises(EmptyInputError, match="no entries"):
            read_qrels(_write(tmp_path, "e.qrels", text))


def test_huge_finite_scores_are_not_mistaken_for_infinite(tmp_path: Path) -> None:
    # the sum of these scores overflows to inf: the exact check must still accept them
    text = "q1 Q0 d1 1 1.7e308 t\nq1 Q0 d2 2 1.7e308 t\nq1 Q0 d3 3 -1e308 t\n"
    got = _same("run", _write(tmp_path, "big.trec", text))
    assert got[1] == {"q1": {"d1": 1.7e308, "d2": 1.7e308, "d3": -1e308}}
