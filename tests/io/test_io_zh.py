"""The errors of reading and writing files, of the settings checks and of saved evaluations say themselves in
Chinese in a Chinese session (issue 17 §5), and in the same English as before otherwise.

Each case builds the error a user meets, and checks ``error.text("zh")`` is Chinese (no English prose, full-width
punctuation) and ``str(error)`` / ``text("en")`` the English message word for word.  The command-line cases run
``rankscope evaluate`` with ``--lang zh`` and without.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import rankscope
from clirun import cli
from prose import assert_chinese
from rankscope.constraints import Interval, OneOf, check
from rankscope.errors import RankscopeError

SRC = Path(__file__).resolve().parents[2] / "src"
#: the column layouts an error names (code, not prose)
LAYOUTS = ("query iter doc relevance", "query Q0 doc rank score tag")


def _raised(make: Callable[[], Any]) -> RankscopeError:
    with pytest.raises(RankscopeError) as info:
        make()
    return info.value


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def _cases(tmp: Path) -> dict[str, tuple[Callable[[], Any], str, str]]:
    """name: (what raises, its English message, a piece of its Chinese one)."""
    from rankscope import io
    from rankscope.datasets import dataset_info
    from rankscope.interpret.presets import get_scenario, standard_requirements
    from rankscope.io.convert import as_qrels, as_run
    from rankscope.io.rank_column import check_columns
    from rankscope.saved import load

    run_dup = _write(tmp, "dup.trec", "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d1 3 0.5 t\n")
    jsonl = _write(tmp, "r.jsonl", '{"qid": "q1", "docid": "d1", "score": 1}\n{"qid": "q1", "score": 2}\n')
    json_bad = _write(tmp, "r.json", '{"q1": {"d1": "high"}}')
    csv3 = _write(tmp, "r.csv", "q1,Q0,d1,1\n")
    table_dup = pa.table({"qid": ["q1", "q1"], "docid": ["d1", "d1"], "rel": [1, 0]})
    not_saved = _write(tmp, "x.json", '{"a": 1}')
    return {
        "setting": (lambda: check("depth", 0, (Interval(int, 1, None), None), "evaluate"),
                    "the 'depth' parameter of evaluate must be an int in the range [1, inf) or None; got 0",
                    "evaluate 的参数 'depth' 必须是 [1, inf) 范围内的整数或 None，实际为 0"),
        "choice": (lambda: check("missing", "none", (OneOf(("zero", "ignore")),), "evaluate"),
                   "the 'missing' parameter of evaluate must be one of 'zero', 'ignore'; got 'none'",
                   "必须是 'zero'、'ignore' 之一"),
        "policy": (lambda: rankscope.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, depth=-1),
                   "the 'depth' parameter of evaluate must be an int in the range [1, inf) or None; got -1",
                   "实际为 -1"),
        "trec_duplicate": (lambda: io.read_run(run_dup),
                           f"{run_dup}:3: duplicate run entry for query 'q1', document 'd1' (first at line 1)",
                           "第 3 行：结果文件中查询 'q1'、文档 'd1' 的条目重复（首次出现于第 1 行）"),
        "table_duplicate": (lambda: as_qrels(table_dup),
                            "row 2: duplicate qrels entry for query 'q1', document 'd1' (first at row 1)",
                            "第 2 行：qrels 中查询 'q1'、文档 'd1' 的条目重复（首次出现于第 1 行）"),
        "jsonl_missing": (lambda: io.read_run(jsonl),
                          f"{jsonl}:2: missing 'docid' (keys: ['qid', 'score'])",
                          "第 2 行：缺少 'docid'（现有的键：['qid', 'score']）"),
        "json_value": (lambda: io.read_run(json_bad),
                       f"{json_bad}: query 'q1', document 'd1': score must be a number, got 'high'",
                       "查询 'q1'、文档 'd1'：得分必须是数字，实际为 'high'"),
        "csv_no_header": (lambda: io.read_run(csv3, format="csv"),
                          f"{csv3}:1: a CSV/TSV file without a header must have 3 columns (query, doc, score), got 4; "
                          "add a header such as query_id,doc_id,score or read it with format='trec'",
                          "没有表头的 CSV/TSV 文件必须有 3 列"),
        "columns": (lambda: check_columns("qid,pid,rnk"),
                    "columns: 'rnk' is not a known column name; a run needs a query column (query_id, qid, ...), a doc "
                    "column (doc_id, docid, pid, ...) and a score (score, ...) or rank (rank, position) column, e.g. "
                    "columns='qid,docid,rank'",
                    "columns：'rnk' 不是已知的列名；结果文件需要一个查询列"),
        "format": (lambda: io.read_run(run_dup, format="xml"),
                   "unknown run format 'xml'; choose one of: trec, json, jsonl, csv, tsv, parquet, arrow",
                   "未知的格式 'xml'（结果文件）；可选：trec、json"),
        "options": (lambda: io.read_qrels(run_dup, format="trec", split="dev"),
                    "option(s) split not supported for trec qrels; supported: fast",
                    "trec 格式（qrels）不支持选项 split"),
        "swapped": (lambda: as_qrels(rankscope.Run.from_dict({"q1": {"d1": 1.0}}, "bm25")),
                    "got the run 'bm25' where qrels are expected: are the qrels and the run swapped? The judgments "
                    "come first: evaluate(qrels, run)",
                    "是否把 qrels 和 run 写反了？"),
        "not_a_run": (lambda: as_run(3.5),
                      "cannot use a float as a run; expected Run, a path, {query: {doc: score}}, {query: [doc, ...]}, "
                      "a DataFrame/Arrow table, a ranx Run or ir_measures ScoredDoc records",
                      "无法把 float 用作结果文件（run）"),
        "dataset": (lambda: dataset_info("nope"), "unknown dataset 'nope'; bundled datasets: ",
                    "未知的数据集 'nope'"),
        "scenario": (lambda: get_scenario("nope"), "unknown scenario 'nope'; known: faq, document_qa",
                     "未知的场景 'nope'；可选：faq、document_qa"),
        "standard": (lambda: standard_requirements("production:best"), "unknown standard 'production:best'; known: ",
                     "未知的标准"),
        "not_saved": (lambda: load(not_saved),
                      f"{not_saved}: not a saved rankscope evaluation (no \"schema\": \"rankscope.saved\"); save one "
                      "with rankscope.save(result, path)",
                      "不是已保存的 rankscope 评估结果"),
        "save_where": (lambda: rankscope.saved.save(object(), tmp / "out.json"),
                       "save takes an EvaluationResult or a Comparison, got object",
                       "save 只接受 EvaluationResult 或 Comparison"),
    }


CASES = ["setting", "choice", "policy", "trec_duplicate", "table_duplicate", "jsonl_missing", "json_value",
         "csv_no_header", "columns", "format", "options", "swapped", "not_a_run", "dataset", "scenario", "standard",
         "not_saved", "save_where"]


@pytest.mark.parametrize("case", CASES)
def test_io_and_core_errors_say_themselves_in_chinese(tmp_path: Path, case: str) -> None:
    make, english, chinese = _cases(tmp_path)[case]
    error = _raised(make)
    assert str(error).startswith(english) and error.text("en") == str(error), str(error)
    zh = error.text("zh")
    assert chinese in zh, zh
    assert_chinese(zh.replace(str(tmp_path), "DIR"), allowed=LAYOUTS)


def test_the_constraint_description_is_said_in_each_language() -> None:
    from rankscope.constraints import describe, said

    allowed = (OneOf(("a", "b")), Interval(float, 0, 1, "neither"), None)
    assert describe(allowed) == "one of 'a', 'b', a float in the range (0, 1) or None"
    assert said(allowed).text("zh") == "'a'、'b' 之一、(0, 1) 范围内的浮点数或 None"


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return cli(*args, width=100)


def test_evaluate_says_file_errors_in_chinese(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n")
    runs = {
        "dup.trec": ("q1 Q0 d1 1 2.0 t\nq1 Q0 d1 2 1.0 t\n",
                     "dup.trec:2: duplicate run entry for query 'q1', document 'd1' (first at line 1)",
                     "dup.trec 第 2 行：结果文件中查询 'q1'、文档 'd1' 的条目重复（首次出现于第 1 行）"),
        "run.json": (json.dumps({"q1": ["d1", 7.5]}),
                     "run.json: query 'q1', position 2: doc id must be a string or an integer, got 7.5",
                     "run.json：查询 'q1' 的第 2 项：文档编号必须是字符串或整数，实际为 7.5"),
        "run.jsonl": ('{"qid": "q1", "docid": "d1", "score": "x"}\n',
                      "run.jsonl:1: score must be a number, got 'x'",
                      "run.jsonl 第 1 行：得分必须是数字，实际为 'x'"),
    }
    for name, (text, english, chinese) in runs.items():
        run = _write(tmp_path, name, text)
        zh = _cli("evaluate", qrels, run, "--lang", "zh")
        assert zh.returncode == 2 and chinese in zh.stderr, zh.stderr
        assert_chinese(zh.stderr.replace(str(tmp_path), "DIR"))
        en = _cli("evaluate", qrels, run)
        assert en.returncode == 2 and en.stderr.strip().endswith(english), en.stderr


def test_evaluate_says_an_unknown_column_name_in_chinese(tmp_path: Path) -> None:
    qrels = _write(tmp_path, "qrels.txt", "q1 0 d1 1\n")
    run = _write(tmp_path, "run.tsv", "q1\td1\t1\n")
    zh = _cli("evaluate", qrels, run, "--columns", "qid,docid,rnk", "--lang", "zh")
    assert zh.returncode == 2 and "'rnk' 不是已知的列名" in zh.stderr, zh.stderr
    assert_chinese(zh.stderr.replace(str(tmp_path), "DIR"), allowed=("query_id, qid, ...", "doc_id, docid, pid, ..."))
    en = _cli("evaluate", qrels, run, "--columns", "qid,docid,rnk")
    assert "columns: 'rnk' is not a known column name; a run needs a query column" in en.stderr, en.stderr


def test_a_streamed_run_says_its_duplicate_line_as_the_whole_file_does(tmp_path: Path) -> None:
    from rankscope.errors import DuplicateLineError

    text = "".join(f"q{i // 10} Q0 d{i % 10} 1 {10 - i % 10} t\n" for i in range(60)) + "q5 Q0 d3 1 0.5 t\n"
    path = _write(tmp_path, "run.trec", text)
    qrels = rankscope.Qrels.from_dict({"q5": {"d3": 1}})
    with pytest.raises(DuplicateLineError) as whole:
        rankscope.evaluate(qrels, rankscope.read_run(path), ["map"])
    with pytest.raises(DuplicateLineError) as streamed:
        rankscope.evaluate(qrels, path, ["map"], block_rows=7)
    assert streamed.value.text("zh") == whole.value.text("zh")
    zh = whole.value.text("zh")
    assert "run.trec 第 61 行：结果文件中查询 'q5'、文档 'd3' 的条目重复（首次出现于第 54 行）" in zh, zh
    assert str(streamed.value).endswith("run.trec:61: duplicate run entry for query 'q5', document 'd3' "
                                        "(first at line 54)")
