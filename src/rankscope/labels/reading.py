"""What agreement figures mean, in English and Chinese (messages ``labels.reading.*`` of
``interpret/messages/<lang>/labels.json``).

κ bands (Landis & Koch, 1977): below 0 no better than chance, 0–0.20 slight,
0.21–0.40 fair, 0.41–0.60 moderate, 0.61–0.80 substantial, above 0.80 almost
perfect.  τ readings: at least 0.9 is the usual threshold for two equivalent
system rankings (Voorhees, 2000), 0.8–0.9 the same broad ranking with swaps
between close systems, below 0.8 a different ranking.

>>> kappa_band(0.45), kappa_band(float("nan"))
('moderate', 'undefined')
>>> message("band.fair", "en"), message("band.fair", "zh")
('fair', '一般一致')
"""

from __future__ import annotations

import math
from typing import Any

from rankscope.choices import term
from rankscope.i18n import _, gettext
from rankscope.interpret import i18n

__all__ = ["kappa_band", "message", "read_label_agreement", "read_ranking_agreement"]


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
    """Sentences reading a :class:`~rankscope.labels.agreement.LabelAgreement`."""
    out = []
    for what, iv in ((_("binary (grade ≥ {level})", level=agr.relevance_level).text(lang), agr.kappa_binary),
                     (message(f"weighted.{agr.weights}", lang), agr.kappa_weighted)):
        band = message(f"band.{kappa_band(iv.value)}", lang)
        out.append(_("{what} κ = {value} [{low}, {high}]: {band} agreement (Landis & Koch bands) on {n} documents "
                     "judged by both.", what=what, value=_f(iv.value), low=_f(iv.low), high=_f(iv.high), band=band,
                     n=agr.pairs).text(lang))
    out.append(gettext("For comparison: LLM judges against TREC assessors typically reach fair-to-moderate κ on "
                       "the 0–3 scale; system rankings can still agree well (see τ).", lang))
    return out


def read_ranking_agreement(ra: Any, lang: str = "en") -> list[str]:
    """Sentences reading a :class:`~rankscope.labels.system_ranking.RankingAgreement`."""
    out = []
    for r in ra.rankings:
        key = ("tau.undefined" if not math.isfinite(r.tau) else "tau.high" if r.tau >= 0.9
               else "tau.mid" if r.tau >= 0.8 else "tau.low")
        out.append(message(key, lang, metric=r.metric, tau=_f(r.tau), tau_ap=_f(r.tau_ap)))
    flips = ra.flips
    key = "flips.some" if flips else "flips.none"
    out.append(message(key, lang, n=len(flips), total=len(ra.verdicts), test=term(ra.test, lang), alpha=ra.alpha,
                       correction=term(ra.correction, lang)))
    return out
