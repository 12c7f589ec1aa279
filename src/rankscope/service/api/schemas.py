"""Request and response bodies of the HTTP API (pydantic models, published in the OpenAPI spec)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool

from rankscope.choices import DEFAULT_METRICS as _DEFAULT_METRICS
from rankscope.choices import Missing, ScorePrecision, Unjudged
from rankscope.errors import InvalidParameterError
from rankscope.i18n import _

__all__ = [
    "TestSetOut", "RunOut", "EvaluationCreate", "LiveEvaluationCreate", "EvaluationOut", "Progress",
    "EvaluationRunOut", "QueryScoreOut", "QueryScorePage", "DEFAULT_METRICS", "MAX_ID", "ErrorBody", "ErrorItem",
    "ReportPending", "Annotator", "JudgingTaskOut", "AnnotatorProgress", "JudgingItemOut", "PrelabelOut",
    "JudgmentIn", "JudgmentOut", "NextItemOut", "QueryProgressOut", "AgreementOut", "ExportOut", "AnnotatorIn",
    "AnnotatorOut", "AnnotatorInvite", "metric_name_pattern", "ANNOTATOR_PATTERN",
]

MAX_ID = 2**31 - 1
DEFAULT_METRICS = list(_DEFAULT_METRICS)  # the library's and the command line's default, declared once


def _printable(value: str) -> str:
    if any(ord(c) < 32 and c not in "\t" for c in value):
        raise InvalidParameterError(_("must not contain control characters"))
    return value


#: visible ASCII only: an international host name is written in its ``xn--`` form (no engine's idea of whitespace or
#: of IDNA is then needed to tell a valid URL); no user name or password; a port 1-65535 (what the service checks
#: beyond this: that an ``xn--`` label is valid Punycode, that a bracketed address is a valid IPv6 address)
_PORT = r"(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"
URL_PATTERN = rf"^https?://(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::{_PORT})?(?:[/?#][!-~]*)?$"
#: what the request validator itself enforces (visible ASCII after the scheme): the rest of :data:`URL_PATTERN` is
#: checked by the service, whose refusal says what is wrong ("user names or passwords in the URL are not accepted",
#: "the port must be 1-65535") where a pattern's refusal would only quote the pattern
VISIBLE_URL = r"^https?://[!-~]+$"
URL_SCHEMA: dict[str, Any] = {"pattern": URL_PATTERN}
PRINTABLE = r"^[^\x00-\x08\x0a-\x1f]*$"
Name = Annotated[str, Field(max_length=200, json_schema_extra={"pattern": PRINTABLE}), AfterValidator(_printable)]
MetricName = Annotated[str, Field(min_length=1, max_length=100), AfterValidator(_printable)]
Id = Annotated[int, Field(ge=1, le=MAX_ID)]


class _Out(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class TestSetOut(_Out):
    __test__ = False
    id: int
    name: str
    description: str
    source_format: str
    created_at: dt.datetime
    n_queries: int
    n_judgments: int
    n_documents: int
    n_documents_cut: int = Field(0, description="document texts longer than the stored length (100,000 "
                                                 "characters) that were cut at that length")


class RunOut(_Out):
    id: int
    test_set_id: int
    name: str
    source: str
    source_format: str
    created_at: dt.datetime
    n_queries: int
    n_rows: int
    n_judged: int | None = Field(description="queries of the run that have judgments in the test set")


class _Policies(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=True, validate_default=True)
    metrics: list[MetricName] = Field(default_factory=lambda: list(DEFAULT_METRICS), min_length=1, max_length=50,
                                      description="metric names (ndcg@10, P@5, ndcg_cut_10, ...)")
    relevance_level: int = Field(1, ge=-1000, le=1000, description="minimum grade that counts as relevant")
    missing: Missing = Field(Missing.zero, description="queries absent from a run: score 0, or skip")
    depth: int | None = Field(None, ge=1, le=1_000_000, description="cut every ranking after this many documents")
    score_precision: ScorePrecision = Field(
        ScorePrecision.float32, description="rank by scores rounded to float32 (trec_eval's rule) or full float64")
    unjudged: Unjudged = Field(
        Unjudged.keep, description="unjudged documents: keep (non-relevant) or condense (removed before ranking: "
                                   "condensed lists, trec_eval -J)")
    name: Name = ""


class EvaluationCreate(_Policies):
    """Score stored runs of one test set."""

    test_set_id: Id
    run_ids: list[Id] = Field(min_length=1, max_length=100)


class LiveEvaluationCreate(_Policies):
    """Ask a retriever over HTTP for every query of a test set, then score its answers."""

    test_set_id: Id
    retriever_url: str = Field(min_length=8, max_length=2000, pattern=VISIBLE_URL, json_schema_extra=URL_SCHEMA,
                               description='POSTed {"query": text, "k": k}; answers [{"id": ..., "score": ...}]')
    k: int = Field(100, ge=1, le=10_000)
    concurrency: int = Field(8, ge=1, le=64)
    retries: int = Field(2, ge=0, le=10)
    budget_seconds: float | None = Field(None, gt=0, le=7 * 86400,
                                         description="time budget of the whole job (default: the server's "
                                                     "--live-budget); queries not asked by then are stored as failed")


class Progress(BaseModel):
    """Stored runs: ``total`` / ``finished`` count run × query pairs of ``runs`` runs; live: queries."""

    total: int
    finished: int
    failed: int
    runs: int


class EvaluationRunOut(BaseModel):
    run_id: int
    name: str
    means: dict[str, float | None] | None
    queries: dict[str, int] | None
    judged: dict[str, Any] | None = Field(
        None, description="judged@10 of the run: the share of its top 10 that is judged, why nothing is when no id "
                          "matches (rankscope.engine.judged)")
    warnings: list[dict[str, Any]] = Field(
        default_factory=list, description="what the numbers rest on: missing queries, ids that never match, a top 10 "
                                          "mostly unjudged, condensed lists (kind, counts, message)")


class EvaluationOut(BaseModel):
    id: str
    kind: Literal["evaluate", "live"]
    name: str
    status: Literal["queued", "running", "done", "failed"]
    test_set_id: int
    created_at: dt.datetime
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    error: str | None
    progress: Progress
    params: dict[str, Any]
    runs: list[EvaluationRunOut]


class QueryScoreOut(BaseModel):
    run_id: int
    query_id: str
    scores: dict[str, float | None]
    first_rank: int | None = Field(None, description="rank of the first relevant document (0: none retrieved)")


class QueryScorePage(BaseModel):
    offset: int
    limit: int
    items: list[QueryScoreOut]


class LiveResultOut(BaseModel):
    query_id: str
    hits: list[tuple[str, float]] | None
    error: str | None
    attempts: int
    latency_ms: float | None


class ErrorItem(BaseModel):
    field: str | None = Field(description="the request field (body key, query parameter, form field, header)")
    problem: str
    suggestions: list[str] | None = Field(None, description="close matches (unknown metric names)")


class ErrorBody(BaseModel):
    """Every 4xx (and the rare 5xx) answer: a summary and one item per problem."""

    detail: str
    errors: list[ErrorItem]


class ReportPending(BaseModel):
    status: Literal["rendering"]
    detail: str


# --- people judging ---------------------------------------------------------------------------------

def _annotator(value: str) -> str:
    value = value.strip()
    if not value:
        raise InvalidParameterError(_("must not be empty"))
    if any(ord(c) < 32 or c == "," for c in value):
        raise InvalidParameterError(_("must not contain commas or control characters"))
    return value


ANNOTATOR_PATTERN = r"^[^,\x00-\x1f]*[^\s,\x00-\x1f][^,\x00-\x1f]*$"
Annotator = Annotated[str, Field(min_length=1, max_length=100, description="who judges (any name; no commas)",
                                 json_schema_extra={"pattern": ANNOTATOR_PATTERN}),
                      AfterValidator(_annotator)]


def _any_case(name: str) -> str:
    """``name`` as a regular expression matching it in any case (JSON Schema's patterns take no flags; metric names
    are read case-insensitively)."""
    import re

    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() and c.lower() != c.upper() else re.escape(c)
                   for c in name)


def metric_name_pattern(bounded: bool = False) -> str:
    """A regular expression of the metric names the registry knows, each with a cutoff ``@k`` where it takes one
    (the schema's description of ``metrics``; the service's own check says what is wrong with another name);
    ``bounded``: only metrics with known bounds, the ones a monitor watches.

    >>> import re
    >>> bool(re.match(metric_name_pattern(), "ndcg@10")), bool(re.match(metric_name_pattern(), "0"))
    (True, False)
    >>> bool(re.match(metric_name_pattern(), "num_q")), bool(re.match(metric_name_pattern(bounded=True), "num_q"))
    (True, False)
    >>> bool(re.match(metric_name_pattern(), "P@5")), bool(re.match(metric_name_pattern(), "nDCG@10"))
    (True, True)
    """

    from rankscope.measures import all_specs

    parts = []
    for spec in all_specs():
        if bounded and (spec.bounds is None or spec.text):
            continue
        names = "|".join(_any_case(n) for n in sorted({spec.name, *spec.aliases}, key=len, reverse=True))
        cut = {"required": "@[1-9][0-9]{0,4}", "optional": "(@[1-9][0-9]{0,4})?"}.get(spec.cutoff, "")
        parts.append(f"(?:{names}){cut}")
    return f"^(?:{'|'.join(parts)})$"


class AnnotatorProgress(BaseModel):
    annotator: str
    judged: int
    skipped: int
    remaining: int = Field(description="items neither judged nor skipped by this annotator")
    prelabel_shown: int = Field(description="judged items whose pre-label the annotator asked to see (not blind)")


class JudgingTaskOut(BaseModel):
    """A pool for people to judge: its size, where its texts and pre-labels came from, and each annotator's
    progress."""

    id: int
    name: str
    created_at: dt.datetime
    n_items: int
    n_queries: int
    n_prelabels: int = Field(description="items with a pre-label grade (hidden from annotators unless asked)")
    info: dict[str, Any]
    annotators: list[AnnotatorProgress]


class PrelabelOut(BaseModel):
    grade: int | None = Field(description="null: the model's judgment failed (see error)")
    source: str
    model: str | None
    prompt: str | None
    error: str | None


class JudgmentOut(BaseModel):
    item_id: int
    query_id: str
    doc_id: str
    annotator: str
    grade: int | None = Field(description="0-3; null for a skipped item")
    skipped: bool
    note: str
    prelabel_shown: bool
    updated_at: dt.datetime


class JudgingItemOut(BaseModel):
    id: int
    position: int
    query_id: str
    query_text: str
    doc_id: str
    doc_text: str
    doc_length: int = Field(description="the document's length in characters before it was cut (if it was)")
    doc_cut: bool
    best_rank: int | None
    runs: dict[str, int] | None
    prelabel: PrelabelOut | None = Field(None, description="only with prelabels=true")
    judgment: JudgmentOut | None = Field(None, description="the annotator's judgment, with annotator=")


class NextItemOut(BaseModel):
    item: JudgingItemOut | None = Field(description="null when the annotator has judged or skipped every item")
    remaining: int


class JudgmentIn(BaseModel):
    """A grade (0-3), or ``skip``, by the annotator whose token the request carries (``X-Annotator-Token``);
    judging an item again replaces the earlier judgment.  Whether it is blind is the service's record of what it
    showed the annotator, not a field of the request."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"oneOf": [
        {"required": ["grade"], "properties": {"grade": {"type": "integer"}, "skip": {"const": False}}},
        {"required": ["skip"], "properties": {"skip": {"const": True}, "grade": {"type": "null"}}}]})
    item_id: Id
    annotator: Annotator | None = Field(None, description="optional: when given, the name of the token's annotator")
    grade: int | None = Field(None, ge=0, le=3, description="0-3; or skip: true")
    skip: StrictBool = False
    note: str = Field("", max_length=5000)


