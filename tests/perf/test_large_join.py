"""The fast join of large runs (fingerprint pre-filter, sparse grade scatter) equals the exact join."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import rankscope.engine.prepare as prepare_mod
from rankscope import Qrels, Run
from rankscope.engine.prepare import Prepared, QrelsIndex, prepare


def _data(shuffle: bool, chunked: bool = False) -> tuple[Qrels, Run]:
    rng = np.random.default_rng(7)
    n_q, depth = 800, 100  # 80,000 rows: above the pre-filter threshold
    q = np.repeat(np.arange(n_q), depth)
    d = rng.integers(0, 4000, size=(n_q, depth))
    d = np.sort(d, axis=1) + np.arange(depth)  # distinct per query
    docs = np.char.add("d", d.ravel().astype("U")).astype(object)
    docs[::7] = np.char.add("long-document-identifier-", d.ravel()[::7].astype("U"))  # mixed lengths
    score = np.round(rng.random(n_q * depth), 2)  # many ties
    qids = np.char.add("q", q.astype("U"))
    # a run file's layout: grouped by query (numeric order, not string order), ranked by score
    by_score = np.argsort(-score.reshape(n_q, depth), axis=1, kind="stable")
    score = np.take_along_axis(score.reshape(n_q, depth), by_score, axis=1).ravel()
    docs = np.take_along_axis(docs.reshape(n_q, depth), by_score, axis=1).ravel()
    if shuffle:
        perm = rng.permutation(len(q))
        qids, docs, score = qids[perm], docs[perm], score[perm]
    # qrels: some run docs, some never retrieved, negative grades, queries absent from the run
    jq = rng.integers(0, n_q + 50, size=30_000)
    jd = rng.integers(0, 4200, size=30_000)
    key = np.unique(jq.astype(np.int64) * 10_000 + jd)
    jq, jd = key // 10_000, key % 10_000
    jdocs = np.char.add("d", jd.astype("U")).astype(object)
    jdocs[jd % 7 == 0] = np.char.add("long-document-identifier-", jd[jd % 7 == 0].astype("U"))
    grades = rng.integers(-1, 4, size=len(jq))
    qrels = Qrels(pa.array(np.char.add("q", jq.astype("U"))), pa.array(jdocs), grades)
    # run queries q800.. q849 are not in the run; add 20 run queries unknown to the qrels
    extra_q = np.repeat(np.char.add("x", np.arange(20).astype("U")), 5)
    extra_d = np.tile(np.array(["d1", "d2", "d3", "d4", "d5"]), 20)
    all_docs = np.concatenate([docs, extra_d])
    doc_col = pa.chunked_array([all_docs[:30_000], all_docs[30_000:]]) if chunked else pa.array(all_docs)
    run = Run(pa.array(np.concatenate([qids, extra_q])), doc_col, np.concatenate([score, np.ones(len(extra_q))]))
    return qrels, run


FIELDS = ("query_ids", "offsets", "qidx", "rank", "grade", "judged", "num_ret", "score", "ideal_offsets",
          "ideal_grade", "in_run")


def _same(a: Prepared, b: Prepared) -> None:
    """Equal judged views and equal complete views (fields and doc ids)."""
    for va, vb in ((a, b), (a.complete_view(), b.complete_view())):
        for name in FIELDS:
            np.testing.assert_array_equal(getattr(va, name), getattr(vb, name), err_msg=name)
        assert va.doc_strings() == vb.doc_strings()


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("missing", ["zero", "ignore"])
@pytest.mark.parametrize("depth", [None, 30])
def test_prefiltered_join_equals_exact_join(
    monkeypatch: pytest.MonkeyPatch, shuffle: bool, missing: str, depth: int | None
) -> None:
    qrels, run = _data(shuffle, chunked=True)
    assert isinstance(run.doc_column(), pa.ChunkedArray)  # kept chunked: no copy of the strings
    index = QrelsIndex(qrels)
    fast, fast_counts = prepare(index, run, missing=missing, depth=depth)  # type: ignore[arg-type]
    assert fast.judged.sum() > 100
    monkeypatch.setattr(prepare_mod, "_FINGERPRINT_JOIN_MIN_ROWS", 10**12)  # exact string lookup of every row
    qrels2, run2 = _data(shuffle)
    exact, exact_counts = prepare(QrelsIndex(qrels2), run2, missing=missing, depth=depth)  # type: ignore[arg-type]
    assert fast_counts == exact_counts
    _same(fast, exact)


def test_fingerprint_join_equals_exact_lookup() -> None:
    qrels, run = _data(False)
    index = QrelsIndex(qrels)
    run2q = np.searchsorted(qrels.query_ids, run.query_ids)
    run2q = np.where(qrels.query_ids[np.minimum(run2q, len(qrels.query_ids) - 1)] == run.query_ids, run2q, -1)
    def by_row(found: tuple[np.ndarray, ...]) -> list[np.ndarray]:
        order = np.argsort(found[0])  # the rows come in any order
        return [x[order] for x in found]

    rows, grade, judged = by_row(index.lookup(run, run2q))
    assert len(rows) > 500 and (grade < 0).any() and (grade == 0).any()
    assert (judged == (grade >= 0)).all()
    exact = by_row(index._lookup_exact(run, run2q))  # (rows, qrels row)
    for got, want in zip(by_row(index.lookup_rows(run, run2q)), exact):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(grade, qrels.grades[exact[1]])
    run.dcode  # noqa: B018  (builds the dictionary: the exact path)
    for got, want in zip(by_row(index.lookup_rows(run, run2q)), exact):
        np.testing.assert_array_equal(got, want)


def test_grouped_input_ranks_like_shuffled_input() -> None:
    """Block-permutation ranking (grouped input, ties found in input order) equals the lexsort path."""
    qrels, grouped = _data(False)
    _, shuffled = _data(True)
    index = QrelsIndex(qrels)
    a, _ = prepare(index, grouped)
    b, _ = prepare(index, shuffled)
    full = a.complete_view().score
    assert int(np.sum(full[1:] == full[:-1])) > 1000  # many ties
    assert a.ranking is not None and a.ranking.blocks  # grouped input: no sort
    assert b.ranking is not None and not b.ranking.blocks
    _same(a, b)
