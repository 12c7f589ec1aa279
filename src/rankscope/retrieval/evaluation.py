"""What :func:`~rankscope.retrieval.runner.evaluate_retriever` returns: :class:`RetrieverEvaluation`.

One shape whatever the options: two levels, ``"retrieved"`` (the ids as the
retriever returned them: chunks or documents) and ``"document"`` (after
folding chunks into documents with ``chunk_to_doc``; the same ranking as
``"retrieved"`` without it).  A level that nothing judges (document
judgments and chunk hits without answers, or answer matching on hits without
text) is *not judged*: its means are ``None``, never 0, and ``coverage`` says
how many queries each level judged.

Everything that changes what is measured is a :class:`Notice` in
``warnings``: shown by ``repr``, :meth:`RetrieverEvaluation.summary`,
:meth:`~RetrieverEvaluation.to_dict` and issued as :class:`RetrieverWarning`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.data.run import Run
from rankscope.engine.result import EvaluationResult
from rankscope.errors import InvalidParameterError, Message, RankscopeWarning
from rankscope.i18n import NC_, _, gettext, ngettext, say
from rankscope.retrieval.unknown import UnknownIds

__all__ = ["RetrieverEvaluation", "RetrieverWarning", "Notice", "Failure", "LEVELS"]

LEVELS = ("retrieved", "document")


class RetrieverWarning(RankscopeWarning):
    """Something changed what a retriever evaluation measures (failures, empty rankings, ...)."""


class UnknownIdsWarning(RetrieverWarning):
    """Many retrieved ids occur in neither the judgments nor the corpus (likely an id mismatch)."""


#: the words of :meth:`RetrieverEvaluation.summary`: where relevance comes from, who judged a level, the levels
_WORDS: dict[str, dict[str, str]] = {
    "from": {"qrels": NC_("relevance from", "qrels"), "answers": NC_("relevance from", "answers"),
             "spans": NC_("relevance from", "spans")},
    "by": {"qrels": NC_("judged by", "qrels"), "answers": NC_("judged by", "answers"),
           "spans": NC_("judged by", "spans")},
    "level": {"retrieved": NC_("summary level", "retrieved"), "document": NC_("summary level", "document")},
}
_WORD_CONTEXTS = {"from": "relevance from", "by": "judged by", "level": "summary level"}


@dataclass(frozen=True)
class Notice:
    """One warning of an evaluation: a stable ``code`` and the message shown to people.

    Codes: ``testset`` (reading the test set), ``relevance`` (where judgments come from),
    ``unscored`` (queries not run), ``failed``, ``empty``, ``fewer_hits``, ``duplicates``,
    ``not_judged``, ``scores_replaced``, ``ties``, ``cutoff``, ``unknown_ids``, ``nothing_judged`` (no
    retrieved id is judged: the likely cause and an example of each side), ``mostly_unjudged`` (judged@10 < 0.5).
    """

    code: str
    said: Any  # a Message, or anything that says itself (a test set's finding, a warning)

    @property
    def message(self) -> str:
        """The English sentence."""
        return str(self.said)

    def __str__(self) -> str:
        return self.message

    def warning(self) -> RetrieverWarning:
        """The notice as the warning issued."""
        kind = UnknownIdsWarning if self.code == "unknown_ids" else RetrieverWarning
        return kind(self.said if isinstance(self.said, (Message, str)) else _("{said}", said=self.said))

    def text(self, lang: str = "en") -> str:
        """The notice as one sentence in ``lang``."""
        return str(say(self.said, lang))


@dataclass(frozen=True)
class Failure:
    """A query whose every attempt failed: the last exception's type, message and traceback text."""

    query_id: str
    query: str
    error_type: str
    message: str
    traceback: str
    attempts: int

    def to_dict(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "query": self.query, "error_type": self.error_type,
                "message": self.message, "traceback": self.traceback, "attempts": self.attempts}