class AnnotatorIn(BaseModel):
    """Invite someone to judge the task under ``name``; ``blind`` (the default): never show them a pre-label."""

    model_config = ConfigDict(extra="forbid")
    name: Annotator
    blind: StrictBool = True


class AnnotatorOut(BaseModel):
    name: str
    blind: bool
    created_at: dt.datetime


class AnnotatorInvite(AnnotatorOut):
    token: str = Field(description="the annotator's token (shown once; the service keeps only its hash)")
    link: str = Field(description="the invitation link of the dashboard (path; it sets the token as a cookie)")


class QueryProgressOut(BaseModel):
    query_id: str
    query_text: str
    items: int
    annotators: dict[str, dict[str, int]] = Field(description="{annotator: {judged, skipped}}")


class KappaOut(BaseModel):
    value: float | None
    low: float | None
    high: float | None


class PairAgreementOut(BaseModel):
    both: int = Field(description="items graded by both")
    only_a: int
    only_b: int
    exact: float | None
    binary: float | None
    kappa_binary: KappaOut | None
    kappa_weighted: KappaOut | None
    grades: list[int]
    confusion: list[list[int]] = Field(description="rows: a (or the annotator), columns: b (or the pre-label)")


class AnnotatorPairOut(PairAgreementOut):
    a: str
    b: str


class PrelabelAgreementOut(PairAgreementOut):
    annotator: str
    not_blind: int = Field(description="judgments made after seeing the pre-label, left out")


class AgreementOut(BaseModel):
    relevance_level: int
    weights: str
    resamples: int
    level: float
    annotators: list[str]
    pairs: list[AnnotatorPairOut]
    prelabels: list[PrelabelAgreementOut]
    group: dict[str, Any] | None = Field(None, description="three or more annotators: Fleiss' kappa and "
                                         "Krippendorff's alpha (ordinal) with 95% query-bootstrap intervals")


class ExportOut(BaseModel):
    summary: dict[str, Any] = Field(description="items, human labels, merged and disagreeing items, skipped, "
                                                "pre-labels used, unlabelled items")
    qrels: str = Field(description="TREC qrels (query 0 doc grade)")
    provenance: str = Field(description="the qrels' provenance sidecar (JSON Lines)")
