"""The allowed values of rankscope's settings, declared once.

Each setting is a ``Literal`` type (what the library's signatures, the service's
schemas and the command line's choices are typed with) and the tuple of its
values (what validation and error messages list).  The library
(:mod:`rankscope.engine.policies`, :mod:`rankscope.comparison`,
:mod:`rankscope.stats`, :mod:`rankscope.interpret`), the command line
(``rankscope.cli.options``) and the HTTP service (``rankscope.service.api``) all
read them from here, so no surface accepts a value another one refuses.

>>> TESTS, CORRECTIONS, LANGS
(('t', 'wilcoxon', 'randomization'), ('holm', 'bonferroni', 'bh', 'none'), ('en', 'zh'))
>>> DEFAULT_METRICS
('ndcg@10', 'map', 'mrr', 'recall@100', 'precision@10', 'hit_rate@10')
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "PairedTest", "TESTS", "Correction", "CORRECTIONS", "Lang", "LANGS", "MissingPolicy", "MISSING_POLICIES",
    "ScorePrecision", "SCORE_PRECISIONS", "DuplicatePolicy", "DUPLICATE_POLICIES", "TieBreak", "TIE_BREAKS",
    "DEFAULT_METRICS",
]

PairedTest = Literal["t", "wilcoxon", "randomization"]
"""Paired significance tests: Student's t, Wilcoxon signed-rank, randomization (sign flips)."""
TESTS: tuple[str, ...] = get_args(PairedTest)

Correction = Literal["holm", "bonferroni", "bh", "none"]
"""Multiple-comparison corrections: Holm, Bonferroni, Benjamini–Hochberg, none."""
CORRECTIONS: tuple[str, ...] = get_args(Correction)

Lang = Literal["en", "zh"]
"""Languages of reports, explanations and the dashboard."""
LANGS: tuple[str, ...] = get_args(Lang)

MissingPolicy = Literal["zero", "ignore"]
"""A qrels query absent from a run: scores as an empty ranking (``zero``) or is left out (``ignore``)."""
MISSING_POLICIES: tuple[str, ...] = get_args(MissingPolicy)

ScorePrecision = Literal["float32", "float64"]
"""Precision of run scores when ranking: ``float32`` as trec_eval 9.0.8 (a C ``float``), or full ``float64``."""
SCORE_PRECISIONS: tuple[str, ...] = get_args(ScorePrecision)

DuplicatePolicy = Literal["error", "keep_best"]
"""A (query, doc) pair given twice in a run: an error, or the best-ranked occurrence is kept."""
DUPLICATE_POLICIES: tuple[str, ...] = get_args(DuplicatePolicy)

TieBreak = Literal["doc_id_desc"]
"""Equal scores: ordered by doc id descending in byte order (trec_eval's ``strcmp``)."""
TIE_BREAKS: tuple[str, ...] = get_args(TieBreak)

DEFAULT_METRICS: tuple[str, ...] = ("ndcg@10", "map", "mrr", "recall@100", "precision@10", "hit_rate@10")
"""The metrics computed when none is named (library, command line and service)."""