@dataclass
class RetrieverEvaluation:
    """The outcome of running a retriever over a test set.

    ``result``
        the metrics of the ranking as retrieved (level ``"retrieved"``);
    ``run``
        that ranking as a :class:`~rankscope.data.Run`, with the retriever's own scores (failed
        queries have no rows); ``write_trec_run(ev.run, path)`` writes it;
    ``doc_result`` / ``doc_run``
        the document level: after folding chunks with ``chunk_to_doc``, else ``result`` / ``run``;
    ``judged_by``
        per level, where its judgments come from: ``"qrels"``, ``"answers"`` or ``None`` (not judged);
    ``coverage``
        per level, how many queries it judged;
    ``latencies``, ``latency_kind``
        seconds per query; ``"per query"`` when each call was timed, ``"batch average"`` when a
        batch's time was shared by its queries (no percentiles then);
    ``errors`` / ``failures``
        query id -> ``"Type: message"`` / :class:`Failure` for queries that failed every attempt
        (scored as empty rankings);
    ``duplicates``, ``empty``
        repeated ids dropped per query; how many queries returned no hit;
    ``warnings``
        every :class:`Notice`;
    ``relevance``
        ``"qrels"`` or ``"answers"``; ``from_cache`` queries whose answers came from the cache (not run),
        ``cache_checked`` cached queries asked again to check the cache (their fresh answers are used);
        ``retries`` extra attempts per query;
    ``options``
        the :class:`~rankscope.retrieval.options.RetrieverOptions` the evaluation ran with.
    """

    result: EvaluationResult
    run: Run
    latencies: dict[str, float]
    errors: dict[str, str]
    doc_result: EvaluationResult | None = None
    unknown_ids: UnknownIds = field(default_factory=UnknownIds)
    doc_run: Run | None = None
    relevance: str = "qrels"
    k: int = 10
    from_cache: int = 0
    retries: dict[str, int] = field(default_factory=dict)
    judged_by: dict[str, str | None] = field(default_factory=lambda: {"retrieved": "qrels", "document": "qrels"})
    coverage: dict[str, int] = field(default_factory=dict)
    latency_kind: str = "per query"
    failures: dict[str, Failure] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)
    empty: int = 0
    warnings: list[Notice] = field(default_factory=list)
    queries: int = 0
    cache_checked: int = 0
    options: Any = None
    stopped: Any = None  # how an evaluation with stop_when stopped (rankscope.stats.betting.Stopped)

    def __post_init__(self) -> None:
        if self.doc_result is None:
            self.doc_result = self.result
        if self.doc_run is None:
            self.doc_run = self.run

    @property
    def chunk_relevance(self) -> str | None:
        """Where the judgments of the retrieved level come from (``None``: not judged)."""
        return self.judged_by.get("retrieved")

    # -- latency --------------------------------------------------------------------
    def _latency_values(self) -> np.ndarray:
        return np.fromiter(self.latencies.values(), dtype=np.float64, count=len(self.latencies))

    def latency_percentile(self, q: float) -> float:
        """The ``q``-th percentile (0-100, linear interpolation) of per-query latency in seconds.

        NaN when no query succeeded; an error when latency is a batch average (no per-query times).
        """
        if not 0 <= q <= 100:
            raise InvalidParameterError(_("latency percentile must be within [0, 100], got {value!r}", value=q))
        if self.latency_kind != "per query":
            raise InvalidParameterError(_("latency is a batch average (a batch's time shared by its queries): "
                                          "there is no per-query percentile; evaluate with batch_size=1 to time "
                                          "each query"))
        values = self._latency_values()
        return float(np.percentile(values, q)) if len(values) else float("nan")

    def latency_summary(self) -> dict[str, float]:
        """Per query: mean, p50, p95, p99 and max seconds; batch average: the mean only."""
        values = self._latency_values()
        if not len(values):
            return {}
        if self.latency_kind != "per query":
            return {"mean": float(values.mean())}
        return {"mean": float(values.mean()), "p50": self.latency_percentile(50),
                "p95": self.latency_percentile(95), "p99": self.latency_percentile(99), "max": float(values.max())}

    # -- metrics --------------------------------------------------------------------
    def levels(self) -> dict[str, EvaluationResult | None]:
        """``{"retrieved": result, "document": doc_result}``; ``None`` for a level that is not judged."""
        results = {"retrieved": self.result, "document": self.doc_result}
        return {level: results[level] if self.judged_by.get(level) else None for level in LEVELS}

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(self.result.labels)

    def mean(self) -> dict[str, dict[str, float | None]]:
        """Mean of each metric at each level: ``{"retrieved": {...}, "document": {...}}``, always both
        levels and every metric; ``None`` where the level is not judged."""
        out: dict[str, dict[str, float | None]] = {}
        for level, res in self.levels().items():
            out[level] = dict(res.mean()) if res is not None else dict.fromkeys(self.labels)
        return out

    @property
    def primary(self) -> EvaluationResult:
        """The result a comparison uses: the document level when judged, else the retrieved level."""
        levels = self.levels()
        res = levels["document"] or levels["retrieved"]
        if res is None:
            raise InvalidParameterError(_("{run}: no level of this evaluation is judged (see its warnings), "
                                          "nothing to compare", run=self.run.name))
        return res

    def failures_table(self) -> Any:
        """The failed queries as a ``pyarrow.Table``: query_id, query, error_type, message, traceback, attempts."""
        import pyarrow as pa

        rows = [f.to_dict() for f in self.failures.values()]
        cols = ("query_id", "query", "error_type", "message", "traceback", "attempts")
        return pa.table({c: pa.array([r[c] for r in rows], type=pa.int64() if c == "attempts" else pa.string())
                         for c in cols})

    # -- outputs --------------------------------------------------------------------
    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        """A JSON-ready summary: metrics per level (``null`` when not judged), coverage, latency, warnings,
        failures, unknown ids."""
        levels = {level: (res.to_dict(per_query=per_query) if res is not None else None)
                  for level, res in self.levels().items()}
        return {
            "run": self.run.name,
            "k": self.k,
            "queries": self.queries,
            "relevance": self.relevance,
            "judged_by": dict(self.judged_by),
            "coverage": dict(self.coverage),
            "levels": levels,
            "means": self.mean(),
            "latency_seconds": {"kind": self.latency_kind, **self.latency_summary()},
            "warnings": [{"code": w.code, "message": w.message} for w in self.warnings],
            "errors": dict(sorted(self.errors.items())),
            "failures": [f.to_dict() for f in self.failures.values()],
            "retried": dict(sorted(self.retries.items())),
            "duplicates": dict(sorted(self.duplicates.items())),
            "empty_rankings": self.empty,
            "unknown_ids": self.unknown_ids.to_dict(),
            "from_cache": self.from_cache,
            "cache_checked": self.cache_checked,
            "options": None if self.options is None else self.options.to_dict(),
            "stopped": None if self.stopped is None else self.stopped.to_dict(),
        }

    def _latency_text(self, lang: str = "en") -> str:

        summary = self.latency_summary()
        if not summary:
            return gettext("no latency", lang)
        if self.latency_kind != "per query":
            return _("latency {mean} ms/query (batch average)", mean=f"{summary['mean'] * 1000:.1f}").text(lang)
        p50, p95 = (f"{summary[q] * 1000:.1f}" for q in ("p50", "p95"))
        return _("p50 latency {p50} ms, p95 {p95} ms", p50=p50, p95=p95).text(lang)

    def _cache_text(self) -> Message:
        """How many answers came from the cache (and how many cached queries were asked again)."""
        if self.cache_checked:
            return _("{answers} from the cache ({checked} cached queries asked again: the same answers)",
                     answers=ngettext("{n} answer", "{n} answers", self.from_cache),
                     checked=self.cache_checked)
        return _("{answers} from the cache", answers=ngettext("{n} answer", "{n} answers", self.from_cache))

    def _shown_levels(self) -> dict[str, dict[str, float | None]]:
        """The levels people see: both when chunks were folded, else one (they are the same ranking)."""
        means = self.mean()
        return means if self.doc_run is not self.run else {"retrieved": means["retrieved"]}

    def summary(self, lang: str = "en") -> str:
        """A few lines for people, in ``lang``: the metrics per level (with coverage), latency, then every warning."""
        def said(key: str, value: str | None) -> str:
            word = _WORDS[key].get(str(value))
            return str(value) if word is None else gettext(word, lang, context=_WORD_CONTEXTS[key])

        lines = [_("{run}: {queries} scored, k={k}, relevance from {relevance}", run=self.run.name,
                   queries=ngettext("{n} query", "{n} queries", self.queries), k=self.k,
                   relevance=said("from", self.relevance)).text(lang)]
        for level, means in self._shown_levels().items():
            judged = self.judged_by.get(level)
            if judged is None:
                lines.append(_("  {level}: not judged", level=said("level", level)).text(lang))
                continue
            cells = ", ".join(f"{m}={v:.4f}" for m, v in means.items() if v is not None)
            lines.append(_("  {level} ({judged}, {n} queries): {cells}", level=said("level", level),
                           judged=said("by", judged), n=self.coverage.get(level, 0), cells=cells).text(lang))
        lines.append(_("  {latency}; {failed} failed; {cached}", latency=self._latency_text(lang),
                       failed=len(self.errors), cached=self._cache_text()).text(lang))
        if self.stopped is not None:
            lines.append(self.stopped.text(lang))
        # the answers from the cache are said on the line above, in every summary
        lines += ["  " + _("warning: {text}", text=w.text(lang)).text(lang)
                  for w in self.warnings if w.code != "from_cache"]
        return "\n".join(lines)

    def __repr__(self) -> str:
        parts = []
        for level, means in self._shown_levels().items():
            if self.judged_by.get(level) is None:
                parts.append(f"{level} not judged")
            else:
                parts.append(level + " " + ", ".join(f"{k}={v:.4f}" for k, v in means.items() if v is not None))
        warn = "".join(f"; warning: {w.message}" for w in self.warnings if w.code != "from_cache")
        return (f"RetrieverEvaluation({self.run.name!r}: {'; '.join(parts)}; {self._latency_text()}; "
                f"{len(self.errors)} failed; {self._cache_text()}{warn})")
