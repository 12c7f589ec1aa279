"""The errors of ``rankscope.data`` (test sets, corpora, span judgments, chunkings, runs and qrels built in code) say
themselves in Chinese, with their English unchanged (issue 17 §5); so do ``rankscope testset`` and
``rankscope spans`` when they fail on such a file."""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from clirun import cli
from prose import assert_chinese
from rankscope.data.chunking import Chunking
from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.data.span_build import locate_answers, squad_spans
from rankscope.data.span_rules import ChunkRule
from rankscope.data.spans import SpanQrels
from rankscope.data.testset import Query, TestSet
from rankscope.data.testset_audit import audit_testset
from rankscope.data.units import check_unit
from rankscope.errors import RankscopeError
from rankscope.io.testset import read_corpus, read_json, read_jsonl

SRC = Path(__file__).resolve().parents[2] / "src"


def _write(tmp: Path, name: str, data: Any) -> Path:
    path = tmp / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _raised(call: Callable[[], Any]) -> RankscopeError:
    with pytest.raises(RankscopeError) as info:
        call()
    return info.value


#: (case, what raises given a temporary folder, the English message as rankscope has always said it, a piece of the
#: Chinese one)
CASES: list[tuple[str, Callable[[Path], Any], str, str]] = [
    ("null_id", lambda d: read_json(_write(d, "t.json", [{"query": "x", "relevant_ids": [None]}])),
     "t.json: record 0: query 'q1': relevant_ids item 0: null id", "编号为空值（null）"),
    ("two_names", lambda d: read_json(_write(d, "t.json", [{"query": "x", "question": "y"}])),
     "t.json: record 0: both 'query' and 'question' given (record 0); keep one of them", "请只保留其中一个"),
    ("grade", lambda d: read_json(_write(d, "t.json", [{"query": "x", "relevance_scores": {"d1": 1.5}}])),
     "t.json: record 0: query 'q1': the grade of 'd1' must be an integer, got 1.5", "的等级必须是整数"),
    ("empty_id", lambda d: read_json(_write(d, "t.json", [{"qid": " ", "query": "x"}])),
     "t.json: record 0: field 'qid': empty id ' '", "字段 'qid'：编号为空"),
    ("no_query", lambda d: read_json(_write(d, "t.json", [])), "t.json: the test set holds no query", "没有任何查询"),
    ("shape", lambda d: read_json(_write(d, "t.json", {"querys": []})),
     "t.json: expected a list of records or an object with a 'queries' list (did you mean 'queries'?)",
     "是否想写 'queries'？"),
    ("twice", lambda d: read_json(_write(d, "t.json", [{"id": "a", "query": "x"}, {"id": "a", "query": "y"}])),
     "t.json: test set: query id 'a' occurs twice", "出现了两次"),
    ("evidence", lambda d: read_jsonl(_write(d, "t.jsonl", '{"query": "x", "evidence": [{"doc_id": "d", "start": 3, '
                                                            '"end": 1}]}\n')),
     "t.jsonl:1: evidence 1, field 'end': a span needs start < end (end exclusive), got start 3, end 1",
     "t.jsonl 第 1 行：第 1 条证据，字段 'end'：片段须满足"),
    ("evidence_text", lambda d: read_json(_write(d, "t.json", {
        "queries": [{"query": "x", "evidence": [{"doc_id": "d1", "start": 0, "end": 3, "text": "abd"}]}],
        "corpus": {"d1": "abcdef"}})),
     "t.json: record 0, evidence 1, field 'text': 'abd' differs from the document's text at [0, 3): 'abc'",
     "第 0 条记录，第 1 条证据"),
    ("corpus_twice", lambda d: read_corpus(_write(d, "c.jsonl", '{"id": "d1", "text": "a"}\n'
                                                                '{"id": "d1", "text": "b"}\n')),
     "c.jsonl:2: document id 'd1' occurs twice", "c.jsonl 第 2 行：文档编号 'd1' 出现了两次"),
    ("corpus_object", lambda d: read_corpus(_write(d, "c.json", "[3]")), "c.json: record 0: expected an object",
     "第 0 条记录：应为 JSON 对象"),
    ("unknown_doc", lambda d: SpanQrels.from_records([{"query_id": "q", "doc_id": "d11", "start": 0, "end": 2}],
                                                      corpus={"d1": "abc"}),
     "record 1, field 'doc_id': unknown document 'd11' (not in the corpus); did you mean 'd1'?", "是否想写 'd1'？"),
    ("past_end", lambda d: SpanQrels(["q"], ["d1"], [0], [9]).validate({"d1": "abcde"}),
     "span judgments: record 1, field 'end': 9 is past the end of document 'd1' (5 characters)",
     "片段标注：第 1 条记录，字段 'end'：9 超出了文档 'd1' 的末尾"),
    ("more", lambda d: SpanQrels(["q"] * 3, ["d"] * 3, [-1, -2, -3], [1, 1, 1]),
     "record 1, field 'start': must be >= 0, got -1 (and 2 more)", "（另有 2 个）"),
    ("chunk_twice", lambda d: Chunking.from_records([{"chunk_id": "a", "doc_id": "d", "start": 0, "end": 5},
                                                     {"chunk_id": "a", "doc_id": "d", "start": 5, "end": 9}]),
     "record 2, field 'chunk_id': chunk id 'a' occurs twice (also record 1)", "（另一处：第 1 条记录）"),
    ("llamaindex", lambda d: Chunking.from_llamaindex([SimpleNamespace(node_id="n1", ref_doc_id="d",
                                                                       start_char_idx=None, end_char_idx=None)]),
     "LlamaIndex nodes: record 1: no 'start' field (accepted names: start, start_char, start_char_idx, start_index, "
     "begin, char_start; keys here: chunk_id, doc_id, start, end)", "LlamaIndex 节点：第 1 条记录：没有 'start' 字段"),
    ("hit", lambda d: Chunking.from_hits([SimpleNamespace(id="c1", metadata={}, text="x")]),
     "hit 1 ('c1') carries no document offsets (metadata 'ref_doc_id'/'doc_id' + 'start_char_idx'/'start_index')",
     "没有文档内的偏移"),
    ("run_twice", lambda d: Run(["q1", "q1"], ["d1", "d1"], [1.0, 2.0]),
     "duplicate run entry for query 'q1', document 'd1' (rows 0 and 1)",
     "结果文件（run）中查询 'q1' 的文档 'd1' 重复出现"),
    ("qrels_null", lambda d: Qrels(["q1", None], ["d1", "d2"], [1, 1]),
     "query id is missing (null) in row 1", "查询编号 缺失（null）"),
    ("grade_fraction", lambda d: Qrels(["q1"], ["d1"], [0.5]),
     "relevance grade must be an integer, got np.float64(0.5) in row 0", "相关性等级 必须是整数"),
    ("run_mix", lambda d: Run.from_dict({"q1": {"d1": 1.0}, "q2": ["d2"]}),
     "run: every query must map to either {doc: score} or a ranked list, not a mix", "二者不能混用"),
    ("stray", lambda d: TestSet([Query("q1", "x")], {f"s{i}": {"d": 1} for i in range(5)}),
     "test set: judgments for 5 query ids that are not among the queries: 's0', 's1', 's2' (and 2 more)",
     "'s0'、's1'、's2'（另有 2 个）"),
    ("annotations", lambda d: TestSet.from_annotations(["a?", "b?"], [["d1"]]),
     "from_annotations: relevant has 1 entries for 2 queries", "而查询有 2 个"),
    ("rule", lambda d: ChunkRule.parse("bogus"),
     "unknown chunk rule 'bogus'; use 'any', 'contains', 'chars>=N' or 'fraction>=F'", "未知的块规则 'bogus'"),
    ("unit", lambda d: check_unit("bogus"),
     "unknown unit 'bogus'; use one of chars, words, jieba, hf:NAME, tiktoken:ENCODING", "请使用 chars、words、jieba"),
    ("answers", lambda d: locate_answers(TestSet([Query("q1", "x")], name="ts")),
     "test set 'ts' has no corpus to find the answers in", "没有可在其中查找答案的语料库"),
    ("squad", lambda d: squad_spans({"data": [{"paragraphs": [{"context": "abc", "qas": []}]}]}),
     "no answer of the SQuAD-style data could be placed", "没有一个答案能够定位"),
    ("near", lambda d: audit_testset(TestSet([Query("q1", "x")]), near_threshold=2),
     "near_threshold must be within (0, 1], got 2", "near_threshold 须在 (0, 1] 之内"),
]


