"""Reports of finished evaluations: rendered once, in the background, from the stored per-query scores.

A request for a report (``GET /evaluations/{id}/report``, the dashboard) looks the report
up in the ``reports`` table; when it is not there yet it queues it (a ``pending`` row) and
answers 202 — a worker renders it (:func:`render_next`) and stores the text, and every later
view reads the stored text.  Nothing is rendered in a request, so a client that goes away
leaves no work behind and shutting down waits for no report.  The cache of an evaluation is
dropped when what it shows changes (a run of it is deleted; the evaluation is deleted).

The content is built from the stored per-query values, not by scoring the runs again: an
:class:`~rankscope.engine.EvaluationResult` per run, then for one run
:func:`rankscope.report.run_report.build_run_report` (with the stored first-relevant ranks
and, for a live job, its failures and latencies), for several
:func:`rankscope.compare` (paired t-test, Holm, α = 0.05, against the chosen baseline)
and :func:`rankscope.report.build_report` without the metric@k curves (they need the runs).
"""

from __future__ import annotations

import logging
from typing import Any

from rankscope.errors import InvalidParameterError, Items, RankscopeError
from rankscope.i18n import NC_, _, ngettext, pgettext
from rankscope.service import store
from rankscope.service.db import Database, Job

__all__ = ["REPORT_FORMATS", "RUN_FORMATS", "JobNotDone", "check_request", "stored_results", "render_report",
           "render_next", "report_formats"]

log = logging.getLogger("rankscope.service.reports")

REPORT_FORMATS: dict[str, tuple[str, str]] = {"html": ("text/html", "html"), "markdown": ("text/markdown", "md"),
                                               "json": ("application/json", "json"),
                                               "latex": ("application/x-tex", "tex")}
RUN_FORMATS = ("html", "markdown", "json")


#: an evaluation's status, said in an error
STATUS = {"queued": NC_("job status", "queued"), "running": NC_("job status", "running"),
          "done": NC_("job status", "done"), "failed": NC_("job status", "failed")}


class JobNotDone(RankscopeError):
    """The evaluation has no report yet because it has not finished (HTTP 409)."""


def report_formats(n_runs: int) -> tuple[str, ...]:
    """Formats of the report of an evaluation of ``n_runs`` runs (LaTeX tables compare two or more)."""
    return RUN_FORMATS if n_runs < 2 else tuple(REPORT_FORMATS)


def check_request(db: Database, job_id: str, fmt: str, baseline_run_id: int | None) -> int:
    """Validate a report request; return the baseline key (0: the first run)."""
    with db.read() as s:
        job = store.get_job(s, job_id)
        if job.status != "done":
            raise JobNotDone(_("evaluation {job} is {status}; its report exists once it is done", job=job_id,
                               status=pgettext("job status", STATUS[job.status])))
        run_ids = [rec.id for __, rec in store.job_runs(s, job_id)]
    if fmt not in report_formats(len(run_ids)):
        formats = Items(report_formats(len(run_ids)))
        raise InvalidParameterError(ngettext("format {format!r} is not available for an evaluation of {n} run; use "
                                             "one of {formats}",
                                             "format {format!r} is not available for an evaluation of {n} runs; use "
                                             "one of {formats}",
                                             len(run_ids), format=fmt, formats=formats))
    if baseline_run_id is None or baseline_run_id == (run_ids[0] if run_ids else None):
        return 0
    if baseline_run_id not in run_ids:
        runs = Items(tuple(run_ids))
        raise InvalidParameterError(_("baseline_run_id {value} is not one of the evaluation's runs ({runs})",
                                      value=baseline_run_id, runs=runs))
    return baseline_run_id


