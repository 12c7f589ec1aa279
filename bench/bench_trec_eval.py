"""Time ``rankscope trec_eval`` on the DL-HARD runs (the authors' trec_eval command).

    .venv/bin/python bench/bench_trec_eval.py            # every DL-HARD run, median of 3
    .venv/bin/python bench/bench_trec_eval.py --repeat 5

For each run: the wall time of the whole command in a fresh process
(``rankscope trec_eval -m all_trec -q -c -M1000 -l2 QRELS RUN``: interpreter
start-up, imports, reading both files, ranking, 95 measures, formatting) and the
in-process time of :func:`rankscope.trec_eval.run_trec_eval` once warm (files
read and parsed again each time).  Output is checked against the authors'
``*.run.eval`` file (all lines but ``runid``) so a fast wrong answer cannot pass.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASE = (REPO / ".." / "shared" / "data" / "runs_dl_hard" / "dataset").resolve()
FLAGS = ["-m", "all_trec", "-q", "-c", "-M1000", "-l2"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from rankscope.trec_eval import run_trec_eval

    exe = str(Path(sys.executable).with_name("rankscope"))
    print(f"{'run':40s} {'lines':>6s} {'cold CLI s':>10s} {'warm s':>8s}")
    for kind in ("passage", "doc"):
        qrels = BASE / f"dl_hard-{kind}.qrels"
        for run in sorted((BASE / "baselines" / kind).glob("*.run")):
            argv = [*FLAGS, str(qrels), str(run)]
            cold = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                out = subprocess.run([exe, "trec_eval", *argv], check=True, capture_output=True, text=True).stdout
                cold.append(time.perf_counter() - t)
            run_trec_eval(argv)  # warm-up: imports, registry
            warm = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                run_trec_eval(argv)
                warm.append(time.perf_counter() - t)
            expected = (run.parent / (run.name + ".eval")).read_text().splitlines()
            want = [x for x in expected if not x.startswith("runid")]
            got = [x for x in out.splitlines() if not x.startswith("runid")]
            assert got == want, f"{run}: output differs from the authors' trec_eval file"
            print(f"{kind + '/' + run.name:40s} {len(got):6d} {statistics.median(cold):10.2f} "
                  f"{statistics.median(warm):8.3f}")


if __name__ == "__main__":
    main()
