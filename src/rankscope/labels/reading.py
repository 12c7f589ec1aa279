"""What agreement figures mean, in the reader's language.

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
>>> band_text("fair"), band_text("fair", "zh")
('fair', '一般一致')
"""

from __future__ import annotations

import math
from typing import Any

from rankscope.choices import term
from rankscope.i18n import N_, NC_, _, gettext

__all__ = ["band_text", "kappa_band", "read_bias", "read_group_agreement", "read_label_agreement",
           "read_ranking_agreement", "tau_key"]

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
#: the τ readings (:func:`tau_key`)
TAU: dict[str, str] = {
    "high": N_("{metric}: τ = {tau} [{low}, {high}], τ_AP = {tau_ap} [{ap_low}, {ap_high}]: even the low end of the "
               "interval is at least 0.9, so the model labels rank the systems practically as the human labels do "
               "(0.9 is the usual threshold for equivalent rankings)."),
    "mid": N_("{metric}: τ = {tau} [{low}, {high}], τ_AP = {tau_ap} [{ap_low}, {ap_high}]: the interval stays at or "
              "above 0.8: the same broad ranking, but close systems may swap places; confirm small differences with "
              "human labels."),
    "low": N_("{metric}: τ = {tau} [{low}, {high}], τ_AP = {tau_ap} [{ap_low}, {ap_high}]: the whole interval is "
              "below 0.8: the model labels change the system ranking; do not use them in place of human labels for "
              "this comparison."),
    "uncertain": N_("{metric}: τ = {tau}, but between {low} and {high} over resampled queries ({below} of the "
                    "resamples below 0.9), τ_AP = {tau_ap} [{ap_low}, {ap_high}]: this judge may reorder your "
                    "systems; check the ranking with human labels before relying on it."),
    "undefined": N_("{metric}: τ undefined (the systems tie under one label set)."),
}
#: the agreement of a group of annotators
GROUP: dict[str, str] = {
    "fleiss": N_("Fleiss' κ = {value} [{low}, {high}] on the {n} documents all graded: {band} agreement (grades as "
                 "categories; Landis & Koch bands; the interval resamples queries)."),
    "krippendorff": N_("Krippendorff's α (ordinal) = {value} [{low}, {high}] on the {n} documents graded by two or "
                       "more: {band} agreement (the interval resamples queries)."),
}
#: the bias readings and the direction of a bias
BIAS: dict[str, str] = {
    "flagged": N_("Bias: {direction}: mean grade shift {shift} [{low}, {high}] per document (interval over "
                  "resampled queries); Stuart–Maxwell χ² = {chi2}, df = {df}, p = {p} (α = {alpha}): read every "
                  "judged number below with this in mind."),
    "none": N_("Bias: no systematic shift found: mean grade shift {shift} [{low}, {high}] per document (interval "
               "over resampled queries); Stuart–Maxwell χ² = {chi2}, df = {df}, p = {p} (α = {alpha})."),
    "higher": N_("the model grades higher than people"),
    "lower": N_("the model grades lower than people"),
}


def band_text(band: str, lang: str = "en") -> str:
    """The band ``band`` (:func:`kappa_band`) in ``lang``."""
    return gettext(BANDS[band], lang, context="agreement")


def _band(iv: Any, lang: str) -> str:
    """The band of an interval: one band, or "between" the bands of its ends."""
    low, high = kappa_band(iv.low), kappa_band(iv.high)
    if low == high or "undefined" in (low, high):
        return band_text(kappa_band(iv.value), lang)
    return _("between {low} and {high}", low=band_text(low, lang), high=band_text(high, lang)).text(lang)


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
    for what, iv in ((_("binary (grade ≥ {level})", level=agr.relevance_level).text(lang), agr.kappa_binary),
                     (gettext(WEIGHTS[agr.weights], lang), agr.kappa_weighted)):
        band = _band(iv, lang)
        out.append(_("{what} κ = {value} [{low}, {high}]: {band} agreement (Landis & Koch bands) on {n} documents "
                     "judged by both, from {queries} queries (the interval resamples queries).", what=what,
                     value=_f(iv.value), low=_f(iv.low), high=_f(iv.high), band=band, n=agr.pairs,
                     queries=agr.queries).text(lang))
    out.append(gettext("For comparison: LLM judges against TREC assessors typically reach fair-to-moderate κ on "
                       "the 0–3 scale; system rankings can still agree well (see τ).", lang))
    return out


def read_group_agreement(group: Any, lang: str = "en") -> list[str]:
    """Sentences reading a :class:`~rankscope.labels.group_agreement.GroupAgreement` (bands from the intervals)."""
    out = []
    for key, iv, n in (("fleiss", group.fleiss, group.items_all), ("krippendorff", group.krippendorff, group.items)):
        out.append(_(GROUP[key], value=_f(iv.value), low=_f(iv.low), high=_f(iv.high), band=_band(iv, lang),
                     n=n).text(lang))
    return out


def read_bias(agr: Any, lang: str = "en") -> list[str]:
    """The bias reading of a :class:`~rankscope.labels.agreement.LabelAgreement`: the mean grade shift with its
    interval and the Stuart–Maxwell test, and whether the judge is read as biased."""
    chi2, df, p = agr.stuart_maxwell
    iv = agr.shift
    direction = gettext(BIAS["higher" if iv.value > 0 else "lower"], lang) if agr.biased else ""
    return [_(BIAS["flagged" if agr.biased else "none"], shift=f"{iv.value:+.3f}", low=f"{iv.low:+.3f}",
              high=f"{iv.high:+.3f}", chi2=f"{chi2:.1f}", df=df, p=f"{p:.3g}", alpha=agr.alpha,
              direction=direction).text(lang)]


def tau_key(tau: float, low: float, high: float) -> str:
    """The τ reading chosen from the interval ``[low, high]`` (module docstring).

    >>> tau_key(1.0, 0.467, 1.0), tau_key(0.95, 0.91, 1.0), tau_key(0.7, 0.5, 0.75)
    ('uncertain', 'high', 'low')
    """
    if not math.isfinite(tau):
        return "undefined"
    if not (math.isfinite(low) and math.isfinite(high)):
        low = high = tau
    if low >= 0.9:
        return "high"
    if low >= 0.8:
        return "mid"
    if high < 0.8:
        return "low"
    return "uncertain"


def read_ranking_agreement(ra: Any, lang: str = "en") -> list[str]:
    """Sentences reading a :class:`~rankscope.labels.system_ranking.RankingAgreement` (from the intervals)."""
    out = []
    for r in ra.rankings:
        low, high = r.tau_interval
        out.append(_(TAU[tau_key(r.tau, low, high)], metric=r.metric, tau=_f(r.tau), tau_ap=_f(r.tau_ap),
                     low=_f(low), high=_f(high), ap_low=_f(r.tau_ap_interval[0]), ap_high=_f(r.tau_ap_interval[1]),
                     below=f"{r.tau_below:.0%}" if math.isfinite(r.tau_below) else "–").text(lang))
    flips = ra.flips
    test = {"test": term(ra.test, lang), "alpha": ra.alpha, "correction": term(ra.correction, lang)}
    out.append(_("{n} of {total} pairwise verdicts change between human and model labels ({test} test, "
                 "α = {alpha}, {correction} correction): check these pairs with human labels.", n=len(flips),
                 total=len(ra.verdicts), **test).text(lang) if flips
               else _("No pairwise significance verdict changes between human and model labels ({test} test, "
                      "α = {alpha}, {correction} correction).", **test).text(lang))
    return out
