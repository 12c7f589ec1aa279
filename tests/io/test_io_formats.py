"""Every file format: round trips, detection, options, and errors that name file and line (or row)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import DATA, TREC_TESTS, require
from rankscope.data import Qrels, Run
from rankscope.errors import DuplicateLineError, EmptyInputError, InvalidParameterError, ParseError
from rankscope.io import (
    QRELS_FORMATS,
    RUN_FORMATS,
    detect_format,
    read_qrels,
    read_run,
    read_trec_qrels,
    read_trec_run,
    write_qrels,
    write_run,
)

WRITE_FORMATS = ["trec", "json", "jsonl", "csv", "tsv", "parquet", "arrow"]
SUFFIX = {"trec": ".trec", "json": ".json", "jsonl": ".jsonl", "csv": ".csv", "tsv": ".tsv", "parquet": ".parquet",
          "arrow": ".arrow"}


@pytest.fixture(scope="module")
def run() -> Run:
    return read_trec_run(require(TREC_TESTS / "results.test"))


@pytest.fixture(scope="module")
def qrels() -> Qrels:
    return read_trec_qrels(require(TREC_TESTS / "qrels.rel_level"))


@pytest.mark.parametrize("fmt", WRITE_FORMATS)
def test_run_round_trip(tmp_path: Path, run: Run, fmt: str) -> None:
    path = tmp_path / f"STANDARD{SUFFIX[fmt]}"
    write_run(run, path)
    assert detect_format(path) == fmt
    again = read_run(path)
    assert again.to_dict() == run.to_dict()
    assert again.name == "STANDARD"
    # explicit format on a file name that says nothing
    plain = tmp_path / "noext"
    write_run(run, plain, format=fmt)
    assert read_run(plain, format=fmt).to_dict() == run.to_dict()
    assert detect_format(plain) == ("csv" if fmt == "csv" else fmt)  # recognised by content


@pytest.mark.parametrize("fmt", WRITE_FORMATS)
def test_qrels_round_trip(tmp_path: Path, qrels: Qrels, fmt: str) -> None:
    path = tmp_path / f"q{SUFFIX[fmt]}"
    write_qrels(qrels, path)
    again = read_qrels(path)
    assert again.to_dict() == qrels.to_dict()
    assert again.grades.dtype.kind == "i"


def test_ids_keep_leading_zeros(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text("query_id,doc_id,relevance\n007,0042,1\n")
    assert read_qrels(path).to_dict() == {"007": {"0042": 1}}


def test_gzip_any_format(tmp_path: Path, run: Run) -> None:
    for fmt in ("json", "jsonl", "csv", "tsv"):
        raw = tmp_path / f"r{SUFFIX[fmt]}"
        write_run(run, raw)
        gz = tmp_path / f"STANDARD{SUFFIX[fmt]}.gz"
        gz.write_bytes(gzip.compress(raw.read_bytes()))
        assert read_run(gz).to_dict() == run.to_dict()
    for fmt in WRITE_FORMATS:  # the writers compress a .gz path
        out = tmp_path / f"STANDARD.w{SUFFIX[fmt]}.gz"
        write_run(run, out)
        assert out.read_bytes()[:2] == b"\x1f\x8b" and not list(tmp_path.glob("*.tmp"))
        assert read_run(out).to_dict() == run.to_dict()


def test_json_ranked_lists_and_records(tmp_path: Path) -> None:
    p = tmp_path / "ranked.json"
    p.write_text(json.dumps({"q1": ["d3", "d1", "d2"], "q2": ["d9"]}))
    run = read_run(p)
    assert run.name == "ranked"
    assert run.to_dict() == {"q1": {"d3": 3.0, "d1": 2.0, "d2": 1.0}, "q2": {"d9": 1.0}}
    assert read_qrels(p).to_dict() == {"q1": {"d3": 1, "d1": 1, "d2": 1}, "q2": {"d9": 1}}
    recs = tmp_path / "recs.json"
    recs.write_text(json.dumps([{"qid": "q1", "docno": "d1", "score": 2}, {"qid": 1, "docno": 5, "score": 1.5}]))
    assert read_run(recs).to_dict() == {"1": {"5": 1.5}, "q1": {"d1": 2.0}}


def test_jsonl_aliases_and_rank_only(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text('{"qid": "q1", "pid": "a", "rank": 1}\n\n{"qid": "q1", "pid": "b", "rank": 2}\n')
    assert read_run(p).to_dict() == {"q1": {"a": -1.0, "b": -2.0}}
    q = tmp_path / "q.jsonl"
    q.write_text('{"query-id": "1", "corpus-id": "d", "score": 2}\n')
    assert read_qrels(q).to_dict() == {"1": {"d": 2}}


def test_headerless_csv_and_tsv(tmp_path: Path) -> None:
    p = tmp_path / "r.csv"
    p.write_text("q1,d1,0.5\nq1,d2,0.7\n")
    assert read_run(p).to_dict() == {"q1": {"d1": 0.5, "d2": 0.7}}
    t = tmp_path / "q.tsv"
    t.write_text("q1\td1\t1\n")
    assert read_qrels(t).to_dict() == {"q1": {"d1": 1}}
    assert read_qrels(t, header=False).to_dict() == {"q1": {"d1": 1}}


def test_headerless_tsv_in_trec_layout(tmp_path: Path) -> None:
    q = tmp_path / "qrels.dev.tsv"  # MS MARCO style
    q.write_text("1048585\t0\t7187158\t1\n2\t0\t1001\t1\n")
    assert read_qrels(q).to_dict() == {"1048585": {"7187158": 1}, "2": {"1001": 1}}
    r = tmp_path / "run.tsv"
    r.write_text("1\tQ0\td1\t1\t2.5\tbm25\n")
    assert read_run(r).name == "bm25"


def test_pandas_parquet_with_other_names(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"topic": [1, 1, 2], "docno": ["a", "b", "a"], "sim": [0.3, 0.2, 0.9]})
    p = tmp_path / "r.parquet"
    df.to_parquet(p)
    assert read_run(p, name="mine").name == "mine"
    assert read_run(p).to_dict() == {"1": {"a": 0.3, "b": 0.2}, "2": {"a": 0.9}}


# -- BEIR --------------------------------------------------------------------------------------------
def test_beir_folder_and_tsv() -> None:
    folder = require(DATA / "beir_scifact")
    assert detect_format(folder) == "beir"
    test = read_qrels(folder)
    assert test.to_dict() == read_qrels(folder / "qrels" / "test.tsv").to_dict()
    assert len(test.queries) == 300
    train = read_qrels(folder, split="train")
    assert set(train.queries).isdisjoint(test.queries)
    with pytest.raises(ParseError, match="available splits: test, train"):
        read_qrels(folder, split="dev")
    with pytest.raises(ParseError, match="a run must be a file"):
        read_run(folder)


def test_beir_style_tsv_from_shared_data() -> None:
    q = read_qrels(require(DATA / "cranfield" / "qrels.tsv"))
    assert q.to_dict()["1"]["184"] == 3


# -- format selection and options -------------------------------------------------------------------
def test_unknown_format_lists_choices(tmp_path: Path) -> None:
    with pytest.raises(InvalidParameterError) as info:
        read_qrels(tmp_path / "x", format="xml")
    for fmt in QRELS_FORMATS:
        assert fmt in str(info.value)
    with pytest.raises(InvalidParameterError, match="unknown run format 'beir'"):
        read_run(tmp_path / "x", format="beir")
    assert "beir" not in RUN_FORMATS
    with pytest.raises(InvalidParameterError, match="unknown output format"):
        write_run(Run.from_dict({"q": {"d": 1.0}}), tmp_path / "x", format="xml")


def test_unknown_option(tmp_path: Path) -> None:
    p = tmp_path / "r.trec"
    p.write_text("q Q0 d 1 1 t\n")
    with pytest.raises(InvalidParameterError, match="split not supported for trec run"):
        read_run(p, split="test")


# -- errors ------------------------------------------------------------------------------------------
def _fails(tmp_path: Path, name: str, text: str, reader, exc=ParseError, **kw) -> str:  # type: ignore[no-untyped-def]
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(exc) as info:
        reader(p, **kw)
    msg = str(info.value)
    assert msg.startswith(str(p)), msg
    return msg


def test_jsonl_errors_name_line(tmp_path: Path) -> None:
    ok = '{"query_id": "q", "doc_id": "a", "score": 1}\n'
    assert ":2: invalid JSON" in _fails(tmp_path, "a.jsonl", ok + "{oops\n", read_run)
    assert ":3: score must be a number, got 'x'" in _fails(
        tmp_path, "b.jsonl", ok + "\n" + '{"query_id": "q", "doc_id": "b", "score": "x"}\n', read_run
    )
    assert ":2: score must be a finite number, got nan" in _fails(
        tmp_path, "c.jsonl", ok + '{"query_id": "q", "doc_id": "b", "score": NaN}\n', read_run
    )
    assert ":2: missing 'doc_id'" in _fails(tmp_path, "d.jsonl", ok + '{"query_id": "q", "score": 1}\n', read_run)
    msg = _fails(tmp_path, "e.jsonl", ok + ok, read_run, DuplicateLineError)
    assert ":2: duplicate run entry for query 'q', document 'a' (first at line 1)" in msg
    assert "relevance must be an integer, got 1.5" in _fails(
        tmp_path, "f.jsonl", '{"query_id": "q", "doc_id": "a", "relevance": 1.5}\n', read_qrels
    )


def test_json_errors(tmp_path: Path) -> None:
    assert ":1: invalid JSON" in _fails(tmp_path, "a.json", '{"q": {"d": 1,}}', read_run)
    assert "query 'q', document 'd': score must be a finite number" in _fails(
        tmp_path, "b.json", '{"q": {"d": Infinity}}', read_run
    )
    assert "query 'q' maps to a str" in _fails(tmp_path, "c.json", '{"q": "d"}', read_run)
    assert "duplicate run entry for query 'q', document 'd'" in _fails(
        tmp_path, "d.json", '{"q": ["d", "d"]}', read_run, DuplicateLineError
    )
    _fails(tmp_path, "e.json", "{}", read_run, EmptyInputError)


def test_csv_errors_name_line(tmp_path: Path) -> None:
    header = "query_id,doc_id,score\n"
    assert ":3: score must be a number, got 'high'" in _fails(
        tmp_path, "a.csv", header + "q,a,1\nq,b,high\n", read_run
    )
    assert ":3: expected 3 columns, got 4" in _fails(tmp_path, "b.csv", header + "q,a,1\nq,b,1,9\n", read_run)
    assert ":4: score must be a finite number, got nan" in _fails(
        tmp_path, "c.csv", header + "q,a,1\n\nq,b,nan\n", read_run
    )
    assert ":3: doc id is missing" in _fails(tmp_path, "d.csv", header + "q,a,1\nq,,2\n", read_run)
    assert ":1: a CSV/TSV file without a header must have 3 columns" in _fails(
        tmp_path, "e.csv", "q,0,d,1\n", read_qrels
    )
    assert "no score column" in _fails(tmp_path, "f.csv", "query_id,doc_id,foo\nq,d,1\n", read_run)
    _fails(tmp_path, "g.csv", "query_id,doc_id,score\n", read_run, EmptyInputError)
    _fails(tmp_path, "h.csv", "", read_run, EmptyInputError)


def test_parquet_errors_name_row(tmp_path: Path) -> None:
    p = tmp_path / "r.parquet"
    pq.write_table(pa.table({"query_id": ["q", "q"], "doc_id": ["a", None], "score": [1.0, 2.0]}), p)
    with pytest.raises(ParseError, match=r"r\.parquet: row 2: doc id is missing"):
        read_run(p)
    pq.write_table(pa.table({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, float("inf")]}), p)
    with pytest.raises(ParseError, match=r"row 2: score must be a finite number"):
        read_run(p)
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    with pytest.raises(ParseError, match="not a readable Parquet file"):
        read_run(bad)
    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string()),
                             "score": pa.array([], pa.float64())}), empty)
    with pytest.raises(EmptyInputError):
        read_run(empty)


def test_jsonl_arrow_and_python_paths_agree(tmp_path: Path, run: Run) -> None:
    clean = tmp_path / "clean.jsonl"
    write_run(run, clean)
    text = clean.read_text()
    messy = tmp_path / "messy.jsonl"  # a blank line sends the file to the line-by-line parser
    messy.write_text("\n" + text)
    a, b = read_run(clean, name="x"), read_run(messy, name="x")
    assert a.to_dict() == b.to_dict() == run.to_dict()
    ints = tmp_path / "ints.jsonl"
    ints.write_text('{"qid": 1, "docno": 2, "score": 3}\n{"qid": 1, "docno": 3, "score": 2.5}\n')
    assert read_run(ints).to_dict() == {"1": {"2": 3.0, "3": 2.5}}
    floats = tmp_path / "float_ids.jsonl"
    floats.write_text('{"qid": 1.0, "docno": 2, "score": 3}\n')
    with pytest.raises(ParseError, match=r":1: query id must be a string or an integer, got 1.0"):
        read_run(floats)
