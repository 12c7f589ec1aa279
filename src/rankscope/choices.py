"""The allowed values of rankscope's settings, declared once.

Each setting is one ``str`` enum: the command line takes it as an option type
(``rankscope.cli.options``), the HTTP service as a field type
(``rankscope.service.api``), and the library validates against the tuple of its
values (:data:`TESTS`, :data:`CORRECTIONS`, :data:`LANGS`, and the policies of
:mod:`rankscope.engine.policies`), so no surface accepts a value another one
refuses.  Library signatures are typed with the ``Literal`` spelling of the
policies (``MissingPolicy`` ...), which a test keeps equal to the enums.

>>> TESTS, CORRECTIONS, LANGS
(('t', 'wilcoxon', 'randomization', 'tukey-hsd'), ('holm', 'bonferroni', 'bh', 'none'), ('en', 'zh'))
>>> DEFAULT_METRICS
('ndcg@10', 'map', 'mrr', 'recall@100', 'precision@10', 'hit_rate@10')
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

__all__ = [
    "PairedTest", "TESTS", "MaxDropTest", "Correction", "CORRECTIONS", "Lang", "LANGS", "Missing", "MISSING_POLICIES",
    "ScorePrecision", "SCORE_PRECISIONS", "Duplicates", "DUPLICATE_POLICIES", "TieBreak", "TIE_BREAKS",
    "Unjudged", "UNJUDGED_POLICIES", "MissingPolicy", "ScorePrecisionValue", "DuplicatePolicy", "TieBreakValue",
    "UnjudgedPolicy", "DEFAULT_METRICS", "JUDGED_K",
]


def _values(choice: type[Enum]) -> tuple[str, ...]:
    return tuple(str(m.value) for m in choice)


class PairedTest(str, Enum):
    """Significance tests: paired t, Wilcoxon signed-rank, randomization (sign flips), randomized Tukey HSD."""

    t = "t"
    wilcoxon = "wilcoxon"
    randomization = "randomization"
    tukey_hsd = "tukey-hsd"  # all systems at once (stats.tukey)


class MaxDropTest(str, Enum):
    """Tests of a maximum-drop (non-inferiority) check (:data:`rankscope.stats.noninferiority.NON_INFERIORITY_TESTS`).

    ``wilcoxon`` is accepted only to be refused with the reason (it does not test the mean).
    """

    t = "t"
    randomization = "randomization"
    bootstrap = "bootstrap"
    wilcoxon = "wilcoxon"


class Correction(str, Enum):
    """Multiple-comparison corrections: Holm, Bonferroni, Benjamini–Hochberg, none."""

    holm = "holm"
    bonferroni = "bonferroni"
    bh = "bh"
    none = "none"


class Lang(str, Enum):
    """Languages of reports, explanations and the dashboard."""

    en = "en"
    zh = "zh"


class Missing(str, Enum):
    """A qrels query absent from a run: scores as an empty ranking (``zero``) or is left out (``ignore``)."""

    zero = "zero"
    ignore = "ignore"


class ScorePrecision(str, Enum):
    """Precision of run scores when ranking: ``float32`` as trec_eval 9.0.8 (a C ``float``), or full ``float64``."""

    float32 = "float32"
    float64 = "float64"


class Duplicates(str, Enum):
    """A (query, doc) pair given twice in a run: an error, or the best-ranked occurrence is kept."""

    error = "error"
    keep_best = "keep_best"


class TieBreak(str, Enum):
    """Equal scores: ordered by doc id descending in byte order (trec_eval's ``strcmp``)."""

    doc_id_desc = "doc_id_desc"


class Unjudged(str, Enum):
    """Unjudged retrieved documents: kept as non-relevant (``keep``), or removed before ranking (``condense``,
    Sakai's condensed lists; trec_eval ``-J``)."""

    keep = "keep"
    condense = "condense"


TESTS = _values(PairedTest)
CORRECTIONS = _values(Correction)
LANGS = _values(Lang)
MISSING_POLICIES = _values(Missing)
SCORE_PRECISIONS = _values(ScorePrecision)
DUPLICATE_POLICIES = _values(Duplicates)
TIE_BREAKS = _values(TieBreak)
UNJUDGED_POLICIES = _values(Unjudged)

# the same values for type checkers (tests/test_grammar_and_results.py keeps them equal to the enums)
MissingPolicy = Literal["zero", "ignore"]
ScorePrecisionValue = Literal["float32", "float64"]
DuplicatePolicy = Literal["error", "keep_best"]
TieBreakValue = Literal["doc_id_desc"]
UnjudgedPolicy = Literal["keep", "condense"]

DEFAULT_METRICS: tuple[str, ...] = ("ndcg@10", "map", "mrr", "recall@100", "precision@10", "hit_rate@10")
"""The metrics computed when none is named (library, command line and service)."""

JUDGED_K = 10
"""Every evaluation reports judged@k at this depth (``EvaluationResult.judged``), as ir_measures' ``Judged@10``."""
