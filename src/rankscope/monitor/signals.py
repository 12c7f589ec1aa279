"""Label-free signals of a retrieval stream: score shift (PSI, KS), overlap between versions (RBO), latency.

These need no judgment: they say that *something changed*, not that quality dropped.

* :func:`psi` — population stability index of a score distribution against a reference;
* :func:`ks_test` — the two-sample Kolmogorov-Smirnov test (scipy's ``ks_2samp``);
* :func:`rbo` — rank-biased overlap of two rankings (extrapolated, Webber et al. 2010);
* :func:`latency_percentiles` — p50 / p95 / p99 / max.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _

__all__ = ["psi", "ks_test", "KSResult", "rbo", "latency_percentiles", "PSI_BINS", "PSI_FLOOR"]

#: bins of the PSI: deciles of the reference
PSI_BINS = 10
#: the smallest share a bin is given in the PSI (an empty bin would make the log infinite)
PSI_FLOOR = 1e-4


def psi(reference: Any, current: Any, bins: int = PSI_BINS) -> float | None:
    """Population stability index of ``current`` against ``reference``.

    The bins are the ``bins``-quantiles of the reference (repeated edges merged); with ``r_i`` and
    ``c_i`` the shares of the reference and current values in bin ``i`` (each at least
    :data:`PSI_FLOOR`),

        PSI = sum_i (c_i - r_i) * ln(c_i / r_i).

    0 for the same distribution; a common reading is < 0.1 stable, 0.1-0.25 a moderate shift,
    > 0.25 a large one.  None when either side has no value.  Ties: values equal to an inner edge
    fall in the bin above it (``numpy.searchsorted(..., side="right")``).

    >>> psi([1, 2, 3, 4] * 25, [1, 2, 3, 4] * 25)
    0.0
    >>> round(psi(np.arange(100.0), np.arange(50.0, 150.0)), 2)
    4.35
    """
    r = np.asarray(reference, dtype=np.float64).ravel()
    c = np.asarray(current, dtype=np.float64).ravel()
    r, c = r[np.isfinite(r)], c[np.isfinite(c)]
    if not r.size or not c.size:
        return None
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
        raise InvalidParameterError(_("bins must be an integer >= 2, got {value!r}", value=bins))
    edges = np.unique(np.quantile(r, np.linspace(0, 1, bins + 1)[1:-1]))
    rs = np.bincount(np.searchsorted(edges, r, side="right"), minlength=len(edges) + 1) / r.size
    cs = np.bincount(np.searchsorted(edges, c, side="right"), minlength=len(edges) + 1) / c.size
    rs, cs = np.maximum(rs, PSI_FLOOR), np.maximum(cs, PSI_FLOOR)
    return float(abs(np.sum((cs - rs) * np.log(cs / rs))))


@dataclass(frozen=True)
class KSResult:
    """The two-sample KS statistic (largest gap between the two empirical CDFs) and its p-value."""

    statistic: float
    p_value: float
    n_reference: int
    n_current: int


def ks_test(reference: Any, current: Any) -> KSResult | None:
    """Two-sample Kolmogorov-Smirnov test of ``current`` against ``reference`` (``scipy.stats.ks_2samp``,
    two-sided, exact for small samples); None when either side is empty.

    >>> ks_test([1.0, 2.0, 3.0] * 20, [1.0, 2.0, 3.0] * 20).p_value
    1.0
    """
    from scipy.stats import ks_2samp

    r = np.asarray(reference, dtype=np.float64).ravel()
    c = np.asarray(current, dtype=np.float64).ravel()
    r, c = r[np.isfinite(r)], c[np.isfinite(c)]
    if not r.size or not c.size:
        return None
    res = ks_2samp(r, c)
    return KSResult(float(res.statistic), float(res.pvalue), int(r.size), int(c.size))


def rbo(a: Sequence[Any], b: Sequence[Any], p: float = 0.9) -> float:
    """Rank-biased overlap of two rankings, extrapolated (RBO_ext of Webber, Moffat & Zobel 2010, eq. 32).

    With ``A_d`` the overlap of the top ``d`` of both lists, ``k`` the depth of the shorter list
    (both are read to depth ``k``; repeated ids count once, at their first rank),

        RBO_ext = (A_k / k) * p^k + (1 - p) / p * sum_{d=1..k} (A_d / d) * p^d.

    1 for identical rankings, 0 for disjoint ones; ``p`` is the persistence (0.9: the top 10 carry
    about 86% of the weight).  Two empty lists give 1 (nothing differs); one empty list 0.

    >>> rbo(["a", "b", "c"], ["a", "b", "c"]), rbo(["a", "b"], ["c", "d"])
    (1.0, 0.0)
    >>> round(rbo(["a", "b", "c", "d"], ["b", "a", "c", "d"]), 4)
    0.9
    """
    if not 0 < p < 1:
        raise InvalidParameterError(_("p must be between 0 and 1, got {value!r}", value=p))
    x = list(dict.fromkeys(a))
    y = list(dict.fromkeys(b))
    k = min(len(x), len(y))
    if k == 0:
        return 1.0 if not x and not y else 0.0
    seen_x: set[Any] = set()
    seen_y: set[Any] = set()
    overlap = 0
    total = 0.0
    for d in range(1, k + 1):
        u, v = x[d - 1], y[d - 1]
        if u == v:
            overlap += 1
        else:
            overlap += (u in seen_y) + (v in seen_x)
        seen_x.add(u)
        seen_y.add(v)
        total += overlap / d * p**d
    return float(min(1.0, overlap / k * p**k + (1 - p) / p * total))


def latency_percentiles(latencies_ms: Any) -> dict[str, float] | None:
    """``{"p50", "p95", "p99", "max", "n"}`` of latencies (ms; linear interpolation between order statistics);
    None without any.

    >>> latency_percentiles(range(1, 101))["p95"]
    95.05
    """
    v = np.asarray(list(latencies_ms) if not isinstance(latencies_ms, np.ndarray) else latencies_ms,
                   dtype=np.float64)
    v = v[np.isfinite(v)]
    if not v.size:
        return None
    p50, p95, p99 = np.percentile(v, [50, 95, 99])
    return {"p50": float(p50), "p95": float(p95), "p99": float(p99), "max": float(v.max()), "n": float(v.size)}


def _check_finite(x: float) -> float | None:
    return x if math.isfinite(x) else None
