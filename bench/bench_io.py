"""Benchmark: reading TREC files from disk, rankscope vs pytrec_eval.

Writes a synthetic run (default 100,000 queries x 100 docs = 10M lines, fixed
seed) and qrels (10 judgments per query, half of them retrieved) to a temporary
directory, then times

* rankscope: ``read_qrels`` + ``read_run`` (+ ``evaluate`` with ``--evaluate``);
* pytrec_eval: its own parsing route, ``pytrec_eval.parse_qrel`` /
  ``pytrec_eval.parse_run`` on file handles (+ ``RelevanceEvaluator.evaluate``).

Usage::

    .venv/bin/python bench/bench_io.py [--queries 100000] [--docs 100] [--evaluate] [--repeat 1]

Each step is timed (best of ``--repeat``) in wall-clock and process CPU seconds
(CPU counts all threads, so Arrow's parallel parsing is not flattered; on a shared
machine CPU time is the steadier number).  Prints every step, the totals and the
ratio pytrec_eval / rankscope.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


class Clock:
    """Wall-clock and process CPU time (all threads) of one step, best of ``repeat`` runs."""

    def __init__(self, repeat: int) -> None:
        self.repeat = repeat
        self.rows: list[tuple[str, float, float]] = []

    def time(self, label: str, fn: Callable[[], Any]) -> Any:
        best_wall, best_cpu, out = float("inf"), float("inf"), None
        for _ in range(self.repeat):
            w, c = time.perf_counter(), time.process_time()
            out = fn()
            best_wall = min(best_wall, time.perf_counter() - w)
            best_cpu = min(best_cpu, time.process_time() - c)
        self.rows.append((label, best_wall, best_cpu))
        print(f"  {label:<44s} wall {best_wall:7.2f} s   cpu {best_cpu:7.2f} s", flush=True)
        return out

    def total(self, prefix: str) -> tuple[float, float]:
        rows = [r for r in self.rows if r[0].startswith(prefix)]
        return sum(r[1] for r in rows), sum(r[2] for r in rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--evaluate", action="store_true", help="also evaluate (map, ndcg, P@10, recall@100)")
    ap.add_argument("--skip-pytrec", action="store_true")
    args = ap.parse_args()

    import rankscope
    from rankscope.io import read_qrels, read_run
    from rankscope.io._source import read_bytes
    from rankscope.io._trec_fast import fast_columns

    clock = Clock(args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        qrels_path, run_path = make_files(Path(tmp), args.queries, args.docs)
        size = run_path.stat().st_size / 1e6
        print(f"wrote {args.queries * args.docs:,} run lines ({size:.0f} MB) + qrels in {time.perf_counter() - t:.1f}s")
        print("rankscope")
        clock.time("(parse only: bytes -> Arrow columns)", lambda: fast_columns(read_bytes(run_path), "run", "x"))
        qrels = clock.time("rankscope read_qrels", lambda: read_qrels(qrels_path))
        run = clock.time("rankscope read_run (parse + Run build)", lambda: read_run(run_path))
        if args.evaluate:
            ours = clock.time("rankscope evaluate", lambda: rankscope.evaluate(qrels, run, METRICS_RANKSCOPE).mean())
            print(f"  {ours}")
        if args.skip_pytrec:
            return
        import pytrec_eval

        print("pytrec_eval")

        def parse_qrel() -> Any:
            with open(qrels_path) as fh:
                return pytrec_eval.parse_qrel(fh)

        def parse_run() -> Any:
            with open(run_path) as fh:
                return pytrec_eval.parse_run(fh)

        pqrels = clock.time("pytrec_eval parse_qrel", parse_qrel)
        prun = clock.time("pytrec_eval parse_run", parse_run)
        if args.evaluate:

            def evaluate() -> dict[str, float]:
                res = pytrec_eval.RelevanceEvaluator(pqrels, METRICS_PYTREC).evaluate(prun)
                return {m: float(np.mean([v[m] for v in res.values()])) for m in sorted(METRICS_PYTREC)}

            print(f"  {clock.time('pytrec_eval evaluate (incl. evaluator build)', evaluate)}")
        for what, ours_prefix, theirs_prefix in (
            ("read", "rankscope read", "pytrec_eval parse"),
            ("read + evaluate", "rankscope", "pytrec_eval"),
        ):
            if what != "read" and not args.evaluate:
                continue
            ow, oc = clock.total(ours_prefix)
            tw, tc = clock.total(theirs_prefix)
            print(f"{what:>16s}: rankscope wall {ow:6.2f} s / cpu {oc:6.2f} s;  pytrec_eval wall {tw:6.2f} s / "
                  f"cpu {tc:6.2f} s;  ratio pytrec_eval/rankscope: wall {tw / ow:.2f}x, cpu {tc / oc:.2f}x")


if __name__ == "__main__":
    main()
