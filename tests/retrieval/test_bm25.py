"""BM25 baseline: scores against the Lucene formula by hand, Chinese/English tokenization, batch = single."""

from __future__ import annotations

import math

import pytest

from rankscope.errors import EmptyInputError, InvalidParameterError, RankscopeError
from rankscope.retrieval.bm25 import BM25Retriever
from rankscope.retrieval.tokenize import Tokenizer, detect_language, load_stopwords, make_tokenizer

CORPUS = {
    "d1": "supersonic flow over a thin wing",
    "d2": "heat transfer in a laminar boundary layer",
    "d3": "boundary layer transition at supersonic speed and heat",
    "d4": "propeller slipstream effects",
}


def lucene_bm25(query: list[str], docs: dict[str, list[str]], k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
    """Lucene's BM25 (since Lucene 8: no constant (k1 + 1) factor, which does not change the ranking)."""
    n = len(docs)
    avgdl = sum(len(t) for t in docs.values()) / n
    out = {}
    for d, toks in docs.items():
        s = 0.0
        for term in set(query):
            tf = toks.count(term)
            if tf == 0:
                continue
            df = sum(term in t for t in docs.values())
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            s += idf * tf / (tf + k1 * (1 - b + b * len(toks) / avgdl))
        out[d] = s
    return out


def test_scores_match_the_lucene_formula() -> None:
    tok = Tokenizer("en")
    docs = {d: tok(t) for d, t in CORPUS.items()}
    for query, k1, b in [("boundary layer heat", 1.5, 0.75), ("supersonic heat flow", 0.9, 0.4)]:
        hits = BM25Retriever(CORPUS, k1=k1, b=b).search(query, k=10)
        expected = lucene_bm25(tok(query), docs, k1, b)
        assert {h.id: h.score for h in hits} == pytest.approx({d: s for d, s in expected.items() if s > 0}, rel=1e-5)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_no_match_returns_nothing_and_k_larger_than_corpus() -> None:
    bm25 = BM25Retriever(CORPUS)
    assert bm25.search("cryogenic", k=3) == []
    assert bm25.search("the of and", k=3) == []  # only stop words
    assert len(bm25.search("boundary supersonic slipstream heat", k=50)) == 4


def test_equal_scores_are_ordered_by_doc_id_descending() -> None:
    bm25 = BM25Retriever({"a": "wing", "c": "wing", "b": "wing"})
    assert [h.id for h in bm25.search("wing", k=3)] == ["c", "b", "a"]


def test_batch_equals_single_and_texts_are_attached() -> None:
    bm25 = BM25Retriever(CORPUS)
    queries = ["boundary layer", "slipstream", "supersonic wing", "nothing here"]
    assert bm25.search_batch(queries, k=2) == [bm25.search(q, k=2) for q in queries]
    assert bm25.search("slipstream", 1)[0].text == CORPUS["d4"]
    assert BM25Retriever(CORPUS, with_text=False).search("slipstream", 1)[0].text is None
    assert bm25.search_batch([], 5) == []


def test_chinese_corpus_is_segmented_with_jieba() -> None:
    corpus = {
        "zh1": "雅芳河发源于英格兰中部，流经斯特拉特福。",
        "zh2": "长江是中国最长的河流，发源于青藏高原。",
        "zh3": "战国无双3是由光荣和ω-force开发的游戏。",
        "en1": "The river Avon rises in the English Midlands.",
    }
    bm25 = BM25Retriever(corpus)
    assert bm25.search("长江发源于哪里？", k=1)[0].id == "zh2"
    assert bm25.search("战国无双3是哪个公司开发的", k=1)[0].id == "zh3"
    assert bm25.search("Where does the Avon river rise?", k=1)[0].id == "en1"
    # a whitespace tokenizer cannot split Chinese: the same query finds nothing
    assert BM25Retriever(corpus, tokenizer=str.split).search("长江发源于哪里？", k=1) == []


def test_tokenizer_pipelines() -> None:
    en, zh = Tokenizer("en"), Tokenizer("zh")
    assert en("The Boundary-Layers were flowing") == ["boundari", "layer", "flow"]
    assert Tokenizer("en", stem=False)("The Boundary-Layers") == ["boundary", "layers"]
    assert Tokenizer("en", stopwords=False, stem=False)("the wing") == ["the", "wing"]
    assert en("not a wing") == ["not", "wing"]  # negations are kept
    assert zh("雅芳河的发源地是哪里？") == ["雅芳", "河", "发源地"]
    assert zh("BM25 Retrieval的效果") == [*en("BM25 Retrieval"), "效果"]
    assert "发源" in Tokenizer("zh", zh_mode="search")("发源地")
    auto = Tokenizer("auto")
    assert auto("雅芳河的发源地") == zh("雅芳河的发源地")
    assert auto("Flows over wings") == en("Flows over wings")


def test_detect_language() -> None:
    assert detect_language("") == "en"
    assert detect_language("什么是Transformer模型") == "zh"
    assert detect_language("Python的list和tuple有什么区别") == "zh"
    assert detect_language("Notes on the 王 family archive held in the county library") == "en"
    assert "the" in load_stopwords("en") and "的" in load_stopwords("zh")


def test_bad_input_raises_clear_errors() -> None:
    with pytest.raises(EmptyInputError):
        BM25Retriever({})
    with pytest.raises(RankscopeError, match="'d1'"):
        BM25Retriever({"d1": 3})  # type: ignore[dict-item]
    with pytest.raises(InvalidParameterError, match="method"):
        BM25Retriever(CORPUS, method="bm99")
    with pytest.raises(InvalidParameterError, match="b must"):
        BM25Retriever(CORPUS, b=1.5)
    with pytest.raises(InvalidParameterError, match="k1"):
        BM25Retriever(CORPUS, k1=-1)
    with pytest.raises(InvalidParameterError, match="language"):
        Tokenizer("fr")
    with pytest.raises(InvalidParameterError):
        make_tokenizer(42)  # type: ignore[arg-type]
    bm25 = BM25Retriever(CORPUS)
    with pytest.raises(InvalidParameterError, match="k must"):
        bm25.search("wing", k=0)
    with pytest.raises(InvalidParameterError, match="list of queries"):
        bm25.search_batch("wing", k=1)  # type: ignore[arg-type]


def test_other_bm25_variants_run() -> None:
    for method in ("robertson", "atire", "bm25l", "bm25+"):
        hits = BM25Retriever(CORPUS, method=method).search("propeller slipstream", k=2)
        assert hits[0].id == "d4"
