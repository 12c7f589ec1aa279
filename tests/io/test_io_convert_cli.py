"""In-memory inputs (ranx, ir_measures records, pandas, Arrow, ranked lists) and CLI errors on bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import rankscope
from clirun import cli
from conftest import TREC_TESTS, require
from rankscope.errors import RankscopeError
from rankscope.io import as_qrels, as_run, read_trec_qrels, read_trec_run

QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d1": 1}}
RUN = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}, "q2": {"d4": 1.0, "d1": 0.5}}
METRICS = ["ndcg@10", "map", "P@2", "recall@3", "mrr"]


def _expected() -> dict[str, float]:
    return rankscope.evaluate(rankscope.Qrels.from_dict(QRELS), rankscope.Run.from_dict(RUN), METRICS).mean()


@pytest.mark.slow
def test_ranx_objects_accepted() -> None:
    ranx = pytest.importorskip("ranx")
    res = rankscope.evaluate(ranx.Qrels(QRELS), ranx.Run(RUN, name="rx"), METRICS)
    assert res.mean() == _expected()
    assert as_run(ranx.Run(RUN, name="rx")).name == "rx"


def test_ir_measures_records_accepted() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels = [ir_measures.Qrel(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()]
    run = [ir_measures.ScoredDoc(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    assert rankscope.evaluate(qrels, run, METRICS).mean() == _expected()
    # generators too
    assert rankscope.evaluate(iter(qrels), (r for r in run), METRICS).mean() == _expected()


def test_ir_measures_read_trec_agrees() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qpath, rpath = require(TREC_TESTS / "qrels.test"), require(TREC_TESTS / "results.test")
    qrels = list(ir_measures.read_trec_qrels(str(qpath)))
    run = list(ir_measures.read_trec_run(str(rpath)))
    ours = rankscope.evaluate(read_trec_qrels(qpath), read_trec_run(rpath), ["map", "P@10"]).mean()
    theirs = rankscope.evaluate(qrels, run, ["map", "P@10"]).mean()
    assert ours == theirs


def test_pandas_and_arrow_tables() -> None:
    pd = pytest.importorskip("pandas")
    qrows = [(q, d, g) for q, docs in QRELS.items() for d, g in docs.items()]
    rrows = [(q, d, s) for q, docs in RUN.items() for d, s in docs.items()]
    qdf = pd.DataFrame(qrows, columns=["qid", "docno", "label"])
    rdf = pd.DataFrame(rrows, columns=["qid", "docno", "score"])
    assert rankscope.evaluate(qdf, rdf, METRICS).mean() == _expected()
    assert rankscope.evaluate(pa.Table.from_pandas(qdf), pa.Table.from_pandas(rdf), METRICS).mean() == _expected()


def test_ranked_lists_without_scores() -> None:
    ranked = {q: sorted(docs, key=lambda d: -docs[d]) for q, docs in RUN.items()}
    assert rankscope.evaluate(QRELS, ranked, METRICS).mean() == _expected()
    assert as_run(ranked).to_dict()["q1"] == {"d1": 3.0, "d2": 2.0, "d3": 1.0}


def test_unusable_objects() -> None:
    with pytest.raises(RankscopeError, match="cannot use a int as qrels"):
        as_qrels(3)
    with pytest.raises(RankscopeError, match="cannot use a list as a run"):
        as_run([1, 2])


# -- CLI ---------------------------------------------------------------------------------------------
@pytest.fixture()
def files(tmp_path: Path) -> dict[str, Path]:
    out = {
        "qrels": "q1 0 d1 1\nq1 0 d2 0\n",
        "run": "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 0.5 t\n",
        "bad": "q1 Q0 d1 1 1.0 t\nq1 Q0 d2 2 zero t\n",
        "short": "q1 Q0 d1 1 1.0 t\nq1 Q0 d2\n",
        "empty": "",
        "other": "q9 Q0 d1 1 1.0 t\n",
        "dup": "q1 Q0 d1 1 1.0 t\nq1 Q0 d1 2 0.5 t\n",
    }
    paths = {}
    for k, text in out.items():
        paths[k] = tmp_path / f"{k}.trec"
        paths[k].write_text(text)
    return paths


def _invoke(*args: str) -> tuple[int, str, str]:
    """Run ``rankscope evaluate ARGS`` in-process in an 80-column terminal; (exit code, stdout, stderr)."""
    res = cli("evaluate", *args, width=80)
    return res.returncode, res.stdout, res.stderr


def _one_line_error(code: int, stderr: str) -> str:
    assert code == 2, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankscope: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


@pytest.mark.slow
def test_cli_end_to_end_subprocess(files: dict[str, Path]) -> None:
    exe = str(Path(sys.executable).parent / "rankscope")
    ok = subprocess.run([exe, "evaluate", "--qrels", str(files["qrels"]), "--run", str(files["run"]), "-m", "P@1",
                         "-f", "csv"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip().splitlines()[-1] == "all,1"
    bad = subprocess.run([exe, "evaluate", "--qrels", str(files["qrels"]), "--run", str(files["bad"])],
                         capture_output=True, text=True, timeout=120)
    line = _one_line_error(bad.returncode, bad.stderr)
    assert f"{files['bad']}:2: score must be a number, got 'zero'" in line


@pytest.mark.parametrize(
    ("run", "metric", "fragment"),
    [
        ("bad", "P@1", "bad.trec:2: score must be a number, got 'zero'"),
        ("short", "P@1", "short.trec:2: expected at least 6 whitespace-separated columns"),
        ("empty", "P@1", "empty.trec: no entries (empty file)"),
        ("dup", "P@1", "dup.trec:2: duplicate run entry for query 'q1', document 'd1' (first at line 1)"),
        ("other", "P@1", "no query in common"),
        ("run", "ndgc@10", "unknown metric 'ndgc@10'; did you mean: ndcg"),
        ("run", "ndcg@0", "must be a positive integer, got '0'"),
        ("run", "P@-5", "must be a positive integer, got '-5'"),
    ],
)
def test_cli_bad_input_one_line_exit_2(files: dict[str, Path], run: str, metric: str, fragment: str) -> None:
    line = _one_line_error(*_invoke("--qrels", str(files["qrels"]), "--run", str(files[run]), "-m", metric)[::2])
    assert fragment in line, line


def test_cli_empty_qrels_and_missing_file(files: dict[str, Path], tmp_path: Path) -> None:
    code, _, err = _invoke("--qrels", str(files["empty"]), "--run", str(files["run"]), "-m", "P@1")
    assert "empty.trec: no entries" in _one_line_error(code, err)
    code, _, err = _invoke("--qrels", str(tmp_path / "nope.trec"), "--run", str(files["run"]))
    line = _one_line_error(code, err)
    assert "nope.trec" in line and "no such file" in line


def test_cli_reads_other_formats(files: dict[str, Path], tmp_path: Path) -> None:
    qrels = tmp_path / "q.jsonl"
    qrels.write_text('{"qid": "q1", "docno": "d1", "rel": 1}\n{"qid": "q1", "docno": "d2", "rel": 0}\n')
    run = tmp_path / "r.csv"
    run.write_text("query_id,doc_id,score\nq1,d2,2\nq1,d1,1\n")
    code, out, err = _invoke("--qrels", str(qrels), "--run", str(run), "-m", "P@1", "-f", "csv")
    assert code == 0, err
    assert out.strip().splitlines()[-1] == "all,0"
