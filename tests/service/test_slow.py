"""Slow retrievers (issue 12, failure 3): leases, deadlines, budgets, and scoring never starved.

Settings the code of the time does not know are dropped (``_client``), so that these tests
also run — and fail — against the code before the fix.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from rankscope.service.app import create_app
from rankscope.service.settings import Settings

from .conftest import RUN_A, upload_run, upload_testset, wait_job
from .fake_retriever import FakeRetriever, live_testset


def _client(db_url: str, **opts: Any) -> TestClient:
    known = {f.name for f in dataclasses.fields(Settings)}
    base = {"poll_seconds": 0.05, "allow_retrievers": ("127.0.0.1:*",)}
    settings = {k: v for k, v in {**base, **opts}.items() if k in known}
    return TestClient(create_app(Settings(db_url=db_url, **settings)), base_url="http://127.0.0.1")


def _live(c: TestClient, ts_id: int, url: str, **extra: Any) -> str:
    r = c.post("/api/v1/evaluations/live", json={"test_set_id": ts_id, "retriever_url": url, "k": 5,
                                                 "metrics": ["mrr"], "concurrency": 1, "retries": 0, **extra})
    assert r.status_code == 202, r.text
    return str(r.json()["id"])


def test_a_slow_query_keeps_its_lease_and_is_asked_once(db_url: str) -> None:
    # a 2.5 s query, a 1 s lease, two threads that could take the job over
    with FakeRetriever(slow=2.5) as retriever, _client(db_url, workers=2, live_workers=2, lease_seconds=1.0) as c:
        ts = upload_testset(c, live_testset(1, ["slow"]), name="slow")
        job = wait_job(c, _live(c, ts["id"], retriever.url), timeout=30)
        assert job["status"] == "done", job
        assert retriever.calls["slow query 1"] == 1, retriever.calls  # nobody asked again
        engine = create_engine(db_url)
        with engine.connect() as conn:
            claims = conn.execute(text("SELECT claims FROM jobs WHERE id = :j"), {"j": job["id"]}).scalar_one()
        engine.dispose()
        assert claims == 1  # the job was never taken over


def test_a_trickling_retriever_hits_the_total_deadline(db_url: str) -> None:
    with FakeRetriever(trickle_limit=20) as retriever, _client(db_url, workers=1, retriever_timeout=2.0) as c:
        ts = upload_testset(c, live_testset(2, ["trickle"]), name="trickle")
        t0 = time.monotonic()
        job = wait_job(c, _live(c, ts["id"], retriever.url), timeout=60)
        took = time.monotonic() - t0
        assert job["status"] == "done" and job["progress"] == {"total": 3, "finished": 2, "failed": 1, "runs": 1}, job
        assert took < 8, f"one byte a second held the job {took:.1f} s"
        [err] = c.get(f"/api/v1/evaluations/{job['id']}/live-results", params={"errors_only": True}).json()
        assert "within 2 s" in err["error"]


def test_live_jobs_do_not_starve_scoring(db_url: str) -> None:
    with FakeRetriever(slow=3.0) as retriever, _client(db_url, workers=2, live_workers=2) as c:
        ts = upload_testset(c, live_testset(0, ["slow"]), name="slow")
        live = [_live(c, ts["id"], retriever.url) for _ in range(3)]
        time.sleep(0.5)  # the live jobs have taken what they can
        stored = upload_testset(c)
        run = upload_run(c, stored["id"], RUN_A, "bm25")
        t0 = time.monotonic()
        r = c.post("/api/v1/evaluations", json={"test_set_id": stored["id"], "run_ids": [run["id"]],
                                                "metrics": ["mrr"]})
        job = wait_job(c, r.json()["id"], timeout=60)
        waited = time.monotonic() - t0
        assert job["status"] == "done"
        assert waited < 2.5, f"the stored-run evaluation waited {waited:.1f} s behind live jobs"
        assert any(c.get(f"/api/v1/evaluations/{j}").json()["status"] in ("queued", "running") for j in live)
        for j in live:
            wait_job(c, j, timeout=60)


def test_the_job_budget_ends_a_live_job(db_url: str) -> None:
    with FakeRetriever(slow=1.0) as retriever, _client(db_url, workers=1) as c:
        ts = upload_testset(c, live_testset(0, ["slow"] * 8), name="slow")
        t0 = time.monotonic()
        job = wait_job(c, _live(c, ts["id"], retriever.url, budget_seconds=1.5), timeout=30)
        took = time.monotonic() - t0
        assert job["status"] == "done", job
        p = job["progress"]
        assert p["total"] == 8 and p["finished"] + p["failed"] == 8 and 1 <= p["finished"] <= 3, p
        assert took < 5, took
        errors = c.get(f"/api/v1/evaluations/{job['id']}/live-results", params={"errors_only": True}).json()
        assert errors and all("budget" in e["error"] and e["attempts"] <= 1 for e in errors)
        assert sum(retriever.calls.values()) <= p["finished"] + 1  # at most one call cut short, none after
