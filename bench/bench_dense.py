"""Embedding speed of the dense baseline (all-MiniLM-L6-v2): float32 vs bfloat16, 1 vs 2 torch threads.

    .venv/bin/python bench/bench_dense.py               # 256 Cranfield abstracts, 128 tokens
    .venv/bin/python bench/bench_dense.py --docs 64 --dataset cmrc2018

Backs two statements in docs/baselines.md: bfloat16 autocast is faster on CPUs
with native bf16, and on a small machine shared with other work one torch
thread can beat two.  Each setting runs in a fresh process (torch fixes its
thread pool at first use) after one warm-up batch; the report gives wall time,
documents per second, process CPU time and the load average at the start, since
the result depends on what else the machine is doing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

WORKER = r"""
import json, os, sys, time
import torch
threads, precision, dataset, n = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
torch.set_num_threads(threads)
from rankscope.datasets import load_dataset
from rankscope.retrieval.dense import load_model
texts = list(load_dataset(dataset).corpus.values())[:n]
model, _ = load_model("all-MiniLM-L6-v2")
model.max_seq_length = 128
def run(batch):
    if precision == "bfloat16":
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model.encode(batch, batch_size=32)
    return model.encode(batch, batch_size=32)
run(texts[:32])
c0, t0 = time.process_time(), time.perf_counter()
run(texts)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
print(json.dumps({"wall": wall, "cpu": cpu, "docs_per_s": len(texts) / wall}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=256)
    parser.add_argument("--dataset", default="cranfield")
    args = parser.parse_args()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"{args.docs} {args.dataset} documents, max_seq_length 128")
    print(f"{'threads':>7} {'precision':>9} {'wall s':>7} {'docs/s':>7} {'CPU s':>6}")
    for threads in (1, 2):
        for precision in ("float32", "bfloat16"):
            out = subprocess.run([sys.executable, "-c", WORKER, str(threads), precision, args.dataset, str(args.docs)],
                                 capture_output=True, text=True, env=env, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{threads:>7} {precision:>9} {r['wall']:>7.1f} {r['docs_per_s']:>7.1f} {r['cpu']:>6.1f}")
            time.sleep(1)


if __name__ == "__main__":
    main()
