"""The errors of a retriever evaluation say themselves in Chinese (issue 17 §5): what a user's own retriever
returns wrong (``None``, a string, items that are not hits ...), the arguments of the library and the baselines,
the resume cache, fusion; in a zh session the command line prints them in Chinese, the English unchanged."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import rankscope
from prose import assert_chinese
from rankscope.data.testset import Query, TestSet
from rankscope.errors import RankscopeError
from rankscope.retrieval import BM25Retriever, fuse

CJK = re.compile(r"[\u4e00-\u9fff]")
SRC = Path(__file__).resolve().parents[2] / "src"


def _ts(n: int = 3, answers: bool = False) -> TestSet:
    queries = [Query(f"q{i}", f"question {i}", answers=("paris",) if answers else ()) for i in range(n)]
    return TestSet(queries, {f"q{i}": {f"d{i}": 1} for i in range(n)}, name="t")


def _raised(retriever: Any, ts: TestSet | None = None, **options: Any) -> RankscopeError:
    with pytest.raises(RankscopeError) as info:
        rankscope.evaluate_retriever(retriever, ts or _ts(), ["mrr"], progress=False, workers=1, retries=0,
                                     **options)
    return info.value


def _both(error: RankscopeError, english: str, chinese: str) -> str:
    """``error`` says ``english`` as before (str and text("en")) and a Chinese sentence holding ``chinese``."""
    assert str(error) == english
    assert error.text("en") == english
    zh = error.text("zh")
    assert_chinese(zh)
    assert chinese in zh, zh
    return zh


# -- what a retriever returns -------------------------------------------------------------------------------
def none(query: str, k: int) -> Any:
    hits = [query]  # noqa: F841 - the forgotten return


def string(query: str, k: int) -> Any:
    return "d1 d2"


def no_id(query: str, k: int) -> Any:
    return [{"doc": "d1", "score": 1.0}]


def objects(query: str, k: int) -> Any:
    return [object()]


def float_id(query: str, k: int) -> Any:
    return [(1.5, 0.3)]


def word_score(query: str, k: int) -> Any:
    return [("d1", "high")]


def chunks(query: str, k: int) -> Any:
    return ["d0#1"]


class Batch:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def search_batch(self, queries: list[str], k: int) -> Any:
        return self.answer


AT = " (query 'q0': 'question 0'; retriever {name!r})"
CONTRACT = {
    "none": (none, "none returned None instead of a list of hits (a missing 'return'?)",
             "none 返回了 None，而不是命中结果的列表（是否漏写了 return？）"),
    "string": (string, "string: expected a list of hits, got a str", "string：应返回命中结果的列表"),
    "no_id": (no_id, "no_id: a returned dict has no id (keys tried: id, doc_id, docid, _id, chunk_id, corpus_id, "
                     "corpus-id, pid)", "no_id：返回的字典没有编号（尝试过的字段：id、doc_id、docid、"),
    "objects": (objects, "objects: cannot read a retrieved item of type object; return Hit objects, ids, (id, score) "
                         "pairs or dicts with 'id' and 'score'",
                "无法读取类型为 object 的检索结果；请返回 Hit 对象、编号、(id, score) 二元组，"
                "或带 'id' 和 'score' 字段的字典"),
    "float_id": (float_id, "float_id: a retrieved id must be a string or an integer, got 1.5",
                 "float_id：检索到的编号必须是字符串或整数，实际为 1.5"),
    "word_score": (word_score, "word_score: a score must be a number, got 'high'", "得分必须是数字，实际为 'high'"),
    "batch_count": (Batch([]), "Batch.search_batch returned 0 result lists for 3 queries",
                    "Batch.search_batch 为 3 个查询返回了 0 个结果列表"),
    "batch_none": (Batch(None), "Batch.search_batch returned None (a missing 'return'?)",
                   "Batch.search_batch 返回了 None（是否漏写了 return？）"),
}


@pytest.mark.parametrize("case", sorted(CONTRACT))
def test_a_retriever_returning_no_ranking_is_told_in_chinese_with_what_to_return(case: str) -> None:
    retriever, english, chinese = CONTRACT[case]
    name = "Batch" if isinstance(retriever, Batch) else case
    error = _raised(retriever)
    assert type(error).__name__ == "RetrieverContractError"
    zh = _both(error, english + AT.format(name=name), chinese)
    assert zh.endswith(f"（查询 'q0'：'question 0'；检索器 {name!r}）"), zh


def test_a_hit_read_on_its_own_says_who_returned_it_in_the_readers_language() -> None:
    from rankscope.retrieval.protocol import RetrieverContractError, as_retriever, to_hits

    with pytest.raises(RetrieverContractError) as info:
        to_hits([{"score": 2.0}])
    _both(info.value, "retriever: a returned dict has no id (keys tried: id, doc_id, docid, _id, chunk_id, "
                      "corpus_id, corpus-id, pid)", "检索器：返回的字典没有编号")
    with pytest.raises(RetrieverContractError) as info:
        to_hits(None)
    _both(info.value, "retriever returned None instead of a list of hits (a missing 'return'?)", "返回了 None")
    with pytest.raises(RankscopeError) as other:
        as_retriever(5)
    _both(other.value, "cannot use a int as a retriever: give an object with search(query, k), a callable "
                       "fn(query, k), a LangChain retriever or vector store, a LlamaIndex retriever or index, or a "
                       "Haystack retriever or pipeline",
          "无法把 int 用作检索器：请给出带 search(query, k) 方法的对象")


def test_library_adapters_say_the_missing_id_in_chinese() -> None:
    from rankscope.retrieval.adapters import langchain_hit

    class Document:  # a LangChain Document without an id
        page_content = "text"
        metadata: dict[str, Any] = {}
        id = None

    with pytest.raises(RankscopeError) as info:
        langchain_hit(Document(), 0.5)
    _both(info.value, "a LangChain document has no id (Document.id or metadata 'id'/'doc_id'); give the documents "
                      "ids or pass id_key=", "LangChain 文档没有编号")
    with pytest.raises(RankscopeError) as info:
        langchain_hit(Document(), 0.5, id_key="source")
    _both(info.value, "a LangChain document has no metadata['source']; give the documents ids or pass id_key=",
          "请给文档加上编号，或传入 id_key=")


# -- the arguments ------------------------------------------------------------------------------------------
def _spans_and_chunk_to_doc() -> None:
    from rankscope.data.spans import SpanQrels

    corpus = {"d0": "Paris is the capital of France."}
    spans = SpanQrels.from_records([{"query_id": "q0", "doc_id": "d0", "start": 0, "end": 5}], corpus=corpus)
    ts = TestSet([Query("q0", "capital")], None, corpus, "s", spans=spans)
    rankscope.evaluate_retriever(chunks, ts, ["span_recall@5"], chunk_to_doc="{doc_id}#{chunk}", progress=False)


def _fuse_one_run() -> None:
    from rankscope.data.run import Run

    fuse(Run.from_dict({"q": {"d": 1.0}}))


ARGUMENTS: dict[str, tuple[Callable[[], Any], str, str]] = {
    "k": (lambda: rankscope.evaluate_retriever(none, _ts(), ["mrr"], k=0),
          "the 'k' parameter of evaluate_retriever must be an int in the range [1, inf) or None; got 0",
          "evaluate_retriever 的参数 'k' 必须是 [1, inf) 范围内的整数或 None，实际为 0"),
    "relevance": (lambda: rankscope.evaluate_retriever(none, _ts(), ["mrr"], relevance="labels"),
                  "the 'relevance' parameter of evaluate_retriever must be one of 'auto', 'qrels', 'answers', "
                  "'spans'; got 'labels'",
                  "evaluate_retriever 的参数 'relevance' 必须是 'auto'、'qrels'、'answers'、'spans' 之一，"
                  "实际为 'labels'"),
    "no_qrels": (lambda: rankscope.evaluate_retriever(none, TestSet([Query("q0", "x", answers=("a",))], None,
                                                                     name="t"), ["mrr"], relevance="qrels"),
                 "test set 't' has no relevance judgments; use relevance='answers'",
                 "测试集 't' 没有相关性标注；请用 relevance='answers'"),
    "chunk_pattern": (lambda: rankscope.evaluate_retriever(chunks, _ts(), ["mrr"], progress=False,
                                                                   chunk_to_doc="doc_id#chunk"),
                      "chunk_to_doc='doc_id#chunk' is not a pattern; write it like '{doc_id}#{chunk}'",
                      "chunk_to_doc='doc_id#chunk' 不是模式；请写成 '{doc_id}#{chunk}' 这样"),
    "spans": (_spans_and_chunk_to_doc, "span judgments score the retrieved chunks directly; drop chunk_to_doc",
              "片段标注直接为检索到的块评分；请去掉 chunk_to_doc"),
    "compare": (lambda: rankscope.compare(_ts(), [none], "mrr"),
                "name the retrievers: compare(testset, {name: retriever, ...}, metrics)", "请给检索器命名："),
    "fuse_method": (lambda: fuse([], "borda"), "fuse needs at least one run",
                    "fuse 至少需要一个结果（run）"),
    "fuse_one_run": (_fuse_one_run, "fuse needs a list (or {name: run} mapping) of at least one run, got one Run",
                     "实际只给了一个 Run"),
    "bm25_method": (lambda: BM25Retriever({"d1": "a"}, method="okapi"),
                    "BM25 method must be one of lucene, robertson, atire, bm25l, bm25+; got 'okapi'",
                    "BM25 方法必须是 lucene、robertson、atire、bm25l、bm25+ 之一，实际为 'okapi'"),
    "empty_corpus": (lambda: BM25Retriever({}), "BM25Retriever: the corpus is empty",
                     "BM25Retriever：语料库为空"),
    "tokenizer": (lambda: BM25Retriever({"d1": "a"}, tokenizer="fr"),
                  "tokenizer language must be 'auto', 'en' or 'zh', got 'fr'",
                  "分词器语言必须是 'auto'、'en' 或 'zh'，实际为 'fr'"),
    "search_k": (lambda: BM25Retriever({"d1": "paris"}).search("a", 0),
                 "k must be a positive integer, got 0", "k 必须是正整数，实际为 0"),
}


@pytest.mark.parametrize("case", sorted(ARGUMENTS))
def test_wrong_arguments_are_told_in_chinese(case: str) -> None:
    call, english, chinese = ARGUMENTS[case]
    with pytest.raises(RankscopeError) as info:
        call()
    _both(info.value, english, chinese)


def test_a_cache_of_another_evaluation_says_what_differs_in_chinese(tmp_path: Path) -> None:
    cache = tmp_path / "c.jsonl"

    def first(query: str, k: int) -> list[str]:
        return ["d1"]

    rankscope.evaluate_retriever(first, _ts(), ["mrr"], k=5, cache=cache, progress=False)
    with pytest.raises(RankscopeError) as info:
        rankscope.evaluate_retriever(first, _ts(), ["mrr"], k=3, cache=cache, progress=False)
    _both(info.value, f"cache {cache} was written by another evaluation (k 5 there, 3 now); pass "
                      "overwrite_cache=True (CLI: --overwrite-cache) to start it afresh, or use another cache file",
          f"缓存 {cache} 是另一次评估写下的（k：缓存中为 5，现在为 3）；传入 overwrite_cache=True")
    other = TestSet([Query("q0", "another question")], {"q0": {"d0": 1}}, name="u")
    with pytest.raises(RankscopeError) as info:
        rankscope.evaluate_retriever(first, other, ["mrr"], k=5, cache=cache, progress=False)
    zh = _both(info.value, f"cache {cache} was written by another evaluation (test set name 't' there, 'u' now; "
                           "test set (query ids and texts) differs); pass overwrite_cache=True (CLI: "
                           "--overwrite-cache) to start it afresh, or use another cache file",
               "（测试集名称：缓存中为 't'，现在为 'u'；测试集（查询编号和文本）不同）")
    assert "test set" not in zh
    cache.write_text(json.dumps({"rankscope": 1}) + "\n")
    with pytest.raises(RankscopeError) as info:
        rankscope.evaluate_retriever(first, _ts(), ["mrr"], k=5, cache=cache, progress=False)
    _both(info.value, f"{cache}:1: not a rankscope cache (no 'rankscope_cache' header)",
          f"{cache} 第 1 行：不是 rankscope 缓存（没有 'rankscope_cache' 表头）")


def test_an_http_retrievers_bad_answer_is_told_in_chinese() -> None:
    import httpx

    from rankscope.retrieval.http import BadAnswer, HttpRetriever

    answers = iter([b"not json", b'[{"score": 1}]'])

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=next(answers))

    r = HttpRetriever("http://127.0.0.1:9/search", timeout=5)
    try:
        r._client = httpx.AsyncClient(transport=httpx.MockTransport(reply))
        with pytest.raises(BadAnswer) as info:
            r.search("q", 3)
        assert re.fullmatch(r"bad answer: not JSON \([0-9.e-]+ s\)", str(info.value))
        _both(info.value, str(info.value), "回答有误：不是 JSON（")
        with pytest.raises(BadAnswer) as info:
            r.search("q", 3)
        _both(info.value, "bad answer: a returned dict has no id (keys tried: id, doc_id, docid, _id, chunk_id, "
                          "corpus_id, corpus-id, pid)", "回答有误：返回的字典没有编号")
    finally:
        r.close()
    with pytest.raises(RankscopeError) as error:
        HttpRetriever("http://127.0.0.1:9/search", timeout=0)
    _both(error.value, "timeout must be a positive number of seconds, got 0", "timeout 必须是正的秒数，实际为 0")


def test_the_ray_engines_argument_errors_in_chinese() -> None:
    from rankscope import ray as on_ray

    with pytest.raises(RankscopeError) as info:
        on_ray._pieces([], "error")
    _both(info.value, "no run given: a ray.data.Dataset or one or more Parquet / Arrow / TREC paths",
          "没有给出结果文件（run）")
    with pytest.raises(RankscopeError) as info:
        on_ray.ActorPool(object, (), size=0, concurrency=1)
    _both(info.value, "actors must be an integer >= 1, got 0", "actors 必须是不小于 1 的整数，实际为 0")
    with pytest.raises(RankscopeError) as info:
        on_ray.evaluate_retriever(lambda: none, _ts(), workers=3)
    _both(info.value, "workers= is set by actors * concurrency on Ray", "在 Ray 上，workers= 由")


# -- the command line ---------------------------------------------------------------------------------------
def _cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("RANKSCOPE_LANG", "LC_ALL", "LC_MESSAGES")}
    env.update({"LANG": "C.UTF-8", "COLUMNS": "200", "PYTHONPATH": str(SRC), "PYTHONIOENCODING": "utf-8"})
    return subprocess.run([sys.executable, "-c", "from rankscope.cli.app import main; main()", *map(str, args)],
                          capture_output=True, text=True, encoding="utf-8", env=env, cwd=cwd, timeout=120)


@pytest.mark.slow
def test_run_with_a_broken_retriever_says_so_in_chinese(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(textwrap.dedent("""
        def search(query, k):
            hits = [(f"d{n}", 1.0) for n in range(k)]
    """))
    (tmp_path / "ts.jsonl").write_text("".join(json.dumps({"id": f"q{i}", "query": f"问题 {i}",
                                                           "relevant_doc_ids": [f"d{i}"]}, ensure_ascii=False) + "\n"
                                               for i in range(3)), encoding="utf-8")
    args = ("run", "--retriever", "mine:search", "--testset", "ts.jsonl", "--out", "mine.trec", "--workers", "1")
    zh = _cli(*args, "--lang", "zh", cwd=tmp_path)
    assert zh.returncode == 2, zh.stderr
    assert zh.stderr == ("rankscope：错误：search 返回了 None，而不是命中结果的列表（是否漏写了 return？）"
                         "（查询 'q0'：'问题 0'；检索器 'search'）\n"), zh.stderr
    en = _cli(*args, cwd=tmp_path)
    assert en.returncode == 2 and not CJK.search(en.stderr.replace("问题 0", ""))
    assert en.stderr == ("rankscope: error: search returned None instead of a list of hits (a missing 'return'?) "
                         "(query 'q0': '问题 0'; retriever 'search')\n"), en.stderr


@pytest.mark.slow
def test_run_refusing_another_evaluations_cache_in_chinese(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text("def search(query, k):\n    return ['d0']\n")
    (tmp_path / "ts.jsonl").write_text(json.dumps({"id": "q0", "query": "x", "relevant_doc_ids": ["d0"]}) + "\n")
    args = ("run", "--retriever", "mine:search", "--testset", "ts.jsonl", "--out", "mine.trec", "--cache", "c.jsonl")
    assert _cli(*args, "-k", "5", cwd=tmp_path).returncode == 0
    zh = _cli(*args, "-k", "3", "--lang", "zh", cwd=tmp_path)
    assert zh.returncode == 2, zh.stderr
    assert zh.stderr.startswith("rankscope：错误：缓存 c.jsonl 是另一次评估写下的"
                                "（k：缓存中为 5，现在为 3）；"), zh.stderr
    assert_chinese(zh.stderr)
    en = _cli(*args, "-k", "3", cwd=tmp_path)
    assert en.stderr.startswith("rankscope: error: cache c.jsonl was written by another evaluation (k 5 there, 3 now); "
                                "pass overwrite_cache=True (CLI: --overwrite-cache)") and not CJK.search(en.stderr)
