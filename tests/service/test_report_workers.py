"""Reports have their own worker: a report asked for while evaluations keep the scoring workers busy is rendered
then, not after the last evaluation (the scoring workers render reports only when no evaluation waits)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from .conftest import get_report, make_client, upload_run, upload_testset, wait_job


@pytest.mark.slow
def test_a_report_is_rendered_while_evaluations_wait(tmp_path: Path) -> None:
    n = 1500
    testset = {"queries": [{"id": f"q{i}", "text": f"query {i}", "relevant": {f"d{i}": 1, f"e{i}": 2}}
                           for i in range(n)]}
    run = "".join(f"q{i} Q0 {'d' if j == 3 else 'x'}{i}-{j} {j + 1} {100 - j} r\n" for i in range(n) for j in range(50))
    with make_client(f"sqlite:///{tmp_path / 'r.sqlite3'}", workers=1) as c:
        ts = upload_testset(c, testset)
        rid = upload_run(c, ts["id"], run, "r")["id"]
        body = {"test_set_id": ts["id"], "run_ids": [rid], "metrics": ["ndcg@10", "map", "recall@100", "mrr"]}
        first = c.post("/api/v1/evaluations", json=body).json()["id"]
        assert wait_job(c, first, timeout=120)["status"] == "done"
        queued = [c.post("/api/v1/evaluations", json=body).json()["id"] for _ in range(25)]
        t0 = time.monotonic()
        r = get_report(c, first, timeout=120, format="json")
        took = time.monotonic() - t0
        assert r.status_code == 200
        left = sum(c.get(f"/api/v1/evaluations/{j}").json()["status"] != "done" for j in queued)
        assert left > 0, f"the report came only after every evaluation ({took:.1f} s)"
