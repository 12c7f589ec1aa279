"""A resume cache proves it belongs to the retriever before it is used: cached queries are asked again, declared
settings and an explicit cache key are in its header, and every output says how many answers came from it."""

from __future__ import annotations

import json
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

import rankscope
from clirun import cli
from rankscope.data.testset import Query, TestSet
from rankscope.errors import InvalidParameterError
from rankscope.retrieval import Hit
from rankscope.retrieval.cache import check_sample


def _ts(n: int = 12) -> TestSet:
    return TestSet([Query(f"q{i}", f"question {i}") for i in range(n)], {f"q{i}": {f"d{i}": 1} for i in range(n)},
                   name="t")


class Index:
    """A vector-store-like retriever: what it answers depends on the documents it holds, not on its class."""

    def __init__(self, docs: list[str]) -> None:
        self.docs = docs
        self.calls: list[str] = []

    def search(self, query: str, k: int) -> list[Hit]:
        self.calls.append(query)
        n = int(query.split()[-1])
        ranked = sorted(self.docs, key=lambda d: (d != f"d{n}", d))[:k]
        return [Hit(d, 1.0 / (i + 1)) for i, d in enumerate(ranked)]


@dataclass
class Hybrid:
    k_rrf: int = 60
    depth: int = 100

    def search(self, query: str, k: int) -> list[str]:
        n = int(query.split()[-1])
        return [f"d{(n + j * (self.k_rrf % 7)) % 12}" for j in range(min(k, self.depth))]


def _quiet(**kw):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rankscope.evaluate_retriever(progress=False, **kw)


def test_another_index_of_the_same_class_is_refused(tmp_path: Path) -> None:
    cache = tmp_path / "c.jsonl"
    good = _quiet(retriever=Index([f"d{i}" for i in range(12)]), testset=_ts(), metrics=["ndcg@10"], k=5,
                  cache=cache)
    assert good.mean()["document"]["ndcg@10"] == 1.0
    empty = Index([f"x{i}" for i in range(12)])  # holds none of the relevant documents: it scores 0, not 1
    with pytest.raises(InvalidParameterError, match=r"holds answers this retriever does not give.*asked again"):
        _quiet(retriever=empty, testset=_ts(), metrics=["ndcg@10"], k=5, cache=cache)
    assert sorted(empty.calls) == sorted(f"question {q[1:]}" for q in check_sample([f"q{i}" for i in range(12)], 3))
    fresh = _quiet(retriever=empty, testset=_ts(), metrics=["ndcg@10"], k=5, cache=cache, overwrite_cache=True)
    assert fresh.mean()["document"]["ndcg@10"] == 0.0 and fresh.from_cache == 0


def test_the_same_index_resumes_after_its_answers_are_checked(tmp_path: Path) -> None:
    cache = tmp_path / "c.jsonl"
    first = _quiet(retriever=Index([f"d{i}" for i in range(12)]), testset=_ts(), metrics=["mrr"], k=5, cache=cache)
    again_index = Index([f"d{i}" for i in range(12)])
    again = _quiet(retriever=again_index, testset=_ts(), metrics=["mrr"], k=5, cache=cache, cache_check=5)
    assert len(again_index.calls) == 5 and (again.from_cache, again.cache_checked) == (7, 5)
    assert again.mean() == first.mean()
    trusted = Index([f"x{i}" for i in range(12)])  # cache_check=0: the cache is used as it is, and said so
    used = _quiet(retriever=trusted, testset=_ts(), metrics=["mrr"], k=5, cache=cache, cache_check=0)
    assert trusted.calls == [] and used.from_cache == 12


def test_declared_settings_are_part_of_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "c.jsonl"
    _quiet(retriever=Hybrid(k_rrf=1, depth=3), testset=_ts(), metrics=["mrr"], k=5, cache=cache)
    header = json.loads(cache.read_text().splitlines()[0])
    assert header["settings"] == {"depth": 3, "k_rrf": 1}
    with pytest.raises(InvalidParameterError, match=r"retriever settings \{'depth': 3, 'k_rrf': 1\} there"):
        _quiet(retriever=Hybrid(k_rrf=60, depth=3), testset=_ts(), metrics=["mrr"], k=5, cache=cache, cache_check=0)


