"""The unsupervised fusion methods, vectorised over pool rows and over a batch of parameter settings.

Each kernel takes the normalised :class:`~rankscope.retrieval.fusion.pool.Features`,
a ``(B, R)`` array of run weights and ``(B,)`` arrays of the method's parameters,
and returns the fused score of every pool row under each of the ``B`` settings,
``(B, P)``.  :func:`~rankscope.retrieval.fusion.fuse` calls them with ``B = 1``;
:func:`rankscope.tune` with many settings at once.  Sums run over the runs in
their given order, one addition after the other, as ranx adds them (so that
equal inputs give bit-equal sums, and ties stay ties).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rankscope.retrieval.fusion.pool import Features

__all__ = ["KERNELS", "condorcet_scores"]

Params = dict[str, np.ndarray]
Kernel = Callable[[Features, np.ndarray, Params], np.ndarray]

_PAIRS_PER_CHUNK = 1 << 21  # (i, j) pairs of candidates scored at once by the Condorcet kernels


def _sum_runs(f: Features, b: int, term: Callable[[int], np.ndarray]) -> np.ndarray:
    """``Σ_r term(r)`` over the runs in order, ``(B, P)`` (added in place: one array, not one per run)."""
    acc = np.zeros((b, f.x.shape[1]))
    for r in range(f.x.shape[0]):
        acc += term(r)
    return acc


def _present_sum(f: Features) -> np.ndarray:
    """Σ of the normalised scores of the runs that retrieved each row, ``(P,)``."""
    return _sum_runs(f, 1, lambda r: np.where(f.present[r], f.x[r], 0.0))[0]


def _combsum(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return _sum_runs(f, len(w), lambda r: w[:, r, None] * f.x[r])


def _combmnz(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return _combsum(f, w, p) * f.n


def _combmax(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return np.where(f.present, f.x, -np.inf).max(axis=0)[None, :]


def _combmin(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return np.where(f.present, f.x, np.inf).min(axis=0)[None, :]


def _combmed(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    ordered = np.sort(np.where(f.present, f.x, np.inf), axis=0)  # absent runs last
    n = f.n
    cols = np.arange(ordered.shape[1])
    lo, hi = ordered[(n - 1) // 2, cols], ordered[n // 2, cols]
    return ((lo + hi) / 2)[None, :]


def _combanz(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return (_present_sum(f) / f.n)[None, :]


def _combgmnz(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return _present_sum(f)[None, :] * f.n.astype(np.float64)[None, :] ** p["gamma"][:, None]


def _wmnz(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    weight_sum = _sum_runs(f, len(w), lambda r: np.where(f.present[r][None, :], w[:, r, None], 0.0))
    return _present_sum(f)[None, :] * weight_sum


def _mixed(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    total = _sum_runs(f, len(w), lambda r: np.where(f.present[r][None, :], f.x[r][None, :] * w[:, r, None], 0.0))
    return total * np.sqrt(f.n.astype(np.float64))[None, :]


def _isr_sum(f: Features) -> np.ndarray:
    return _sum_runs(f, 1, lambda r: np.where(f.present[r], 1 / ((f.rank[r] + 1.0) ** 2), 0.0))[0]


def _isr(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return (_isr_sum(f) * f.n)[None, :]


def _log_isr(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return (_isr_sum(f) * np.log(f.n.astype(np.float64)))[None, :]


def _logn_isr(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return _isr_sum(f)[None, :] * np.log(f.n.astype(np.float64)[None, :] + p["sigma"][:, None])


def _rrf(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    k = p["k"][:, None]

    def term(r: int) -> np.ndarray:
        out = np.add(k, f.rank[r] + 1.0)  # k + rank (from 1): exact for integer k, as ranx's integer sum
        np.divide(w[:, r, None], out, out=out)
        out[:, ~f.present[r]] = 0.0
        return out

    return _sum_runs(f, len(w), term)


def _rbc(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    phi = p["phi"][:, None]
    return _sum_runs(f, len(phi), lambda r: np.where(f.present[r][None, :], (1 - phi) * phi ** f.rank[r], 0.0))


def borda_points(f: Features) -> np.ndarray:
    """Each run's Borda points per row, ``(R, P)``: ``C - rank`` (0-based rank) or ``(C - n_r + 1) / 2`` when missed."""
    pool = f.pool
    c = pool.candidates[pool.qidx].astype(np.float64)
    out = np.empty_like(f.x)
    for r in range(f.x.shape[0]):
        n_r = f.length[r][pool.qidx].astype(np.float64)
        out[r] = np.where(f.present[r], c - f.rank[r], (c - n_r + 1) / 2)
    return out


