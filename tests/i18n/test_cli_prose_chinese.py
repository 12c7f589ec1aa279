"""The command line and the chunking package say themselves in Chinese (issue 17 §5).

In a zh session every error the commands and :mod:`rankscope.chunking` raise, and every line of prose the commands
print (table headers, notes, "written to" lines, the start line of the service, click's usage mistakes), is Chinese;
the English output is unchanged.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clirun import cli
from prose import CJK, assert_chinese, unwrap
from rankscope.data.spans import SpanQrels
from rankscope.data.testset import Query, TestSet
from rankscope.errors import RankscopeError
from rankscope.i18n import gettext

SRC = Path(__file__).resolve().parents[2] / "src"
DL_HARD = Path(__file__).resolve().parents[3] / "shared" / "data" / "runs_dl_hard" / "dataset"
TOPICS = ["熊猫", "长城", "黄河", "故宫", "西湖", "泰山", "长江", "敦煌", "丝路", "兵马俑", "天坛", "漓江"]


def _flat(text: str) -> str:
    """``text`` with its line breaks read as a reader reads them: wrapped sentences whole again."""
    return unwrap(text)


def _cli(*args: str | Path) -> subprocess.CompletedProcess:
    """``rankscope ARGS`` through ``main`` (click's usage mistakes are said there), at 80 columns."""
    return cli(*args, width=80)


def _topics() -> TestSet:
    """Twelve Chinese documents, one question each, its answer span judged."""
    corpus, records, queries = {}, [], []
    for i, t in enumerate(TOPICS):
        filler = "".join(f"这是一段关于{TOPICS[(i + j) % len(TOPICS)]}的背景介绍。" for j in range(1, 6))
        answer = f"{t}的答案是编号{i}号。"
        corpus[f"doc{i}"] = filler[:40] + answer + filler[40:]
        records.append({"query_id": f"q{i}", "doc_id": f"doc{i}", "start": 40, "end": 40 + len(answer)})
        queries.append(Query(f"q{i}", f"{t}的答案编号"))
    return TestSet(queries, None, corpus, "topics", spans=SpanQrels.from_records(records, corpus=corpus))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli_zh")
    qids = [f"q{i}" for i in range(12)]
    (d / "qrels.txt").write_text("".join(f"{q} 0 d{q}a 1\n{q} 0 d{q}b 1\n" for q in qids))
    for name, order in (("bm25", ["a", "x1", "x2", "b"]), ("dense", ["x1", "a", "x2", "b"])):
        (d / f"{name}.trec").write_text("".join(f"{q} Q0 {f'd{q}{doc}' if len(doc) == 1 else doc} {r + 1} {10 - r} "
                                                f"{name}\n" for q in qids for r, doc in enumerate(order)))
    # two runs whose TREC tag is the same ("sys"): --baseline sys names both
    for name in ("one", "two"):
        (d / f"{name}.trec").write_text("".join(f"{q} Q0 d{q}a 1 1.0 sys\n" for q in qids))
    (d / "ts.jsonl").write_text("".join(json.dumps({"id": q, "query": f"问题 {q}", "relevant_doc_ids": [f"d{q}a"]},
                                                   ensure_ascii=False) + "\n" for q in qids))
    _topics().to_json(d / "topics.json")
    return {"dir": d, "qrels": d / "qrels.txt", "bm25": d / "bm25.trec", "dense": d / "dense.trec",
            "one": d / "one.trec", "two": d / "two.trec", "ts": d / "ts.jsonl", "topics": d / "topics.json"}


def _chinese_error(stderr: str, allowed: tuple[str, ...] = ()) -> None:
    """One line ``rankscope：错误：<a Chinese sentence>``."""
    assert stderr.startswith("rankscope：错误：") and stderr.count("\n") == 1, stderr
    assert CJK.search(stderr.removeprefix("rankscope：错误：")), stderr
    assert_chinese(stderr, allowed)


def _said_both_ways(error: RankscopeError, english: str) -> None:
    """``error`` in Chinese, and its English as it always was."""
    assert_chinese(error.text("zh"))
    assert error.text("en") == str(error) and english in str(error), str(error)


def _chunking_cases() -> dict[str, tuple[Callable[[], Any], str]]:
    from rankscope.chunking import compare_chunkings, make_factory, parse_spec

    ts = _topics()

    def compare(*args: Any, testset: TestSet = ts, **kwargs: Any) -> Any:
        return compare_chunkings(testset, *args, progress=False, **kwargs)

    return {
        "splitter_suggest": (lambda: parse_spec("fxed:256"), "unknown splitter 'fxed' in 'fxed:256': use one of "
                             "fixed, tokens, recursive, sentences, paragraphs (e.g. fixed:256:64); did you mean"),
        "splitter": (lambda: parse_spec("blob"), "unknown splitter 'blob'"),
        "overlap": (lambda: parse_spec("fixed:10:20"), "overlap (20) must be smaller than the chunk size (10)"),
        "size": (lambda: parse_spec("fixed"), "fixed needs a size, e.g. fixed:256"),
        "whole": (lambda: parse_spec("fixed:a"), "sizes in 'fixed:a' must be whole numbers"),
        "fields": (lambda: parse_spec("fixed:1:0:3"), "too many fields in 'fixed:1:0:3'; fixed takes size[:overlap]"),
        "minimum": (lambda: parse_spec("fixed:0"), "size must be an integer >= 1, got 0"),
        "retriever": (lambda: make_factory("bm52"), "unknown retriever 'bm52': use one of bm25, e5, dense, hybrid or "
                      "a function chunk texts -> retriever; did you mean 'bm25'?"),
        "retriever_plain": (lambda: make_factory("colbert"), "unknown retriever 'colbert'"),
        "two": (lambda: compare(["fixed:20"]), "compare_chunkings needs at least 2 chunkings, got 1"),
        "same_name": (lambda: compare(["fixed:20", "fixed:20"]), "two chunkings share the name 'fixed:20'"),
        "not_a_chunking": (lambda: compare([3, "fixed:20"]), "a chunking is a Chunking or a splitter spec"),
        "no_spans": (lambda: compare(["fixed:20", "fixed:40"], testset=TestSet(ts.queries, None, ts.corpus, "t")),
                     "test set 't' has no span judgments"),
        "no_corpus": (lambda: compare(["fixed:20", "fixed:40"], testset=TestSet(ts.queries, None, None, "t")),
                      "test set 't' has no corpus to chunk"),
        "k": (lambda: compare(["fixed:20", "fixed:40"], k=0), "k must be a positive integer, got 0"),
        "no_query": (lambda: compare(["fixed:20", "fixed:40"], queries=["nope"]),
                     "no query has span judgments to evaluate"),
    }


@pytest.mark.parametrize("case", sorted(_chunking_cases()))
def test_chunking_errors_in_chinese(case: str) -> None:
    call, english = _chunking_cases()[case]
    with pytest.raises(RankscopeError) as info:
        call()
    _said_both_ways(info.value, english)


def test_chunking_report_errors_in_chinese(tmp_path: Path) -> None:
    from rankscope.chunking import compare_chunkings

    cc = compare_chunkings(_topics(), ["fixed:12", "fixed:40"], "bm25", k=2, progress=False, permutations=200)
    with pytest.raises(RankscopeError) as info:
        cc.write_report(tmp_path / "r.docx")
    _said_both_ways(info.value, "cannot tell the report format from ")
    assert "'.html'、" in info.value.text("zh") or ".html、" in info.value.text("zh")
    with pytest.raises(RankscopeError) as info:
        cc.write_report(tmp_path / "no" / "r.html")
    _said_both_ways(info.value, "cannot write the report: folder ")


@pytest.mark.slow
def test_chunking_command_in_chinese(files: dict[str, Path], tmp_path: Path) -> None:
    args = ("chunking", files["topics"], "-c", "fixed:12", "-c", "fixed:40", "-k", "2", "--permutations", "200",
            "--report", tmp_path / "r.html")
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 0, zh.stdout + zh.stderr
    table = zh.stdout[:zh.stdout.index(gettext("Retrieval evaluation report",
                                               "zh"))]  # the chunking table and its notes
    assert "块数" in table and "平均长度（字符）" in _flat(table) and "配对检验逐个查询比较各分块。" in _flat(table)
    assert_chinese(table)
    assert_chinese(zh.stderr)
    assert _flat(zh.stderr).startswith("报告已写入 ")
    en = _cli(*args)
    assert "One retriever (bm25) built on each chunking" in _flat(en.stdout)
    assert _flat(en.stderr).startswith("report written to ")


@pytest.mark.parametrize("case", ["both", "max_queries", "no_corpus", "split_no_corpus", "demo_threads", "spec"])
def test_chunking_and_demo_command_errors_in_chinese(files: dict[str, Path], case: str) -> None:
    bare = files["dir"] / "bare.jsonl"
    bare.write_text('{"id": "q1", "query": "问题", "relevant_doc_ids": ["d1"]}\n', encoding="utf-8")
    out = files["dir"] / "c.jsonl"
    args, english = {
        "both": (("chunking", files["topics"], "--dataset", "cmrc2018", "-c", "fixed:12"),
                 "give a test set file or --dataset NAME (one of them)"),
        "max_queries": (("chunking", files["topics"], "-c", "fixed:12", "--max-queries", "-1"),
                        "--max-queries must be >= 0, got -1"),
        "no_corpus": (("chunking", bare, "-c", "fixed:12", "-c", "fixed:40"), "has no corpus to chunk"),
        "split_no_corpus": (("spans", "split", bare, "-c", "fixed:12", "-o", out), "has no corpus to split"),
        "demo_threads": (("demo", "--threads", "0", "--out", files["dir"] / "demo"), "--threads must be >= 1, got 0"),
        "spec": (("chunking", files["topics"], "-c", "fixd:12", "-c", "fixed:40"), "did you mean 'fixed'"),
    }[case]
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 2, zh.stdout + zh.stderr
    _chinese_error(zh.stderr)
    en = _cli(*args)
    assert en.returncode == 2 and en.stderr.startswith("rankscope: error: ") and english in en.stderr, en.stderr


def test_compare_written_lines_in_chinese(files: dict[str, Path], tmp_path: Path) -> None:
    args = ("compare", files["bm25"], files["dense"], "--qrels", files["qrels"], "-m", "mrr", "--permutations", "200",
            "--bootstrap", "100", "--report", tmp_path / "r.md", "--save", tmp_path / "c.json")
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 0, zh.stdout + zh.stderr
    assert "报告已写入 " in _flat(zh.stderr) and "比较结果已保存到 " in _flat(zh.stderr)
    assert_chinese(zh.stderr)
    en = _cli(*args)
    assert _flat(en.stderr) == f"report written to {tmp_path / 'r.md'} comparison saved to {tmp_path / 'c.json'} "


@pytest.mark.parametrize("case", ["unknown", "ambiguous"])
def test_compare_baseline_errors_in_chinese(files: dict[str, Path], case: str) -> None:
    runs, given, english = {
        "unknown": ((files["bm25"], files["dense"]), "bm52", "--baseline 'bm52' is neither a run name, a TREC tag nor "
                    "one of the run files (runs: bm25, dense)"),
        "ambiguous": ((files["one"], files["two"]), "sys", f"--baseline 'sys' is ambiguous: it is the TREC tag of "
                      f"{files['one']} (run 'one') and the TREC tag of {files['two']} (run 'two'); give the file "
                      "path or the run name"),
    }[case]
    args = ("compare", *runs, "--qrels", files["qrels"], "-m", "mrr", "--baseline", given)
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 2, zh.stdout + zh.stderr
    _chinese_error(zh.stderr)
    if case == "ambiguous":
        assert "TREC 标签（结果 'one'）、" in zh.stderr and "（结果：" not in zh.stderr
    en = _cli(*args)
    assert en.returncode == 2 and en.stderr == f"rankscope: error: {english}\n"


def test_evaluate_with_several_runs_in_chinese(files: dict[str, Path], tmp_path: Path) -> None:
    args = ("evaluate", "--qrels", files["qrels"], "--run", files["bm25"], "--run", files["dense"], "-m", "mrr")
    zh = _cli(*args, "--per-query-dir", tmp_path / "zh", "--lang", "zh")
    assert zh.returncode == 0, zh.stdout + zh.stderr
    assert "2 个结果文件" in zh.stdout and "已评估" in zh.stdout and "float32" in zh.stdout
    assert "缺失查询计零（missing=zero）" in _flat(zh.stdout)
    assert_chinese(zh.stdout)
    assert "个结果文件的逐查询数值已写入" in zh.stderr
    assert_chinese(zh.stderr)
    en = _cli(*args, "--per-query-dir", tmp_path / "en")
    assert en.stdout.startswith("2 runs ")
    assert ("policies: missing=zero; 'missing' = qrels queries absent from the run, 'not in qrels' = run queries "
            "without judgments") in _flat(en.stdout)
    assert _flat(en.stderr).startswith(f"per-query values of 2 runs written to {tmp_path / 'en'}")


@pytest.mark.parametrize("case", ["span_chunks", "provenance", "chunks", "neither", "plugin"])
def test_evaluate_option_errors_in_chinese(files: dict[str, Path], case: str) -> None:
    run = ("--run", files["bm25"])
    args, english = {
        "span_chunks": ((*run, "--span-qrels", files["qrels"]), "--span-qrels needs --chunks (chunk_id, doc_id, "
                        "start, end of the run's ids)"),
        "provenance": ((*run, "--span-qrels", files["qrels"], "--chunks", files["qrels"], "--provenance",
                        files["qrels"]), "--provenance goes with --qrels"),
        "chunks": ((*run, "--qrels", files["qrels"], "--chunks", files["qrels"]), "--chunks goes with --span-qrels"),
        "neither": (run, "give either --qrels or --span-qrels (with --chunks)"),
        "plugin": ((files["qrels"], files["bm25"], "--plugin", "no_such_module_xyz"),
                   "cannot import plugin module 'no_such_module_xyz': No module named 'no_such_module_xyz'"),
    }[case]
    zh = _cli("evaluate", *args, "--lang", "zh")
    assert zh.returncode == 2, zh.stdout + zh.stderr
    _chinese_error(zh.stderr, allowed=("No module named",))  # Python's own words, shown as they are
    en = _cli("evaluate", *args)
    assert en.returncode == 2 and en.stderr == f"rankscope: error: {english}\n"


@pytest.mark.parametrize("case", ["both", "inputs"])
def test_power_errors_in_chinese(files: dict[str, Path], case: str) -> None:
    args, english = {
        "both": (("power", files["bm25"], files["dense"], "--sd", "0.1", "--delta", "0.02"),
                 "give either two runs or --sd, not both"),
        "inputs": (("power", files["bm25"], "--delta", "0.02"), "give two run files and --qrels, or --sd and --delta"),
    }[case]
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 2, zh.stdout + zh.stderr
    _chinese_error(zh.stderr)
    assert _cli(*args).stderr == f"rankscope: error: {english}\n"


@pytest.mark.parametrize("case", ["spec", "import", "attribute"])
def test_run_retriever_errors_in_chinese(files: dict[str, Path], case: str) -> None:
    spec, english = {
        "spec": ("search", "--retriever must be module:object (e.g. myretriever:search), got 'search'"),
        "import": ("no_such_module_xyz:search", "cannot import 'no_such_module_xyz' for --retriever: "),
        "attribute": ("json:lods", "'json' has no 'lods' (did you mean 'loads'?)"),
    }[case]
    args = ("run", "--retriever", spec, "--testset", files["ts"], "--out", files["dir"] / "mine.trec")
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 2, zh.stdout + zh.stderr
    _chinese_error(zh.stderr, allowed=("No module named",))  # Python's own words, shown as they are
    en = _cli(*args)
    assert en.returncode == 2 and en.stderr.startswith(f"rankscope: error: {english}")


def test_serve_in_chinese(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    refused = _cli("serve", "--host", "0.0.0.0", "--lang", "zh")
    assert refused.returncode == 2 and "0.0.0.0" in refused.stderr, refused.stderr
    _chinese_error(refused.stderr)
    assert _cli("serve", "--host", "0.0.0.0").stderr.startswith(
        "rankscope: error: refusing to listen on 0.0.0.0 without a token: ")
    import uvicorn

    import rankscope.service.app as service_app

    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)  # the start line only: no server
    monkeypatch.setattr(service_app, "create_app", lambda settings: object())
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    zh = _cli("serve", "--db", db, "--port", "8123", "--lang", "zh")
    assert zh.returncode == 0, zh.stdout + zh.stderr
    assert zh.stderr == f"rankscope：服务运行于 http://127.0.0.1:8123/（API 位于 /api/v1，数据库 {db}）\n"
    assert_chinese(zh.stderr)
    assert _cli("serve", "--db", db, "--port", "8123").stderr == (
        f"rankscope: serving on http://127.0.0.1:8123/ (API at /api/v1, database {db})\n")


def test_datasets_list_in_chinese() -> None:
    zh = _cli("datasets", "list", "--lang", "zh")
    assert zh.returncode == 0, zh.stdout + zh.stderr
    assert "空气动力学论文摘要" in _flat(zh.stdout) and "未声明（研究用测试集，" in zh.stdout
    assert "中文维基百科" in zh.stdout
    assert_chinese(zh.stdout)
    en = _cli("datasets", "list")
    assert "Cranfield II: 1,400 aerodynamics abstracts" in en.stdout and "none stated (research collection" in en.stdout
    from rankscope.datasets import dataset_info

    assert dataset_info("cranfield")["licence"] == "none stated (research collection, see README)"  # unchanged


@pytest.mark.parametrize("case", ["range", "no_value"])
def test_usage_errors_no_longer_english_in_chinese(case: str) -> None:
    args, chinese, english = {
        "range": (("serve", "--port", "0"), "'--port' 的值无效：应大于或等于 1",
                  "Invalid value for '--port': Input should be greater than or equal to 1"),
        "no_value": (("datasets", "list", "--json=yes"), "选项 --json 不接受值",
                     "Option '--json' does not take a value."),
    }[case]
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode == 2 and chinese in zh.stderr and "用法错误" not in zh.stderr, zh.stderr
    _chinese_error(zh.stderr)
    en = _cli(*args)
    assert en.returncode == 2 and en.stderr.startswith(f"rankscope: error: {english}"), en.stderr


def test_testset_check_lists_ids_the_chinese_way(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "query": "", "relevant_doc_ids": ["d1"]}) + "\n"
                            for i in range(3)))
    zh = _cli("testset", "check", path, "--lang", "zh")
    assert "q0、q1、q2" in zh.stdout, zh.stdout
    assert "q0, q1, q2" in _cli("testset", "check", path).stdout


