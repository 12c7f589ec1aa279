"""How often each test of the CI gate passes a run that is exactly at the margin, and how often it passes an equal run.

The acceptance data of the gate's calibration (docs/ci-gate.md, docs/statistics.md).  Per-query nDCG@10
differences of real DL-HARD run pairs (``../shared/data/runs_dl_hard``) are centred and shifted so that their mean
is exactly ``-margin`` (type-I error: a pass is wrong) or exactly 0 (power: a pass is right), then ``n`` queries are
drawn with replacement and the gate's test decides, ``--reps`` times per cell.  The synthetic case is the one the
gate's tests used before (10% of the queries lose U(0.3, 1.0), the rest vary a little; clipped to [-1, 1]).

Every test the gate offers is run as the gate runs it: betting (its e-value at ``-margin`` with 32 random
orders), the paired t test, the sign-flip randomization test and the studentized bootstrap (``--resamples`` each;
the gate draws 10,000 and redraws a p-value near alpha, which this script does not), all one-sided at ``--alpha``.
A sample whose differences are all equal is undecided in the gate, so it counts as not passed.

    .venv/bin/python bench/gate_calibration.py              # the full table: 3,000 replications per cell
    .venv/bin/python bench/gate_calibration.py --reps 300 --sizes 25,50 --json out.json

Seeded (``--seed``): the same arguments print the same table.  Replications are vectorised; the full run takes a
few minutes on two cores.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

DATA = (ROOT / ".." / "shared" / "data" / "runs_dl_hard" / "dataset").resolve()
TESTS = ("betting", "t", "randomization", "bootstrap")

#: name -> (task, run, baseline): the difference is run - baseline
PAIRS: dict[str, tuple[str, str, str]] = {
    "bm25+rm3 − bm25": ("passage", "bm25+rm3", "bm25"),
    "rm3+t5 − t5": ("passage", "bm25+rm3+t5(zs)", "bm25+t5(zs)"),
    "bm25 − t5": ("passage", "bm25", "bm25+t5(zs)"),
    "rm3+bert − bert": ("passage", "bm25+rm3+bert(zs)", "bm25+bert(zs)"),
    "doc: rm3+electra − electra": ("doc", "bm25+rm3+electra-mp", "bm25+electra-mp"),
}
SYNTHETIC = "synthetic (10% lose 0.3–1.0)"


def real_differences(task: str, run: str, baseline: str) -> np.ndarray:
    """Per-query nDCG@10 of ``run - baseline`` on the DL-HARD qrels of ``task`` (relevance level 1)."""
    from rankscope.comparison import compare

    folder = DATA / "baselines" / task
    c = compare(DATA / f"dl_hard-{task}.qrels", {"run": folder / f"{run}.run", "base": folder / f"{baseline}.run"},
                ["ndcg@10"])
    _, m = c.per_query("ndcg@10")
    return m[0] - m[1]


def synthetic(n: int, reps: int, mean: float, rng: np.random.Generator) -> np.ndarray:
    """The skewed synthetic differences with the given true mean: 10% lose U(0.3, 1.0), the rest N(mu, 0.1)."""
    lose = rng.random((reps, n)) < 0.1
    loss = -rng.uniform(0.3, 1.0, (reps, n))
    mu = (mean + 0.1 * 0.65) / 0.9
    return np.clip(np.where(lose, loss, rng.normal(mu, 0.1, (reps, n))), -1.0, 1.0)


def skewness(d: np.ndarray) -> float:
    c = d - d.mean()
    return float(np.mean(c**3) / np.mean(c**2) ** 1.5)


# -- the tests, vectorised over replications (rows) -------------------------------------------------------------
def passes(test: str, x: np.ndarray, margin: float, alpha: float, resamples: int, seed: int) -> np.ndarray:
    """Whether the gate's ``test`` passes each row of differences ``x`` (``(reps, n)``) at ``margin``."""
    from rankscope.stats import paired
    from rankscope.stats.betting import betting_evalue

    decided = ~np.all(x == x[:, :1], axis=1)  # all equal: undecided, never a pass
    if test == "betting":
        out = np.zeros(len(x), dtype=bool)
        step = max(1, 2_000_000 // (32 * x.shape[1]))
        for s in range(0, len(x), step):
            e = betting_evalue(x[s:s + step], -margin, bounds=(-1.0, 1.0), alpha=alpha, rng=seed + s)
            out[s:s + step] = e >= 1 / alpha
        return out & decided
    if test == "t":
        _, p = paired.paired_t(x + margin, "greater")
    elif test == "randomization":
        p = paired.sign_flip_test(x + margin, "greater", permutations=resamples, max_permutations=resamples,
                                  rng=seed).p
    else:
        p = _bootstrap_t(x, margin, resamples, np.random.default_rng(seed))
    return (np.nan_to_num(p, nan=1.0) <= alpha) & decided


def _bootstrap_t(x: np.ndarray, margin: float, resamples: int, gen: np.random.Generator) -> np.ndarray:
    """The studentized bootstrap p-value of the gate (``stats.noninferiority._bootstrap_t``) for every row."""
    reps, n = x.shape
    mean = x.mean(axis=1)
    sd = x.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_obs = (mean + margin) / (sd / math.sqrt(n))
    count = np.zeros(reps)
    step = max(1, 4_000_000 // (n * reps))
    for s in range(0, resamples, step):
        b = min(step, resamples - s)
        idx = gen.integers(0, n, size=(b, n))
        xs = x[:, idx]  # (reps, b, n)
        m1 = xs.mean(axis=2)
        var = np.maximum((xs * xs).mean(axis=2) - m1 * m1, 0.0) * n / (n - 1)
        se = np.sqrt(var / n)
        dev = m1 - mean[:, None]
        degenerate = np.where(dev > 0, np.inf, np.where(dev < 0, -np.inf, 0.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            t_star = np.where(se > 0, dev / np.where(se > 0, se, 1.0), degenerate)
        count += (t_star >= (t_obs - 1e-12 * np.maximum(np.abs(t_obs), 1.0))[:, None]).sum(axis=1)
    return (count + 1) / (resamples + 1)


# -- the table --------------------------------------------------------------------------------------------------
def simulate(sets: dict[str, np.ndarray | None], sizes: list[int], reps: int, margin: float, alpha: float,
             resamples: int, seed: int) -> list[dict[str, Any]]:
    rows = []
    gen = np.random.default_rng(seed)
    for name, d in sets.items():
        for n in sizes:
            cell: dict[str, Any] = {"differences": name, "n": n}
            for what, mean in (("type1", -margin), ("power", 0.0)):
                if d is None:
                    x = synthetic(n, reps, mean, gen)
                else:
                    values = d - d.mean() + mean
                    assert values.min() >= -1 and values.max() <= 1, (name, values.min(), values.max())
                    x = values[gen.integers(0, len(values), size=(reps, n))]
                for test in TESTS:
                    rate = float(passes(test, x, margin, alpha, resamples, int(gen.integers(0, 2**31))).mean())
                    cell[f"{what}_{test}"] = rate
            rows.append(cell)
            print(f"  {name:28s} n={n:4d} " + "  ".join(
                f"{t}: {cell[f'type1_{t}']:.3f}/{cell[f'power_{t}']:.3f}" for t in TESTS), file=sys.stderr, flush=True)
    return rows


def markdown(rows: list[dict[str, Any]], stats: dict[str, tuple[float, float]], reps: int, alpha: float) -> str:
    se = math.sqrt(alpha * (1 - alpha) / reps)
    head = ("| differences (skewness, zeros) | n | " + " | ".join(TESTS) + " |\n|---|---|"
            + "---|" * len(TESTS))
    out = [head]
    for r in rows:
        skew, zeros = stats[r["differences"]]
        label = f"{r['differences']} ({skew:+.1f}, {zeros:.0%})"
        cells = []
        for t in TESTS:
            t1, pw = r[f"type1_{t}"], r[f"power_{t}"]
            flag = "**" if t1 > alpha + 2 * se else ""
            cells.append(f"{flag}{t1:.3f}{flag} / {pw:.2f}")
        out.append(f"| {label} | {r['n']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3000)
    ap.add_argument("--sizes", default="10,25,50,200")
    ap.add_argument("--margin", type=float, default=0.05)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--resamples", type=int, default=1999)
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    sets: dict[str, np.ndarray | None] = {}
    stats: dict[str, tuple[float, float]] = {}
    for name, (task, run, base) in PAIRS.items():
        d = real_differences(task, run, base)
        sets[name] = d
        stats[name] = (skewness(d), float(np.mean(d == 0)))
    sets[SYNTHETIC] = None
    big = synthetic(200_000, 1, -args.margin, np.random.default_rng(0))[0]
    stats[SYNTHETIC] = (skewness(big), 0.0)
    start = time.perf_counter()
    rows = simulate(sets, sizes, args.reps, args.margin, args.alpha, args.resamples, args.seed)
    took = time.perf_counter() - start
    se = math.sqrt(args.alpha * (1 - args.alpha) / args.reps)
    print(f"type-I error at the margin / power at a true difference of 0; nDCG@10, margin {args.margin:g}, "
          f"alpha {args.alpha:g} one-sided, {args.reps} replications per cell (MC s.e. of a rate near alpha "
          f"{se:.4f}; bold: above alpha + 2 s.e. = {args.alpha + 2 * se:.4f}); {took:.0f} s")
    print(markdown(rows, stats, args.reps, args.alpha))
    if args.json is not None:
        args.json.write_text(json.dumps({"args": vars(args) | {"json": str(args.json)}, "mc_se": se, "stats": stats,
                                         "rows": rows, "seconds": took}, indent=2) + "\n")


if __name__ == "__main__":
    main()
