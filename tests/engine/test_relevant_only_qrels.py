"""Qrels that list relevant documents only (Cranfield: grades 1-4, no 0) call every other document non-relevant:
a top 10 of unlisted documents is not "mostly unjudged", and no warning says the qrels were pooled from other
systems (the Cranfield demo said so of a fully judged collection)."""

from __future__ import annotations

import numpy as np

from conftest import DATA, require
from rankscope import Qrels, Run, evaluate
from rankscope.io import read_qrels


def _run_of_unlisted(qrels: Qrels) -> Run:
    """Per query: 8 documents the qrels do not list, then its listed ones."""
    d = qrels.to_dict()
    lists = {q: [f"unlisted-{q}-{i}" for i in range(8)] + list(docs) for q, docs in d.items()}
    return Run.from_ranked_lists(lists, name="bm25")


def test_cranfield_qrels_never_warn_about_pooling() -> None:
    qrels = read_qrels(require(DATA / "cranfield" / "qrels.trec"))
    res = evaluate(qrels, _run_of_unlisted(qrels), ["ndcg@10"])
    assert res.judged is not None and res.judged.mean < 0.5 and res.judged.relevant_only
    assert not res.judged.mostly_unjudged
    assert all("pooled" not in w.text() for w in res.warnings())
    assert res.to_dict()["judged"]["relevant_only"] is True


def test_pooled_qrels_still_warn_and_say_it_as_a_possibility() -> None:
    rng = np.random.default_rng(0)
    pooled = {f"q{i}": {f"d{j}": int(rng.integers(0, 2)) for j in range(30)} for i in range(5)}
    qrels = Qrels.from_dict(pooled)
    res = evaluate(qrels, _run_of_unlisted(qrels), ["ndcg@10"])
    assert res.judged is not None and not res.judged.relevant_only and res.judged.mostly_unjudged
    [w] = [w for w in res.warnings() if w.kind == "mostly_unjudged"]
    assert "if the qrels were pooled from other systems this run may look worse than it is" in w.text()
    assert '(unjudged="condense"; command line: --unjudged condense)' in w.text()
