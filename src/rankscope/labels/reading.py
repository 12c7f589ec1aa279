"""What agreement figures mean, in English and Chinese (messages ``labels.reading.*`` of
``interpret/messages/<lang>/labels.json``).

κ bands (Landis & Koch, 1977): below 0 no better than chance, 0–0.20 slight,
0.21–0.40 fair, 0.41–0.60 moderate, 0.61–0.80 substantial, above 0.80 almost
perfect.  τ readings: at least 0.9 is the usual threshold for two equivalent
system rankings (Voorhees, 2000), 0.8–0.9 the same broad ranking with swaps
between close systems, below 0.8 a different ranking.

Every reading is chosen from the *interval*, never from the point value alone:
a κ whose interval spans two bands is read as "between" them; τ is read as
"practically as the human labels do" only when the interval's lower end is at
least 0.9, as "the same broad ranking" only when it is at least 0.8, as a
different ranking when its upper end is below 0.8, and otherwise as "this judge
may reorder your systems".  The bias reading comes first: it says whether the
model grades higher or lower than people and how much that moves each run's
metric, before any judged number is used.

>>> kappa_band(0.45), kappa_band(float("nan"))
('moderate', 'undefined')
>>> message("band.fair", "en"), message("band.fair", "zh")
('fair', '一般一致')
"""

from __future__ import annotations

import math
from typing import Any

from rankscope.choices import term
from rankscope.interpret import i18n

__all__ = ["kappa_band", "message", "read_bias", "read_group_agreement", "read_label_agreement",
           "read_ranking_agreement", "tau_key"]


def message(key: str, lang: str = "en", **values: Any) -> str:
    """The reading message ``labels.reading.<key>`` in ``lang``, filled with ``values``."""
    return i18n.message(f"labels.reading.{key}", lang, **values)


def kappa_band(value: float) -> str:
    """The Landis & Koch band of a κ value (``undefined`` for NaN)."""
    if not math.isfinite(value):
        return "undefined"
    for limit, band in ((0.0, "poor"), (0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if value <= limit:
            return band
    return "almost_perfect"


def _f(x: float) -> str:
    return f"{x:.3f}" if math.isfinite(x) else "–"


def read_label_agreement(agr: Any, lang: str = "en") -> list[str]:
    """Sentences reading a :class:`~rankscope.labels.agreement.LabelAgreement` (bands from the interval)."""
    out = []
    for what, iv in ((message("binary", lang, level=agr.relevance_level), agr.kappa_binary),
                     (message(f"weighted.{agr.weights}", lang), agr.kappa_weighted)):
        low, high = kappa_band(iv.low), kappa_band(iv.high)
        if low == high or "undefined" in (low, high):
            band = message(f"band.{kappa_band(iv.value)}", lang)
        else:
            band = message("band.between", lang, low=message(f"band.{low}", lang), high=message(f"band.{high}", lang))
        out.append(message("kappa", lang, what=what, value=_f(iv.value), low=_f(iv.low), high=_f(iv.high),
                           band=band, n=agr.pairs, queries=agr.queries))
    out.append(message("kappa.anchor", lang))
    return out


def read_group_agreement(group: Any, lang: str = "en") -> list[str]:
    """Sentences reading a :class:`~rankscope.labels.group_agreement.GroupAgreement` (bands from the intervals)."""
    out = []
    for key, iv, n in (("fleiss", group.fleiss, group.items_all), ("krippendorff", group.krippendorff, group.items)):
        low, high = kappa_band(iv.low), kappa_band(iv.high)
        if low == high or "undefined" in (low, high):
            band = message(f"band.{kappa_band(iv.value)}", lang)
        else:
            band = message("band.between", lang, low=message(f"band.{low}", lang), high=message(f"band.{high}", lang))
        out.append(message(f"group.{key}", lang, value=_f(iv.value), low=_f(iv.low), high=_f(iv.high), band=band,
                           n=n))
    return out


def read_bias(agr: Any, lang: str = "en") -> list[str]:
    """The bias reading of a :class:`~rankscope.labels.agreement.LabelAgreement`: the mean grade shift with its
    interval and the Stuart–Maxwell test, and whether the judge is read as biased."""
    chi2, df, p = agr.stuart_maxwell
    iv = agr.shift
    key = "bias.flagged" if agr.biased else "bias.none"
    direction = message("bias.higher" if iv.value > 0 else "bias.lower", lang) if agr.biased else ""
    return [message(key, lang, shift=f"{iv.value:+.3f}", low=f"{iv.low:+.3f}", high=f"{iv.high:+.3f}",
                    chi2=f"{chi2:.1f}", df=df, p=f"{p:.3g}", alpha=agr.alpha, direction=direction)]


def tau_key(tau: float, low: float, high: float) -> str:
    """The τ reading chosen from the interval ``[low, high]`` (module docstring).

    >>> tau_key(1.0, 0.467, 1.0), tau_key(0.95, 0.91, 1.0), tau_key(0.7, 0.5, 0.75)
    ('tau.uncertain', 'tau.high', 'tau.low')
    """
    if not math.isfinite(tau):
        return "tau.undefined"
    if not (math.isfinite(low) and math.isfinite(high)):
        low = high = tau
    if low >= 0.9:
        return "tau.high"
    if low >= 0.8:
        return "tau.mid"
    if high < 0.8:
        return "tau.low"
    return "tau.uncertain"


def read_ranking_agreement(ra: Any, lang: str = "en") -> list[str]:
    """Sentences reading a :class:`~rankscope.labels.system_ranking.RankingAgreement` (from the intervals)."""
    out = []
    for r in ra.rankings:
        low, high = r.tau_interval
        out.append(message(tau_key(r.tau, low, high), lang, metric=r.metric, tau=_f(r.tau), tau_ap=_f(r.tau_ap),
                           low=_f(low), high=_f(high), ap_low=_f(r.tau_ap_interval[0]),
                           ap_high=_f(r.tau_ap_interval[1]), below=f"{r.tau_below:.0%}"
                           if math.isfinite(r.tau_below) else "–"))
    flips = ra.flips
    key = "flips.some" if flips else "flips.none"
    out.append(message(key, lang, n=len(flips), total=len(ra.verdicts), test=term(ra.test, lang), alpha=ra.alpha,
                       correction=term(ra.correction, lang)))
    return out
