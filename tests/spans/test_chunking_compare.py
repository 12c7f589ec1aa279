"""compare_chunkings / rankscope chunking: one retriever per chunking, the same statistics as rs.compare."""

from __future__ import annotations

import json

import numpy as np
import pytest

import rankscope as rs
from clirun import cli
from rankscope.chunking import compare_chunkings, split
from rankscope.data.spans import SpanQrels
from rankscope.data.testset import Query, TestSet
from rankscope.errors import EmptyInputError, InvalidParameterError

TOPICS = ["熊猫", "长城", "黄河", "故宫", "西湖", "泰山", "长江", "敦煌", "丝路", "兵马俑", "天坛", "漓江"]


def corpus_and_spans():
    corpus, records, queries = {}, [], []
    for i, t in enumerate(TOPICS):
        filler = "".join(f"这是一段关于{TOPICS[(i + j) % len(TOPICS)]}的背景介绍。" for j in range(1, 6))
        answer = f"{t}的答案是编号{i}号。"
        text = filler[:40] + answer + filler[40:]
        corpus[f"doc{i}"] = text
        records.append({"query_id": f"q{i}", "doc_id": f"doc{i}", "start": 40, "end": 40 + len(answer)})
        queries.append(Query(f"q{i}", f"{t}的答案编号"))
    spans = SpanQrels.from_records(records, corpus=corpus)
    return TestSet(queries, None, corpus, "topics", spans=spans)


def test_compare_chunkings_uses_the_ordinary_statistics(tmp_path):
    ts = corpus_and_spans()
    cc = compare_chunkings(ts, {"small": "fixed:12", "mid": "fixed:30:10", "sent": split(ts.corpus, "sentences")},
                           "bm25", k=2, test="randomization", permutations=2000, progress=False)
    assert cc.names == ("small", "mid", "sent")
    # every mean is what rs.evaluate gives on that chunking's run
    for name, ch in (("small", split(ts.corpus, "fixed:12")), ("mid", split(ts.corpus, "fixed:30:10")),
                     ("sent", split(ts.corpus, "sentences"))):
        direct = rs.evaluate(ts.spans, cc.evaluations[name].run, list(cc.comparison.labels), chunking=ch)
        assert direct.mean() == pytest.approx(cc.comparison.means[name], abs=1e-15)
    # and the tests are rs.compare's on those results
    again = rs.compare(None, {n: cc.evaluations[n].result for n in cc.names}, list(cc.comparison.labels),
                       test="randomization", permutations=2000)
    assert [p.p_adjusted for p in again.pairs] == [p.p_adjusted for p in cc.comparison.pairs]
    # recall grows and context grows with k; k=2 point equals the table
    for name, c in cc.curves.items():
        assert np.all(np.diff(c["span_recall"]) >= -1e-12) and np.all(np.diff(c["context_size"]) >= 0)
        assert c["span_recall"][1] == cc.comparison.means[name]["span_recall@2"]
    row = cc.table()[0]
    assert row["chunking"] == "small" and row["chunks"] == len(split(ts.corpus, "fixed:12"))
    assert cc.chunkings["small"]["coverage"]["spans"] == 12
    data = cc.to_dict()
    assert data["rule"] == "chars>=1" and data["build"] == {"queries": 12, "spans": 12}
    html = cc.write_report(tmp_path / "r.html", "zh").read_text(encoding="utf-8")
    assert 'id="plot-context_recall"' in html and 'id="chunking"' in html and "分块方案" in html
    assert json.loads(cc.write_report(tmp_path / "r.json").read_text())["chunking"]["k"] == 2
    assert "span_recall@2" in cc.write_report(tmp_path / "r.md").read_text()


def test_custom_factory_and_query_subset():
    ts = corpus_and_spans()
    seen = []

    def factory(chunks):
        seen.append(len(chunks))
        ids = sorted(chunks)
        return lambda query, k: ids[:k]  # a bad retriever: the same chunks for every query

    cc = compare_chunkings(ts, ["fixed:20", "fixed:60"], factory, ["span_recall@3", "context_size@3"], k=3,
                           queries=["q1", "q2", "q3", "q4"], progress=False)
    assert seen == [len(split(ts.corpus, "fixed:20")), len(split(ts.corpus, "fixed:60"))]
    assert cc.build["queries"] == 4 and cc.retriever == "factory"
    big = split(ts.corpus, "fixed:60")
    first3 = sorted(big.chunk.tolist())[:3]
    assert cc.per_chunking_means()["fixed:60"]["context_size@3"] == float(big.sizes[big.lookup(first3)].sum())
    assert cc.comparison.labels == ("span_recall@3",) and cc.per_chunking == ("context_size@3",)


