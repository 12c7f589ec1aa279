"""Statistics for paired comparisons of retrieval runs (numpy; scipy imported lazily).

- :mod:`~rankscope.stats.paired`: paired t, Wilcoxon signed-rank and randomization tests,
  vectorized over many comparisons;
- :mod:`~rankscope.stats.bootstrap`: paired bootstrap confidence intervals;
- :mod:`~rankscope.stats.corrections`: Holm, Bonferroni, Benjamini–Hochberg;
- :mod:`~rankscope.stats.effect`: relative improvement, paired Cohen's d, win/tie/loss;
- :mod:`~rankscope.stats.power`: queries needed to detect a difference.
"""

from rankscope.stats.bootstrap import bootstrap_means, percentile_ci
from rankscope.stats.corrections import CORRECTIONS, adjust, reject
from rankscope.stats.effect import cohen_d_paired, relative_improvement, win_tie_loss
from rankscope.stats.paired import TESTS, paired_t, randomization, wilcoxon
from rankscope.stats.power import estimate, power_of, queries_needed

__all__ = [
    "TESTS",
    "CORRECTIONS",
    "paired_t",
    "wilcoxon",
    "randomization",
    "bootstrap_means",
    "percentile_ci",
    "adjust",
    "reject",
    "relative_improvement",
    "cohen_d_paired",
    "win_tie_loss",
    "power_of",
    "queries_needed",
    "estimate",
]
