"""Time building and writing each report format on real runs (DL-HARD passage baselines).

    .venv/bin/python bench/bench_report.py            # 3 runs x 50 queries x 1000 docs
    .venv/bin/python bench/bench_report.py --runs 5

Steps: compare() of the runs (6 metrics, relevance level 2), then write_report() to
.json, .md, .tex and .html (best of ``--repeat``), with the qrels and runs so that the
metric@k curves (k = 1..100) and exact first-relevant ranks are included.  The HTML
time is dominated by matplotlib drawing the four figures.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from rankscope.comparison import compare
from rankscope.io import read_qrels, read_run
from rankscope.report import write_report

DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "runs_dl_hard" / "dataset"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    qrels = read_qrels(DATA / "dl_hard-passage.qrels")
    files = sorted((DATA / "baselines" / "passage").glob("*.run"))[: args.runs]
    runs = {f.name[:-4]: read_run(f) for f in files}
    rows = sum(len(r) for r in runs.values())
    t = time.perf_counter()
    c = compare(qrels, runs, ["ndcg@10", "recall@100", "precision@10", "mrr", "hit_rate@10", "map"],
                relevance_level=2)
    print(f"{len(runs)} runs, {rows} rows, {len(c.query_ids)} queries; compare {time.perf_counter() - t:.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        for ext in ("json", "md", "tex", "html"):
            best = float("inf")
            for _ in range(args.repeat):
                t = time.perf_counter()
                path = write_report(c, Path(tmp) / f"report.{ext}", qrels=qrels, runs=runs)
                best = min(best, time.perf_counter() - t)
            print(f"write_report .{ext:<4} {best:6.2f} s  {path.stat().st_size / 1024:8.0f} KiB")


if __name__ == "__main__":
    main()
