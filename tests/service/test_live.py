"""Live retriever evaluations: bounded concurrency, retries, per-query errors stored, scores correct."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from .conftest import upload_testset, wait_job
from .fake_retriever import FakeRetriever, live_testset


def test_live_evaluation(client: TestClient) -> None:
    ts = upload_testset(client, live_testset(20, ["flaky", "broken", "garbage"]), name="live")
    with FakeRetriever() as retriever:
        r = client.post("/api/v1/evaluations/live", json={
            "test_set_id": ts["id"], "retriever_url": retriever.url, "k": 10, "metrics": ["mrr", "P@1"],
            "concurrency": 4, "retries": 2, "name": "fake-bm25"})
        assert r.status_code == 202, r.text
        job = wait_job(client, r.json()["id"])
    assert job["status"] == "done", job
    assert job["progress"] == {"total": 23, "finished": 21, "failed": 2, "runs": 1}
    assert retriever.calls["flaky query 20"] == 2  # failed once, retried, stored once
    assert retriever.calls["broken query 21"] == 3  # 1 + 2 retries, then the error is stored
    assert retriever.calls["garbage query 22"] == 1  # a malformed answer is not retried

    errors = client.get(f"/api/v1/evaluations/{job['id']}/live-results", params={"errors_only": True}).json()
    by_query = {e["query_id"]: e for e in errors}
    assert by_query.keys() == {"q21", "q22"}
    assert by_query["q21"]["error"].endswith("HTTP 500 Internal Server Error")  # the status line only
    assert "boom" not in by_query["q21"]["error"]  # never the body of a failed call
    assert "bad answer" in by_query["q22"]["error"]
    assert (by_query["q21"]["attempts"], by_query["q22"]["attempts"]) == (3, 1)
    # the answers became a stored run of the test set, scored like any other
    [run] = job["runs"]
    assert run["name"] == "fake-bm25"
    stored_run = client.get(f"/api/v1/runs/{run['run_id']}").json()
    assert stored_run["source"] == "live" and stored_run["n_queries"] == 21
    scores = {i["query_id"]: i["scores"] for i in
              client.get(f"/api/v1/evaluations/{job['id']}/queries").json()["items"]}
    assert len(scores) == 23  # missing="zero": the two failed queries score 0
    for i in range(21):
        assert scores[f"q{i}"]["mrr"] == (1.0 if i % 2 == 0 else 0.5)
    assert scores["q21"] == {"mrr": 0.0, "P@1": 0.0}
    assert run["means"]["P@1"] == pytest.approx(11 / 23)


def test_live_unreachable_retriever_records_errors(client: TestClient) -> None:
    ts = upload_testset(client, live_testset(3), name="live")
    r = client.post("/api/v1/evaluations/live", json={
        "test_set_id": ts["id"], "retriever_url": "http://127.0.0.1:9/nothing", "retries": 0, "metrics": ["mrr"]})
    job = wait_job(client, r.json()["id"])
    assert job["progress"] == {"total": 3, "finished": 0, "failed": 3, "runs": 1}
    assert job["status"] == "failed" and "no" in job["error"]


def test_live_request_validation(client: TestClient) -> None:
    ts = upload_testset(client, live_testset(3))
    r = client.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": "ftp://x/y"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "retriever_url"
    r = client.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": "http://a.b/c",
                                                      "concurrency": 0})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "concurrency"
