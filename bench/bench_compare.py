"""Benchmark rankscope.compare against ranx.compare on the same synthetic data.

    .venv/bin/python bench/bench_compare.py                  # 3 runs x 10,000 queries x 3 metrics
    .venv/bin/python bench/bench_compare.py --queries 2000 --no-ranx

Data: ``synthetic.generate(queries, depth=100)`` gives qrels and one run; three
systems are made from it by adding Gaussian noise of different widths to the
scores (fixed seeds), so their per-query metrics differ and are correlated.
Metrics: ndcg@10, recall@5, mrr.  Each tool runs in its own fresh process
(``--worker``); its inputs are built before the clock starts.

Timed steps (median of ``--repeat`` runs, seconds):

* ``rankscope compare``: ``compare(qrels, runs, metrics, test="randomization",
  permutations=10_000, correction="holm")`` from Run objects: evaluation of the 3
  runs + randomization test on 3 pairs x 3 metrics + bootstrap intervals (1,000
  resamples) + Holm correction + effect sizes;
* ``rankscope stats only``: the same call on the 3 already computed
  ``EvaluationResult`` values (no evaluation);
Wall and CPU time (``time.process_time``, all threads of the process) are both
printed: on a shared, loaded machine the CPU time is the steadier number.

* ``ranx compare``: ``ranx.compare(qrels, runs, metrics, stat_test="fisher",
  n_permutations=1000)`` (evaluation + its Fisher randomization test, no correction),
  after a tiny warm-up call that compiles/loads numba's code; ``ranx cold`` is the
  first call without warm-up in a fresh process.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import generate, id_strings  # noqa: E402

METRICS = ["ndcg@10", "recall@5", "mrr"]
SYSTEMS = ("bm25", "dense", "hybrid")


def columns(queries: int, depth: int) -> dict[str, Any]:
    cols = generate(queries, depth, 42)
    rng = np.random.default_rng(7)
    runs = {}
    for i, name in enumerate(SYSTEMS):
        runs[name] = np.round(cols["run_s"] + rng.normal(0.0, 2.0 + 2.0 * i, len(cols["run_s"])), 4)
    return {
        "qrels": (id_strings("q", cols["qrels_q"]), id_strings("D", cols["qrels_d"]), cols["qrels_g"]),
        "run_q": id_strings("q", cols["run_q"]),
        "run_d": id_strings("D", cols["run_d"]),
        "scores": runs,
    }


CPU: dict[str, float] = {}


def median_time(step: Any, repeat: int, key: str = "") -> tuple[float, list[float], Any]:
    """Median wall time of ``repeat`` calls; the median CPU time (all threads) goes to ``CPU[key]``."""
    times, cpu = [], []
    out = None
    for _ in range(repeat):
        c = time.process_time()
        t = time.perf_counter()
        out = step()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    CPU[key] = statistics.median(cpu)
    return statistics.median(times), times, out


def worker_rankscope(args: argparse.Namespace) -> dict[str, Any]:
    from rankscope import Qrels, Run, compare
    from rankscope.engine import Evaluator

    c = columns(args.queries, args.depth)
    qrels = Qrels(*c["qrels"])
    runs = {n: Run(c["run_q"], c["run_d"], s, n) for n, s in c["scores"].items()}
    kw = {"test": "randomization", "permutations": args.permutations, "correction": "holm", "rng": 1}

    def full() -> Any:
        return compare(qrels, runs, METRICS, **kw)  # type: ignore[arg-type]

    compare(qrels, {n: Run(["q0"], ["D0"], [1.0], n) for n in SYSTEMS}, METRICS, **kw)  # imports, scipy
    t_full, all_full, comp = median_time(full, args.repeat, "rankscope_compare")
    ev = Evaluator(qrels, METRICS)
    results = {n: ev.evaluate(r, name=n) for n, r in runs.items()}

    def stats_only() -> Any:
        return compare(None, results, METRICS, **kw)  # type: ignore[arg-type]

    t_stats, all_stats, comp2 = median_time(stats_only, args.repeat, "rankscope_stats_only")
    assert comp.to_dict()["pairs"] == comp2.to_dict()["pairs"]
    return {
        "rankscope_compare": t_full, "rankscope_compare_all": all_full,
        "rankscope_stats_only": t_stats, "rankscope_stats_only_all": all_stats,
        "p_values": [round(p.p_value, 4) for p in comp.pairs],
        "p_adjusted": [round(p.p_adjusted, 4) for p in comp.pairs],
        "means": comp.means, "cpu": CPU,
    }


def worker_ranx(args: argparse.Namespace) -> dict[str, Any]:
    import ranx

    c = columns(args.queries, args.depth)
    qd: dict[str, dict[str, int]] = {}
    for q, d, g in zip(*(x.tolist() for x in c["qrels"])):
        qd.setdefault(q, {})[d] = int(g)
    qrels = ranx.Qrels(qd)
    runs = []
    rq, rd = c["run_q"].tolist(), c["run_d"].tolist()
    for name, s in c["scores"].items():
        rdict: dict[str, dict[str, float]] = {}
        for q, d, v in zip(rq, rd, s.tolist()):
            rdict.setdefault(q, {})[d] = v
        runs.append(ranx.Run(rdict, name=name))

    def step() -> Any:
        return ranx.compare(qrels, runs, METRICS, stat_test="fisher", n_permutations=args.ranx_permutations,
                            max_p=0.05, random_seed=1)

    out: dict[str, Any] = {}
    if args.cold:
        t = time.perf_counter()
        step()
        out["ranx_cold"] = time.perf_counter() - t
        return out
    tiny_q = ranx.Qrels({"q": {"a": 1}, "r": {"b": 1}})
    tiny = [ranx.Run({"q": {"a": 1.0, "b": 0.5}, "r": {"b": 1.0}}, name=n) for n in SYSTEMS]
    ranx.compare(tiny_q, tiny, METRICS, stat_test="fisher", n_permutations=10, max_p=0.05)
    t_warm, all_warm, report = median_time(step, args.repeat, "ranx_compare")
    out["ranx_compare"] = t_warm
    out["ranx_compare_all"] = all_warm
    out["ranx_means"] = {r.name: {m: report.results[r.name][m] for m in METRICS} for r in runs}
    out["cpu"] = CPU
    return out


def spawn(tool: str, args: argparse.Namespace, *extra: str) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", tool, "--queries", str(args.queries), "--depth", str(args.depth),
           "--permutations", str(args.permutations), "--ranx-permutations", str(args.ranx_permutations),
           "--repeat", str(args.repeat), *extra]
    res = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"{tool} worker failed:\n{res.stderr}")
    return dict(json.loads(res.stdout.strip().splitlines()[-1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=10_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--permutations", type=int, default=10_000)
    ap.add_argument("--ranx-permutations", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-ranx", action="store_true")
    ap.add_argument("--cold", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--worker", choices=["rankscope", "ranx"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker == "rankscope":
        print(json.dumps(worker_rankscope(args)))
        return
    if args.worker == "ranx":
        print(json.dumps(worker_ranx(args)))
        return

    print(f"{len(SYSTEMS)} runs x {args.queries:,} queries x {len(METRICS)} metrics ({', '.join(METRICS)}), "
          f"depth {args.depth}; median of {args.repeat}")
    rs = spawn("rankscope", args)
    print(f"rankscope compare (evaluate + randomization {args.permutations:,} perms + bootstrap 1,000 + Holm): "
          f"{rs['rankscope_compare']:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in rs['rankscope_compare_all'])})")
    runs_s = ", ".join(f"{t:.3f}" for t in rs["rankscope_stats_only_all"])
    print(f"rankscope stats only (same, on evaluated results):                          "
          f"{rs['rankscope_stats_only']:.3f} s  (runs: {runs_s})")
    print(f"  raw p-values: {rs['p_values']}")
    print(f"  Holm:         {rs['p_adjusted']}")
    if args.no_ranx:
        return
    rx = spawn("ranx", args)
    cold = spawn("ranx", args, "--cold")
    print(f"ranx compare (evaluate + fisher {args.ranx_permutations:,} perms, warm):                       "
          f"{rx['ranx_compare']:.3f} s  (runs: {', '.join(f'{t:.3f}' for t in rx['ranx_compare_all'])})")
    print(f"ranx compare, first call in a fresh process (numba compile/cache load):    {cold['ranx_cold']:.3f} s")
    for name in SYSTEMS:
        for m in METRICS:
            a, b = rs["means"][name][m], rx["ranx_means"][name][m]
            if abs(a - b) > 1e-6:
                print(f"  WARNING: mean {m} of {name} differs: rankscope {a:.6f}, ranx {b:.6f}")
    ratio = rx["ranx_compare"] / rs["rankscope_compare"]
    cpu_ratio = rx["cpu"]["ranx_compare"] / rs["cpu"]["rankscope_compare"]
    print(f"CPU time (all threads): rankscope compare {rs['cpu']['rankscope_compare']:.3f} s, stats only "
          f"{rs['cpu']['rankscope_stats_only']:.3f} s; ranx compare {rx['cpu']['ranx_compare']:.3f} s")
    print(f"ratio ranx / rankscope (end to end, rankscope with {args.permutations // args.ranx_permutations}x "
          f"the permutations): wall {ratio:.1f}x, CPU {cpu_ratio:.1f}x")


if __name__ == "__main__":
    main()
