"""Benchmark the retriever-evaluation machinery (not a retriever): folding, runner overhead, resume, audit.

    .venv/bin/python bench/bench_retrieval.py                  # 10,000 queries
    .venv/bin/python bench/bench_retrieval.py --queries 2000   # quicker

Measured (wall time, one process, synthetic data with a fixed seed):

* ``fold_chunks``: a run of queries x 100 chunks (10 chunks per document) folded to documents
  with the pattern ``{doc_id}#{chunk}``, and with a dict;
* ``evaluate_retriever`` overhead with an instant in-memory retriever (k=10): sequential,
  4 threads, and ``search_batch`` (batches of 64) — i.e. what rankscope adds per query;
* resume: the same evaluation again with every query already in the cache;
* an I/O-bound retriever (10 ms sleep per call) with 1, 8 and 32 threads;
* ``audit_testset`` (duplicates + trigram near-duplicates) on the queries
  (4-11 words drawn from 5,000 random lower-case words).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from rankscope.data import Run
from rankscope.data.testset import Query, TestSet
from rankscope.data.testset_audit import audit_testset
from rankscope.retrieval import Hit, evaluate_retriever, fold_chunks


def timed(label: str, fn, repeat: int = 3):  # type: ignore[no-untyped-def]
    best = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    print(f"{label:<58} {best * 1000:10.1f} ms")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=10_000)
    args = ap.parse_args()
    n = args.queries
    rng = np.random.default_rng(7)

    # -- folding -------------------------------------------------------------------------
    per_query = 100
    docs = rng.integers(0, 50_000, size=(n, per_query // 10))
    chunk_ids = np.array([f"d{d}#{c}" for row in docs for d in row for c in range(10)], dtype=object)
    qids = np.repeat(np.array([f"q{i}" for i in range(n)], dtype=object), per_query)
    scores = rng.random(n * per_query)
    run = Run(qids, chunk_ids, scores, "chunks", duplicates="keep_best")
    print(f"run: {len(run):,} chunk rows, {n:,} queries")
    folded = timed("fold_chunks, pattern '{doc_id}#{chunk}'", lambda: fold_chunks(run, "{doc_id}#{chunk}"))
    mapping = {c: c.split("#")[0] for c in run.doc_ids.to_pylist()}
    timed("fold_chunks, dict", lambda: fold_chunks(run, mapping))
    print(f"  -> {len(folded):,} document rows")

    # -- runner overhead -------------------------------------------------------------------
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = np.array(["".join(rng.choice(letters, size=int(m))) for m in rng.integers(3, 10, size=5000)],
                     dtype=object)
    lengths = rng.integers(4, 12, size=n)
    queries = [Query(f"q{i}", " ".join(rng.choice(words, size=int(m)))) for i, m in enumerate(lengths)]
    qrels = {f"q{i}": {f"d{i % 1000}": 1} for i in range(n)}
    ts = TestSet(queries, qrels, name="synthetic")
    hits = [Hit(f"d{j}", 1.0 - j / 100) for j in range(10)]

    class Instant:
        def search(self, query: str, k: int) -> list[Hit]:
            return hits[:k]

    class InstantBatch(Instant):
        def search_batch(self, qs: list[str], k: int) -> list[list[Hit]]:
            return [hits[:k] for _ in qs]

    metrics = ["ndcg@10", "recall@10", "mrr"]
    timed("evaluate_retriever, sequential (workers=1)",
          lambda: evaluate_retriever(Instant(), ts, metrics, workers=1, progress=False), repeat=1)
    timed("evaluate_retriever, 4 threads",
          lambda: evaluate_retriever(Instant(), ts, metrics, workers=4, progress=False), repeat=1)
    timed("evaluate_retriever, search_batch (64)",
          lambda: evaluate_retriever(InstantBatch(), ts, metrics, progress=False), repeat=1)
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache.jsonl"
        timed("evaluate_retriever, sequential, writing the cache",
              lambda: evaluate_retriever(Instant(), ts, metrics, workers=1, cache=cache, progress=False), repeat=1)
        timed("resume: everything already cached",
              lambda: evaluate_retriever(Instant(), ts, metrics, cache=cache, progress=False), repeat=1)
        print(f"  cache size {cache.stat().st_size / 1e6:.1f} MB")

    # -- I/O-bound retriever: threads overlap the waiting -----------------------------------------
    io_ts = ts.subset(ts.query_ids[:200])

    class Sleepy(Instant):
        def search(self, query: str, k: int) -> list[Hit]:
            time.sleep(0.01)  # a 10 ms network round trip
            return hits[:k]

    for workers in (1, 8, 32):
        timed(f"200 queries x 10 ms I/O, workers={workers}",
              lambda w=workers: evaluate_retriever(Sleepy(), io_ts, metrics, workers=w, progress=False), repeat=1)

    # -- audit -------------------------------------------------------------------------------
    timed("audit_testset (duplicates + near-duplicates)", lambda: audit_testset(ts), repeat=1)


if __name__ == "__main__":
    main()
