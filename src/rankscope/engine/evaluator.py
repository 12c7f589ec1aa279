"""Score runs against qrels: :class:`Evaluator` and :func:`evaluate`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from rankscope.choices import DEFAULT_METRICS, DuplicatePolicy, MissingPolicy, ScorePrecisionValue, UnjudgedPolicy
from rankscope.engine.ceilings import CeilingMeans, Ceilings
from rankscope.engine.judged import JudgedAtK, judged_at_k
from rankscope.engine.policies import Policies
from rankscope.engine.prepare import PolicyCounts, QrelsIndex, prepare
from rankscope.engine.result import EvaluationResult, PerQueryScores
from rankscope.engine.scoring import score
from rankscope.errors import EmptyInputError, InvalidParameterError, RankscopeWarning
from rankscope.i18n import _
from rankscope.measures.base import Measure
from rankscope.measures.parse import parse_metric, parse_metrics

__all__ = ["Evaluator", "evaluate", "DEFAULT_METRICS", "DIAGNOSTICS"]

DIAGNOSTICS: tuple[str, ...] = ("first_rel_rank",)
"""Measures an evaluation asked for ``diagnostics`` also keeps per query (``EvaluationResult.diagnostics``)."""


class Evaluator:
    """Qrels prepared once, scored against many runs.

    Parameters
    ----------
    qrels : Qrels (or anything :func:`rankscope.io.as_qrels` accepts)
    metrics : metric names in any of the three spellings (a comma-separated list
        in one string is fine: ``"ndcg@1,3,5,map"``), or Measure values
    relevance_level, missing, depth, score_precision, duplicates : the evaluation
        :class:`~rankscope.engine.policies.Policies` (or give ``policies``):
        minimum relevant grade (1); ``"zero"`` (every qrels query counts, one absent
        from the run scores as an empty ranking, like trec_eval ``-c``) or
        ``"ignore"``; cut every ranking after this many documents (trec_eval ``-M``);
        ``"float32"`` (rank by scores rounded to single precision, as trec_eval) or
        ``"float64"``; a (query, doc) pair repeated in a run table: ``"error"`` or
        ``"keep_best"``
    unjudged : ``"keep"`` (an unjudged document is non-relevant and keeps its rank) or ``"condense"``
        (unjudged documents are removed before ranking: Sakai's condensed lists, trec_eval ``-J``;
        see docs/conventions.md)
    diagnostics : also keep :data:`DIAGNOSTICS` per query (``result.diagnostics``), computed
        in the same pass; comparisons ask for them, so that reports read first-relevant
        ranks from the results instead of ranking the runs again
    chunking : with span judgments (:class:`~rankscope.data.spans.SpanQrels` as ``qrels``): where
        each chunk lies (:class:`~rankscope.data.chunking.Chunking`); the span measures
        (``span_recall@k`` ...) score the judged characters, the other measures score the chunk
        qrels derived with ``rule`` (see :mod:`rankscope.engine.spans`)
    rule : how chunk qrels are derived from spans: ``"any"`` (= ``"chars>=1"``, default),
        ``"chars>=N"``, ``"fraction>=F"``, ``"contains"``

    ``qrels`` may be :class:`~rankscope.data.subtopics.SubtopicQrels` (judgments per subtopic, ndeval's
    ``topic subtopic docno judgment``): the diversity measures (``alpha_ndcg@20``, ``err_ia@20`` ...)
    score them and the other measures the document qrels they derive (see
    :mod:`rankscope.engine.subtopics`); a qrels path is read in that format when a diversity measure is asked.

    ``qrels`` may also be :class:`~rankscope.labels.provenance.Labels` (labels with their origin,
    ``read_labels``): each result then counts the model labels in the run's top k
    (``result.judged.model_mean``, model@k).  Every result reports judged@10 (``result.judged``,
    :mod:`rankscope.engine.judged`).

    >>> from rankscope import Qrels, Run
    >>> ev = Evaluator(Qrels.from_dict({"q": {"a": 1}}), ["mrr"])
    >>> ev.evaluate(Run.from_ranked_lists({"q": ["x", "a"]})).mean()
    {'mrr': 0.5}
    """

    def __init__(
        self,
        qrels: Any,
        metrics: Iterable[str | Measure] | str | None = None,
        *,
        relevance_level: int = 1,
        missing: MissingPolicy = "zero",
        depth: int | None = None,
        score_precision: ScorePrecisionValue = "float32",
        duplicates: DuplicatePolicy = "error",
        unjudged: UnjudgedPolicy = "keep",
        policies: Policies | None = None,
        diagnostics: bool = False,
        chunking: Any = None,
        rule: str = "any",
    ) -> None:
        from rankscope.data.spans import SpanQrels
        from rankscope.data.subtopics import SubtopicQrels
        from rankscope.io.convert import as_qrels

        self.policies = policies if policies is not None else Policies.of(
            "Evaluator", relevance_level=relevance_level, missing=missing, depth=depth,
            score_precision=score_precision, duplicates=duplicates, unjudged=unjudged,
        )
        self.spans = None
        self.subtopics = None
        pairs = parse_metrics(DEFAULT_METRICS if metrics is None else metrics)
        diverse = [label for label, m in pairs if m.spec.family == "diversity"]
        qrels, model = _with_provenance(qrels)
        if diverse:
            from rankscope.engine.subtopics import read_as_subtopics

            qrels = read_as_subtopics(qrels)  # a qrels file asked for a diversity measure: ndeval's format
        if isinstance(qrels, SubtopicQrels):
            from rankscope.engine.subtopics import SubtopicSource

            self.subtopics = SubtopicSource(qrels)
            qrels = self.subtopics.qrels
            if self.subtopics.single_subtopic == len(self.subtopics.judgments.queries) and diverse:
                import warnings

                warnings.warn(RankscopeWarning(_("every query of the subtopic judgments has a single subtopic: "
                                                 "diversity measures then reduce to their one-intent forms; is "
                                                 "this an ordinary qrels file (its second column unused)?")),
                          stacklevel=2)
        if isinstance(qrels, SpanQrels):
            from rankscope.engine.spans import SpanSource

            self.spans = SpanSource(qrels, chunking, rule)
            qrels = self.spans.qrels
        elif chunking is not None:
            raise InvalidParameterError(_("chunking= goes with span judgments: pass SpanQrels as the qrels"))
        self.qrels = as_qrels(qrels)
        if len(self.qrels) == 0:
            raise EmptyInputError(_("the qrels hold no judgment"))
        if not pairs:
            raise InvalidParameterError(_("no metric given"))
        for label, m in pairs:
            if m.spec.text:
                trec_name = m.spec.trec[0].name if m.spec.trec else m.name
                raise InvalidParameterError(_("{label} is string-valued and has no numeric score; use `rankscope "
                                              "trec_eval -q -m {trec_name}` to see it", label=label,
                                              trec_name=trec_name))
        self.labels = tuple(label for label, __ in pairs)
        self.measures = tuple(m for __, m in pairs)
        self.diagnostics = tuple(parse_metric(d) for d in DIAGNOSTICS) if diagnostics else ()
        if self.spans is None:
            needs = [label for label, m in pairs if m.spec.family == "span"]
            if needs:
                raise InvalidParameterError(_("{label} needs span judgments: evaluate(span_qrels, run, metrics, "
                                              "chunking=chunking) (SpanQrels + Chunking), or --span-qrels and "
                                              "--chunks on the command line", label=needs[0]))
        if self.subtopics is None and diverse:
            raise InvalidParameterError(_("{label} needs subtopic judgments (query subtopic doc grade, as ndeval "
                                          "reads them), and these qrels have none: "
                                          "evaluate(read_subtopic_qrels(path), run, metrics) or pass the qrels "
                                          "file's path; on the command line --qrels with that file", label=diverse[0]))
        if self.spans is not None and self.policies.unjudged == "condense":
            raise InvalidParameterError(_("unjudged='condense' needs judgments of documents: with span judgments "
                                          "every chunk outside the judged text is unjudged, and condensing would "
                                          "drop them all"))
        self.index = QrelsIndex(self.qrels, model=model)
        self._ceilings: Ceilings | None = None  # what a perfect ranking reaches: scored on the first run

    def ceilings(self, query_ids: Any) -> dict[str, float]:
        """The mean a perfect ranking reaches on ``query_ids``, per bounded higher-is-better metric label."""
        if self._ceilings is None:
            self._ceilings = Ceilings(self.index, self.policies, self.measures)
        return {self.labels[j]: v for j, v in self._ceilings.means(query_ids).items()}

    @property
    def relevance_level(self) -> int:
        return self.policies.relevance_level

    @property
    def missing(self) -> MissingPolicy:
        return self.policies.missing

    @property
    def depth(self) -> int | None:
        return self.policies.depth

    def evaluate(
        self, run: Any, name: str | None = None, *, allow_empty: bool = False, memory_limit: int | str | None = None,
        block_rows: int | None = None,
    ) -> EvaluationResult:
        """Score one run (a :class:`Run` or anything :func:`rankscope.io.as_run` accepts).

        A run with no row is an :class:`~rankscope.errors.EmptyInputError` (a result of 0.0 would hide a
        wrong file), unless ``allow_empty``: a live retriever that returned nothing for every query
        did retrieve nothing, and its caller says so.

        A run given as a path to a TREC, Parquet or Arrow file larger than one block is
        read and scored in blocks of whole queries (:mod:`rankscope.engine.stream`): peak
        memory follows ``memory_limit`` (bytes, or ``"1GiB"``, ``"512MB"``; default
        :data:`~rankscope.engine.stream.DEFAULT_MEMORY_LIMIT`) or ``block_rows``, not the
        run's size; the result is the same as reading the run whole.
        """
        from rankscope.io.convert import as_run

        if isinstance(run, (str, Path)) and self.spans is None and self.subtopics is None:
            from rankscope.engine.stream import evaluate_path

            streamed = evaluate_path(self, run, name, memory_limit=memory_limit, block_rows=block_rows)
            if streamed is not None:
                return streamed
        run = as_run(run, name=name, duplicates=self.policies.duplicates)
        if len(run) == 0 and not allow_empty:
            raise EmptyInputError(_("the run {run!r} holds no ranking (no query with a document): there is nothing "
                                    "to score; hint: check that the run file is the one you meant, or, for a live "
                                    "retriever, that it answered", run=run.name))
        prepared, counts = prepare(self.index, run, self.policies)
        top = prepared.top_counts
        assert top is not None
        judged = judged_at_k(top, self.qrels, (prepared, run, top.top))
        data = prepared.data
        if self.spans is not None and any(m.spec.family == "span" for m in self.measures):
            data = replace(data, spans=self.spans.input_for(prepared))
        if self.subtopics is not None and any(m.spec.family == "diversity" for m in self.measures):
            data = replace(data, subtopics=self.subtopics.input_for(prepared))
        matrix = score(data, self.measures + self.diagnostics)
        return self.result(run.name, prepared.query_ids, matrix, counts, judged, run.notices)

    def result(self, run_name: str, query_ids: Any, matrix: Any, counts: PolicyCounts, judged: JudgedAtK | None,
               notices: tuple[Any, ...] = ()) -> EvaluationResult:
        """The :class:`EvaluationResult` of a ``(queries, measures + diagnostics)`` matrix from :func:`score`;
        ``judged``: judged@k of the run; ``notices``: what reading the run noticed (:mod:`rankscope.data.notices`)."""
        n_metrics = len(self.measures)
        return EvaluationResult(
            run_name=run_name,
            labels=self.labels,
            measures=self.measures,
            per_query=PerQueryScores(query_ids, self.labels, matrix[:, :n_metrics], self.measures),
            queries=counts,
            policies=self.policies,
            diagnostics=PerQueryScores(query_ids, DIAGNOSTICS, matrix[:, n_metrics:], self.diagnostics)
            if self.diagnostics else None,
            spans=self.spans.policy() if self.spans is not None else None,
            judged=judged,
            notices=notices,
            ceilings=CeilingMeans(lambda: self.ceilings(query_ids)),
        )


def _with_provenance(qrels: Any) -> tuple[Any, Any]:
    """Labels with their origin (:class:`~rankscope.labels.provenance.Labels`, or anything that holds ``qrels`` and
    says which of them a model gave by ``model_mask()``) become their qrels plus the mask of model labels; anything
    else is kept.  The engine sits below the labels: it asks for the two, it does not import the type."""
    if isinstance(qrels, WithProvenance):
        return qrels.qrels, qrels.model_mask()
    return qrels, None


@runtime_checkable
class WithProvenance(Protocol):
    """Judgments that know which were given by a model (``model_mask()``: one flag per row of ``qrels``)."""

    @property
    def qrels(self) -> Any: ...

    def model_mask(self) -> Any: ...


def evaluate(
    qrels: Any,
    run: Any,
    metrics: Iterable[str | Measure] | str | None = None,
    *,
    relevance_level: int = 1,
    missing: MissingPolicy = "zero",
    depth: int | None = None,
    score_precision: ScorePrecisionValue = "float32",
    duplicates: DuplicatePolicy = "error",
    chunking: Any = None,
    rule: str = "any",
    unjudged: UnjudgedPolicy = "keep",
    memory_limit: int | str | None = None,
    block_rows: int | None = None,
) -> EvaluationResult:
    """Score ``run`` against ``qrels`` with ``metrics`` (see :class:`Evaluator`).

    A run file (TREC, Parquet, Arrow) is scored in blocks of whole queries within
    ``memory_limit`` (or ``block_rows`` rows a block), see :meth:`Evaluator.evaluate`.

    With span judgments: ``evaluate(span_qrels, run, ["span_recall@5", "ndcg@10"], chunking=chunking)``.

    Default metrics: ``ndcg@10 map mrr recall@100 precision@10 hit_rate@10``.

    >>> from rankscope import Qrels, Run
    >>> qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}})
    >>> run = Run.from_dict({"q1": {"d1": 0.9, "d9": 0.8, "d2": 0.1}})
    >>> res = evaluate(qrels, run, ["P@2", "recall@2"])
    >>> res.mean(), res.queries.missing_from_run
    ({'P@2': 0.25, 'recall@2': 0.25}, 1)
    >>> res["precision@2"], res["P_2"]
    (0.25, 0.25)
    >>> evaluate(qrels, run, ["P@2"], missing="ignore").mean()
    {'P@2': 0.5}
    >>> evaluate(qrels, run, ["P@2"], missing="ignore", unjudged="condense").mean()  # d9 removed before ranking
    {'P@2': 1.0}
    """
    policies = Policies.of("evaluate", relevance_level=relevance_level, missing=missing, depth=depth,
                           score_precision=score_precision, duplicates=duplicates, unjudged=unjudged)
    return Evaluator(qrels, metrics, policies=policies, chunking=chunking, rule=rule).evaluate(
        run, memory_limit=memory_limit, block_rows=block_rows)