def _commands(files: dict[str, Path]) -> dict[str, tuple[Any, ...]]:
    """Each command of the command line on real input: DL-HARD's passage qrels and runs (50 queries, grades 0-3),
    the bundled CMRC 2018 test set, a small Chinese test set with span judgments (chunked and compared: the
    chunking of the whole CMRC corpus takes ~10 s, and its Chinese is the same)."""
    qrels, runs = DL_HARD / "dl_hard-passage.qrels", DL_HARD / "baselines" / "passage"
    bm25, rm3, d = runs / "bm25.run", runs / "bm25+rm3.run", files["dir"]
    return {
        "evaluate": ("evaluate", qrels, bm25, "-l", "2", "--report", d / "e.md", "--save", d / "e.json"),
        "evaluate_many": ("evaluate", "--qrels", qrels, "--run", bm25, "--run", rm3, "-l", "2", "-m", "ndcg@10"),
        "evaluate_spans": ("evaluate", "--span-qrels", d / "spans.jsonl", "--chunks", d / "chunks.jsonl", "--run",
                           d / "chunk.trec", "-m", "span_recall@2"),
        "compare": ("compare", bm25, rm3, "--qrels", qrels, "-l", "2", "-m", "ndcg@10", "--permutations", "500",
                    "--bootstrap", "200"),
        "check": ("check", "--qrels", qrels, "--run", rm3, "-l", "2", "-r", "ndcg@10>=0.25", "--baseline", bm25,
                  "--max-drop", "ndcg@10=0.05"),
        "power": ("power", bm25, rm3, "--qrels", qrels, "-l", "2", "--delta", "0.02"),
        "run": ("run", "bm25", "--testset", files["ts"], "--corpus", d / "corpus.jsonl", "--out", d / "r.trec",
                "-k", "5", "--no-progress"),
        "spans_split": ("spans", "split", files["topics"], "-c", "fixed:12", "-o", d / "split.jsonl"),
        "spans_to_qrels": ("spans", "to-qrels", d / "spans.jsonl", "--chunks", d / "chunks.jsonl", "-o",
                           d / "chunk-qrels.txt"),
        "testset_check": ("testset", "check", files["ts"]),
        "testset_convert": ("testset", "convert", files["ts"], d / "ts.json"),
        "datasets": ("datasets", "list"),
        "chunking": ("chunking", files["topics"], "-c", "fixed:12", "-c", "fixed:40", "-k", "2",
                     "--permutations", "200"),
    }


