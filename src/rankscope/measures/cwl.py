r"""The C/W/L family of cwl_eval (Azzopardi, Thomas & Moffat 2019), as ir_measures names them.

A C/W/L measure is the expected rate of gain of a reader who, after the document at rank i,
goes on with probability C(i): with W(i) ∝ Π_{j<i} C(j) normalised to sum to 1 over the ranks,
the value is Σ_i W(i) · g_i.  As cwl_eval (and ir_measures, which calls it): the ranking is read to
depth L = 1,000 and padded with documents of gain 0; every document costs 1; the gain of a judged
document of grade r is (clip(r, min_rel, max_rel) − min_rel) / (max_rel − min_rel) (negative grades
count as 0 first), an unjudged document gains 0.  ``max_rel`` is the grade of a document of full gain
(ir_measures requires it; rankscope's default 1 makes any grade ≥ 1 a full gain, the reading of
binary qrels: give the top grade of graded qrels, ``INST(T=2,max_rel=3)``).  With T the gain the
reader wants and G(i) = Σ_{j≤i} g_j (ranks 1-based):

* ``inst`` (``INST(T=…)``, Moffat et al. 2015): C(i) = ((i + T + T_i − 1) / (i + T + T_i))², T_i = T − G(i);
* ``insq`` (``INSQ(T=…)``, Moffat et al. 2012): C(i) = ((i + 2T − 1) / (i + 2T))²;
* ``bpm@k`` (``BPM(T=…)@k``, Zhang et al. 2017, static): C(i) = 1 while G(i) < T and i < k, else 0;
* ``sdcg@k`` (``SDCG@k``): C(i) = log2(i + 1) / log2(i + 2) for i < k, else 0 — DCG@k divided by
  the DCG of k documents of full gain ("scaled" DCG);
* ``nerr8@k``, ``nerr9@k``, ``nerr10``, ``nerr11`` (``NERR8@k`` … ``NERR11``, Azzopardi, Mackenzie &
  Moffat 2021, "not but nearly ERR"): C(i) = 1 − g_i for i < k (eq. 8); i/(i+1) · (1 − g_i) for
  i < k (eq. 9); p · (1 − g_i) (eq. 10, ``p`` = 0.9); ((i + 2T − 1) / (i + 2T))² · (1 − g_i) (eq. 11).

Cutoff: ``bpm``, ``sdcg``, ``nerr8`` and ``nerr9`` need one (the k of their C); the others take none
(their reader stops by himself).  A query without gain scores 0.  Ties are resolved before scoring
(score descending, doc id descending; cwl_eval reads the run file's order).  Values equal cwl_eval's
to rounding (cwl_eval sums its weights with BLAS, rankscope left to right).

>>> from rankscope import evaluate, Qrels, Run
>>> qrels = Qrels.from_dict({"q": {"a": 1, "b": 1, "c": 0}})
>>> run = Run.from_ranked_lists({"q": ["a", "x", "b", "c"]})
>>> res = evaluate(qrels, run, ["INST(T=2)", "INSQ", "BPM(T=1)@10", "SDCG@10", "NERR10(p=0.8)"]).mean()
>>> {k: round(v, 4) for k, v in res.items()}
{'INST(T=2)': 0.4261, 'INSQ': 0.4853, 'BPM(T=1)@10': 1.0, 'SDCG@10': 0.3301, 'NERR10(p=0.8)': 1.0}
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import N_, _
from rankscope.measures.base import Measure, MeasureSpec, Param
from rankscope.measures.kernel_input import KernelInput
from rankscope.measures.registry import register

__all__ = ["CWL_DEPTH"]

CWL_DEPTH = 1000  # cwl_eval's max_n: ranks read, and the length every ranking is padded to
_BLOCK_CELLS = 4_000_000  # queries x ranks in one block (memory stays bounded on large query sets)

Continuation = Callable[[np.ndarray, Measure], np.ndarray]


def _gains(p: KernelInput, m: Measure, first: int, last: int) -> np.ndarray:
    """The (queries first..last-1) x CWL_DEPTH matrix of gains, scaled to [0, 1] as cwl_eval reads them."""
    lo, hi = int(m.param("min_rel")), int(m.param("max_rel"))
    if hi <= lo:
        raise InvalidParameterError(_("metric {metric!r}: max_rel must be above min_rel, got min_rel={lo}, "
                                      "max_rel={hi}", metric=m.name, lo=lo, hi=hi))
    start, stop = p.offsets[first], p.offsets[last]
    keep = np.flatnonzero(p.judged[start:stop] & (p.rank[start:stop] < CWL_DEPTH)) + start
    grade = np.clip(np.maximum(p.grade[keep], 0), lo, hi).astype(np.float64)
    out = np.zeros((last - first, CWL_DEPTH))
    out[p.qidx[keep] - first, p.rank[keep]] = (grade - lo) / (hi - lo)
    return out


@lru_cache(maxsize=1)
def _position() -> np.ndarray:
    """1-based ranks 1..CWL_DEPTH as floats."""
    return np.arange(1.0, CWL_DEPTH + 1.0)


def _expected_utility(cont: np.ndarray, gains: np.ndarray) -> np.ndarray:
    """Σ_i W(i) g_i per row, W(i) = Π_{j<i} C(j) / Σ_i Π_{j<i} C(j) (cwl_eval's w_vector)."""
    reach = np.ones(cont.shape)
    reach[:, 1:] = np.cumprod(cont[:, :-1], axis=1)
    # sums left to right (a running sum's last value): a query's value never depends on the others in its block
    w1 = 1.0 / np.cumsum(reach, axis=1)[:, -1]
    weight = reach * w1[:, None]
    weight[:, 0] = w1
    return np.cumsum(weight * gains, axis=1)[:, -1]


def _inst(g: np.ndarray, m: Measure) -> np.ndarray:
    t = float(m.param("T"))
    rest = t - np.cumsum(g, axis=1)
    i = _position()
    return ((i + t + rest - 1.0) / (i + t + rest)) ** 2.0


def _insq(g: np.ndarray, m: Measure) -> np.ndarray:
    t = float(m.param("T"))
    i = _position()
    return np.broadcast_to(((i + (2.0 * t) - 1.0) / (i + (2.0 * t))) ** 2.0, g.shape)


def _bpm(g: np.ndarray, m: Measure) -> np.ndarray:
    k = int(m.cutoff or 0)
    return ((np.cumsum(g, axis=1) < float(m.param("T"))) & (_position() < k)).astype(np.float64)


@lru_cache(maxsize=16)
def _sdcg_row(k: int) -> np.ndarray:
    return np.array([math.log(i + 1, 2.0) / math.log(i + 2, 2.0) if i < k else 0.0 for i in range(1, CWL_DEPTH + 1)])


def _sdcg(g: np.ndarray, m: Measure) -> np.ndarray:
    return np.broadcast_to(_sdcg_row(int(m.cutoff or 0)), g.shape)


def _nerr8(g: np.ndarray, m: Measure) -> np.ndarray:
    return np.where(_position() < int(m.cutoff or 0), 1 - g, 0.0)


def _nerr9(g: np.ndarray, m: Measure) -> np.ndarray:
    i = _position()
    return np.where(i < int(m.cutoff or 0), (1.0 * i / (i + 1.0)) * (1.0 - g), 0.0)


def _nerr10(g: np.ndarray, m: Measure) -> np.ndarray:
    return float(m.param("p")) * (1 - g)


def _nerr11(g: np.ndarray, m: Measure) -> np.ndarray:
    t = float(m.param("T"))
    i = _position()
    return (((i + (2.0 * t) - 1.0) / (i + (2.0 * t))) ** 2.0) * (1.0 - g)


def _kernel(cont: Continuation) -> Callable[[KernelInput, Measure], np.ndarray]:
    def kernel(p: KernelInput, m: Measure) -> np.ndarray:
        out = np.zeros(p.n)
        step = max(1, _BLOCK_CELLS // CWL_DEPTH)
        for first in range(0, p.n, step):  # blocks of queries, each block vectorised
            last = min(first + step, p.n)
            g = _gains(p, m, first, last)
            out[first:last] = _expected_utility(cont(g, m), g)
        return np.minimum(out, 1.0)  # weights summing to 1 may round a full gain to 1 + 1 ulp

    kernel.__name__ = kernel.__qualname__ = f"_cwl{cont.__name__}"
    return kernel


_MIN = Param("min_rel", int, 0, "grade of gain 0 (lower grades count as it)")
_MAX = Param("max_rel", int, 1, "grade of full gain 1 (higher grades count as it); ir_measures requires it")
_T = Param("T", float, 1.0, "the total gain the reader wants", minimum=0.0)
_DOC = __doc__ or ""
for name, cont, cutoff, extra, summary in (
    ("inst", _inst, "none", (_T,), N_("INST: a reader who wants gain T and goes on less as gain comes (C/W/L)")),
    ("insq", _insq, "none", (_T,), N_("INSQ: a reader who wants gain T (C/W/L)")),
    ("bpm", _bpm, "required", (_T,), N_("Bejeweled player model: stop at gain T or after k documents (C/W/L)")),
    ("sdcg", _sdcg, "required", (), N_("scaled DCG@k: DCG over the DCG of k fully relevant documents (C/W/L)")),
    ("nerr8", _nerr8, "required", (), N_("not-but-nearly ERR, eq. 8: cascade reader cut at k (C/W/L)")),
    ("nerr9", _nerr9, "required", (), N_("not-but-nearly ERR, eq. 9: cascade reader with a rank discount, cut at k")),
    ("nerr10", _nerr10, "none", (Param("p", float, 0.9, "persistence", minimum=0.0),),
     N_("not-but-nearly ERR, eq. 10: cascade reader with persistence p (C/W/L)")),
    ("nerr11", _nerr11, "none", (_T,), N_("not-but-nearly ERR, eq. 11: cascade reader who wants gain T (C/W/L)")),
):
    register(MeasureSpec(name, summary, _kernel(cont), cutoff=cutoff, params=(*extra, _MIN, _MAX),  # type: ignore[arg-type]
                         ir_measures=name.upper(), family="cwl", doc=_DOC, judged_view=True))
