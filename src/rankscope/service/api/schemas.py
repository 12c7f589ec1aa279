"""Request and response bodies of the HTTP API (pydantic models, published in the OpenAPI spec)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

__all__ = [
    "TestSetOut", "RunOut", "EvaluationCreate", "LiveEvaluationCreate", "EvaluationOut", "Progress",
    "EvaluationRunOut", "QueryScoreOut", "QueryScorePage", "DEFAULT_METRICS", "MAX_ID", "ErrorBody", "ErrorItem",
    "ReportPending",
]

MAX_ID = 2**31 - 1
DEFAULT_METRICS = ["ndcg@10", "map", "mrr", "recall@100", "P@10", "hit_rate@10"]


def _printable(value: str) -> str:
    if any(ord(c) < 32 and c not in "\t" for c in value):
        raise ValueError("must not contain control characters")
    return value


Name = Annotated[str, Field(max_length=200), AfterValidator(_printable)]
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
    model_config = ConfigDict(extra="forbid")
    metrics: list[MetricName] = Field(default_factory=lambda: list(DEFAULT_METRICS), min_length=1, max_length=50,
                                      description="metric names (ndcg@10, P@5, ndcg_cut_10, ...)")
    relevance_level: int = Field(1, ge=-1000, le=1000, description="minimum grade that counts as relevant")
    missing: Literal["zero", "ignore"] = Field("zero", description="queries absent from a run: score 0, or skip")
    depth: int | None = Field(None, ge=1, le=1_000_000, description="cut every ranking after this many documents")
    name: Name = ""


class EvaluationCreate(_Policies):
    """Score stored runs of one test set."""

    test_set_id: Id
    run_ids: list[Id] = Field(min_length=1, max_length=100)


class LiveEvaluationCreate(_Policies):
    """Ask a retriever over HTTP for every query of a test set, then score its answers."""

    test_set_id: Id
    retriever_url: str = Field(min_length=8, max_length=2000, pattern=r"^https?://[^\s]+$",
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
