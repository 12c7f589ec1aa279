"""Header-less three-column runs (MS MARCO's ``qid<TAB>docid<TAB>rank``): the third column is never silently misread.

The evidence of issue 17: a DL-HARD run rewritten in MS MARCO's layout gives, through the
CLI and the API, the MRR@10 of the TREC file, with the rank notice; shuffled, it is an
error naming ``--columns``; with ``--columns`` it gives the right value again.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from clirun import cli, outcome
from conftest import DATA, require
from prose import whole_lines
from rankscope.engine import evaluate
from rankscope.errors import InvalidParameterError, ParseError
from rankscope.io import read_qrels, read_run, read_trec_run

DL = DATA / "runs_dl_hard" / "dataset"


@pytest.fixture(scope="module")
def dl_hard(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The passage bm25 run of DL-HARD as TREC, as MS MARCO's qid<TAB>docid<TAB>rank (plain, .gz, shuffled)."""
    trec = require(DL / "baselines" / "passage" / "bm25.run")
    folder = tmp_path_factory.mktemp("msmarco")
    lines = [ln.split() for ln in trec.read_text().splitlines() if ln.strip()]
    # the file's own rank column is consistent with its scores (SOURCE.txt); rank order = file order here
    rows = [f"{q}\t{d}\t{r}\n" for q, _, d, r, _, _ in lines]
    tsv = folder / "bm25.tsv"
    tsv.write_text("".join(rows))
    txt = folder / "bm25_run.txt"  # a name that says nothing about the format: sniffed
    txt.write_text("".join(rows))
    gz = folder / "bm25.tsv.gz"
    gz.write_bytes(gzip.compress("".join(rows).encode()))
    shuffled = rows[:]
    random.Random(7).shuffle(shuffled)
    shuf = folder / "shuffled.tsv"
    shuf.write_text("".join(shuffled))
    qrels = require(DL / "dl_hard-passage.qrels")
    return {"trec": trec, "tsv": tsv, "txt": txt, "gz": gz, "shuffled": shuf, "qrels": qrels}


def mrr10(qrels: Path, run: object) -> float:
    return evaluate(read_qrels(qrels), run, ["mrr@10"], relevance_level=2)["mrr@10"]


def test_api_reads_rank_column_like_the_trec_file(dl_hard: dict[str, Path]) -> None:
    expected = mrr10(dl_hard["qrels"], read_trec_run(dl_hard["trec"]))
    assert expected > 0.3
    for key in ("tsv", "txt", "gz"):
        run = read_run(dl_hard[key])
        assert [n.kind for n in run.notices] == ["rank_column"]
        assert run.notices[0].text().endswith("column 3 read as rank, 1 = best")
        result = evaluate(read_qrels(dl_hard["qrels"]), run, ["mrr@10"], relevance_level=2)
        assert result["mrr@10"] == pytest.approx(expected, abs=1e-12)
        assert result.notices == run.notices
        assert result.to_dict()["notices"][0]["message"].endswith("column 3 read as rank, 1 = best")
    # the service and format="trec" go through read_run too
    assert read_run(dl_hard["txt"], format="trec").notices[0].kind == "rank_column"


def test_cli_summary_line_and_json_say_rank(dl_hard: dict[str, Path]) -> None:
    expected = mrr10(dl_hard["qrels"], read_trec_run(dl_hard["trec"]))
    base = ["evaluate", "--qrels", str(dl_hard["qrels"]), "-m", "mrr@10", "-l", "2"]
    code, out, err = outcome(cli(*base, "--run", str(dl_hard["tsv"]), width=80))
    assert code == 0, err
    summary = [ln for ln in whole_lines(out).splitlines() if "queries evaluated" in ln]
    assert len(summary) == 1 and "column 3 read as rank, 1 = best" in summary[0]
    assert f"{expected:.4f}" in out
    code, out, _ = outcome(cli(*base, "--run", str(dl_hard["tsv"]), "-f", "json", width=80))
    data = json.loads(out)
    assert data["mean"]["mrr@10"] == pytest.approx(expected, abs=1e-12)
    assert data["notices"][0]["kind"] == "rank_column"


