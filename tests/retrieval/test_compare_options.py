"""``rankscope.compare(testset, {name: retriever})`` takes every option ``evaluate_retriever`` takes, as one
``RetrieverOptions`` value or the same keywords, and the retrievers' warnings reach every output of the comparison."""

from __future__ import annotations

import inspect
import json
import warnings
from dataclasses import fields
from pathlib import Path

import pytest

import rankscope
from rankscope import RetrieverOptions
from rankscope.data.testset import TestSet
from rankscope.errors import InvalidParameterError
from rankscope.retrieval import Hit


def _ts(n: int = 8) -> TestSet:
    return TestSet.from_annotations([f"question {i}" for i in range(n)], [[f"d{i}"] for i in range(n)])


def chunks_first(query: str, k: int) -> list[Hit]:
    """A chunk retriever (FAISS over chunks): the relevant document's second chunk first."""
    i = int(query.split()[-1])
    ids = [f"d{i}#1", f"d{i}#0"] + [f"x{j}#0" for j in range(k)]
    return [Hit(c, 1.0 / (r + 1)) for r, c in enumerate(ids[:k])]


def chunks_late(query: str, k: int) -> list[Hit]:
    i = int(query.split()[-1])
    ids = [f"x{j}#0" for j in range(i % 3)] + [f"d{i}#0"] + [f"y{j}#0" for j in range(k)]
    return [Hit(c, 1.0 / (r + 1)) for r, c in enumerate(ids[:k])]


def flaky(query: str, k: int) -> list[str]:
    i = int(query.split()[-1])
    if i in (2, 5):
        raise ConnectionError("backend down")
    return [f"d{i}"]


def _quiet(fn, *args, **kw):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kw)


def test_compare_folds_chunks_like_evaluate_retriever() -> None:
    ts = _ts()
    retrievers = {"first": chunks_first, "late": chunks_late}
    c = _quiet(rankscope.compare, ts, retrievers, ["ndcg@5", "mrr"], chunk_to_doc="{doc_id}#{chunk}",
               progress=False)
    assert c.means["first"]["mrr"] == 1.0 and c.means["late"]["mrr"] > 0  # it scored 0.0000 without folding
    ev = _quiet(rankscope.evaluate_retriever, chunks_late, ts, ["ndcg@5", "mrr"], chunk_to_doc="{doc_id}#{chunk}",
                progress=False)
    assert c.means["late"] == ev.mean()["document"]
    opts = RetrieverOptions(chunk_to_doc="{doc_id}#{chunk}", progress=False, workers=2)
    same = _quiet(rankscope.compare, ts, retrievers, ["ndcg@5", "mrr"], options=opts)
    assert same.means == c.means
    assert _quiet(rankscope.evaluate_retriever, chunks_late, ts, ["ndcg@5", "mrr"], options=opts).mean() == ev.mean()


def test_both_functions_take_every_option_as_a_keyword() -> None:
    from rankscope.retrieval import runner

    names = {f.name for f in fields(RetrieverOptions)}
    for fn in (rankscope.evaluate_retriever, rankscope.compare):
        params = inspect.signature(fn).parameters
        assert "options" in params
        kw = next(p for p in params.values() if p.kind is inspect.Parameter.VAR_KEYWORD)
        hint = str(inspect.get_annotations(fn)[kw.name])  # Unpack[OptionValues] / Unpack[RunOptionValues]
        typed = getattr(runner, hint.removeprefix("Unpack[").removesuffix("]"))
        explicit = {n for n in params if n not in ("options", kw.name)}
        assert names <= explicit | set(typed.__annotations__), names - explicit - set(typed.__annotations__)
    ts = _ts(4)
    every = {f.name: getattr(RetrieverOptions(k=5), f.name) for f in fields(RetrieverOptions)}
    every["progress"] = False
    _quiet(rankscope.evaluate_retriever, flaky, ts, ["mrr"], **every)
    _quiet(rankscope.compare, ts, {"a": flaky, "b": flaky}, ["mrr"], **every)
    with pytest.raises(TypeError, match="unexpected keyword argument 'depth_k'"):
        rankscope.evaluate_retriever(flaky, ts, ["mrr"], depth_k=3)  # type: ignore[call-arg]


def test_the_options_are_checked_once_for_both() -> None:
    with pytest.raises(InvalidParameterError, match=r"'workers' parameter of evaluate_retriever must be an int"):
        rankscope.compare(_ts(), {"a": flaky, "b": flaky}, ["mrr"], workers=0)
    with pytest.raises(InvalidParameterError, match=r"'workers' parameter of evaluate_retriever must be an int"):
        rankscope.evaluate_retriever(flaky, _ts(), ["mrr"], workers=0)
    with pytest.raises(InvalidParameterError, match="run retrievers; the values compared here are runs"):
        rankscope.compare(_ts().qrels, {"a": {"q0": {"d0": 1.0}}, "b": {"q0": {"d1": 1.0}}}, ["mrr"], k=5)


def test_the_retrievers_warnings_reach_every_output(tmp_path: Path) -> None:
    ts = _ts(6)
    c = _quiet(rankscope.compare, ts, {"flaky": flaky, "good": lambda q, k: [f"d{q.split()[-1]}"]}, ["mrr"],
               retries=0, progress=False)
    said = [w.text() for w in c.warnings]
    assert any(t.startswith("flaky: 2 of 6 queries (33%) failed after 1 attempt") for t in said), said
    assert any(w.text("zh").startswith("flaky：6 个查询中有 2 个") for w in c.warnings)
    out = json.loads(json.dumps(c.to_dict()))
    assert any("flaky: 2 of 6 queries" in w["message"] for w in out["warnings"])
    md = tmp_path / "c.md"
    rankscope.write_report(c, md)
    assert "flaky: 2 of 6 queries (33%) failed" in md.read_text()
    again = rankscope.load(_saved(c, tmp_path))  # a saved comparison says them too
    assert any("flaky: 2 of 6 queries" in w.text() for w in again.warnings)


def _saved(c: rankscope.Comparison, tmp_path: Path) -> Path:
    path = tmp_path / "c.json"
    rankscope.save(c, path)
    return path


def test_one_cache_per_retriever_and_the_cache_is_said(tmp_path: Path) -> None:
    ts = _ts(6)
    retrievers = {"first": chunks_first, "late": chunks_late}
    opts = RetrieverOptions(chunk_to_doc="{doc_id}#{chunk}", cache=tmp_path / "c.jsonl", progress=False)
    first = _quiet(rankscope.compare, ts, retrievers, ["mrr"], options=opts)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.first.jsonl", "c.late.jsonl"]
    again = _quiet(rankscope.compare, ts, retrievers, ["mrr"], options=opts)
    assert again.means == first.means
    assert any(w.text() == "late: 3 of 6 answers come from the cache file, not from the retriever now (3 cached "
               "queries asked again gave the same answers)" for w in again.warnings), [w.text() for w in again.warnings]
