"""Benchmark: reading TREC files from disk, rankscope vs pytrec_eval.

Writes a synthetic run (default 100,000 queries x 100 docs = 10M lines, fixed
seed) and qrels (10 judgments per query, half of them retrieved) to a temporary
directory, then times

* rankscope: ``read_qrels`` + ``read_run`` (+ ``evaluate`` with ``--evaluate``);
* pytrec_eval: its own parsing route, ``pytrec_eval.parse_qrel`` /
  ``pytrec_eval.parse_run`` on file handles (+ ``RelevanceEvaluator.evaluate``).

Usage::

    .venv/bin/python bench/bench_io.py [--queries 100000] [--docs 100] [--evaluate] [--repeat 1]

Each timing is the best of ``--repeat`` runs (wall clock).  Prints the times and
the ratio pytrec_eval / rankscope.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

METRICS_RANKSCOPE = ["map", "ndcg", "P@10", "recall@100"]
METRICS_PYTREC = {"map", "ndcg", "P_10", "recall_100"}


def _write_space_separated(table: pa.Table, path: Path) -> None:
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pcsv.write_csv(table, str(path), write_options=opts)


def _ids(prefix: str, values: np.ndarray) -> pa.Array:
    return pc.binary_join_element_wise(prefix, pa.array(values).cast(pa.string()), "")


def make_files(folder: Path, n_queries: int, n_docs: int, seed: int = 0) -> tuple[Path, Path]:
    """Write ``run.trec`` and ``qrels.trec`` (distinct docs per query, random scores) into ``folder``."""
    rng = np.random.default_rng(seed)
    universe = 5_000_000
    q = np.repeat(np.arange(n_queries), n_docs)
    j = np.tile(np.arange(n_docs), n_queries)
    # doc ids distinct within a query: offset + j * step (mod universe), step * n_docs < universe
    step = universe // max(n_docs, 1) - 1
    base = rng.integers(0, universe, n_queries)
    docs = (np.repeat(base, n_docs) + j * step) % universe
    scores = np.round(rng.random(len(q)) * 30, 6)
    run = pa.table(
        {
            "q": _ids("q", q),
            "q0": pa.array(np.full(len(q), "Q0", dtype=object)),
            "d": _ids("d", docs),
            "rank": pa.array(j + 1),
            "score": pa.array(scores),
            "tag": pa.array(np.full(len(q), "bench", dtype=object)),
        }
    )
    run_path = folder / "run.trec"
    _write_space_separated(run, run_path)
    # qrels: 10 judgments per query, 5 of them from the run's top 20, 5 unretrieved
    per_q = 10
    qq = np.repeat(np.arange(n_queries), per_q)
    k = np.tile(np.arange(per_q), n_queries)
    qdocs = np.where(k < 5, (np.repeat(base, per_q) + 4 * k * step) % universe, universe + qq * per_q + k)
    qrels = pa.table(
        {
            "q": _ids("q", qq),
            "it": pa.array(np.zeros(len(qq), dtype=np.int64)),
            "d": _ids("d", qdocs),
            "rel": pa.array(rng.integers(0, 3, len(qq))),
        }
    )
    qrels_path = folder / "qrels.trec"
    _write_space_separated(qrels, qrels_path)
    return qrels_path, run_path


def _best(fn: object, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--evaluate", action="store_true", help="also evaluate (map, ndcg, P@10, recall@100)")
    ap.add_argument("--skip-pytrec", action="store_true")
    args = ap.parse_args()

    import rankscope
    from rankscope.io import read_qrels, read_run

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        qrels_path, run_path = make_files(Path(tmp), args.queries, args.docs)
        size = run_path.stat().st_size / 1e6
        print(f"wrote {args.queries * args.docs:,} run lines ({size:.0f} MB) + qrels in {time.perf_counter() - t:.1f}s")

        def ours() -> object:
            qrels, run = read_qrels(qrels_path), read_run(run_path)
            if args.evaluate:
                return rankscope.evaluate(qrels, run, METRICS_RANKSCOPE).mean()
            return len(run)

        t_ours, out = _best(ours, args.repeat)
        print(f"rankscope   read_qrels + read_run{' + evaluate' if args.evaluate else ''}: {t_ours:7.2f} s  ({out})")
        if args.skip_pytrec:
            return
        import pytrec_eval

        def theirs() -> object:
            with open(qrels_path) as fh:
                qrels = pytrec_eval.parse_qrel(fh)
            with open(run_path) as fh:
                run = pytrec_eval.parse_run(fh)
            if args.evaluate:
                res = pytrec_eval.RelevanceEvaluator(qrels, METRICS_PYTREC).evaluate(run)
                return {m: float(np.mean([v[m] for v in res.values()])) for m in sorted(METRICS_PYTREC)}
            return sum(len(v) for v in run.values())

        t_theirs, out = _best(theirs, args.repeat)
        print(f"pytrec_eval parse_qrel + parse_run{' + evaluate' if args.evaluate else ''}: {t_theirs:7.2f} s  ({out})")
        print(f"ratio pytrec_eval / rankscope: {t_theirs / t_ours:.1f}x")


if __name__ == "__main__":
    main()
