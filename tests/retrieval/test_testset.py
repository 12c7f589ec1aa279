"""TestSet: annotations, JSON (seed 001 format), JSONL, BEIR folders, audit and `rankscope testset check`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import cli
from conftest import DATA, require
from rankscope import TestSet
from rankscope.data.testset import Query
from rankscope.data.testset_audit import audit_testset
from rankscope.errors import DuplicateEntryError, EmptyInputError, InvalidParameterError, ParseError, RankscopeError

# the seed's own example, in its own format (no ids; graded scores optional)
SEED = [
    {"query": "Python编程语言", "relevant_docs": ["doc_0", "doc_1", "doc_5"],
     "relevance_scores": {"doc_0": 3, "doc_1": 2, "doc_5": 1}},
    {"query": "机器学习算法", "relevant_docs": ["doc_2", "doc_3"], "relevance_scores": {"doc_2": 3, "doc_3": 2}},
    {"query": "容器化部署", "relevant_docs": ["doc_6", "doc_7"]},
]


def test_seed_format_loads(tmp_path: Path) -> None:
    path = tmp_path / "test_set.json"
    path.write_text(json.dumps(SEED, ensure_ascii=False), encoding="utf-8")
    ts = TestSet.from_json(path)
    assert ts.query_ids == ["q1", "q2", "q3"] and ts.name == "test_set"
    assert ts["q1"].text == "Python编程语言"
    assert ts.judgments() == {
        "q1": {"doc_0": 3, "doc_1": 2, "doc_5": 1},
        "q2": {"doc_2": 3, "doc_3": 2},
        "q3": {"doc_6": 1, "doc_7": 1},
    }


def test_from_annotations_with_grades_answers_and_tags() -> None:
    ts = TestSet.from_annotations(
        ["a?", "b?"], [["d1", "d2"], ["d3"]], grades=[{"d1": 2, "d9": 0}, None],
        answers=["x", None], metadata=[{"tags": ["faq"]}, None], name="mine",
    )
    assert ts.judgments() == {"q1": {"d1": 2, "d2": 1, "d9": 0}, "q2": {"d3": 1}}
    assert ts["q1"].answers == ("x",) and ts["q2"].answers == ()
    assert ts["q1"].tags == ("faq",) and ts.has_answers
    with pytest.raises(InvalidParameterError, match="relevant has 1 entries for 2 queries"):
        TestSet.from_annotations(["a", "b"], [["d1"]])
    with pytest.raises(RankscopeError, match="grade of 'd1' must be an integer"):
        TestSet.from_annotations(["a"], [{"d1": "high"}])


def test_json_and_jsonl_round_trip(tmp_path: Path) -> None:
    ts = TestSet.from_annotations(
        ["什么是BM25？", "second"], [{"d1": 2, "d2": 0}, ["d3"]], answers=[["排序函数"], None],
        metadata=[{"tags": ["中文"]}, None], corpus={"d1": "文本", "d3": "text"}, name="rt",
    )
    ts.to_json(tmp_path / "t.json")
    back = TestSet.from_json(tmp_path / "t.json")
    assert back.name == "rt" and back.corpus == ts.corpus
    assert back.judgments() == ts.judgments() and back.queries == ts.queries
    assert dict(back["q1"].metadata) == {"tags": ["中文"]}
    assert "什么是BM25" in (tmp_path / "t.json").read_text(encoding="utf-8")  # readable, not \\u escapes
    ts.to_jsonl(tmp_path / "t.jsonl")
    again = TestSet.from_jsonl(tmp_path / "t.jsonl")
    assert again.judgments() == ts.judgments() and again.queries == ts.queries and again.corpus is None
    assert TestSet.from_file(tmp_path / "t.jsonl").query_ids == ["q1", "q2"]


def test_malformed_files_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "ok"}\n\n{"relevant_docs": ["d1"]}\n', encoding="utf-8")
    with pytest.raises(ParseError, match=r"bad.jsonl:3: no query text"):
        TestSet.from_jsonl(bad)
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"query": "ok"}\n{"query": \n', encoding="utf-8")
    with pytest.raises(ParseError, match=r"broken.jsonl:2: invalid JSON"):
        TestSet.from_jsonl(broken)
    js = tmp_path / "bad.json"
    js.write_text(json.dumps([{"query": "a"}, {"query": 3}]), encoding="utf-8")
    with pytest.raises(ParseError, match="record 1: the query text must be a string"):
        TestSet.from_json(js)
    (tmp_path / "empty.json").write_text("[]", encoding="utf-8")
    with pytest.raises(EmptyInputError):
        TestSet.from_json(tmp_path / "empty.json")


def test_duplicate_ids_and_stray_judgments_are_refused() -> None:
    with pytest.raises(DuplicateEntryError, match="'a' occurs twice"):
        TestSet([Query("a", "x"), Query("a", "y")])
    with pytest.raises(RankscopeError, match="not among the queries: 'zz'"):
        TestSet([Query("a", "x")], {"zz": {"d": 1}})


def test_beir_scifact_folder() -> None:
    folder = require(DATA / "beir_scifact")
    ts = TestSet.from_beir(folder)  # split "test"
    # SOURCE.txt: qrels/test.tsv 339 rows / 300 queries; corpus 5183 docs; ids are numeric strings
    assert (len(ts), len(ts.qrels), len(ts.corpus or {})) == (300, 339, 5183)
    assert all(q.id.isdigit() for q in ts.queries)
    train = TestSet.from_beir(folder, split="train")
    assert (len(train), len(train.qrels)) == (809, 919)
    with pytest.raises(FileNotFoundError, match="splits here: test, train"):
        TestSet.from_beir(folder, split="dev")


def test_beir_chinese_folder_and_audit_finds_the_known_duplicate() -> None:
    ts = TestSet.from_beir(require(DATA / "zh_cmrc2018_retrieval"), split="dev")
    assert (len(ts), len(ts.qrels), len(ts.corpus or {})) == (3219, 3219, 1104)
    audit = audit_testset(ts)
    # SOURCE.txt: DEV_519_QUERY_0 and DEV_525_QUERY_0 have the identical text
    assert audit.duplicates == [["DEV_519_QUERY_0", "DEV_525_QUERY_0"]]
    assert audit.no_relevant == [] and audit.missing_from_corpus == [] and audit.grades == {1: 3219}


def test_audit_reports_every_kind_of_problem() -> None:
    ts = TestSet.from_annotations(
        ["What is dense retrieval?", "what is dense retrieval", "How does BM25 rank documents",
         "How does BM25 rank document", "   ", "orphan question", "graded"],
        [["d1"], ["d1"], ["d2"], ["d2"], [], {"d3": 0}, {"d1": 3, "d404": 1}],
        answers=[None, None, None, None, None, "some answer", None],
        corpus={"d1": "a", "d2": "b", "d3": "c"},
    )
    a = audit_testset(ts, near_threshold=0.8)
    assert a.duplicates == [["q1", "q2"]]
    assert [(x, y) for x, y, _ in a.near_duplicates] == [("q3", "q4")]
    assert a.empty == ["q5"]
    assert a.no_relevant == ["q5", "q6"] and a.no_relevant_with_answers == ["q6"]
    assert a.missing_from_corpus == [("q7", "d404")]
    assert a.grades == {0: 1, 1: 5, 3: 1}
    assert a.problems == 1 + 1 + 1 + 2 + 1
    assert a.to_dict()["near_duplicates"][0]["a"] == "q3"


def test_cli_testset_check_table_and_json(tmp_path: Path) -> None:
    path = tmp_path / "seed.json"
    data = [*SEED, {"query": "python编程语言!", "relevant_docs": []}]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    out = cli("testset", "check", path, "--format", "json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["duplicates"] == [["q1", "q4"]] and report["no_relevant"] == ["q4"]
    assert report["grades"] == {"1": 3, "2": 2, "3": 2}
    table = cli("testset", "check", path, width=80)
    assert table.returncode == 0 and "duplicate queries" in table.stdout and "2 problems found" in table.stdout
    strict = cli("testset", "check", path, "--strict")
    assert strict.returncode == 1
    missing = cli("testset", "check", tmp_path / "nope.json")
    assert missing.returncode == 2 and "rankscope: error:" in missing.stderr


@pytest.mark.parametrize(("folder", "split"), [("beir_scifact", "test"), ("zh_cmrc2018_retrieval", "dev")])
def test_near_duplicate_search_equals_brute_force_on_real_queries(folder: str, split: str) -> None:
    import itertools

    from rankscope.data.testset_audit import _trigram_sets, near_duplicate_pairs, query_key

    ts = TestSet.from_beir(require(DATA / folder), split=split)
    keys = [query_key(q.text) for q in ts.queries][:400]
    grams = _trigram_sets(keys)
    for t in (0.5, 0.8):
        brute = [(i, j) for i, j in itertools.combinations(range(len(keys)), 2)
                 if len(grams[i] & grams[j]) / len(grams[i] | grams[j]) >= t]
        assert [(i, j) for i, j, _ in near_duplicate_pairs(keys, t)] == brute
        if t == 0.5:
            assert brute  # the check is not vacuous


def test_beir_round_trip(tmp_path: Path) -> None:
    ts = TestSet.from_annotations(
        ["什么是BM25？", "dense?"], [{"d1": 2, "d2": 0}, ["d3"]], answers=[["排序函数"], None],
        metadata=[{"tags": ["中文"]}, None], corpus={"d1": "文本", "d2": "x", "d3": "text"}, ids=["a", "7"],
    )
    ts.to_beir(tmp_path / "beir", split="dev")
    back = TestSet.from_beir(tmp_path / "beir", split="dev")
    assert back.queries == ts.queries and back.judgments() == ts.judgments() and back.corpus == ts.corpus
    assert back["a"].answers == ("排序函数",) and back["a"].tags == ("中文",)
    assert (tmp_path / "beir" / "qrels" / "dev.tsv").read_text().splitlines()[0] == "query-id\tcorpus-id\tscore"


def test_cli_testset_convert(tmp_path: Path) -> None:
    src = tmp_path / "seed.json"
    src.write_text(json.dumps(SEED, ensure_ascii=False), encoding="utf-8")
    out = cli("testset", "convert", src, tmp_path / "beir", width=80)
    assert out.returncode == 0 and "3 queries, 7 judgments" in out.stdout
    out = cli("testset", "convert", tmp_path / "beir", tmp_path / "t.jsonl")
    assert out.returncode == 0, out.stderr
    assert TestSet.from_jsonl(tmp_path / "t.jsonl").judgments() == TestSet.from_json(src).judgments()
    bad = cli("testset", "convert", tmp_path / "missing.json", tmp_path / "x.json", width=80)
    assert bad.returncode == 2 and "no such file" in bad.stderr
