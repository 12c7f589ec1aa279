"""Interpretation of metric values: rating bands, scenario presets, plain-language explanations.

The bands, advice, scenario presets, benchmark figures and production standards are
kept in data files next to this package (``bands.json``, ``presets.json``); every
text is said in the reader's language through the catalog of :mod:`rankscope.i18n`.
"""

from rankscope.interpret.analysis import (
    biggest_differences,
    failing_queries,
    first_relevant_ranks,
    summarize_first_ranks,
)
from rankscope.interpret.bands import Band, Rating, band_table, rate
from rankscope.interpret.explain import explain, explain_result
from rankscope.interpret.i18n import LANGS, check_lang
from rankscope.interpret.presets import (
    Scenario,
    get_scenario,
    scenario_names,
    standard_names,
    standard_requirements,
)

__all__ = [
    "LANGS",
    "Band",
    "Rating",
    "Scenario",
    "band_table",
    "biggest_differences",
    "check_lang",
    "explain",
    "explain_result",
    "failing_queries",
    "first_relevant_ranks",
    "get_scenario",
    "rate",
    "scenario_names",
    "standard_names",
    "standard_requirements",
    "summarize_first_ranks",
]
