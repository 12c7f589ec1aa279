"""Streamed evaluation (run files scored in blocks of whole queries) == the run scored whole, always."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import DATA, require
from rankscope import Evaluator, Qrels, evaluate
from rankscope.engine import stream as engine_stream
from rankscope.errors import DuplicateLineError, EmptyInputError, NoOverlapError, ParseError
from rankscope.io import read_run

METRICS = ["ndcg@10", "map", "mrr", "recall@100", "P@5", "bpref", "ndcg", "Rprec", "num_ret", "success@3"]


def _random_case(seed: int, n_q: int = 60, grouped: bool = True) -> tuple[Qrels, pa.Table]:
    rng = np.random.default_rng(seed)
    qs, ds, ss = [], [], []
    for q in range(n_q):
        k = int(rng.integers(1, 40))
        docs = rng.choice(200, size=k, replace=False)
        # ties (rounded scores) and scores equal only as float32
        scores = np.round(rng.random(k) * 5, 1) + np.where(rng.random(k) < 0.2, 1e-9, 0.0)
        qs += [f"q{q:03d}" if q % 7 else f"extra{q}"] * k
        ds += [f"d{d}" for d in docs]
        ss += scores.tolist()
    table = pa.table({"query_id": qs, "doc_id": ds, "score": ss})
    if not grouped:
        table = table.take(pa.array(rng.permutation(len(qs))))
    judged = {}
    for q in range(0, n_q + 10):  # queries 60..69 are missing from the run; extra* are not judged
        if q % 7 == 0 and q < n_q:
            continue
        docs = rng.choice(200, size=int(rng.integers(0, 12)), replace=False)
        judged[f"q{q:03d}"] = {f"d{d}": int(rng.integers(-1, 4)) for d in docs} or {"d999": 0}
    return Qrels.from_dict(judged), table


def _write(table: pa.Table, path: Path, fmt: str) -> Path:
    if fmt == "parquet":
        pq.write_table(table, path, row_group_size=97)
    elif fmt == "arrow":
        with pa.ipc.new_file(path, table.schema) as w:
            for b in table.to_batches(max_chunksize=53):
                w.write_batch(b)
    else:
        lines = [f"{q} Q0 {d} 1 {s!r} tag{'' if fmt == 'trec' else ' x'}\n" for q, d, s in
                 zip(*(table.column(c).to_pylist() for c in ("query_id", "doc_id", "score")))]
        text = "".join(lines)
        if fmt == "trec.gz":
            with gzip.open(path, "wt") as fh:
                fh.write(text)
        else:
            path.write_text(text)
    return path


def _same(a, b) -> None:
    assert a.run_name == b.run_name
    assert a.queries == b.queries
    assert a.per_query.query_ids.tolist() == b.per_query.query_ids.tolist()
    np.testing.assert_array_equal(a.per_query.values, b.per_query.values)
    assert a.mean() == b.mean()
    assert a.judged == b.judged and a.judged is not None  # judged@10 counted across blocks
    assert a.ceilings == b.ceilings


@pytest.mark.parametrize("fmt", ["trec", "trec.gz", "parquet", "arrow"])
@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("grouped", [True, False])
def test_streamed_equals_whole(tmp_path: Path, fmt: str, seed: int, grouped: bool) -> None:
    qrels, table = _random_case(seed, grouped=grouped)
    path = _write(table, tmp_path / f"run.{fmt}", fmt)
    for missing in ("zero", "ignore"):
        for precision in ("float32", "float64"):
            ev = Evaluator(qrels, METRICS, missing=missing, score_precision=precision, diagnostics=True)
            whole = ev.evaluate(read_run(path))
            # a block of one row (slow: a block per row) under the first policies only
            for block_rows in (1, 40, 333) if (missing, precision) == ("zero", "float32") else (40, 333):
                streamed = ev.evaluate(path, block_rows=block_rows)
                _same(streamed, whole)
                np.testing.assert_array_equal(streamed.diagnostics.values, whole.diagnostics.values)


def test_float32_counts_and_foreign_queries_are_kept(tmp_path: Path) -> None:
    qrels, table = _random_case(3)
    path = _write(table, tmp_path / "run.trec", "trec")
    whole = evaluate(qrels, read_run(path), ["map"])
    streamed = evaluate(qrels, path, ["map"], block_rows=50)
    assert whole.queries.float32_reordered > 0 and whole.queries.not_in_qrels > 0
    assert whole.queries.missing_from_run > 0 and whole.queries.no_relevant > 0
    _same(streamed, whole)


def test_not_grouped_goes_through_partitions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, table = _random_case(4, grouped=False)
    path = _write(table, tmp_path / "run.trec", "trec")
    calls = []
    real = engine_stream.StreamScorer.add

    def spy(self, run):  # type: ignore[no-untyped-def]
        calls.append(len(run))
        return real(self, run)

    monkeypatch.setattr(engine_stream.StreamScorer, "add", spy)
    streamed = evaluate(qrels, path, ["ndcg@10"], block_rows=100)
    _same(streamed, evaluate(qrels, read_run(path), ["ndcg@10"]))
    assert sum(calls) > len(table)  # a first pass found a query twice, then the partitions were scored


def test_keep_best_duplicates_across_blocks_and_partitions(tmp_path: Path) -> None:
    qrels, table = _random_case(5)
    dup = table.slice(10, 30)  # the same (query, doc) pairs again, later in the file, with other scores
    dup = dup.set_column(2, "score", pa.array(np.asarray(dup.column("score")) + 0.5))
    path = _write(pa.concat_tables([table, dup]), tmp_path / "run.trec", "trec")
    whole = evaluate(qrels, read_run(path, duplicates="keep_best"), ["map"], duplicates="keep_best")
    _same(evaluate(qrels, path, ["map"], duplicates="keep_best", block_rows=64), whole)


def test_duplicate_error_names_the_file_line(tmp_path: Path) -> None:
    text = "# a comment\n" + "".join(f"q{i // 10} Q0 d{i % 10} 1 {10 - i % 10} t\n" for i in range(200))
    text += "\n" + "q19 Q0 d3 1 0.5 t\n"  # a repeat of line 1 + 193 ... inside the last query
    path = tmp_path / "run.trec"
    path.write_text(text)
    qrels = Qrels.from_dict({"q19": {"d3": 1}})
    with pytest.raises(DuplicateLineError) as whole:
        evaluate(qrels, read_run(path), ["map"])
    with pytest.raises(DuplicateLineError) as streamed:
        evaluate(qrels, path, ["map"], block_rows=7)
    assert str(streamed.value) == str(whole.value)
    assert streamed.value.line == 203


def test_parse_error_names_the_file_line(tmp_path: Path) -> None:
    lines = [f"q{i // 10} Q0 d{i % 10} 1 {10 - i % 10} t\n" for i in range(500)]
    lines[431] = "q43 Q0 d1 1 notanumber t\n"
    path = tmp_path / "run.trec"
    path.write_text("".join(lines))
    with pytest.raises(ParseError) as streamed:
        evaluate(Qrels.from_dict({"q1": {"d1": 1}}), path, ["map"], block_rows=20)
    assert streamed.value.line == 432 and "notanumber" in str(streamed.value)


def test_parquet_duplicate_names_the_row(tmp_path: Path) -> None:
    qrels, table = _random_case(6)
    table = pa.concat_tables([table, table.slice(len(table) - 1)])  # the last row twice
    path = _write(table, tmp_path / "run.parquet", "parquet")
    with pytest.raises(DuplicateLineError) as whole:
        evaluate(qrels, read_run(path), ["map"])
    with pytest.raises(DuplicateLineError) as streamed:
        evaluate(qrels, path, ["map"], block_rows=50)
    assert str(streamed.value) == str(whole.value)


def test_no_overlap_and_empty(tmp_path: Path) -> None:
    path = tmp_path / "run.trec"
    path.write_text("".join(f"z{i // 5} Q0 d{i} 1 1 t\n" for i in range(100)))
    with pytest.raises(NoOverlapError) as none:
        evaluate(Qrels.from_dict({"q1": {"d1": 1}}), path, ["map"], block_rows=10)
    assert "(run: 20 queries such as 'z0'; qrels: 1 query such as 'q1')" in str(none.value)
    assert "qrels 中 1 个查询，例如 'q1'" in none.value.text("zh")
    empty = tmp_path / "empty.trec"
    empty.write_text("# nothing\n\n")
    with pytest.raises(EmptyInputError):
        evaluate(Qrels.from_dict({"q1": {"d1": 1}}), empty, ["map"], block_rows=10)


def test_memory_limit_values() -> None:
    assert engine_stream.parse_size("2G") == 2 << 30
    with pytest.raises(ParseError.__mro__[1]):
        engine_stream.parse_size("lots")
    small = engine_stream.block_rows_for("256MiB", 10**6)
    assert engine_stream.MIN_BLOCK_ROWS <= small < engine_stream.block_rows_for("4GiB", 10**6)


@pytest.mark.parametrize("kind", ["passage", "doc"])
def test_real_runs_streamed(kind: str) -> None:
    folder = require(DATA / "runs_dl_hard" / "dataset")
    qrels = folder / f"dl_hard-{kind}.qrels"
    ev = Evaluator(qrels, METRICS, relevance_level=2, depth=1000)
    for run in sorted((folder / "baselines" / kind).glob("*.run"))[:3]:
        _same(ev.evaluate(run, block_rows=3000), ev.evaluate(read_run(run)))


def test_trec_eval_suite_run_streamed() -> None:
    folder = require(DATA / "trec_eval_tests")
    for missing in ("zero", "ignore"):
        ev = Evaluator(folder / "qrels.test", METRICS, missing=missing)
        _same(ev.evaluate(folder / "results.test", block_rows=100), ev.evaluate(read_run(folder / "results.test")))


def test_three_column_file_is_read_whole_with_its_rank_column(tmp_path: Path) -> None:
    # qid docid rank, larger than a block: not streamed as trec_eval's six columns, its rank column sniffed
    path = tmp_path / "r.txt"
    path.write_text("".join(f"q{i // 3} d{i} {i % 3 + 1}\n" for i in range(30)))
    qrels = Qrels.from_dict({f"q{i}": {f"d{3 * i + 1}": 1} for i in range(10)})
    streamed = evaluate(qrels, path, ["mrr"], block_rows=4)
    assert streamed["mrr"] == 0.5 and [n.kind for n in streamed.notices] == ["rank_column"]


def test_a_streamed_run_that_matches_nothing_says_why(tmp_path: Path) -> None:
    qrels = Qrels.from_dict({f"q{i}": {f"doc{i}": 1, f"doc{i + 1}": 0} for i in range(30)})
    path = tmp_path / "chunks.trec"  # chunk ids against document-id qrels: nothing matches
    path.write_text("".join(f"q{i} Q0 doc{i}#{j} {j + 1} {10 - j} t\n" for i in range(30) for j in range(5)))
    whole = evaluate(qrels, read_run(path), ["ndcg@10"])
    streamed = evaluate(qrels, path, ["ndcg@10"], block_rows=20)
    _same(streamed, whole)
    assert streamed.judged is not None and streamed.judged.nothing_judged
    assert streamed.judged.mismatch is not None and streamed.judged.mismatch.cause == "chunk"


def test_scoring_a_run_file_in_blocks_never_imports_pandas(tmp_path: Path) -> None:
    """A command that streams a TREC run (``rankscope evaluate``) does not pay pandas's import: Arrow's
    ``pa.array`` and ``pa.scalar`` would load it on their first call."""
    import subprocess
    import sys

    (tmp_path / "q.trec").write_text("q1 0 d1 1\nq2 0 d3 2\n")
    (tmp_path / "r.trec").write_text("".join(f"q{q} Q0 d{d} {d} {9 - d}.5 r\n" for q in (1, 2, 3) for d in range(1, 6)))
    code = ("import sys, rankscope as rs; r = rs.evaluate(sys.argv[1], sys.argv[2], ['ndcg@10', 'map'], block_rows=4); "
            "print(round(r.mean()['map'], 4), 'pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "q.trec"), str(tmp_path / "r.trec")],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(round((1.0 + 1 / 3) / 2, 4)), "False"]
