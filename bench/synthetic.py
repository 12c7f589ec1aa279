"""Synthetic benchmark data, the same for every tool (fixed seed).

``generate(n_queries, depth, seed)`` returns integer columns; :func:`write_dataset`
stores them as ``.npy`` files plus TREC text files (run and qrels) in a directory:

* run: ``n_queries`` x ``depth`` rows, grouped by query, ranked by score
  (descending, as a TREC run file is written), scores rounded to 4 decimals so
  that some ties occur;
* qrels: 1-10 relevant documents per query with grades 1-3 (about half of them
  retrieved, at random ranks) plus 0-3 judged non-relevant (grade 0) documents.

Query ids are ``q<n>``, doc ids ``D<n>`` (n < 10^7), as strings in every tool.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["generate", "write_dataset", "load_columns", "id_strings"]


def generate(n_queries: int = 100_000, depth: int = 100, seed: int = 42) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    # per query `depth` distinct doc numbers: sorted random values + position (strictly increasing), then shuffled
    base = np.sort(rng.integers(0, 10**7 - depth, size=(n_queries, depth)), axis=1) + np.arange(depth)
    base = rng.permuted(base, axis=1)
    scores = np.round(np.sort(rng.random((n_queries, depth)) * 30.0, axis=1)[:, ::-1], 4)
    run_q = np.repeat(np.arange(n_queries), depth)
    run_d = base.ravel()
    run_s = scores.ravel()

    n_rel = rng.integers(1, 11, size=n_queries)
    n_non = rng.integers(0, 4, size=n_queries)
    n_j = n_rel + n_non
    qrels_q = np.repeat(np.arange(n_queries), n_j)
    # judged docs: half drawn from the query's retrieved list, the rest new random docs
    pos = rng.integers(0, depth, size=len(qrels_q))
    from_run = rng.random(len(qrels_q)) < 0.5
    fresh = rng.integers(10**7, 2 * 10**7, size=len(qrels_q))
    qrels_d = np.where(from_run, base[qrels_q, pos], fresh)
    rank_in_q = np.arange(len(qrels_q)) - np.repeat(np.cumsum(n_j) - n_j, n_j)
    grade = np.where(rank_in_q < np.repeat(n_rel, n_j), rng.integers(1, 4, size=len(qrels_q)), 0)
    # drop repeated (query, doc) judgments
    key = qrels_q.astype(np.int64) * 2 * 10**7 + qrels_d
    _, first = np.unique(key, return_index=True)
    keep = np.sort(first)
    return {
        "run_q": run_q.astype(np.int64),
        "run_d": run_d.astype(np.int64),
        "run_s": run_s.astype(np.float64),
        "qrels_q": qrels_q[keep].astype(np.int64),
        "qrels_d": qrels_d[keep].astype(np.int64),
        "qrels_g": grade[keep].astype(np.int64),
    }


def id_strings(prefix: str, values: np.ndarray) -> np.ndarray:
    """``prefix + str(v)`` for every value, as a numpy unicode array (vectorized)."""
    return np.char.add(prefix, values.astype("U"))


def write_dataset(directory: Path, n_queries: int, depth: int, seed: int) -> None:
    """Write the columns (``cols.npz``) and TREC files ``run.trec`` / ``qrels.trec``."""
    directory.mkdir(parents=True, exist_ok=True)
    cols = generate(n_queries, depth, seed)
    np.savez(directory / "cols.npz", **cols)
    n = len(cols["run_q"])
    ranks = np.tile(np.arange(1, depth + 1), n // depth) if n % depth == 0 else np.ones(n, dtype=np.int64)
    with open(directory / "run.trec", "w", encoding="utf-8") as fh:
        step = 1_000_000
        for lo in range(0, n, step):
            hi = min(lo + step, n)
            lines = [
                f"q{q} Q0 D{d} {r} {s:.4f} synth\n"
                for q, d, r, s in zip(
                    cols["run_q"][lo:hi].tolist(),
                    cols["run_d"][lo:hi].tolist(),
                    ranks[lo:hi].tolist(),
                    cols["run_s"][lo:hi].tolist(),
                    strict=True,
                )
            ]
            fh.writelines(lines)
    with open(directory / "qrels.trec", "w", encoding="utf-8") as fh:
        fh.writelines(
            f"q{q} 0 D{d} {g}\n"
            for q, d, g in zip(
                cols["qrels_q"].tolist(), cols["qrels_d"].tolist(), cols["qrels_g"].tolist(), strict=True
            )
        )


def load_columns(directory: Path) -> dict[str, np.ndarray]:
    with np.load(directory / "cols.npz") as z:
        return {k: z[k] for k in z.files}


def write_trec_fast(directory: Path, n_queries: int, depth: int, seed: int, step: int = 5_000_000) -> None:
    """:func:`write_dataset`'s TREC files (same rows, scores written in their shortest form) straight from Arrow.

    100M rows in about a minute; no ``cols.npz``.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    directory.mkdir(parents=True, exist_ok=True)
    cols = generate(n_queries, depth, seed)
    options = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")

    def ids(prefix: str, values: np.ndarray) -> pa.Array:
        return pc.binary_join_element_wise(prefix, pa.array(values).cast(pa.string()), "")

    n = len(cols["run_q"])
    with pcsv.CSVWriter(directory / "run.trec", pa.schema(
        [(c, pa.string()) for c in ("q", "q0", "d", "r", "s", "tag")]), write_options=options) as writer:
        for lo in range(0, n, step):
            hi = min(lo + step, n)
            k = hi - lo
            rank = (np.arange(lo, hi) % depth + 1) if n % depth == 0 else np.ones(k, dtype=np.int64)
            writer.write_table(pa.table({
                "q": ids("q", cols["run_q"][lo:hi]), "q0": pa.array(["Q0"] * 1).take(pa.array(np.zeros(k, np.int64))),
                "d": ids("D", cols["run_d"][lo:hi]), "r": pa.array(rank).cast(pa.string()),
                "s": pa.array(cols["run_s"][lo:hi]).cast(pa.string()),
                "tag": pa.array(["synth"]).take(pa.array(np.zeros(k, np.int64))),
            }))
    pcsv.write_csv(pa.table({
        "q": ids("q", cols["qrels_q"]), "it": pa.array(["0"]).take(pa.array(np.zeros(len(cols["qrels_q"]), np.int64))),
        "d": ids("D", cols["qrels_d"]), "g": pa.array(cols["qrels_g"]).cast(pa.string()),
    }), directory / "qrels.trec", write_options=options)