def test_shuffled_file_is_an_error_then_columns_reads_it(dl_hard: dict[str, Path]) -> None:
    expected = mrr10(dl_hard["qrels"], read_trec_run(dl_hard["trec"]))
    with pytest.raises(ParseError, match=r"--columns qid,docid,rank.*read_run\(\.\.\., columns="):
        read_run(dl_hard["shuffled"])
    base = ["evaluate", "--qrels", str(dl_hard["qrels"]), "-m", "mrr@10", "-l", "2", "--run", str(dl_hard["shuffled"])]
    code, out, err = outcome(cli(*base, width=80))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "--columns qid,docid,rank" in err and "shuffled.tsv:" in err
    run = read_run(dl_hard["shuffled"], columns="qid,docid,rank")
    assert run.notices == ()  # the caller said so: nothing was guessed
    assert mrr10(dl_hard["qrels"], run) == pytest.approx(expected, abs=1e-12)
    code, out, err = outcome(cli(*base, "--columns", "qid,docid,rank", "-f", "json", width=80))
    assert code == 0, err
    assert json.loads(out)["mean"]["mrr@10"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("text", "expected", "notice"),
    [
        ("q1\ta\t1\nq1\tb\t2\nq2\tc\t1\n", {"q1": {"a": -1.0, "b": -2.0}, "q2": {"c": -1.0}}, True),
        ("q1\ta\t0\nq1\tb\t1\nq2\tc\t0\n", {"q1": {"a": -0.0, "b": -1.0}, "q2": {"c": -0.0}}, True),
        # decreasing integers: n - rank + 1, a score
        ("q1\ta\t2\nq1\tb\t1\nq2\tc\t5\n", {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 5.0}}, False),
        # non-integers: a score, in any order
        ("q1\ta\t0.2\nq1\tb\t0.7\n", {"q1": {"a": 0.2, "b": 0.7}}, False),
        # queries interleaved: each query's rows in file order
        ("q1\ta\t1\nq2\tc\t1\nq1\tb\t2\n", {"q1": {"a": -1.0, "b": -2.0}, "q2": {"c": -1.0}}, True),
    ],
)
def test_third_column_sniffing(tmp_path: Path, text: str, expected: dict[str, dict[str, float]], notice: bool) -> None:
    for name, body in (("r.tsv", text), ("r.txt", text), ("r.csv", text.replace("\t", ",")),
                       ("r.run", text.replace("\t", " "))):
        p = tmp_path / name
        p.write_text(body)
        run = read_run(p)
        assert run.to_dict() == expected, name
        assert bool(run.notices) is notice, name


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("q1\ta\t2\nq1\tb\t1\nq1\tc\t3\n", "q1"),  # integers, neither order
        ("q1\ta\t2\nq2\td\t1\nq1\tb\t1\nq1\tc\t3\n", "q1"),  # the same, another query interleaved
        ("q1\ta\t1\nq1\tb\t3\n", "q1"),  # ranks that skip: not 1..n
        ("q1\ta\t1\nq1\tb\t2\nq2\tc\t2\nq2\td\t1\n", "q2"),  # one query ranks, another scores
    ],
)
def test_ambiguous_third_column_names_the_query_and_line(tmp_path: Path, text: str, query: str) -> None:
    p = tmp_path / "r.tsv"
    p.write_text(text)
    with pytest.raises(ParseError) as info:
        read_run(p)
    msg = str(info.value)
    assert f"query {query!r}" in msg and "--columns qid,docid,rank" in msg and msg.startswith(f"{p}:")
    rows = [ln.split("\t") for ln in text.splitlines() if ln.split("\t")[0] == query]
    assert f"query {query!r} has {', '.join(r[2] for r in rows)};" in msg  # that query's values, no other


def test_trec_six_columns_unchanged_and_columns_option_checked(tmp_path: Path) -> None:
    p = tmp_path / "r.trec"
    p.write_text("q1 Q0 a 1 0.2 x\nq1 Q0 b 2 0.7 x\n")  # rank column disagrees with the scores: scores rule
    run = read_run(p)
    assert run.to_dict() == {"q1": {"a": 0.2, "b": 0.7}} and run.notices == ()
    with pytest.raises(InvalidParameterError, match="columns= is for 3-column runs"):
        read_run(p, columns="qid,docid,rank")
    t = tmp_path / "r.tsv"
    t.write_text("q1\ta\t1\n")
    with pytest.raises(InvalidParameterError, match="not a known column name"):
        read_run(t, columns="qid,docid,rnk")
    with pytest.raises(InvalidParameterError, match="the file has 3 columns"):
        read_run(t, columns="qid,docid,rank,_")
    # a header names the columns: no sniffing
    h = tmp_path / "h.tsv"
    h.write_text("qid\tdocid\tscore\nq1\ta\t1\nq1\tb\t2\n")
    assert read_run(h).to_dict() == {"q1": {"a": 1.0, "b": 2.0}} and read_run(h).notices == ()