def test_an_explicit_cache_key_refuses_another_index_version(tmp_path: Path) -> None:
    cache = tmp_path / "c.jsonl"
    docs = [f"d{i}" for i in range(12)]
    _quiet(retriever=Index(docs), testset=_ts(), metrics=["mrr"], k=5, cache=cache, cache_key="index-2024-05")
    with pytest.raises(InvalidParameterError, match=r"cache key 'index-2024-05' there, 'index-2024-06' now"):
        _quiet(retriever=Index(docs), testset=_ts(), metrics=["mrr"], k=5, cache=cache, cache_key="index-2024-06")
    assert _quiet(retriever=Index(docs), testset=_ts(), metrics=["mrr"], k=5, cache=cache,
                  cache_key="index-2024-05").from_cache == 9


def test_every_output_says_how_many_answers_came_from_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "c.jsonl"
    docs = [f"d{i}" for i in range(12)]
    none = _quiet(retriever=Index(docs), testset=_ts(), metrics=["mrr"], k=5, cache=cache)
    assert "0 answers from the cache" in none.summary() and none.to_dict()["from_cache"] == 0
    ev = _quiet(retriever=Index(docs), testset=_ts(), metrics=["mrr"], k=5, cache=cache)
    assert "9 answers from the cache (3 cached queries asked again: the same answers)" in ev.summary()
    assert "来自缓存：9 个答案" in ev.summary("zh")
    assert "9 answers from the cache" in repr(ev)
    out = ev.to_dict()
    assert (out["from_cache"], out["cache_checked"]) == (9, 3) and out["options"]["cache_check"] == 3
    assert any(w["code"] == "from_cache" and "9 of 12 answers come from the cache" in w["message"]
               for w in out["warnings"])


def test_the_command_line_checks_the_cache_and_says_it(tmp_path: Path) -> None:
    module = "index_" + re.sub(r"\W", "_", tmp_path.name)  # imported in this process: a name of its own
    (tmp_path / f"{module}.py").write_text(
        "import pathlib\n"
        "def search(query, k):\n"
        "    docs = pathlib.Path(__file__).with_name('index.txt').read_text().split()\n"
        "    n = int(query.split()[-1])\n"
        "    return sorted(docs, key=lambda d: (d != f'd{n}', d))[:k]\n")
    (tmp_path / "index.txt").write_text(" ".join(f"d{i}" for i in range(6)))
    testset = tmp_path / "t.jsonl"
    testset.write_text("".join(json.dumps({"id": f"q{i}", "question": f"question {i}", "relevant": [f"d{i}"]}) + "\n"
                               for i in range(6)))
    common = ("--retriever", f"{module}:search", "--testset", testset, "--cache", tmp_path / "c.jsonl", "-k", "2",
              "--out", tmp_path / "a.trec")
    done = cli("run", *common, cwd=tmp_path, width=200)
    assert done.returncode == 0, done.stderr
    assert "0 answers from the cache" in done.stdout
    again = cli("run", *common, cwd=tmp_path, width=200)
    assert "3 answers from the cache (3 cached queries asked again: the same answers)" in again.stdout, again.stdout
    (tmp_path / "index.txt").write_text(" ".join(f"x{i}" for i in range(6)))  # another index, the same code
    other = cli("run", *common, cwd=tmp_path, width=200)
    assert other.returncode == 2 and "holds answers this retriever does not give" in other.stderr
    assert "Traceback" not in other.stderr
    keyed = cli("run", *common, "--cache-key", "v2", "--cache-check", "0", cwd=tmp_path, width=200)
    assert keyed.returncode == 2 and "cache key None there, 'v2' now" in keyed.stderr
