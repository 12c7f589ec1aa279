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

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from enum import Enum
from typing import Literal

from rankscope.i18n import NC_, _, gettext

__all__ = [
    "PairedTest", "TESTS", "MaxDropTest", "Correction", "CORRECTIONS", "Lang", "LANGS", "Missing", "MISSING_POLICIES",
    "ScorePrecision", "SCORE_PRECISIONS", "Duplicates", "DUPLICATE_POLICIES", "TieBreak", "TIE_BREAKS",
    "Unjudged", "UNJUDGED_POLICIES", "MissingPolicy", "ScorePrecisionValue", "DuplicatePolicy", "TieBreakValue",
    "UnjudgedPolicy", "DEFAULT_METRICS", "default_metrics", "JUDGED_K", "resolve_lang", "speaking", "TERMS", "term",
    "Term",
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

    betting = "betting"
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

# the same values for type checkers (tests/measures/test_grammar_and_results.py keeps them equal to the enums)
MissingPolicy = Literal["zero", "ignore"]
ScorePrecisionValue = Literal["float32", "float64"]
DuplicatePolicy = Literal["error", "keep_best"]
TieBreakValue = Literal["doc_id_desc"]
UnjudgedPolicy = Literal["keep", "condense"]

DEFAULT_METRICS: tuple[str, ...] = ("ndcg@10", "map", "mrr", "recall@100", "precision@10", "hit_rate@10")
"""The metrics computed when none is named (library, command line and service; :func:`default_metrics`
lowers their cutoffs to the documents a live retriever is asked for)."""


def default_metrics(k: int | None = None) -> list[str]:
    """:data:`DEFAULT_METRICS`, each cutoff above ``k`` lowered to ``k`` (a retriever asked for ``k`` documents
    returns no more, and a deeper cutoff would score empty ranks); all of them when ``k`` is None.

    >>> default_metrics(), default_metrics(5)  # doctest: +NORMALIZE_WHITESPACE
    (['ndcg@10', 'map', 'mrr', 'recall@100', 'precision@10', 'hit_rate@10'],
     ['ndcg@5', 'map', 'mrr', 'recall@5', 'precision@5', 'hit_rate@5'])
    """
    out = []
    for name in DEFAULT_METRICS:
        base, at, cutoff = name.partition("@")
        out.append(f"{base}@{min(int(cutoff), k)}" if at and k is not None else name)
    return out

JUDGED_K = 10
"""Every evaluation reports judged@k at this depth (``EvaluationResult.judged``), as ir_measures' ``Judged@10``."""


#: the language a command speaks while it runs (its --lang): see :func:`speaking`
_SPOKEN: ContextVar[str | None] = ContextVar("rankscope_lang", default=None)


@contextmanager
def speaking(lang: str | Lang | None) -> Iterator[str]:
    """Within the block, :func:`resolve_lang` without a language of its own says ``lang`` (resolved as usual, so
    ``None`` is the default): a command's ``--lang`` reaches what the library says for it (a progress bar's label,
    a note) without being passed down.

    >>> with speaking("zh"):
    ...     resolve_lang(), resolve_lang("en")
    ('zh', 'en')
    """
    token = _SPOKEN.set(resolve_lang(lang))
    try:
        yield _SPOKEN.get() or "en"
    finally:
        _SPOKEN.reset(token)


def resolve_lang(lang: str | Lang | None = None) -> str:
    """The language of prose output: ``lang`` when given, else the language of the command running
    (:func:`speaking`), else ``RANKSCOPE_LANG``, else Chinese for a ``zh_*`` locale (the first of ``LC_ALL``,
    ``LC_MESSAGES``, ``LANG`` that is set, as gettext reads them), else English.

    Every surface (command line, notebook displays, reports) asks this one function.

    >>> resolve_lang("zh"), resolve_lang(Lang.en)
    ('zh', 'en')
    """
    from rankscope.errors import InvalidParameterError, Items

    spoken = _SPOKEN.get()
    if lang is None and spoken is not None:
        return spoken
    if lang is None:
        env = os.environ.get("RANKSCOPE_LANG", "").strip().lower().replace("-", "_")
        if env:
            lang = env.split("_")[0]
            if lang not in LANGS:
                raise InvalidParameterError(_("RANKSCOPE_LANG must be one of {langs}, got {value!r}",
                                              langs=", ".join(LANGS), value=env))
            return lang
        for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
            value = os.environ.get(var, "")
            if value:
                return "zh" if value.lower().startswith("zh") else "en"
        return "en"
    value = str(lang.value if isinstance(lang, Enum) else lang)
    if value not in LANGS:
        langs = Items(LANGS)
        raise InvalidParameterError(_("lang must be one of {langs}, got {value!r}", langs=langs, value=value))
    return value


#: The values a Chinese sentence names by a term, with the English name a reader would search for in parentheses
#: (``Holm 校正（holm）``, :func:`term`); English sentences show the value itself.  The values of the enums above
#: (tests, corrections, policies) and the other names a verdict states (sidedness, interval method); ``setting=value``
#: where the value alone is ambiguous.  Each is translated in the catalog's context ``term``.
TERMS: tuple[str, ...] = (
    # tests (PairedTest, MaxDropTest)
    NC_("term", "t"),
    NC_("term", "wilcoxon"),
    NC_("term", "randomization"),
    NC_("term", "tukey-hsd"),
    NC_("term", "bootstrap"),
    NC_("term", "betting"),
    # corrections
    NC_("term", "holm"),
    NC_("term", "bonferroni"),
    NC_("term", "bh"),
    NC_("term", "none"),
    # missing queries
    NC_("term", "missing=zero"),
    NC_("term", "missing=ignore"),
    # score precision, duplicates, ties
    NC_("term", "float32"),
    NC_("term", "float64"),
    NC_("term", "error"),
    NC_("term", "keep_best"),
    NC_("term", "doc_id_desc"),
    # unjudged documents
    NC_("term", "unjudged=keep"),
    NC_("term", "unjudged=condense"),
    # sidedness
    NC_("term", "two-sided"),
    NC_("term", "one-sided"),
    NC_("term", "greater"),
    NC_("term", "less"),
)


def term(value: object, lang: str = "en", setting: str | None = None) -> str:
    """``value`` as a sentence in ``lang`` names it: itself in English, the :data:`TERMS` entry in Chinese.

    ``setting`` names the option when the value alone is ambiguous (``missing``: ``zero`` / ``ignore``).

    >>> term("holm", "zh"), term("holm", "en"), term("zero", "zh", "missing")
    ('Holm 校正（holm）', 'holm', '缺失查询计零（missing=zero）')
    >>> term("an-unknown-value", "zh")
    'an-unknown-value'
    """
    text = str(getattr(value, "value", value))
    if lang == "en":
        return text
    key = next((k for k in (f"{setting}={text}" if setting else text, text) if k in TERMS), None)
    return text if key is None else gettext(key, lang, context="term")


@dataclass(frozen=True)
class Term:
    """A setting's value inside a message: Python's ``repr`` in English (what an f-string's ``{value!r}``
    says), its :data:`TERMS` entry in Chinese (``setting`` as in :func:`term`), the ``repr`` again for a value with
    no term (a typo is shown as typed).

    >>> Term("bh").text("en"), Term("bh").text("zh")
    ("'bh'", 'Benjamini–Hochberg 校正（bh）')
    >>> f"correction {Term('bh')}", Term("an-unknown-value").text("zh")
    ("correction 'bh'", "'an-unknown-value'")
    """

    value: object
    setting: str | None = None

    def text(self, lang: str = "en") -> str:
        if lang != "en":
            text = str(getattr(self.value, "value", self.value))
            if text in TERMS or f"{self.setting}={text}" in TERMS:
                return term(text, lang, self.setting)
        return repr(self.value)

    def __str__(self) -> str:
        return self.text("en")

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)
