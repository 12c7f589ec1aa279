"""The supervised fusion methods: what they learn from judgments, and how they score with it.

Training reads, for each run, its ranked list of every training query (after the
normalisation: ``borda`` appends the candidates a run missed) and which of its
documents are relevant (grade >= the relevance level).  A training query a run
did not answer is an empty list.  As in ranx:

* ``posfuse`` / ``slidefuse``: ``P_r(rel | rank i)`` = relevant documents at rank ``i`` / queries whose list
  reaches rank ``i``;
* ``probfuse``: each list is cut into ``n_segments`` segments of ``ceil(len / n_segments)`` ranks;
  ``P_r(rel | segment k)`` = mean over the training queries of the share of relevant documents in segment ``k``;
* ``segfuse``: segments of 5, 10, 20, 40, ... ranks (bounds 0, 5, 15, 35, 75, ..., 5115), each share of relevant
  documents taken over the full segment size;
* ``bayesfuse``: segments at ranks 0, 5, 10, 15, 20, 30, 100, 200, 500, 1000; ``p`` = mean share of relevant
  documents (0.001 when 0; ``1 - p`` is 0.001 when 0), log-odds ``log(p / (1 - p))``;
* ``mapfuse``: each run's mean average precision over the training queries (trec_eval's AP; 0 for a query the
  run did not answer).

Every statistic is a ``bincount`` over the training rows; nothing loops over queries.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from rankscope.retrieval.fusion.pool import Features

__all__ = ["train_tables", "supervised_scores", "SEGFUSE_BOUNDS", "BAYES_CUTS", "MIN_ODDS"]

SEGFUSE_BOUNDS = np.array([0] + [10 * 2 ** (k - 1) - 5 for k in range(1, 11)], dtype=np.int64)
BAYES_CUTS = np.array([0, 5, 10, 15, 20, 30, 100, 200, 500, 1000], dtype=np.int64)
MIN_ODDS = math.log(0.001 / 0.999)


def _segment_shares(rank: np.ndarray, q: np.ndarray, n_q: int, seg: np.ndarray, size: np.ndarray,
                    n_seg: int, n_train: int, divide_each: bool) -> np.ndarray:
    """Σ over queries of (relevant in segment / segment size), divided by ``n_train``, per segment.

    ``seg`` / ``size``: each relevant row's segment and that segment's size in its query.
    ``divide_each``: divide every query's share by ``n_train`` before summing (bayesfuse's order of operations).
    """
    key = q * n_seg + seg
    hits = np.bincount(key, minlength=n_q * n_seg)
    seg_size = np.zeros(n_q * n_seg)
    seg_size[key] = size
    used = np.flatnonzero(hits)
    share = hits[used] / seg_size[used]
    if divide_each:
        share = share / n_train
    total = np.bincount(used % n_seg, weights=share, minlength=n_seg)
    return total if divide_each else total / n_train


def train_tables(method: str, f: Features, relevant: np.ndarray, train_q: np.ndarray, n_train: int,
                 params: dict[str, float | int], ap: Callable[[int], np.ndarray] | None = None) -> list[np.ndarray]:
    """What ``method`` learns for each run (one array per run).

    ``relevant`` (R, P): the run retrieved the row and it is relevant; ``train_q`` (Q,) bool: pool queries used for
    training; ``n_train``: training queries in all (those no run answered count too); ``ap(r)``: each pool query's
    average precision of run ``r`` (for ``mapfuse``).
    """
    pool = f.pool
    n_q = len(pool.query_ids)
    tables: list[np.ndarray] = []
    for r in range(f.x.shape[0]):
        rows = np.flatnonzero(relevant[r] & train_q[pool.qidx])
        rank, q = f.rank[r, rows], pool.qidx[rows]
        length = f.length[r]
        if method in ("posfuse", "slidefuse"):
            lens = length[train_q]
            longest = int(lens.max()) if len(lens) else 0
            reach = np.cumsum(np.bincount(lens, minlength=longest + 1)[::-1])[::-1][1:]  # lists longer than i
            hits = np.bincount(rank, minlength=longest)[:longest]
            tables.append(hits / np.maximum(reach, 1))
        elif method == "probfuse":
            n_seg = int(params["n_segments"])
            seg_len = -(-length[q] // n_seg)
            seg = rank // seg_len
            size = np.minimum(seg_len, length[q] - seg * seg_len)
            tables.append(_segment_shares(rank, q, n_q, seg, size, n_seg, n_train, False))
        elif method == "segfuse":
            keep = rank < SEGFUSE_BOUNDS[-1]
            seg = np.searchsorted(SEGFUSE_BOUNDS, rank[keep], side="right") - 1
            size = np.diff(SEGFUSE_BOUNDS)[seg]
            tables.append(_segment_shares(rank[keep], q[keep], n_q, seg, size, len(SEGFUSE_BOUNDS) - 1, n_train,
                                          False))
        elif method == "bayesfuse":
            keep = rank < BAYES_CUTS[-1]
            seg = np.searchsorted(BAYES_CUTS, rank[keep], side="right") - 1
            size = np.diff(BAYES_CUTS)[seg]
            p = _segment_shares(rank[keep], q[keep], n_q, seg, size, len(BAYES_CUTS) - 1, n_train, True)
            p = np.where(p == 0, p + 0.001, p)
            neg = 1 - p
            neg = np.where(neg == 0, neg + 0.001, neg)
            tables.append(np.repeat(np.log(p / neg), np.diff(BAYES_CUTS)))
        elif method == "mapfuse":
            assert ap is not None
            tables.append(np.array([float(ap(r)[train_q].sum() / n_train) if n_train else 0.0]))
        else:  # pragma: no cover - the registry lists the supervised methods
            raise AssertionError(method)
    return tables


def supervised_scores(method: str, f: Features, tables: list[np.ndarray], params: dict[str, float | int]
                      ) -> np.ndarray:
    """The fused score of every pool row, ``(P,)``, from the trained ``tables``."""
    pool = f.pool
    acc = np.zeros(f.x.shape[1])
    for r in range(f.x.shape[0]):
        t, here, rank = tables[r], f.present[r], f.rank[r]
        length = f.length[r][pool.qidx]
        if method == "posfuse":
            inside = here & (rank < len(t))
            acc = acc + np.where(inside, t[np.minimum(rank, max(len(t) - 1, 0))] if len(t) else 0.0, 0.0)
        elif method == "slidefuse":
            acc = acc + np.where(here, _window_means(t, rank, length, int(params["w"])), 0.0)
        elif method == "probfuse":
            n_seg = int(params["n_segments"])
            seg_len = np.maximum(-(-length // n_seg), 1)
            seg = np.minimum(rank // seg_len, n_seg - 1)
            acc = acc + np.where(here, t[seg] / (seg + 1), 0.0)
        elif method == "segfuse":
            inside = here & (rank < SEGFUSE_BOUNDS[-1])
            seg = np.clip(np.searchsorted(SEGFUSE_BOUNDS, rank, side="right") - 1, 0, len(t) - 1)
            acc = acc + np.where(inside, t[seg] * (f.x[r] + 1), 0.0)
        elif method == "bayesfuse":
            inside = here & (rank < len(t))
            acc = acc + np.where(inside, t[np.minimum(rank, len(t) - 1)], MIN_ODDS)
        elif method == "mapfuse":
            acc = acc + np.where(here, t[0] / (rank + 1.0), 0.0)
        else:  # pragma: no cover
            raise AssertionError(method)
    return acc


def _window_means(probs: np.ndarray, rank: np.ndarray, length: np.ndarray, w: int) -> np.ndarray:
    """Mean of ``probs`` over ranks ``max(p - w, 0) .. min(p + w, N - 1)`` (ranks past ``probs`` count as 0)."""
    p = np.minimum(rank, np.iinfo(np.int64).max // 4)
    a = np.maximum(p - w, 0)
    b = np.minimum(p + w, length - 1)
    total = np.zeros(len(p))
    padded = np.append(probs, 0.0)
    for off in range(-w, w + 1):  # 2w + 1 vector passes, added in rank order as a slice sum adds them
        at = p + off
        inside = (at >= a) & (at <= b)
        total = total + np.where(inside, padded[np.clip(at, 0, len(probs))], 0.0)
    return total / np.maximum(b - a + 1, 1)