def _borda(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    pts = borda_points(f)
    return _sum_runs(f, 1, lambda r: pts[r])


def _weighted_borda(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    pts = borda_points(f)
    return _sum_runs(f, len(w), lambda r: w[:, r, None] * pts[r])


def condorcet_scores(f: Features, w: np.ndarray) -> np.ndarray:
    """Copeland score of every row under each weight vector, ``(B, P)``: ``1 + wins + ties / 2``.

    Document ``d`` beats ``d'`` when the runs ranking ``d`` above ``d'`` weigh more than those
    ranking ``d'`` above ``d`` (a run that retrieved only one of them ranks it above the other;
    a run that retrieved neither does not vote).  When the pairwise majority is a strict order
    the score is ``C - position`` in it, as Condorcet-fuse's sort gives.
    """
    pool = f.pool
    n_b, n_p = len(w), f.x.shape[1]
    out = np.ones((n_b, n_p))
    cand = pool.candidates
    sq = cand.astype(np.int64) ** 2
    bounds = np.concatenate(([0], np.cumsum(sq)))
    per_chunk = max(1 << 16, _PAIRS_PER_CHUNK // max(n_b, 1))  # (settings x pairs) held at once stays bounded
    q = 0
    n_q = len(cand)
    while q < n_q:  # chunks of whole queries, about per_chunk pairs each
        end = max(q + 1, int(np.searchsorted(bounds, bounds[q] + per_chunk, side="right")) - 1)
        end = min(end, n_q)
        qs = np.arange(q, end)
        total = int(bounds[end] - bounds[q])
        if total:
            qrep = np.repeat(qs, sq[q:end])
            local = np.arange(total) - np.repeat(bounds[q:end] - bounds[q], sq[q:end])
            c = cand[qrep]
            i = pool.offsets[qrep] + local // c
            j = pool.offsets[qrep] + local % c
            keep = i != j
            i, j = i[keep], j[keep]
            v_ij = np.zeros((n_b, len(i)))
            v_ji = np.zeros((n_b, len(i)))
            for r in range(f.rank.shape[0]):
                ri, rj = f.rank[r, i], f.rank[r, j]
                v_ij = v_ij + np.where((ri < rj)[None, :], w[:, r, None], 0.0)
                v_ji = v_ji + np.where((rj < ri)[None, :], w[:, r, None], 0.0)
            points = (v_ij > v_ji) + 0.5 * (v_ij == v_ji)
            flat = (np.arange(n_b)[:, None] * n_p + i[None, :]).ravel()
            out += np.bincount(flat, weights=points.ravel(), minlength=n_b * n_p).reshape(n_b, n_p)
        q = end
    return out


def _condorcet(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return condorcet_scores(f, np.ones((1, f.x.shape[0])))


def _weighted_condorcet(f: Features, w: np.ndarray, p: Params) -> np.ndarray:
    return condorcet_scores(f, w)


KERNELS: dict[str, Kernel] = {
    "rrf": _rrf, "combsum": _combsum, "combmnz": _combmnz, "combmax": _combmax, "combmin": _combmin,
    "combmed": _combmed, "combanz": _combanz, "combgmnz": _combgmnz, "wsum": _combsum, "wmnz": _wmnz,
    "mixed": _mixed, "isr": _isr, "log_isr": _log_isr, "logn_isr": _logn_isr, "rbc": _rbc, "borda": _borda,
    "weighted_borda": _weighted_borda, "condorcet": _condorcet, "weighted_condorcet": _weighted_condorcet,
}
