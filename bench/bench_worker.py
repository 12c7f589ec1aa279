"""One benchmark step in a fresh process: ``bench_worker.py STEP DATA_DIR`` prints one JSON line.

The tool's input is built before the clock starts; the peak-RSS counter is then
reset (Linux ``/proc/self/clear_refs``) so ``peak_delta`` is the growth of peak
resident memory during the timed step only.
"""

from __future__ import annotations

import gc
import json
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from synthetic import id_strings, load_columns

METRICS = ["ndcg@10", "map", "mrr", "recall@100", "precision@10"]
TREC_MEASURES = {"ndcg_cut.10", "map", "recip_rank", "recall.100", "P.10"}
TREC_KEYS = {
    "ndcg_cut_10": "ndcg@10", "map": "map", "recip_rank": "mrr", "recall_100": "recall@100", "P_10": "precision@10",
}


def _status(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


CPU: dict[str, float] = {}


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def measure(step: Callable[[], Any]) -> tuple[float, int, Any]:
    """Wall seconds and peak-RSS growth of ``step()``; its CPU seconds go to ``CPU["seconds"]``."""
    gc.collect()
    reset = _reset_peak()
    before = _status("VmRSS")
    if not reset:  # cannot reset: the peak so far is the baseline (under-estimates)
        before = _status("VmHWM")
    c = _cpu()
    t = time.perf_counter()
    out = step()
    seconds = time.perf_counter() - t
    CPU["seconds"] = _cpu() - c
    return seconds, max(_status("VmHWM") - before, 0), out


def _dicts(c: dict[str, np.ndarray]) -> tuple[dict, dict]:
    qrels: dict[str, dict[str, int]] = {}
    for q, d, g in zip(id_strings("q", c["qrels_q"]).tolist(), id_strings("D", c["qrels_d"]).tolist(),
                       c["qrels_g"].tolist(), strict=True):
        qrels.setdefault(q, {})[d] = g
    run: dict[str, dict[str, float]] = {}
    for q, d, s in zip(id_strings("q", c["run_q"]).tolist(), id_strings("D", c["run_d"]).tolist(),
                       c["run_s"].tolist(), strict=True):
        run.setdefault(q, {})[d] = s
    return qrels, run


def _pytrec_mean(per_query: dict[str, dict[str, float]]) -> dict[str, float]:
    n = len(per_query)
    sums = dict.fromkeys(TREC_KEYS.values(), 0.0)
    for vals in per_query.values():
        for k, v in vals.items():
            sums[TREC_KEYS[k]] += v
    return {k: v / n for k, v in sums.items()}


def _import_rankscope() -> tuple[Any, float]:
    """Import rankscope and the modules evaluation uses (outside the clock, as the other tools' imports).

    ``import rankscope`` itself is light (lazy); the engine, the metric registry
    and ``pyarrow.compute`` load on first use.  Their one-time import is timed
    here and reported as ``import_seconds``.
    """
    t0 = time.perf_counter()
    import rankscope
    from rankscope.engine import evaluator
    from rankscope.measures.parse import parse_metrics

    parse_metrics(METRICS)
    del evaluator
    return rankscope, time.perf_counter() - t0


def step_rankscope(data: Path, kind: str) -> dict[str, Any]:
    rankscope, import_seconds = _import_rankscope()

    note = ""
    if kind == "files":
        def go() -> Any:
            run = rankscope.read_run(data / "run.trec")
            qrels = rankscope.read_qrels(data / "qrels.trec")
            return rankscope.evaluate(qrels, run, METRICS).mean()
        note = "read_run + read_qrels + evaluate"
    else:
        c = load_columns(data)
        if kind == "arrow":
            import pyarrow as pa

            cols = [pa.array(id_strings("q", c["run_q"])), pa.array(id_strings("D", c["run_d"])),
                    pa.array(id_strings("q", c["qrels_q"])), pa.array(id_strings("D", c["qrels_d"]))]
            note = "Run/Qrels from Arrow string arrays + evaluate"
        else:
            cols = [id_strings("q", c["run_q"]).astype(object), id_strings("D", c["run_d"]).astype(object),
                    id_strings("q", c["qrels_q"]).astype(object), id_strings("D", c["qrels_d"]).astype(object)]
            note = "Run/Qrels from numpy object (str) arrays, as in a DataFrame + evaluate"
        scores, grades = c["run_s"], c["qrels_g"]
        del c

        def go() -> Any:
            run = rankscope.Run(cols[0], cols[1], scores)
            qrels = rankscope.Qrels(cols[2], cols[3], grades)
            return rankscope.evaluate(qrels, run, METRICS).mean()
    seconds, peak, mean = measure(go)
    return {"seconds": seconds, "peak_delta": peak, "mean": mean, "note": note, "import_seconds": import_seconds}


def step_pytrec(data: Path, files: bool, columns: bool = False) -> dict[str, Any]:
    import pytrec_eval

    if columns:
        cols = load_columns(data)

        def go() -> Any:
            qrels, run = _dicts(cols)
            return pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
        note = "dicts built from the numpy columns + evaluate"
    elif files:
        def go() -> Any:
            with open(data / "qrels.trec") as fq:
                qrels = pytrec_eval.parse_qrel(fq)
            with open(data / "run.trec") as fr:
                run = pytrec_eval.parse_run(fr)
            return pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
        note = "parse_qrel + parse_run + evaluate"
    else:
        qrels, run = _dicts(load_columns(data))

        def go() -> Any:
            return pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
        note = "RelevanceEvaluator(qrels dict) + evaluate(run dict)"
    seconds, peak, per_query = measure(go)
    return {"seconds": seconds, "peak_delta": peak, "mean": _pytrec_mean(per_query), "note": note}


def step_ranx(data: Path, warm: bool) -> dict[str, Any]:
    import ranx

    if warm:
        q = ranx.Qrels({"q": {"a": 1, "b": 2}})
        r = ranx.Run({"q": {"a": 0.5, "c": 0.4}})
        ranx.evaluate(q, r, METRICS)
    qrels_d, run_d = _dicts(load_columns(data))

    def go() -> Any:
        qrels = ranx.Qrels(qrels_d)
        run = ranx.Run(run_d)
        t = time.perf_counter()
        out = ranx.evaluate(qrels, run, METRICS)
        go.eval_seconds = time.perf_counter() - t  # type: ignore[attr-defined]
        return out

    seconds, peak, mean = measure(go)
    ev = go.eval_seconds  # type: ignore[attr-defined]
    note = f"Qrels(dict) + Run(dict) {seconds - ev:.2f} s + evaluate {ev:.2f} s" + (
        "" if warm else " (no warm-up: numba compile/cache load included)")
    return {"seconds": seconds, "peak_delta": peak, "mean": {k: float(v) for k, v in mean.items()}, "note": note}


def step_latency() -> dict[str, Any]:
    import rankscope

    qrels_d = {"q1": {f"d{i}": i % 3 for i in range(0, 20, 2)}}
    run_d = {"q1": {f"d{i}": 1.0 / (i + 1) for i in range(10)}}
    rankscope.evaluate(rankscope.Qrels.from_dict(qrels_d), rankscope.Run.from_dict(run_d), METRICS)
    times = []
    for _ in range(200):
        t = time.perf_counter()
        rankscope.evaluate(rankscope.Qrels.from_dict(qrels_d), rankscope.Run.from_dict(run_d), METRICS).mean()
        times.append(time.perf_counter() - t)
    return {"seconds": statistics.median(times), "peak_delta": 0, "note": "Qrels/Run.from_dict + evaluate"}


def main() -> None:
    step, data = sys.argv[1], Path(sys.argv[2])
    if step.startswith("rankscope_") and step != "rankscope_latency":
        out = step_rankscope(data, step.removeprefix("rankscope_"))
    elif step == "rankscope_latency":
        out = step_latency()
    elif step.startswith("pytrec_eval"):
        out = step_pytrec(data, files=step.endswith("files"), columns=step.endswith("columns"))
    elif step.startswith("ranx"):
        out = step_ranx(data, warm=step == "ranx_warm")
    else:
        raise SystemExit(f"unknown step {step!r}")
    out["step"] = step
    out["cpu_seconds"] = CPU.get("seconds", out["seconds"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
