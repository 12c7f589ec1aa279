"""Many runs against one qrels: ``rankscope evaluate --run runs/*`` vs trec_eval run one by one.

    .venv/bin/python bench/bench_many_runs.py              # the 14 DL-HARD document runs (../shared/data)
    .venv/bin/python bench/bench_many_runs.py --copies 7   # each run 7 times: 98 runs, as a TREC track

The trec_eval binary is not installed here; trec_eval 9.0.8 is measured through
pytrec_eval-terrier (which embeds it): one fresh process per run that parses the qrels
and the run and evaluates (as ``trec_eval qrels run`` one by one would), and through
``rankscope trec_eval`` (rankscope's drop-in, one process per run).  rankscope's
multi-run command is one process for all runs (qrels indexed once, runs in parallel).
Times are whole processes (start, imports, reading, scoring, output); the same five
metrics; -l 2 as the DL-HARD authors ran it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "runs_dl_hard" / "dataset"
PYTREC = """
import sys, pytrec_eval
with open(sys.argv[1]) as fq:
    qrels = pytrec_eval.parse_qrel(fq)
with open(sys.argv[2]) as fr:
    run = pytrec_eval.parse_run(fr)
measures = {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.10"}
ev = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=2)
res = ev.evaluate(run)
print(sum(v["map"] for v in res.values()) / len(res))
"""


def timed(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--copies", type=int, default=1)
    args = ap.parse_args()
    qrels = DATA / "dl_hard-doc.qrels"
    runs = sorted((DATA / "baselines" / "doc").glob("*.run"))  # 14 document runs x 50 queries x 1000
    tmp = Path(tempfile.mkdtemp(prefix="rankscope-runs-"))
    try:
        files = []
        for c in range(args.copies):
            for r in runs:
                files.append(tmp / f"{c}-{r.parent.name}-{r.name}")
                shutil.copy(r, files[-1])
        rankscope = str(Path(sys.executable).parent / "rankscope")
        metrics = "ndcg@10,map,mrr,recall@100,P@10"
        many = timed([rankscope, "evaluate", "--qrels", str(qrels), "--run", *map(str, files), "-m", metrics,
                      "-l", "2", "-f", "csv"])
        one_by_one = sum(timed([sys.executable, "-c", PYTREC, str(qrels), str(f)]) for f in files)
        drop_in = sum(timed([rankscope, "trec_eval", "-l", "2", "-m", "ndcg_cut.10", "-m", "map", "-m", "recip_rank",
                             "-m", "recall.100", "-m", "P.10", str(qrels), str(f)]) for f in files)
        n = len(files)
        rows = sum(f.read_bytes().count(b"\n") for f in files)
        print(f"{n} runs, {rows:,} rows in all")
        print(f"rankscope evaluate --run <{n} runs>: {many:.2f} s, {many / n * 1000:.0f} ms per run")
        print(f"pytrec_eval (trec_eval 9.0.8) one process per run: {one_by_one:.2f} s, "
              f"{one_by_one / n * 1000:.0f} ms per run ({one_by_one / many:.1f}x)")
        print(f"rankscope trec_eval one process per run: {drop_in:.2f} s, {drop_in / n * 1000:.0f} ms per run "
              f"({drop_in / many:.1f}x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
