"""Dense baseline: the real all-MiniLM-L6-v2 model on a small corpus, the embedding cache, exact search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rankscope.errors import InvalidParameterError
from rankscope.retrieval.dense import DenseRetriever, resolve_precision

CORPUS = {
    "cat": "The cat sat on the mat and purred.",
    "stocks": "Shares fell sharply on the stock exchange after the earnings report.",
    "rain": "Heavy rain and thunderstorms are expected over the weekend.",
    "wing": "Lift on a swept wing in supersonic flow.",
    "pasta": "Boil the spaghetti for ten minutes, then add the tomato sauce.",
}


@pytest.fixture(scope="module")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> DenseRetriever:
    return DenseRetriever(CORPUS, cache_dir=tmp_path_factory.mktemp("emb"))


@pytest.mark.slow(reason="runs the all-MiniLM-L6-v2 model")
def test_real_model_finds_paraphrases(minilm: DenseRetriever) -> None:
    assert minilm.dim == 384
    queries = ["a kitten resting on a rug", "equity markets dropped", "weather forecast storm",
               "aerodynamics of aircraft", "how to cook noodles"]
    top = [hits[0].id for hits in minilm.search_batch(queries, k=2)]
    assert top == ["cat", "stocks", "rain", "wing", "pasta"]


@pytest.mark.slow(reason="runs the all-MiniLM-L6-v2 model")
def test_scores_are_cosine_and_batch_equals_single(minilm: DenseRetriever) -> None:
    q = "a kitten resting on a rug"
    hits = minilm.search(q, k=5)
    assert len(hits) == 5 and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    qv = minilm.encode([q])[0]
    expected = {d: float(minilm.embeddings[i] @ qv) for i, d in enumerate(CORPUS)}
    assert {h.id: h.score for h in hits} == pytest.approx(expected, abs=1e-5)
    assert np.allclose(np.linalg.norm(minilm.embeddings, axis=1), 1.0, atol=1e-5)
    batch = minilm.search_batch([q, "stock market"], k=3)
    assert [h.id for h in batch[0]] == [h.id for h in minilm.search(q, 3)]
    assert [h.id for h in batch[1]] == [h.id for h in minilm.search("stock market", 3)]
    assert hits[0].text == CORPUS["cat"]


@pytest.mark.slow(reason="runs the all-MiniLM-L6-v2 model")
def test_bfloat16_is_close_to_float32(minilm: DenseRetriever) -> None:
    bf = DenseRetriever(CORPUS, precision="bfloat16", cache=False)
    cos = (bf.embeddings * minilm.embeddings).sum(axis=1)
    assert cos.min() > 0.999


class CountingModel:
    """Deterministic bag-of-letters embedding that counts how many texts it encoded."""

    def __init__(self) -> None:
        self.encoded = 0

    def encode(self, texts: list[str], **_: Any) -> np.ndarray:
        self.encoded += len(texts)
        return np.array([[t.count(c) + 0.01 for c in "aeiost"] for t in texts], dtype=np.float32)


def test_embeddings_are_cached_on_disk(tmp_path: Path) -> None:
    model = CountingModel()
    first = DenseRetriever(CORPUS, model=model, model_id="letters-v1", cache_dir=tmp_path)
    assert model.encoded == len(CORPUS) and first.cache_path is not None and first.cache_path.exists()
    again = DenseRetriever(CORPUS, model=model, model_id="letters-v1", cache_dir=tmp_path)
    assert model.encoded == len(CORPUS)  # loaded, not recomputed
    assert np.array_equal(again.embeddings, first.embeddings)
    # another text, another model id, or no model id: no reuse
    DenseRetriever({**CORPUS, "cat": "A dog."}, model=model, model_id="letters-v1", cache_dir=tmp_path)
    assert model.encoded == 2 * len(CORPUS)
    DenseRetriever(CORPUS, model=model, model_id="letters-v2", cache_dir=tmp_path)
    assert model.encoded == 3 * len(CORPUS)
    anonymous = DenseRetriever(CORPUS, model=model, cache_dir=tmp_path)
    assert anonymous.cache_path is None and model.encoded == 4 * len(CORPUS)


def test_ties_ordered_by_doc_id_descending_and_faiss_agrees(tmp_path: Path) -> None:
    corpus = {"a": "same", "c": "same", "b": "same", "z": "other text"}
    dense = DenseRetriever(corpus, model=CountingModel(), cache=False, backend="numpy")
    assert [h.id for h in dense.search("same", k=3)] == ["c", "b", "a"]
    pytest.importorskip("faiss")
    flat = DenseRetriever(corpus, model=CountingModel(), cache=False, backend="faiss")
    assert flat.backend == "faiss"
    assert [h.id for h in flat.search("same", k=3)] == ["c", "b", "a"]


@pytest.mark.slow(reason="runs the all-MiniLM-L6-v2 model")
def test_faiss_and_numpy_backends_agree(minilm: DenseRetriever) -> None:
    pytest.importorskip("faiss")
    folder = minilm.cache_path.parent if minilm.cache_path else None
    exact = DenseRetriever(CORPUS, backend="numpy", cache_dir=folder)
    flat = DenseRetriever(CORPUS, backend="faiss", cache_dir=folder)
    assert (exact.backend, flat.backend) == ("numpy", "faiss")
    queries = ["a kitten resting on a rug", "stock market", "tomato"]
    for a, b in zip(exact.search_batch(queries, 4), flat.search_batch(queries, 4)):
        assert [h.id for h in a] == [h.id for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-5)


def test_bad_input() -> None:
    model = CountingModel()
    with pytest.raises(InvalidParameterError, match="backend"):
        DenseRetriever(CORPUS, model=model, backend="annoy")
    with pytest.raises(InvalidParameterError, match="batch_size"):
        DenseRetriever(CORPUS, model=model, batch_size=0)
    with pytest.raises(InvalidParameterError, match="model must"):
        DenseRetriever(CORPUS, model=42)
    with pytest.raises(InvalidParameterError, match="precision"):
        resolve_precision("fp8", model)
    with pytest.raises(InvalidParameterError, match="torch model"):
        DenseRetriever(CORPUS, model=model, precision="bfloat16")
    assert resolve_precision("auto", model) == "float32"
    with pytest.raises(InvalidParameterError, match="k must"):
        DenseRetriever(CORPUS, model=model, cache=False).search("x", k=-1)
