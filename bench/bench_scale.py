"""Runs larger than memory: streamed evaluation vs the run held whole, vs pytrec_eval (where it fits).

    .venv/bin/python bench/bench_scale.py                       # 10M rows (100,000 queries x 100)
    .venv/bin/python bench/bench_scale.py --queries 1000000     # 100M rows, ~3.9 GB of TREC text
    .venv/bin/python bench/bench_scale.py --queries 1000000 --skip memory,pytrec_eval
    .venv/bin/python bench/bench_scale.py --dir /tmp/scale --keep   # keep the generated files

The data are :mod:`synthetic`'s (same seed and layout as ``bench_core.py``: queries
``q<n>``, docs ``D<n>``, grouped by query and ranked by score, 4-decimal scores),
written straight from Arrow (``synthetic.write_trec_fast``) so that 100M rows take
about a minute, under ``--dir`` (default: a temporary folder under /tmp, deleted at
the end unless ``--keep``).  Five metrics: ndcg@10, map, mrr, recall@100, P@10.

Every step is a whole fresh process, timed from its start to its exit (imports,
reading the qrels and the run, scoring, printing); the peak memory is the
process's peak resident set (``ru_maxrss`` of the child), the figure a user sees:

* ``stream``   — ``rankscope evaluate --qrels Q --run R -m ... -f json`` (the CLI;
  run files are scored in blocks, default ``--memory-limit 1GiB``);
* ``stream-512M`` — the same with ``--memory-limit 512MiB``;
* ``memory``   — ``read_run`` + ``read_qrels`` + ``evaluate`` on the run held whole
  (what ``rankscope evaluate`` did before streaming);
* ``pytrec_eval`` — ``parse_qrel`` + ``parse_run`` + ``evaluate`` (trec_eval 9.0.8
  inside), means computed in Python.

Each step runs ``--repeat`` times (default 3; median wall reported, all listed);
all steps must print the same means (checked).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

METRICS = "ndcg@10,map,mrr,recall@100,P@10"
TREC_KEYS = {"ndcg_cut_10": "ndcg@10", "map": "map", "recip_rank": "mrr", "recall_100": "recall@100", "P_10": "P@10"}

MEMORY = """
import json, sys
from rankscope import evaluate, read_qrels, read_run
run = read_run(sys.argv[2])
print(json.dumps(evaluate(read_qrels(sys.argv[1]), run, sys.argv[3].split(",")).mean()))
"""
PYTREC = """
import json, sys, pytrec_eval
keys = json.loads(sys.argv[3])
with open(sys.argv[1]) as fq:
    qrels = pytrec_eval.parse_qrel(fq)
with open(sys.argv[2]) as fr:
    run = pytrec_eval.parse_run(fr)
res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.10"}).evaluate(run)
sums = dict.fromkeys(keys.values(), 0.0)
for vals in res.values():
    for k, v in vals.items():
        sums[keys[k]] += v
print(json.dumps({k: v / len(res) for k, v in sums.items()}))
"""


def command(step: str, data: Path) -> list[str]:
    q, r = str(data / "qrels.trec"), str(data / "run.trec")
    if step.startswith("stream"):
        cli = [sys.executable, "-c", "from rankscope.cli.app import main; main()", "evaluate", "--qrels", q,
               "--run", r, "-m", METRICS, "-f", "json"]
        return cli + (["--memory-limit", step.split("-", 1)[1] + "iB"] if "-" in step else [])
    if step == "memory":
        return [sys.executable, "-c", MEMORY, q, r, METRICS]
    return [sys.executable, "-c", PYTREC, q, r, json.dumps(TREC_KEYS)]


def run_step(step: str, data: Path) -> dict:
    """Run one step in a fresh process: wall seconds, CPU seconds, peak RSS (bytes) and the means it printed."""
    t = time.perf_counter()
    proc = subprocess.Popen(command(step, data), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    if status != 0:
        return {"step": step, "error": (err.strip().splitlines() or ["failed"])[-1]}
    text = out.strip()
    means = json.loads(text[text.index("{"):]) if text.startswith("{") and '"mean"' not in text else None
    if means is None:
        means = json.loads(text)["mean"]
    return {"step": step, "seconds": wall, "cpu": usage.ru_utime + usage.ru_stime, "peak": usage.ru_maxrss * 1024,
            "mean": {k: round(v, 10) for k, v in means.items()}}


def gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip", default="", help="comma-separated steps to leave out")
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    steps = [s for s in ("stream", "stream-512M", "memory", "pytrec_eval") if s not in skip]
    data = args.dir or Path(tempfile.mkdtemp(prefix="rankscope-scale-", dir="/tmp"))
    try:
        if not (data / "run.trec").exists():
            t = time.perf_counter()
            # in a process of its own: a child's peak RSS (ru_maxrss) includes this process's resident set when it
            # was spawned (Linux keeps the high-water mark across exec), so this process must stay small
            subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r}); "
                            "from pathlib import Path; from synthetic import write_trec_fast; "
                            f"write_trec_fast(Path(sys.argv[1]), {args.queries}, {args.depth}, seed=42)", str(data)],
                           check=True)
            print(f"generated {args.queries:,} x {args.depth} rows in {time.perf_counter() - t:.0f} s: "
                  f"run.trec {(data / 'run.trec').stat().st_size / 1e9:.2f} GB, "
                  f"qrels.trec {(data / 'qrels.trec').stat().st_size / 1e6:.0f} MB", flush=True)
        floor = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(f"this process's peak RSS (a floor under every step's peak): {gib(floor)}", flush=True)
        results: dict[str, list[dict]] = {s: [] for s in steps}
        for _ in range(args.repeat):
            for s in steps:  # alternate the steps: each sees the same machine load
                results[s].append(run_step(s, data))
                print(json.dumps(results[s][-1]), flush=True)
        rows = args.queries * args.depth
        print(f"\n{rows:,} run rows, five metrics; whole process per step; {os.cpu_count()} CPUs")
        print("| step | wall (median) | runs | CPU | peak memory | rows/s per core (CPU) |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        medians = {}
        for s in steps:
            ok = [r for r in results[s] if "error" not in r]
            if not ok:
                print(f"| {s} | failed: {results[s][-1]['error']} | | | | |")
                continue
            med = sorted(ok, key=lambda r: r["seconds"])[len(ok) // 2]
            medians[s] = med
            runs = " / ".join(f"{r['seconds']:.1f}" for r in ok)
            print(f"| {s} | {med['seconds']:.2f} s | {runs} | {med['cpu']:.1f} s | {gib(med['peak'])} | "
                  f"{rows / med['cpu'] / 1e6:.2f} M |")
        means = {s: m["mean"] for s, m in medians.items()}
        ref = next(iter(means.values()), None)
        same = all(abs(v[k] - ref[k]) < 1e-9 for v in means.values() for k in ref) if ref else False
        print(f"\nsame means in every step: {same}  {ref}")
        if "stream" in medians:
            for s in ("memory", "pytrec_eval"):
                if s in medians:
                    a, b = medians["stream"], medians[s]
                    print(f"stream vs {s}: {b['seconds'] / a['seconds']:.2f}x wall, "
                          f"{b['peak'] / a['peak']:.2f}x peak memory")
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
