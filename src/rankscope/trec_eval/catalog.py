"""trec_eval 9.0.8's measure table: the order it prints in, its nicknames, what it has that we refuse.

What each measure is and how its ``-m name.PARAMS`` text reads is declared by
the metric families themselves (:class:`rankscope.measures.base.TrecName`);
this module only holds what belongs to trec_eval's command line as a whole.
Measures print in :data:`ORDER` whatever the order of ``-m`` flags.
"""

from __future__ import annotations

__all__ = ["ORDER", "NICKNAMES", "UNSUPPORTED", "RUNID"]

RUNID = "runid"  # printed in the summary only: the run's tag, not a measure

ORDER: tuple[str, ...] = (
    RUNID, "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret",
)

_OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
             "recip_rank", "iprec_at_recall", "P")
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _OFFICIAL,
    "all_trec": ORDER,
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