def test_errors():
    ts = corpus_and_spans()
    with pytest.raises(InvalidParameterError, match="at least 2 chunkings"):
        compare_chunkings(ts, ["fixed:20"], progress=False)
    with pytest.raises(InvalidParameterError, match="did you mean 'bm25'"):
        compare_chunkings(ts, ["fixed:20", "fixed:40"], "bm52", progress=False)
    with pytest.raises(EmptyInputError, match="no span judgments"):
        compare_chunkings(TestSet(ts.queries, None, ts.corpus), ["fixed:20", "fixed:40"], progress=False)
    with pytest.raises(InvalidParameterError, match="share the name"):
        compare_chunkings(ts, ["fixed:20", "fixed:20"], progress=False)


def test_cli_chunking(tmp_path):
    ts = corpus_and_spans()
    ts.to_json(tmp_path / "topics.json")
    out = cli("chunking", tmp_path / "topics.json", "-c", "fixed:12", "-c", "fixed:40", "-k", "2", "-f", "json",
              "--report", tmp_path / "r.html")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [r["chunking"] for r in data["table"]] == ["fixed:12", "fixed:40"]
    assert (tmp_path / "r.html").exists()
    table = cli("chunking", tmp_path / "topics.json", "-c", "fixed:12", "-c", "sentences", "--from-answers",
                width=80)
    assert table.returncode == 2 and "no reference answers" in table.stderr
    bad = cli("chunking", tmp_path / "topics.json", "-c", "fixd:12", "-c", "fixed:40", width=80)
    assert bad.returncode == 2 and "did you mean 'fixed'" in bad.stderr
    assert "Traceback" not in bad.stdout + bad.stderr


@pytest.mark.slow(reason="jieba tokenizes the bundled CMRC 2018 corpus once per chunking (about 10 s)")
def test_cli_chunking_on_the_bundled_chinese_set():
    out = cli("chunking", "--dataset", "cmrc2018", "-c", "fixed:128", "-c", "fixed:512", "--max-queries", "60",
              "-k", "3", "--lang", "zh", width=80)
    assert out.returncode == 0, out.stderr
    assert "分块方案" in out.stdout and "span_recall@3" in out.stdout


def test_only_what_is_comparable_across_chunkings_is_tested_fast(capsys):
    ts = corpus_and_spans()
    cc = compare_chunkings(ts, ["fixed:20", "fixed:60"], "bm25", k=2, progress=False)
    assert cc.comparison.labels == ("span_recall@2", "span_precision@2", "span_iou@2")
    assert cc.per_chunking == ("ndcg@2", "mrr@2", "context_size@2", "span_precision_omega")
    assert {p.metric for p in cc.comparison.pairs} == set(cc.comparison.labels)
    from rankscope.cli.chunking_cmd import print_chunkings

    print_chunkings(cc, "en")
    out = capsys.readouterr().out
    assert "Per chunking (not compared across chunkings)" in out and "not tested across chunkings" in out
    with pytest.raises(InvalidParameterError, match="can be compared across chunkings"):
        compare_chunkings(ts, ["fixed:20", "fixed:60"], "bm25", ["ndcg@2", "mrr@2"], progress=False)


@pytest.mark.slow
def test_only_what_is_comparable_across_chunkings_is_tested(tmp_path):
    """CMRC 2018, two chunk sizes: nDCG / MRR score each chunking's own chunk qrels and context size and precision Ω
    differ by construction - shown per chunking, never tested; span precision@5 and IoU@5 carry one finding."""
    ts = rs.load_dataset("cmrc2018")
    queries = [q.id for q in ts.queries if q.id in set(ts.spans.queries)][:60]
    cc = compare_chunkings(ts, ["fixed:128", "fixed:512"], "bm25", k=5, queries=queries, progress=False)
    assert cc.comparison.labels == ("span_recall@5", "span_precision@5", "span_iou@5")
    assert cc.per_chunking == ("ndcg@5", "mrr@5", "context_size@5", "span_precision_omega")
    assert {p.metric for p in cc.comparison.pairs} == set(cc.comparison.labels)  # nothing else is starred
    [same] = cc.same_information
    assert (same["a"], same["b"]) == ("span_precision@5", "span_iou@5") and same["r"] >= 0.99
    row = cc.table()[0]
    assert {"ndcg@5", "context_size@5", "span_precision_omega"} <= set(row)  # still shown, per chunking
    data = cc.to_dict()
    assert data["per_chunking"] == list(cc.per_chunking) and data["same_information"] == cc.same_information
    html = cc.write_report(tmp_path / "r.html").read_text(encoding="utf-8")
    assert "carry the same information" in html and "not tested across chunkings" in html
    md = cc.write_report(tmp_path / "r.md").read_text(encoding="utf-8")
    assert "span_precision@5 and span_iou@5 carry the same information" in md
