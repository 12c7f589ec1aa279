"""`rankscope evaluate --span-qrels S --chunks C --run R -m span_recall@5`."""

from __future__ import annotations

import json

from clirun import cli
from prose import unwrap


def files(tmp_path):
    (tmp_path / "spans.jsonl").write_text('{"query_id": "q1", "doc_id": "d1", "start": 5, "end": 15}\n'
                                          '{"query_id": "q2", "doc_id": "d2", "start": 0, "end": 4, "grade": 2}\n')
    (tmp_path / "chunks.csv").write_text("chunk_id,doc_id,start,end\nd1#0,d1,0,10\nd1#1,d1,10,20\nd2#0,d2,0,10\n")
    (tmp_path / "run.trec").write_text("q1 Q0 d1#1 1 2.0 r\nq1 Q0 d1#0 2 1.0 r\nq2 Q0 d1#0 1 1.0 r\n")
    return [str(tmp_path / n) for n in ("spans.jsonl", "chunks.csv", "run.trec")]


def test_evaluate_with_span_qrels(tmp_path):
    spans, chunks, run = files(tmp_path)
    out = cli("evaluate", "--span-qrels", spans, "--chunks", chunks, "--run", run,
              "-m", "span_recall@1", "-m", "span_precision@2", "-m", "ndcg@10", "-f", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["mean"] == {"span_recall@1": 0.25, "span_precision@2": 0.25, "ndcg@10": 0.5}
    assert data["spans"]["chunk_rule"] == "chars>=1" and data["spans"]["coverage"]["cut"] == 1
    table = cli("evaluate", "--span-qrels", spans, "--chunks", chunks, "--run", run,
                "-m", "span_recall@1", "--rule", "contains", width=80)
    assert table.returncode == 0 and "chunk qrels by rule fraction>=1" in table.stdout
    assert "1 cut by a chunk boundary" in table.stdout


def test_evaluate_span_errors_exit_2(tmp_path):
    spans, chunks, run = files(tmp_path)
    for args, msg in [(["--span-qrels", spans], "--span-qrels needs --chunks"),
                      ([], "give either --qrels or --span-qrels"),
                      (["--span-qrels", spans, "--chunks", chunks, "--rule", "most"], "unknown chunk rule 'most'"),
                      (["--qrels", spans, "--chunks", chunks], "--chunks goes with --span-qrels")]:
        out = cli("evaluate", "--run", run, "-m", "span_recall@1", *args, width=80)
        assert out.returncode == 2 and msg in out.stderr, (args, out.stderr)
    (tmp_path / "bad.jsonl").write_text('{"query_id": "q1", "doc_id": "d1", "start": 5, "end": "x"}\n')
    out = cli("evaluate", "--run", run, "--span-qrels", tmp_path / "bad.jsonl", "--chunks", chunks,
              "-m", "span_recall@1", width=80)
    assert out.returncode == 2 and "bad.jsonl:1: field 'end': must be an integer, got 'x'" in out.stderr
    assert "Traceback" not in out.stdout + out.stderr


def test_spans_to_qrels_and_split(tmp_path):
    spans, chunks, run = files(tmp_path)
    out = cli("spans", "to-qrels", spans, "--chunks", chunks, "-o", tmp_path / "q.trec", "--rule", "contains")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "q.trec").read_text().splitlines() == ["q1 0 d1#0 0", "q1 0 d1#1 0", "q2 0 d2#0 2"]
    assert "rule fraction>=1" in unwrap(out.stderr) and "1 cut by a chunk boundary" in unwrap(out.stderr)
    # the derived qrels work with every command, e.g. the gate
    gate = cli("check", "--qrels", tmp_path / "q.trec", "--run", run, "-r", "mrr>=0.1")
    assert gate.returncode in (0, 1) and "Traceback" not in gate.stdout + gate.stderr
    from rankscope.data.spans import SpanQrels
    from rankscope.data.testset import Query, TestSet

    corpus = {"d1": "x" * 20, "d2": "y" * 10}
    TestSet([Query("q1", "a"), Query("q2", "b")], None, corpus, spans=SpanQrels.from_file(spans)).to_json(
        tmp_path / "ts.json")
    out = cli("spans", "split", tmp_path / "ts.json", "-c", "fixed:8", "-o", tmp_path / "c.jsonl", width=80)
    assert out.returncode == 0, out.stderr
    assert "5 chunks of 2 documents" in out.stderr and "2 judged spans" in out.stderr
