"""trec_eval 9.0.8's measures: their order, parameter syntax and printing rules.

Each :class:`TrecMeasure` names a trec_eval measure, the rankscope metric that
computes it and how trec_eval parses its ``-m name.PARAMS`` text:

* ``cuts``: integer cutoffs (``P.5,10`` -> ``P_5``, ``P_10``), truncated like C's ``atol``,
  sorted; zero, negative or duplicate cutoffs are an error;
* ``fractions``: float cutoffs (``iprec_at_recall..1,.2`` -> ``iprec_at_recall_0.10``), sorted;
* ``floats``: a float parameter list printed verbatim (``utility_2,-1,0,0``, ``11pt_avg_.25,.5``);
* ``gains``: ``level=gain`` pairs printed verbatim (``ndcg_1=3,2=9``);
* ``none``: no parameter (a given one is ignored, as trec_eval does).

Measures print in this catalogue's order whatever the order of ``-m`` flags.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["TrecMeasure", "CATALOG", "NICKNAMES", "BY_NAME", "UNSUPPORTED"]

Syntax = Literal["none", "cuts", "fractions", "floats", "gains"]
Value = Literal["float", "long", "str"]
Summary = Literal["mean", "sum", "gmean", "count", "none", "runid"]

STD_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
TENTHS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure (see the module doc)."""

    name: str
    metric: str  # rankscope registry name ('' for runid / num_q)
    syntax: Syntax = "none"
    default: tuple[float, ...] = ()
    param: str = ""  # rankscope parameter the value(s) go to
    value: Value = "float"
    summary: Summary = "mean"
    per_query: bool = True


CATALOG: tuple[TrecMeasure, ...] = (
    TrecMeasure("runid", "", value="str", summary="runid", per_query=False),
    TrecMeasure("num_q", "num_q", value="long", summary="count", per_query=False),
    TrecMeasure("num_ret", "num_ret", value="long", summary="sum"),
    TrecMeasure("num_rel", "num_rel", value="long", summary="sum"),
    TrecMeasure("num_rel_ret", "num_rel_ret", value="long", summary="sum"),
    TrecMeasure("map", "map"),
    TrecMeasure("gm_map", "gm_map", summary="gmean", per_query=False),
    TrecMeasure("Rprec", "r_precision"),
    TrecMeasure("bpref", "bpref"),
    TrecMeasure("recip_rank", "mrr"),
    TrecMeasure("iprec_at_recall", "iprec_at_recall", "fractions", TENTHS, "recall"),
    TrecMeasure("P", "precision", "cuts", STD_CUTS),
    TrecMeasure("relstring", "relstring", "floats", (10,), "length", value="str", summary="none"),
    TrecMeasure("recall", "recall", "cuts", STD_CUTS),
    TrecMeasure("infAP", "infap"),
    TrecMeasure("gm_bpref", "gm_bpref", summary="gmean", per_query=False),
    TrecMeasure("Rprec_mult", "rprec_mult", "fractions", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0), "mult"),
    TrecMeasure("utility", "utility", "floats", (1.0, -1.0, 0.0, 0.0), "a,b,c,d"),
    TrecMeasure("11pt_avg", "iprec_11pt", "floats", TENTHS, "levels"),
    TrecMeasure("binG", "bing"),
    TrecMeasure("G", "g", "gains", param="gains"),
    TrecMeasure("ndcg", "ndcg", "gains", param="gains"),
    TrecMeasure("ndcg_rel", "ndcg_rel", "gains", param="gains"),
    TrecMeasure("Rndcg", "rndcg", "gains", param="gains"),
    TrecMeasure("ndcg_cut", "ndcg", "cuts", STD_CUTS),
    TrecMeasure("map_cut", "map", "cuts", STD_CUTS),
    TrecMeasure("relative_P", "relative_precision", "cuts", STD_CUTS),
    TrecMeasure("success", "success", "cuts", (1, 5, 10)),
    TrecMeasure("set_P", "set_precision"),
    TrecMeasure("set_relative_P", "set_relative_precision"),
    TrecMeasure("set_recall", "set_recall"),
    TrecMeasure("set_map", "set_map"),
    TrecMeasure("set_F", "set_f", "floats", (1.0,), "beta"),
    TrecMeasure("num_nonrel_judged_ret", "num_nonrel_judged_ret", value="long", summary="sum"),
)

BY_NAME = {m.name: m for m in CATALOG}

_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
             "recip_rank", "iprec_at_recall", "P")
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _OFFICIAL,
    "all_trec": tuple(m.name for m in CATALOG),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
            "set_relative_P", "set_map", "set_F"),
}

# measures trec_eval 9.0.8 knows that need other input formats (-R prefs / qrels_jg)
UNSUPPORTED = frozenset({
    "all_prefs", "prefs", "qrels_jg", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
    "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret",
    "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
    "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap",
})