@pytest.mark.parametrize("case", sorted(_commands({"dir": Path(), "ts": Path(), "topics": Path()})))
def test_each_command_speaks_chinese_on_real_input(files: dict[str, Path], case: str) -> None:
    """Everything a command prints in a zh session is Chinese (run and system names, metric names and paths aside);
    in English it prints no Chinese (the test sets' own Chinese text aside)."""
    if not DL_HARD.exists():
        pytest.skip("the shared DL-HARD data is not here")
    from rankscope.chunking import split

    d = files["dir"]
    ts = _topics()
    chunks = split(ts.corpus or {}, "fixed:20")
    chunks.to_file(d / "chunks.jsonl")
    assert ts.spans is not None
    ts.spans.to_file(d / "spans.jsonl")
    (d / "chunk.trec").write_text("".join(f"q{i} Q0 doc{i}#{j} {j + 1} {9 - j} c\n" for i in range(12)
                                          for j in range(3)))
    (d / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"dq{i}a", "text": f"问题 q{i} 的答案"},
                                                       ensure_ascii=False) + "\n" for i in range(12)), "utf-8")
    args = _commands(files)[case]
    zh = _cli(*args, "--lang", "zh")
    assert zh.returncode in (0, 1), zh.stdout + zh.stderr  # check: 1 when a requirement fails
    assert_chinese(zh.stdout + zh.stderr, allowed=(" vs ",))  # "配对比较：rm3 vs bm25"
    en = _cli(*args)
    assert en.returncode == zh.returncode, en.stderr
    if case not in ("datasets", "chunking"):  # the catalog's and CMRC's own Chinese text
        assert not CJK.search(en.stdout + en.stderr), en.stderr


@pytest.mark.slow
def test_the_demo_speaks_chinese(tmp_path: Path) -> None:
    zh = _cli("demo", "--quick", "--dataset", "cmrc2018", "--out", tmp_path, "--no-progress", "--lang", "zh")
    assert zh.returncode == 0, zh.stdout + zh.stderr
    assert "CMRC 2018（dev）段落检索版" in zh.stdout and "被切开的片段" in zh.stdout
    assert_chinese(zh.stdout + zh.stderr)
