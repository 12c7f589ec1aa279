"""Benchmark the core engine against pytrec_eval and ranx on the same synthetic data.

    .venv/bin/python bench/bench_core.py                 # 100,000 queries x 100 docs = 10M run rows
    .venv/bin/python bench/bench_core.py --queries 10000 # quicker
    .venv/bin/python bench/bench_core.py --skip ranx     # leave a tool out
    .venv/bin/python bench/bench_core.py --repeat 1      # one run per step (default 3, median reported)

The data (see ``bench/synthetic.py``) is generated once with a fixed seed into a
temporary directory, as numpy columns and as TREC files.  Every measurement runs
in its own fresh Python process (``bench/bench_worker.py``), which imports the
tool (for rankscope also the modules it loads lazily on first use: engine, metric
registry, pyarrow.compute; their import time is printed), loads the data into
the tool's native in-memory input *before* the clock starts, resets the
peak-RSS counter, then times the step and reports wall time, process CPU time
(user + sys: less sensitive to other load on a shared machine; above wall time
when a tool uses several threads) and the growth of peak resident memory.
Each step runs ``--repeat`` times (default 3, each in a fresh process); the run
with the median wall time is reported, and all wall times are listed (on a
shared machine a single run can be off by 20-30%).

Steps (five metrics: ndcg@10, map, mrr, recall@100, precision@10):

* ``rankscope arrow``  — Run/Qrels built from Arrow string columns + evaluate;
* ``rankscope numpy``  — the same from numpy string arrays (e.g. DataFrame columns);
* ``rankscope files``  — read_run/read_qrels of the TREC files + evaluate;
* ``pytrec_eval eval`` — RelevanceEvaluator(qrels dict) + evaluate(run dict);
* ``pytrec_eval columns`` — the same, the clock also covering the building of
  its dict-of-dicts input from the numpy columns (what it costs to start from
  the columnar data rankscope takes as it is);
* ``pytrec_eval files``— parse_run/parse_qrel of the TREC files + evaluate;
* ``ranx warm``        — Qrels(dict)/Run(dict) + evaluate, after a tiny warm-up
  call in the same process (numba functions compiled / loaded from cache);
* ``ranx cold``        — the same without the warm-up (numba compile or cache load
  counted; the very first run on a machine also compiles, later runs load the cache).

Also: ``import rankscope`` time (best of 5 fresh processes) and the latency of one
query x 10 documents (median of 200 calls).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import write_dataset  # noqa: E402

STEPS = {
    "rankscope": ["rankscope_arrow", "rankscope_numpy", "rankscope_files"],
    "pytrec_eval": ["pytrec_eval", "pytrec_eval_columns", "pytrec_eval_files"],
    "ranx": ["ranx_warm", "ranx_cold"],
}


def run_worker(step: str, data: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, str(HERE / "bench_worker.py"), step, str(data)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return {"step": step, "error": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def import_time(repeats: int = 5) -> float:
    code = "import time; t = time.perf_counter(); import rankscope; print(time.perf_counter() - t)"
    return min(float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(repeats))


def gib(n_bytes: float) -> str:
    return f"{n_bytes / 2**30:.2f} GiB"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--skip", action="append", default=[], choices=sorted(STEPS), help="leave a tool out")
    ap.add_argument("--data", type=Path, help="reuse/keep the generated data in this directory")
    ap.add_argument("--json", type=Path, help="also write the results as JSON")
    ap.add_argument("--repeat", type=int, default=3, help="fresh-process runs per step; the median is reported")
    args = ap.parse_args(argv)

    tmp = None
    data = args.data
    if data is None:
        tmp = tempfile.TemporaryDirectory(prefix="rankscope-bench-")
        data = Path(tmp.name)
    stamp = data / f"done-{args.queries}-{args.depth}-{args.seed}"
    t0 = time.perf_counter()
    if not stamp.exists():
        write_dataset(data, args.queries, args.depth, args.seed)
        stamp.touch()
    print(f"data: {args.queries:,} queries x {args.depth} docs = {args.queries * args.depth:,} run rows "
          f"(seed {args.seed}) in {data} [{time.perf_counter() - t0:.1f} s]")
    print(f"machine: {os.cpu_count()} CPUs, python {sys.version.split()[0]}\n")

    results: dict[str, dict] = {}
    for tool, steps in STEPS.items():
        if tool in args.skip:
            continue
        for step in steps:
            runs = [run_worker(step, data) for _ in range(max(args.repeat, 1))]
            failed = [r for r in runs if "error" in r]
            if failed:
                results[step] = failed[0]
                print(f"{step:<20} ERROR {failed[0]['error']}")
                continue
            runs.sort(key=lambda r: r["seconds"])
            res = runs[len(runs) // 2]
            res["all_seconds"] = [r["seconds"] for r in runs]
            results[step] = res
            spread = "/".join(f"{r['seconds']:.2f}" for r in runs) if len(runs) > 1 else ""
            print(f"{step:<18} {res['seconds']:7.2f} s wall {res['cpu_seconds']:7.2f} s CPU"
                  f"  peak +{gib(res['peak_delta']):>9}  {res['note']}" + (f"  [runs: {spread} s]" if spread else ""))
    if "rankscope" not in args.skip:
        results["import"] = {"seconds": import_time()}
        results["latency"] = run_worker("rankscope_latency", data)
        print(f"\nimport rankscope: {results['import']['seconds'] * 1000:.0f} ms (best of 5)")
        loads = [r["import_seconds"] for k, r in results.items()
                 if k.startswith("rankscope_") and "import_seconds" in r]
        if loads:
            print(f"first use (engine, metric registry, pyarrow.compute; once per process, outside the clock "
                  f"like the other tools' imports): {min(loads) * 1000:.0f} ms")
        if "error" not in results["latency"]:
            print(f"1 query x 10 docs, 5 metrics: {results['latency']['seconds'] * 1000:.3f} ms (median of 200)")

    def ratio(a: str, b: str) -> None:
        ra, rb = results.get(a), results.get(b)
        if not ra or not rb or "error" in ra or "error" in rb:
            return
        speed = rb["seconds"] / ra["seconds"]
        cpu = rb["cpu_seconds"] / ra["cpu_seconds"]
        mem = rb["peak_delta"] / max(ra["peak_delta"], 1)
        print(f"{a:<16} vs {b:<18} {speed:5.1f}x faster (wall), {cpu:5.1f}x (CPU), {mem:5.1f}x less peak memory")

    print()
    for a, b in (
        ("rankscope_arrow", "pytrec_eval"),
        ("rankscope_numpy", "pytrec_eval"),
        ("rankscope_numpy", "pytrec_eval_columns"),
        ("rankscope_arrow", "ranx_warm"),
        ("rankscope_arrow", "ranx_cold"),
        ("rankscope_files", "pytrec_eval_files"),
    ):
        ratio(a, b)
    means = {k: v.get("mean") for k, v in results.items() if isinstance(v, dict) and v.get("mean")}
    if means:
        print("\nmean scores (should agree across tools):")
        for k, v in means.items():
            print(f"  {k:<20} " + "  ".join(f"{m}={x:.6f}" for m, x in v.items()))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
