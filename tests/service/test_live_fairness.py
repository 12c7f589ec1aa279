"""Live jobs do not block each other: a job that needs a fraction of a second is not held up by slow retrievers
(one hanging, one trickling) — with the default live workers it starts at once; when slow jobs hold every live
worker they take turns, the quick job waits about one of their queries, and the slow ones still finish."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .conftest import make_client, upload_testset, wait_job
from .fake_retriever import FakeRetriever, live_testset


@pytest.mark.slow
@pytest.mark.parametrize(("settings", "most"), [({}, 2.0), ({"live_workers": 2, "live_slice_seconds": 1.0}, 9.0)],
                         ids=["defaults", "every-worker-busy"])
def test_a_quick_job_is_not_held_up_by_two_slow_ones(tmp_path: Path, settings: dict[str, float], most: float) -> None:
    with FakeRetriever(slow=6.0, trickle_limit=6.0) as slow, FakeRetriever() as quick, make_client(
            f"sqlite:///{tmp_path / 'f.sqlite3'}", retriever_timeout=30.0, **settings) as c:
        # four queries each: two turns of two concurrent 6-second queries, so a slow job is still mid-way when the
        # quick one arrives and has to be resumed where it stopped (the wait measured is per query, not per job)
        hang = upload_testset(c, live_testset(0, ["slow"] * 4), name="hanging")
        trickle = upload_testset(c, live_testset(0, ["trickle"] * 4), name="trickling")
        small = upload_testset(c, live_testset(4), name="quick")

        def live(ts: dict[str, object], url: str) -> str:
            r = c.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": url,
                                                         "metrics": ["mrr"], "concurrency": 2, "retries": 0})
            assert r.status_code == 202, r.text
            return str(r.json()["id"])

        slow_jobs = [live(hang, slow.url), live(trickle, slow.url)]
        time.sleep(1.0)  # both slow jobs hold the two live workers
        assert {c.get(f"/api/v1/evaluations/{j}").json()["status"] for j in slow_jobs} == {"running"}
        t0 = time.monotonic()
        quick_job = live(small, quick.url)
        done = wait_job(c, quick_job, timeout=60)
        waited = time.monotonic() - t0
        assert done["status"] == "done" and done["progress"]["finished"] == 4
        assert waited < most, f"the quick job waited {waited:.1f} s behind the slow ones"
        for j in slow_jobs:  # the slow ones go on, resumed where they stopped, and finish
            out = wait_job(c, j, timeout=240)
            assert out["status"] == "done" and out["progress"]["finished"] == 4, out
