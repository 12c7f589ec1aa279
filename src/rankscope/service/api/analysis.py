"""Comparisons across stored runs, report downloads and the CI check endpoint."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Response
from fastapi import Path as PathParam
from fastapi import Query as QueryParam
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from rankscope.choices import Correction, Lang, MaxDropTest, Missing, PairedTest, ScorePrecision, Unjudged
from rankscope.errors import RankscopeError
from rankscope.i18n import _
from rankscope.service import store
from rankscope.service.analysis import json_safe, load_inputs, run_comparison
from rankscope.service.api.deps import get_db
from rankscope.service.api.errors import FieldError
from rankscope.service.api.schemas import DEFAULT_METRICS, MAX_ID, ErrorBody, Id, MetricName, ReportPending
from rankscope.service.db import Database
from rankscope.service.reports import REPORT_FORMATS, JobNotDone, check_request

router = APIRouter(tags=["analysis"])


class ComparisonCreate(BaseModel):
    """Compare stored runs of one test set with paired significance tests."""

    model_config = ConfigDict(extra="forbid", use_enum_values=True, validate_default=True)
    test_set_id: Id
    run_ids: list[Id] = Field(min_length=2, max_length=20)
    metrics: list[MetricName] = Field(default_factory=lambda: list(DEFAULT_METRICS), min_length=1, max_length=20)
    baseline_run_id: Id | None = None
    test: PairedTest = PairedTest.t
    alpha: float = Field(0.05, gt=0, lt=1)
    correction: Correction | None = Field(
        None, description="default holm; not with tukey-hsd (simultaneous over the pairs of each metric)")
    relevance_level: int = Field(1, ge=-1000, le=1000)
    missing: Missing = Missing.zero
    depth: int | None = Field(None, ge=1, le=1_000_000)
    score_precision: ScorePrecision = ScorePrecision.float32
    unjudged: Unjudged = Field(Unjudged.keep, description="keep, or condense: unjudged documents removed before "
                                                           "ranking (condensed lists)")


class CheckCreate(BaseModel):
    """Check one stored run against requirements (and optionally a baseline run): pass or fail."""

    model_config = ConfigDict(extra="forbid", use_enum_values=True, validate_default=True)
    test_set_id: Id
    run_id: Id
    requirements: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=50, description='e.g. "recall@5 >= 0.8", "ndcg@10>=60%"')
    preset: list[Annotated[str, Field(min_length=1, max_length=100)]] = Field(
        default_factory=list, max_length=10, description="named standards, e.g. production:good")
    baseline_run_id: Id | None = None
    max_drops: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=list, max_length=50, description='e.g. "ndcg@10=0.02" or "mrr=5%"')
    test: MaxDropTest = Field(
        MaxDropTest.betting, description="test of the mean for max_drops: betting (the gate's default: a bound valid "
        "at any number of queries and any skew; a metric without a fixed range uses bootstrap), t, randomization or "
        "bootstrap; wilcoxon is refused (it does not test the mean)")
    alpha: float = Field(0.05, gt=0, lt=1)
    relevance_level: int = Field(1, ge=-1000, le=1000)
    missing: Missing = Missing.zero
    depth: int | None = Field(None, ge=1, le=1_000_000)
    unjudged: Unjudged = Field(Unjudged.keep, description="keep, or condense: unjudged documents removed before "
                                                           "ranking (condensed lists)")
    lang: Lang = Field(Lang.en, description="language of the answer's lines and markdown")


@router.post("/comparisons", summary="Compare stored runs (means, CIs, paired tests, win/tie/loss)")
def create_comparison(body: ComparisonCreate, db: Database = Depends(get_db)) -> dict[str, Any]:
    try:
        metrics = store.validate_metrics(body.metrics)
    except RankscopeError as exc:
        raise FieldError("metrics", exc) from None
    try:
        qrels, runs, names = load_inputs(db, body.test_set_id, body.run_ids)
    except RankscopeError as exc:
        raise FieldError("run_ids", exc) from None
    if len(runs) < 2:
        raise FieldError("run_ids", _("give at least two different runs"))
    try:
        comparison = run_comparison(qrels, runs, names, metrics, body.model_dump(), body.baseline_run_id,
                                    body.test, body.alpha, body.correction)
    except RankscopeError as exc:
        field = ("baseline_run_id" if "baseline" in str(exc) else "correction" if "family-wise" in str(exc)
                 else "body")
        raise FieldError(field, exc) from None
    out = comparison.to_dict()
    out["run_ids"] = {names[rid]: rid for rid in runs}
    return dict(json_safe(out))


@router.get("/evaluations/{job_id}/report", summary="The report of a finished evaluation (rendered once, cached)",
            responses={200: {"content": {"text/html": {}, "text/markdown": {}, "application/json": {},
                                         "application/x-tex": {}},
                             "description": "the report"},
                       202: {"model": ReportPending, "description": "being rendered: ask again after Retry-After"},
                       409: {"model": ErrorBody, "description": "the evaluation is not done"}})
def download_report(
    job_id: Annotated[str, PathParam(min_length=1, max_length=36, pattern=r"^[0-9a-f-]+$")],
    format: Literal["html", "markdown", "json", "latex"] = "html",
    lang: Lang = Lang.en,
    baseline_run_id: Annotated[int | None, QueryParam(ge=1, le=MAX_ID)] = None,
    download: bool = True,
    db: Database = Depends(get_db),
) -> Response:
    try:
        baseline = check_request(db, job_id, format, baseline_run_id)
    except JobNotDone as exc:
        raise FieldError("job_id", exc, status=409) from None
    except RankscopeError as exc:
        raise FieldError("baseline_run_id" if "baseline" in str(exc) else "format", exc) from None
    row = store.request_report(db, job_id, format, lang, baseline)
    if row.status == "failed":
        raise FieldError("job_id", _("rendering the report failed: {error}", error=row.error), status=500)
    if row.status != "done" or row.body is None:
        return JSONResponse({"status": "rendering", "detail": "the report is being rendered; ask again shortly"},
                            status_code=202, headers={"Retry-After": "1"})
    media, ext = REPORT_FORMATS[format]
    headers = {"Content-Disposition": f'attachment; filename="rankscope-{job_id[:8]}.{ext}"'} if download else {}
    if format == "html":  # shown in the dashboard's own frame: framed by the service only, and runs no script
        from rankscope.service.guards import FRAMED_CSP

        headers["Content-Security-Policy"] = FRAMED_CSP
    return Response(row.body, media_type=f"{media}; charset=utf-8", headers=headers)


@router.post("/check", summary="CI gate: does a stored run meet the requirements? (verdict: pass, fail or undecided)")
def run_check(body: CheckCreate, db: Database = Depends(get_db)) -> dict[str, Any]:
    from rankscope.gate import check

    ids = [body.run_id] + ([body.baseline_run_id] if body.baseline_run_id else [])
    try:
        qrels, runs, __ = load_inputs(db, body.test_set_id, ids)
    except RankscopeError as exc:
        raise FieldError("run_id", exc) from None
    try:
        result = check(qrels, runs[body.run_id], body.requirements, preset=body.preset or None,
                       baseline=runs.get(body.baseline_run_id) if body.baseline_run_id else None,
                       max_drops=body.max_drops, test=body.test, alpha=body.alpha,
                       relevance_level=body.relevance_level, missing=body.missing, depth=body.depth,
                       unjudged=body.unjudged)
    except RankscopeError as exc:
        msg = str(exc)
        field = ("test" if "Wilcoxon" in msg else "max_drops" if "drop" in msg
                 else "preset" if "standard" in msg or "preset" in msg else "requirements")
        raise FieldError(field, exc) from None
    out = result.to_dict()
    # never a pass by default: a drop that no test could decide (too few queries, no variation, an unstable
    # p-value) makes the whole check undecided, and says so (passed false, exit_code 3)
    out["verdict"] = "pass" if result.passed else "fail" if result.failed else "undecided"
    out["lines"] = result.lines(body.lang)
    out["markdown"] = result.to_markdown(body.lang)
    return dict(json_safe(out))
