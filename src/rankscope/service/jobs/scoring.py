"""Scoring the runs of a job and storing per-query values and means (idempotent)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from rankscope.engine import Evaluator
from rankscope.engine.result import result_to_json
from rankscope.service import store
from rankscope.service.db import Database, Job

__all__ = ["score_job_runs"]


def _clean(v: float) -> float | None:
    return v if math.isfinite(v) else None


def _first_ranks(qrels: Any, run: Any, policies: dict[str, Any]) -> dict[str, int]:
    """Each query's first-relevant rank (0: none retrieved), with the job's policies (stored for the reports)."""
    from rankscope.interpret.analysis import first_relevant_ranks

    ids, ranks = first_relevant_ranks(qrels, run, relevance_level=policies.get("relevance_level", 1),
                                      missing=policies.get("missing", "zero"), depth=policies.get("depth"))
    return dict(zip((str(q) for q in ids), ranks.tolist()))


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
    ev = Evaluator(qrels, p["metrics"], relevance_level=p.get("relevance_level", 1),
                   missing=p.get("missing", "zero"), depth=p.get("depth"),
                   score_precision=p.get("score_precision", "float32"),  # jobs stored before a policy: its default
                   unjudged=p.get("unjudged", "keep"))
    runs = [(run_id, store.load_run(rec)) for run_id, rec in todo]
    results = [(run_id, run, ev.evaluate(run)) for run_id, run in runs]
    if job.kind == "evaluate":
        store.set_job_total(db, job.id, done + sum(len(r.per_query) for _, _, r in results))
    for run_id, run, res in results:
        data = result_to_json(res)  # the serialiser of a result: what reports.stored_results reads back
        ids, vals, labels = data["per_query"]["query_ids"]["ids"], data["per_query"]["values"], data["labels"]
        first = _first_ranks(qrels, run, p)
        rows = [{"job_id": job.id, "run_id": run_id, "query_id": q, "first_rank": first.get(q, 0),
                 "scores": {m: _clean(v) for m, v in zip(labels, row)}} for q, row in zip(ids, vals)]
        step = 5000
        for i in range(0, len(rows), step):
            if not keep_going():
                return
            store.save_scores(db, rows[i:i + step])
        # judged@10 is kept beside the query counts (shown by the API, pages and reports)
        counts = {**data["queries"], **({"judged": res.judged.to_dict()} if res.judged is not None else {})}
        store.save_means(db, job.id, run_id, {k: _clean(v) for k, v in res.mean().items()}, counts)