def stored_results(db: Database, job_id: str) -> tuple[Job, dict[int, str], dict[str, Any], dict[str, dict[str, int]]]:
    """The job, display names of its runs, an EvaluationResult per run and the stored first-relevant ranks.

    Each result is rebuilt by the serialiser of a result (:func:`~rankscope.engine.result.result_from_json`) from the
    stored rows, so a stored result holds what a saved one does: its values, counts, policies and judged@10."""
    from rankscope.engine import Policies
    from rankscope.engine.result import result_from_json
    from rankscope.measures import parse_metrics
    from rankscope.service.analysis import system_names

    with db.read() as s:
        job = store.get_job(s, job_id)
        pairs = store.job_runs(s, job_id)
        rows = store.job_scores(s, job_id)
    names = system_names([(rec.id, rec.name) for __, rec in pairs])
    pairs_ = parse_metrics(job.params["metrics"])  # "ndcg@1,3" is stored as given: one label per measure
    labels = [label for label, __ in pairs_]
    measures = [str(m) for __, m in pairs_]
    by_run: dict[int, list[tuple[str, dict[str, Any], int | None]]] = {}
    for run_id, qid, scores, first in rows:
        by_run.setdefault(run_id, []).append((qid, scores, first))
    # jobs stored before a policy existed were evaluated with its default
    policies = {k: v for k, v in job.params.items() if k in Policies.__dataclass_fields__}
    results: dict[str, Any] = {}
    ranks: dict[str, dict[str, int]] = {}
    for jr, rec in pairs:
        items = by_run.get(rec.id, [])
        values = [[sc.get(m) for m in labels] for _q, sc, _f in items]  # null: the stored NaN
        stored = dict(jr.queries or {})
        judged = stored.pop("judged", None)  # judged@10, stored beside the counts
        results[names[rec.id]] = result_from_json({
            "run_name": names[rec.id], "labels": labels, "measures": measures,
            "per_query": {"query_ids": {"ids": [q for q, *_rest in items], "dtype": "object"}, "metrics": labels,
                          "values": values, "shape": [len(items), len(labels)], "measures": measures},
            "queries": {"evaluated": len(items), "missing_from_run": 0, "not_in_qrels": 0,
                        **{k: int(v) for k, v in stored.items()}},
            "policies": policies, "judged": judged})
        if items and all(f is not None for *_r, f in items):
            ranks[names[rec.id]] = {q: int(f or 0) for q, _sc, f in items}
    return job, names, results, ranks


def render_report(db: Database, job_id: str, fmt: str, lang: str, baseline: int) -> str:
    """Render the report of a finished evaluation (called by a worker; see the module doc)."""
    job, names, results, ranks = stored_results(db, job_id)
    if len(results) == 1:
        from rankscope.report.run_render import render_run_report
        from rankscope.report.run_report import build_run_report

        [(name, result)] = results.items()
        live = None
        if job.kind == "live":
            with db.read() as s:
                live = {**store.live_summary(s, job_id), "url": job.params.get("retriever_url")}
        report = build_run_report(result, first_ranks=ranks.get(name), lang=lang, live=live)
        return render_run_report(report, fmt)
    from rankscope.comparison import compare
    from rankscope.report import build_report
    from rankscope.report import render_report as render_comparison

    base = names.get(baseline) if baseline else None
    labels = list(next(iter(results.values())).labels)
    comparison = compare(None, results, labels, test="t", alpha=0.05, correction="holm",
                         baseline=base or next(iter(results)))
    content = build_report(comparison, lang=lang, curves=False)
    return str(render_comparison(content, fmt))


def render_next(db: Database, lease_seconds: float) -> bool:
    """Render one pending report; False when there was none."""
    row = store.claim_report(db, lease_seconds)
    if row is None:
        return False
    try:
        body = render_report(db, row.job_id, row.format, row.lang, row.baseline_run_id)
    except store.NotFound:  # the evaluation (or a run) was deleted meanwhile: its cache row went with it
        return True
    except Exception as exc:  # a bug: keep the message for the 500 answer and the log
        log.exception("rendering report %s failed", row.id)
        store.fail_report(db, row.id, f"{type(exc).__name__}: {exc}")
        return True
    store.save_report(db, row.id, body)
    return True
