"""Scoring the runs of a job and storing per-query values and means (idempotent)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rankscope.engine import Evaluator
from rankscope.engine.policies import Policies
from rankscope.engine.result import result_to_json
from rankscope.service import store
from rankscope.service.db import Database, Job

__all__ = ["score_job_runs"]


def _clean(v: float) -> float | None:
    return v if math.isfinite(v) else None


def only_queries(qrels: Any, queries: set[str]) -> Any:
    """The judgments of ``queries`` only."""
    from rankscope.data import Qrels

    t = qrels.to_arrow()
    keep = [q in queries for q in t["query_id"].to_pylist()]
    return Qrels(t["query_id"].filter(keep), t["doc_id"].filter(keep), t["relevance"].filter(keep).to_numpy())


def score_job_runs(db: Database, job: Job, keep_going: Callable[[], bool]) -> None:
    """Evaluate every run of ``job`` that has no means yet, storing per-query rows then means.

    Each per-query row holds every metric value and the query's first-relevant rank.
    ``keep_going()`` is called between chunks; it returns False when the job was lost
    (deleted or taken over) or the server is stopping, and scoring stops.
    """
    p = job.params
    with db.read() as s:
        pairs = store.job_runs(s, job.id)
        todo = [(jr.run_id, rec) for jr, rec in pairs if jr.means is None]
        done = sum(int((jr.queries or {}).get("evaluated", 0)) for jr, _ in pairs if jr.means is not None)
        qrels = store.load_qrels(store.get_testset(s, job.test_set_id)) if todo else None
    if not todo:
        return
    if p.get("query_ids"):  # a monitor's canary asked a fixed sample: score those queries only
        qrels = only_queries(qrels, set(p["query_ids"]))
    # the job's stored settings hold its policies (a job stored before a policy existed: that policy's default);
    # first-relevant ranks are scored with the metrics, in the same pass and under the same policies
    ev = Evaluator(qrels, p["metrics"], policies=Policies.coerce(p), diagnostics=True)
    results = [(run_id, ev.evaluate(store.load_run(rec))) for run_id, rec in todo]
    if job.kind == "evaluate":
        store.set_job_total(db, job.id, done + sum(len(r.per_query) for _, r in results))
    for run_id, res in results:
        data = result_to_json(res)  # the serialiser of a result: what reports.stored_results reads back
        ids, vals, labels = data["per_query"]["query_ids"]["ids"], data["per_query"]["values"], data["labels"]
        assert res.diagnostics is not None
        first = res.diagnostics["first_rel_rank"].astype(int).tolist()  # row by row, as the values
        rows = [{"job_id": job.id, "run_id": run_id, "query_id": q, "first_rank": rank,
                 "scores": {m: _clean(v) for m, v in zip(labels, row)}} for q, row, rank in zip(ids, vals, first)]
        step = 5000
        for i in range(0, len(rows), step):
            if not keep_going():
                return
            store.save_scores(db, rows[i:i + step])
        # judged@10 is kept beside the query counts (shown by the API, pages and reports)
        counts = {**data["queries"], **({"judged": res.judged.to_dict()} if res.judged is not None else {})}
        store.save_means(db, job.id, run_id, {k: _clean(v) for k, v in res.mean().items()}, counts)
