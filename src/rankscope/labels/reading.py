"""What agreement figures mean, in the reader's language.

κ bands (Landis & Koch, 1977): below 0 no better than chance, 0–0.20 slight,
0.21–0.40 fair, 0.41–0.60 moderate, 0.61–0.80 substantial, above 0.80 almost
perfect.  τ readings: at least 0.9 is the usual threshold for two equivalent
system rankings (Voorhees, 2000), 0.8–0.9 the same broad ranking with swaps
between close systems, below 0.8 a different ranking.

>>> kappa_band(0.45), kappa_band(float("nan"))
('moderate', 'undefined')
>>> band_text("fair"), band_text("fair", "zh")
('fair', '一般一致')
"""

from __future__ import annotations

import math
from typing import Any

from rankscope.choices import term
from rankscope.i18n import N_, NC_, _, gettext

__all__ = ["band_text", "kappa_band", "read_label_agreement", "read_ranking_agreement"]

#: the Landis & Koch bands of κ, as a sentence names them
BANDS: dict[str, str] = {
    "poor": NC_("agreement", "no better than chance"),
    "slight": NC_("agreement", "slight"),
    "fair": NC_("agreement", "fair"),
    "moderate": NC_("agreement", "moderate"),
    "substantial": NC_("agreement", "substantial"),
    "almost_perfect": NC_("agreement", "almost perfect"),
    "undefined": NC_("agreement", "undefined (one side gives a single label to everything)"),
}
#: the weighted κ's weights
WEIGHTS: dict[str, str] = {"linear": N_("weighted (linear)"), "quadratic": N_("weighted (quadratic)"),
                           "none": N_("weighted (none)")}


def band_text(band: str, lang: str = "en") -> str:
    """The band ``band`` (:func:`kappa_band`) in ``lang``."""
    return gettext(BANDS[band], lang, context="agreement")


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
                     (gettext(WEIGHTS[agr.weights], lang), agr.kappa_weighted)):
        band = band_text(kappa_band(iv.value), lang)
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
        values = {"metric": r.metric, "tau": _f(r.tau), "tau_ap": _f(r.tau_ap)}
        if not math.isfinite(r.tau):
            said = _("{metric}: τ undefined (the systems tie under one label set).", **values)
        elif r.tau >= 0.9:
            said = _("{metric}: τ = {tau}, τ_AP = {tau_ap}: the model labels rank the systems practically as the "
                     "human labels do (τ ≥ 0.9, the usual threshold for equivalent rankings; UMBRELA / TREC RAG 2024 "
                     "report τ around 0.9 on TREC DL).", **values)
        elif r.tau >= 0.8:
            said = _("{metric}: τ = {tau}, τ_AP = {tau_ap}: the same broad ranking, but close systems swap places "
                     "(0.8 ≤ τ < 0.9); confirm small differences with human labels.", **values)
        else:
            said = _("{metric}: τ = {tau}, τ_AP = {tau_ap}: the model labels change the system ranking (τ < 0.8); "
                     "do not use them in place of human labels for this comparison.", **values)
        out.append(said.text(lang))
    flips = ra.flips
    test = {"test": term(ra.test, lang), "alpha": ra.alpha, "correction": term(ra.correction, lang)}
    out.append(_("{n} of {total} pairwise verdicts change between human and model labels ({test} test, "
                 "α = {alpha}, {correction} correction): check these pairs with human labels.", n=len(flips),
                 total=len(ra.verdicts), **test).text(lang) if flips
               else _("No pairwise significance verdict changes between human and model labels ({test} test, "
                      "α = {alpha}, {correction} correction).", **test).text(lang))
    return out
