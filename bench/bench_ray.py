"""rankscope.ray.evaluate on this machine: one local Ray node, and two nodes simulated with ray.cluster_utils.

    .venv/bin/python bench/bench_ray.py                      # 10M rows (100,000 queries x 100)
    .venv/bin/python bench/bench_ray.py --queries 20000      # quicker

The synthetic run (``synthetic.py``, the data of ``bench_core.py`` / ``bench_scale.py``)
is written as Parquet (row groups of 1M rows) and TREC qrels under a temporary folder.
Each setting runs in a fresh process: the cluster is started, the job timed (reading
the Parquet row groups on the workers, the shuffle by query, the scoring, the merge on
the driver), then the cluster is stopped.  Printed: wall seconds of the job, the CPUs
the cluster had, rows per second per CPU (the figure ``docs/scale.md`` projects from),
and whether the means equal the local engine's (``rankscope.evaluate`` on the same file).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

METRICS = ["ndcg@10", "map", "mrr", "recall@100", "P@10"]

JOB = """
import json, sys, time
import ray
from rankscope import ray as rray
nodes, data = int(sys.argv[1]), sys.argv[2]
if nodes == 1:
    ray.init(num_cpus=2, object_store_memory=1 << 30, include_dashboard=False, logging_level="ERROR",
             log_to_driver=False)
else:
    from ray.cluster_utils import Cluster
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "object_store_memory": 600 << 20,
                                                      "include_dashboard": False})
    for _ in range(nodes - 1):
        c.add_node(num_cpus=1, object_store_memory=600 << 20)
    ray.init(address=c.address, logging_level="ERROR", log_to_driver=False)
    c.wait_for_nodes()
cpus = int(ray.cluster_resources()["CPU"])
t = time.perf_counter()
res = rray.evaluate(data + "/qrels.trec", [data + "/run.parquet"], sys.argv[3].split(","))
print(json.dumps({"seconds": time.perf_counter() - t, "cpus": cpus, "mean": res.mean()}))
"""
LOCAL = """
import json, sys, time
from rankscope import evaluate
t = time.perf_counter()
res = evaluate(sys.argv[1] + "/qrels.trec", sys.argv[1] + "/run.parquet", sys.argv[2].split(","))
print(json.dumps({"seconds": time.perf_counter() - t, "cpus": 2, "mean": res.mean()}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    args = ap.parse_args()
    data = Path(tempfile.mkdtemp(prefix="rankscope-ray-", dir="/tmp"))
    try:
        import pyarrow.parquet as pq
        from synthetic import write_trec_fast

        write_trec_fast(data, args.queries, args.depth, seed=42)
        from rankscope import read_run

        pq.write_table(read_run(data / "run.trec").to_arrow(), data / "run.parquet", row_group_size=1_000_000)
        (data / "run.trec").unlink()
        rows = args.queries * args.depth
        out = {}
        for label, cmd in (("local engine (streamed Parquet)", [sys.executable, "-c", LOCAL, str(data)]),
                           ("ray, 1 node x 2 CPUs", [sys.executable, "-c", JOB, "1", str(data)]),
                           ("ray, 2 nodes x 1 CPU (simulated)", [sys.executable, "-c", JOB, "2", str(data)])):
            t = time.perf_counter()
            proc = subprocess.run([*cmd, ",".join(METRICS)], capture_output=True, text=True, check=False)
            if proc.returncode:
                print(label, "failed:", proc.stderr.strip().splitlines()[-1:])
                continue
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            out[label] = res
            print(f"{label}: {res['seconds']:.2f} s job ({time.perf_counter() - t:.1f} s with start/stop), "
                  f"{rows / res['seconds'] / res['cpus'] / 1e6:.2f} M rows/s per CPU", flush=True)
        means = [r["mean"] for r in out.values()]
        print("same means:", all(abs(m[k] - means[0][k]) < 1e-12 for m in means for k in m), means[0])
    finally:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
