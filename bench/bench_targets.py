"""Every speed target of the Python front end, measured side by side in one run (``make bench``).

    .venv/bin/python bench/bench_targets.py               # everything (about a minute on an idle machine)
    .venv/bin/python bench/bench_targets.py --skip files  # without the 10M-row whole-process case
    .venv/bin/python bench/bench_targets.py --clock cpu   # process CPU time instead of wall time
    .venv/bin/python bench/bench_targets.py --json out.json

Each line compares rankscope with its peer on the same input, in one process, alternating the two
``--rounds`` times (default 9) and taking the median of each; the ratio is rankscope's time over the
peer's, so below 1 means rankscope is faster ("speed-up" lines give the peer over rankscope).
Five metrics everywhere: ndcg@10, map, recall@100, P@10, mrr (trec_eval's ndcg_cut.10, map,
recall.100, P.10, recip_rank for pytrec_eval).  The data is :mod:`synthetic` (fixed seed).

* ``dict`` / ``lists`` / ``DataFrame`` at 1 x 10, 50 x 100 and 1,000 x 100 (queries x documents):
  ``rankscope.evaluate`` on qrels and run given as ``{q: {d: grade}}`` / ``{q: {d: score}}``, as ranked
  lists ``{q: [d, ...]}``, or as pandas DataFrames, against pytrec_eval given its own input (dicts; for
  ranked lists the scores n, n-1, ..., 1), its time including ``RelevanceEvaluator`` (target: ratio <= 1);
* ``1 x 10 latency``: one ``rankscope.evaluate`` call on dicts, in milliseconds (target: <= 0.2 ms);
* ``Evaluator reuse``: 1,000 small runs (5 queries x 20 documents) against the 1,000-query qrels, one
  ``Evaluator`` against ``rankscope.evaluate`` per run (target: speed-up >= 5);
* ``runner overhead``: ``evaluate_retriever`` with a retriever that answers at once (ten (id, score)
  pairs) over 3,000 queries, milliseconds per query, without and with ``cache=`` (targets: <= 0.03 and
  <= 0.08 ms);
* ``files``: ``rankscope evaluate --qrels Q --run R -m ... --format json`` against a Python process that
  runs pytrec_eval's ``parse_qrel`` / ``parse_run`` / ``evaluate`` on 10M run rows, whole processes run
  alternately (``--file-rounds``, default 3), and the peak resident memory of the rankscope process
  (target: speed-up >= 8, memory about 0.47 GiB).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import generate, id_strings, write_trec_fast  # noqa: E402

METRICS = ["ndcg@10", "map", "recall@100", "P@10", "mrr"]
TREC = {"ndcg_cut.10", "map", "recall.100", "P.10", "recip_rank"}
SIZES = ((1, 10), (50, 100), (1000, 100))
FILE_ROWS = 10_000_000

PYTREC_FILES = """
import sys, pytrec_eval
with open(sys.argv[1]) as fq:
    qrels = pytrec_eval.parse_qrel(fq)
with open(sys.argv[2]) as fr:
    run = pytrec_eval.parse_run(fr)
res = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map", "recall.100", "P.10", "recip_rank"}).evaluate(run)
print(sum(v["map"] for v in res.values()) / len(res))
"""


@dataclass
class Line:
    """One measured target: ``value`` (a ratio of rankscope over its peer, a speed-up, or milliseconds)."""

    name: str
    kind: str  # "ratio" (<= target), "speedup" (>= target), "ms" (<= target), "GiB" (informative)
    value: float
    target: float | None
    rankscope: float | None = None  # seconds per call (or per query / per process)
    peer: float | None = None

    @property
    def met(self) -> bool | None:
        if self.target is None:
            return None
        return self.value >= self.target if self.kind == "speedup" else self.value <= self.target

    def within(self, share: float = 0.8) -> bool:
        """Whether the value is within ``share`` of its target (the regression check's tolerance)."""
        if self.target is None:
            return True
        if self.kind == "speedup":
            return self.value >= share * self.target
        return self.value <= self.target / share


class Clock:
    def __init__(self, kind: str) -> None:
        self.now: Callable[[], float] = time.process_time if kind == "cpu" else time.perf_counter


def _dicts(nq: int, depth: int, seed: int = 7) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    c = generate(nq, depth, seed)
    qrels: dict[str, dict[str, int]] = {}
    for q, d, g in zip(id_strings("q", c["qrels_q"]).tolist(), id_strings("D", c["qrels_d"]).tolist(),
                       c["qrels_g"].tolist(), strict=True):
        qrels.setdefault(q, {})[d] = g
    run: dict[str, dict[str, float]] = {}
    for q, d, s in zip(id_strings("q", c["run_q"]).tolist(), id_strings("D", c["run_d"]).tolist(),
                       c["run_s"].tolist(), strict=True):
        run.setdefault(q, {})[d] = s
    return qrels, run


def _frame(table: dict[str, dict[str, Any]], value: str) -> Any:
    import pandas as pd

    rows = [(q, d, v) for q, docs in table.items() for d, v in docs.items()]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", value])


def alternate(a: Callable[[], Any], b: Callable[[], Any], calls: int, rounds: int, clock: Clock) -> tuple[float, float]:
    """Median seconds per call of ``a`` and ``b``, timed in batches of ``calls``, alternating ``rounds`` times."""
    a()
    b()
    ta: list[float] = []
    tb: list[float] = []
    for _ in range(rounds):
        for fn, out in ((a, ta), (b, tb)):
            gc.collect()
            t = clock.now()
            for _ in range(calls):
                fn()
            out.append((clock.now() - t) / calls)
    return statistics.median(ta), statistics.median(tb)


def inputs_vs_pytrec(rounds: int, clock: Clock, kinds: tuple[str, ...] = ("dict", "lists", "DataFrame")) -> list[Line]:
    import pytrec_eval

    import rankscope as rs

    out = []
    for kind in kinds:
        for nq, depth in SIZES:
            qrels, run = _dicts(nq, depth)
            peer_run = run
            if kind == "lists":
                lists = {q: sorted(docs, key=docs.__getitem__, reverse=True) for q, docs in run.items()}
                peer_run = {q: {d: float(len(ds) - i) for i, d in enumerate(ds)} for q, ds in lists.items()}
                ours: tuple[Any, Any] = (qrels, lists)
            elif kind == "DataFrame":
                ours = (_frame(qrels, "relevance"), _frame(run, "score"))
            else:
                ours = (qrels, run)

            def ours_call(ours: tuple[Any, Any] = ours) -> Any:
                return rs.evaluate(ours[0], ours[1], METRICS)

            def peer_call(qrels: Any = qrels, run: Any = peer_run) -> Any:
                return pytrec_eval.RelevanceEvaluator(qrels, TREC).evaluate(run)

            _same_means(ours_call().mean(), peer_call())
            calls = max(1, int(2000 / (nq * depth) ** 0.75))
            a, b = alternate(ours_call, peer_call, calls, rounds, clock)
            out.append(Line(f"{kind} {nq:,} x {depth}", "ratio", a / b, 1.0, a, b))
            if kind == "dict" and (nq, depth) == (1, 10):
                out.append(Line("1 x 10 latency (dict)", "ms", a * 1e3, 0.2, a, None))
    return out


def _same_means(ours: dict[str, float], peer: dict[str, dict[str, float]]) -> None:
    keys = {"ndcg@10": "ndcg_cut_10", "map": "map", "recall@100": "recall_100", "P@10": "P_10", "mrr": "recip_rank"}
    n = len(peer)
    for label, key in keys.items():
        theirs = sum(v[key] for v in peer.values()) / n
        if abs(ours[label] - theirs) > 1e-9:
            raise AssertionError(f"{label}: rankscope {ours[label]} != pytrec_eval {theirs}")


def evaluator_reuse(rounds: int, clock: Clock, n_runs: int = 1000) -> Line:
    import numpy as np

    import rankscope as rs

    qrels, _ = _dicts(1000, 100)
    rng = np.random.default_rng(3)
    queries = sorted(qrels)
    runs = []
    for _ in range(n_runs):
        picked = rng.choice(len(queries), size=5, replace=False)
        qs = np.repeat(np.asarray(queries, dtype=object)[picked], 20)
        docs = np.char.add("D", rng.integers(0, 10**7, size=100).astype("U")).astype(object)
        for i, q in enumerate(qs[::20]):  # some judged documents among them
            judged = list(qrels[q])
            docs[i * 20 : i * 20 + min(3, len(judged))] = judged[:3]
        runs.append(rs.Run(qs, docs, rng.random(100)))
    per = max(1, n_runs // rounds)

    def each() -> None:
        for r in runs[:per]:
            rs.evaluate(qrels, r, METRICS)

    def reused() -> None:
        ev = rs.Evaluator(qrels, METRICS)
        for r in runs[:per]:
            ev.evaluate(r)

    a, b = alternate(reused, each, 1, rounds, clock)
    return Line(f"Evaluator reuse ({per * rounds:,} runs of 5 x 20)", "speedup", b / a, 5.0, a / per, b / per)


def runner_overhead(rounds: int, clock: Clock, n: int = 3000) -> list[Line]:
    import warnings

    import rankscope as rs
    from rankscope.data.testset import TestSet

    ts = TestSet.from_annotations([f"query number {i}" for i in range(n)], [[f"d{i}"] for i in range(n)])
    hits = [(f"d{j}", 10.0 - j) for j in range(10)]

    def search(query: str, k: int) -> list[tuple[str, float]]:
        return hits

    out = []
    with tempfile.TemporaryDirectory(prefix="rankscope-bench-") as tmp:
        for cached in (False, True):
            count = [0]

            def go(cached: bool = cached, count: list[int] = count) -> None:
                count[0] += 1
                cache = os.path.join(tmp, f"c{count[0]}.jsonl") if cached else None
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    rs.evaluate_retriever(search, ts, METRICS, k=10, progress=False, cache=cache)

            go()
            times = []
            for _ in range(rounds):
                t = clock.now()
                go()
                times.append((clock.now() - t) / n)
            ms = statistics.median(times) * 1e3
            out.append(Line(f"runner overhead, {'with' if cached else 'no'} cache (ms/query)", "ms", ms,
                            0.08 if cached else 0.03, ms / 1e3))
    return out


def _peak(cmd: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and peak resident memory (bytes) of ``cmd`` run as a child process."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed: {err.decode(errors='replace')[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def files(rounds: int, clock: str, data: Path | None = None, rows: int = FILE_ROWS) -> list[Line]:
    tmp = None
    if data is None:
        tmp = tempfile.TemporaryDirectory(prefix="rankscope-bench-files-")
        data = Path(tmp.name)
    try:
        depth = 100
        stamp = data / f"done-{rows}"
        if not stamp.exists():
            write_trec_fast(data, rows // depth, depth, 42)
            stamp.touch()
        qrels, run = str(data / "qrels.trec"), str(data / "run.trec")
        cli = [str(Path(sys.executable).parent / "rankscope"), "evaluate", "--qrels", qrels, "--run", run,
               "-m", ",".join(METRICS), "--format", "json"]
        peer = [sys.executable, "-c", PYTREC_FILES, qrels, run]
        ours, theirs = [], []
        for _ in range(rounds):
            ours.append(_peak(cli))
            theirs.append(_peak(peer))
        pick = 1 if clock == "cpu" else 0
        a = statistics.median(x[pick] for x in ours)
        b = statistics.median(x[pick] for x in theirs)
        mem = statistics.median(x[2] for x in ours) / 2**30
        return [Line(f"files, {rows / 1e6:g}M rows, whole process", "speedup", b / a, 8.0, a, b),
                Line("files: rankscope peak memory (GiB)", "GiB", mem, None, None, None)]
    finally:
        if tmp is not None:
            tmp.cleanup()


def ratios(rounds: int = 9, clock: str = "wall", skip: tuple[str, ...] = (), data: Path | None = None,
           file_rounds: int = 3) -> list[Line]:
    """Every target measured (see the module doc); ``skip`` leaves out ``inputs``, ``reuse``, ``runner``, ``files``."""
    c = Clock(clock)
    lines: list[Line] = []
    if "inputs" not in skip:
        lines += inputs_vs_pytrec(rounds, c)
    if "reuse" not in skip:
        lines.append(evaluator_reuse(rounds, c))
    if "runner" not in skip:
        lines += runner_overhead(rounds, c)
    if "files" not in skip:
        lines += files(file_rounds, clock, data)
    return lines


def show(lines: list[Line]) -> str:
    out = [f"{'target':<46} {'rankscope':>11} {'peer':>11} {'value':>9} {'target':>9}  met"]
    for ln in lines:
        def t(x: float | None) -> str:
            if x is None:
                return ""
            return f"{x * 1e3:.3f} ms" if x < 1 else f"{x:.2f} s"
        unit = {"ratio": "x", "speedup": "x", "ms": " ms", "GiB": " GiB"}[ln.kind]
        target = "" if ln.target is None else ("<= " if ln.kind in ("ratio", "ms") else ">= ") + f"{ln.target:g}"
        met = {None: "", True: "yes", False: "NO"}[ln.met]
        out.append(f"{ln.name:<46} {t(ln.rankscope):>11} {t(ln.peer):>11} {ln.value:>8.3f}{unit:<2} {target:>9}  {met}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9, help="alternations of rankscope and its peer (median kept)")
    ap.add_argument("--file-rounds", type=int, default=3, help="alternations of the whole-process file case")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--skip", action="append", default=[], choices=("inputs", "reuse", "runner", "files"))
    ap.add_argument("--data", type=Path, help="keep / reuse the 10M-row TREC files in this directory")
    ap.add_argument("--json", type=Path, help="also write the lines as JSON")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} CPUs, load average {load:.1f}, python {sys.version.split()[0]}, "
          f"{args.clock} clock, {args.rounds} alternations (median)\n")
    t0 = time.perf_counter()
    lines = ratios(args.rounds, args.clock, tuple(args.skip), args.data, args.file_rounds)
    print(show(lines))
    print(f"\n[{time.perf_counter() - t0:.0f} s]")
    if args.json:
        args.json.write_text(json.dumps([ln.__dict__ for ln in lines], indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
