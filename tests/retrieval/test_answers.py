"""Relevance from answer containment: normalisation (Chinese, full-width), qrels derivation, real CMRC data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import DATA, require
from rankscope.data.testset import Query, TestSet
from rankscope.errors import EmptyInputError
from rankscope.retrieval import Hit, answer_qrels, contains_answer, evaluate_retriever, normalize_text
from rankscope.retrieval.answers import normalize_answer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ＡＢＣ　１２３", "abc 123"),  # full-width letters, digits, ideographic space
        ("（北京）大学！", "(北京)大学!"),  # full-width punctuation (NFKC)
        ("“红楼梦”、《水浒传》。", '"红楼梦",<水浒传>.'),  # CJK punctuation NFKC keeps
        ("北京  大学\n成立", "北京大学成立"),  # spaces beside CJK removed
        ("New   York\tCity", "new york city"),  # other whitespace collapsed, case folded
    ],
)
def test_normalize_text(text: str, expected: str) -> None:
    assert normalize_text(text) == expected


def test_containment_across_full_width_and_spacing() -> None:
    assert contains_answer("本作由光荣和Ω－ＦＯＲＣＥ开发。", ["光荣和ω-force"])
    assert contains_answer("北京大学成立于１８９８ 年。", ["1898年"])
    assert contains_answer("「战国无双3 人物真书」", ['"战国无双3人物真书"'])
    assert contains_answer("It was written by Shakespeare, in 1600.", ["  Shakespeare. "])
    assert not contains_answer("南京大学", ["北京"])
    assert not contains_answer("anything", ["", "。"])  # empty after normalisation matches nothing
    assert not contains_answer(None, ["x"])
    assert normalize_answer("《红楼梦》") == "红楼梦"  # book-title marks become <> and are stripped at the edges


def test_answer_qrels_judges_retrieved_chunks_and_corpus() -> None:
    qrels = answer_qrels(
        {"q1": ["曹雪芹"], "q2": []},
        {"q1": [("c1", "《红楼梦》作者是曹雪芹。"), ("c2", "施耐庵"), ("c1", None), ("d9", None)],
         "q2": [("c1", "曹雪芹")]},
        corpus={"d9": "曹雪芹生平", "d10": "关于曹雪芹", "d11": "无关"},
    )
    # c1 keeps its best grade; d9 judged via its corpus text; d10 relevant though never retrieved
    assert qrels.to_dict() == {"q1": {"c1": 1, "c2": 0, "d9": 1, "d10": 1}}


def _chinese_testset() -> TestSet:
    queries = [
        Query("a", "红楼梦的作者是谁？", answers=("曹雪芹",)),
        Query("b", "北京大学哪一年成立？", answers=("1898年", "一八九八年")),
        Query("c", "没有答案的问题"),
    ]
    return TestSet(queries, name="zh")


CHUNKS = {
    "红楼梦的作者是谁？": [("doc1#0", "《红楼梦》是中国古典小说。"), ("doc1#1", "作者：曹雪芹（约1715年－1763年）。"),
                    ("doc2#0", "曹雪芹的祖父曹寅。")],
    "北京大学哪一年成立？": [("doc3#0", "北京大学创办于１８９８ 年，初名京师大学堂。"),
                    ("doc4#0", "清华大学成立于1911年。")],
}


def _zh_retriever(query: str, k: int) -> list[Hit]:
    return [Hit(cid, 1.0 - i / 10, text=text) for i, (cid, text) in enumerate(CHUNKS[query])][:k]


def test_evaluate_with_answers_on_chinese_full_width_text() -> None:
    ts = _chinese_testset()
    ev = evaluate_retriever(_zh_retriever, ts, ["mrr", "P@3", "recall@3"], progress=False)
    assert ev.relevance == "answers"
    per_query = ev.result.per_query.to_dict()
    assert set(per_query) == {"a", "b"}  # "c" has no answer: not judged, not run
    assert per_query["a"]["mrr"] == 0.5 and per_query["a"]["P@3"] == pytest.approx(2 / 3)
    assert per_query["b"]["mrr"] == 1.0 and per_query["b"]["recall@3"] == 1.0
    # folded to documents: doc1 (first chunk at rank 1) now counts as containing the answer
    ev_doc = evaluate_retriever(_zh_retriever, ts, ["mrr", "P@3"], chunk_to_doc="{doc_id}#{chunk}", progress=False)
    assert ev_doc.doc_result is not None
    assert ev_doc.doc_result.per_query.to_dict()["a"] == {"mrr": 1.0, "P@3": pytest.approx(2 / 3)}


def test_answers_mode_needs_answers() -> None:
    ts = TestSet([Query("a", "x")], {"a": {"d": 1}})
    with pytest.raises(EmptyInputError, match="no reference answers"):
        evaluate_retriever(lambda q: ["d"], ts, relevance="answers", progress=False)


def _cmrc_dev(n: int) -> tuple[TestSet, dict[str, str], dict[str, str]]:
    """The first n CMRC 2018 dev questions with their answers, the dev paragraphs, and the gold paragraph."""
    path = require(DATA / "zh_cmrc2018_retrieval" / "raw" / "cmrc2018_dev.json")
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    corpus: dict[str, str] = {}
    queries: list[Query] = []
    gold: dict[str, str] = {}
    for art in data["data"]:
        for para in art["paragraphs"]:
            corpus[para["id"]] = para["context"]
            for qa in para["qas"]:
                if len(queries) < n and qa["question"].strip():
                    queries.append(Query(qa["id"], qa["question"].strip(),
                                         answers=tuple(a["text"] for a in qa["answers"])))
                    gold[qa["id"]] = para["id"]
    return TestSet(queries, corpus=corpus, name="cmrc-dev"), corpus, gold


def test_real_cmrc_gold_paragraph_contains_its_answer_and_answer_relevance_is_a_superset() -> None:
    ts, corpus, gold = _cmrc_dev(60)
    # every gold paragraph contains the answer after normalisation (the spans were cut from it)
    assert all(contains_answer(corpus[gold[q.id]], q.answers) for q in ts.queries)

    def bigrams(s: str) -> set[str]:
        return {s[i:i + 2] for i in range(len(s) - 1)}

    grams = {pid: bigrams(text) for pid, text in corpus.items()}

    def overlap(query: str, k: int) -> list[Hit]:
        qg = bigrams(query)
        scored = sorted(((len(qg & g), pid) for pid, g in grams.items()), key=lambda x: (-x[0], x[1]))[:k]
        return [Hit(pid, float(s), text=corpus[pid]) for s, pid in scored]

    by_answer = evaluate_retriever(overlap, ts, ["mrr", "hit_rate@5"], k=5, progress=False)
    judged = TestSet(ts.queries, {q: {p: 1} for q, p in gold.items()}, corpus=corpus)
    by_id = evaluate_retriever(overlap, judged, ["mrr", "hit_rate@5"], k=5, progress=False)
    a, b = by_answer.result.per_query.to_dict(), by_id.result.per_query.to_dict()
    # the gold paragraph contains the answer, so answer relevance never ranks a query lower
    assert all(a[q]["mrr"] >= b[q]["mrr"] for q in b)
    assert by_id.result.mean()["hit_rate@5"] > 0.5  # lexical overlap finds most gold paragraphs


def test_query_without_hits_or_failing_still_counts_as_zero() -> None:
    ts = TestSet.from_annotations(["hit", "empty", "boom"], answers=["42", "42", "42"])

    def search(query: str, k: int) -> list[Hit]:
        if query == "boom":
            raise RuntimeError("down")
        return [Hit("c1", 1.0, text="it is 42")] if query == "hit" else []

    ev = evaluate_retriever(search, ts, ["mrr", "recall@5"], retries=0, progress=False)
    assert ev.result.queries.evaluated == 3 and list(ev.errors) == ["q3"]
    assert ev.result.mean() == {"mrr": pytest.approx(1 / 3), "recall@5": pytest.approx(1 / 3)}
    # every call failing: still three zeros, not an error
    with pytest.warns(UserWarning, match="3 of 3 queries .100%. failed"):
        none = evaluate_retriever(lambda q: 1 / 0, ts, ["mrr"], retries=0, progress=False)
    assert none.result.mean() == {"mrr": 0.0} and none.result.queries.evaluated == 3
