"""Data access of the service: every read and write of the API, the web pages and the jobs.

No other module of the service writes SQL; this package does not read uploads (it stores what
:mod:`rankscope.service.ingest` parsed).  :mod:`.catalog` holds test sets and runs,
:mod:`.jobs` evaluations (the queue, scores, live answers), :mod:`.reports` the report cache.
"""

from __future__ import annotations

from rankscope.service.store.base import NotFound, insert_rows
from rankscope.service.store.catalog import (
    create_run,
    create_testset,
    delete_run,
    delete_testset,
    documents,
    get_run,
    get_testset,
    list_runs,
    list_testsets,
    load_qrels,
    load_run,
    query_text,
    run_dependents,
    runs_with_testsets,
    testset_dependents,
    testset_names,
    testset_queries,
)
from rankscope.service.store.jobs import (
    add_live_errors,
    answered_queries,
    attach_run,
    claim_job,
    create_job,
    delete_job,
    finish_job,
    first_live_error,
    get_job,
    job_has_runs,
    job_progress,
    job_runs,
    job_scores,
    list_jobs,
    live_results,
    live_run_rows,
    live_summary,
    per_query,
    query_scores,
    release_lease,
    renew_lease,
    save_means,
    save_scores,
    set_job_total,
    upsert_live_results,
    validate_metrics,
)
from rankscope.service.store.reports import claim_report, fail_report, find_report, request_report, save_report

__all__ = [
    "NotFound", "insert_rows",
    "create_testset", "get_testset", "list_testsets", "testset_queries", "testset_names", "query_text", "documents",
    "testset_dependents", "delete_testset", "load_qrels", "create_run", "get_run", "list_runs", "runs_with_testsets",
    "run_dependents", "delete_run", "load_run",
    "validate_metrics", "create_job", "get_job", "list_jobs", "job_progress", "job_runs", "job_has_runs",
    "attach_run", "per_query", "job_scores", "query_scores", "delete_job", "claim_job", "renew_lease", "finish_job",
    "release_lease", "set_job_total", "save_scores", "save_means", "answered_queries", "live_results",
    "live_summary", "upsert_live_results", "add_live_errors", "live_run_rows", "first_live_error",
    "request_report", "find_report", "claim_report", "save_report", "fail_report",
]