@pytest.mark.parametrize("case", [c[0] for c in CASES])
def test_data_errors_say_themselves_in_chinese(tmp_path: Path, case: str) -> None:
    _, call, english, chinese = next(c for c in CASES if c[0] == case)
    error = _raised(lambda: call(tmp_path))
    assert str(error).replace(f"{tmp_path}{os.sep}", "") == english  # the English of before, unchanged
    assert error.text("en") == str(error)
    zh = error.text("zh").replace(f"{tmp_path}{os.sep}", "")
    assert_chinese(zh)
    assert chinese in zh, zh


def test_a_lenient_reading_lists_its_findings_in_chinese(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.json", [{"query": "x", "relevant_ids": [None]}, {"query": 3},
                                        {"query": "y", "gold_idz": ["d"]}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ts = read_json(path, lenient=True)
    assert [i.severity for i in ts.issues] == ["error", "error", "warning"]
    for issue in ts.issues:
        assert_chinese(issue.reason("zh"))
        assert_chinese(issue.text("zh"))
        assert issue.text("en") == str(issue)
    assert [i.reason("en") for i in ts.issues] == [
        "query 'q1': relevant_ids item 0: null id", "the query text must be a string, got 3",
        "unknown key 'gold_idz' in 1 record (first: record 2) is not used for scoring (did you mean 'gold_ids'?)"]


def _cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return cli(*args, cwd=cwd, width=100)


def test_testset_and_spans_commands_say_data_errors_in_chinese(tmp_path: Path) -> None:
    _write(tmp_path, "t.json", [{"query": "x", "relevant_ids": [None]}, {"query": 3}])
    _write(tmp_path, "spans.jsonl", '{"query_id": "q1", "doc_id": "d1", "start": 0, "end": 5}\n'
                                    '{"query_id": "q1", "doc_id": "d1", "start": 7, "end": "x"}\n')
    _write(tmp_path, "ok.jsonl", '{"query_id": "q1", "doc_id": "d1", "start": 0, "end": 5}\n')
    _write(tmp_path, "chunks.jsonl", '{"chunk_id": "c1", "doc_id": "d1", "start": 0, "end": 10}\n')
    commands = {
        ("testset", "convert", "t.json", "o.jsonl"): (
            "t.json: record 0: query 'q1': relevant_ids item 0: null id",
            "t.json：第 0 条记录：查询 'q1'：relevant_ids 中下标为 0 的项：编号为空值（null）"),
        ("spans", "to-qrels", "spans.jsonl", "--chunks", "chunks.jsonl", "--out", "x.qrels"): (
            "spans.jsonl:2: field 'end': must be an integer, got 'x'",
            "spans.jsonl 第 2 行：字段 'end'：必须是整数，实际为 'x'"),
        ("spans", "to-qrels", "ok.jsonl", "--chunks", "chunks.jsonl", "--out", "x.qrels", "--rule", "chars>=0"): (
            "rule chars>=N needs a whole number N >= 1, got 0.0", "规则 chars>=N 需要整数 N >= 1，实际为 0.0"),
    }
    for args, (english, chinese) in commands.items():
        zh = _cli(*args, "--lang", "zh", cwd=tmp_path)
        assert zh.returncode == 2 and zh.stderr == f"rankscope：错误：{chinese}\n", zh.stderr
        assert_chinese(zh.stderr)
        en = _cli(*args, cwd=tmp_path)
        assert en.returncode == 2 and en.stderr == f"rankscope: error: {english}\n", en.stderr
    check = cli("testset", "check", "t.json", "--lang", "zh", cwd=tmp_path, width=140)  # the lenient reading's findings
    assert "编号为空值（null）" in check.stdout and "查询文本必须是字符串" in check.stdout, check.stdout
    assert_chinese(check.stdout)


def test_an_empty_test_set_can_be_checked(tmp_path: Path) -> None:
    """A BEIR folder whose only judgment has an empty document id: the lenient reading keeps no query, and the
    audit reports that instead of failing on an empty trigram table."""
    (tmp_path / "beir" / "qrels").mkdir(parents=True)
    _write(tmp_path, "beir/qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\t\t1\n")
    _write(tmp_path, "beir/queries.jsonl", '{"_id": "q1", "text": "x"}\n')
    assert audit_testset(TestSet([])).queries == 0
    zh = _cli("testset", "check", "beir", "--lang", "zh", cwd=tmp_path)
    assert zh.returncode in (0, 1) and "Traceback" not in zh.stderr, zh.stderr
    assert "corpus-id 为空" in zh.stdout, zh.stdout
    assert_chinese(zh.stdout)
