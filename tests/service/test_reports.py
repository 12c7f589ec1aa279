"""Reports of stored evaluations (issue 12, failure 2): one run gets a report; reports are rendered once in the
background from the stored per-query scores, cached, and dropped when what they show changes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text

from .conftest import RUN_A, RUN_B, get_report, make_client, upload_run, upload_testset, wait_job
from .fake_retriever import FakeRetriever, live_testset


def _evaluate(c: TestClient, ts_id: int, run_ids: list[int], metrics: list[str]) -> dict[str, Any]:
    r = c.post("/api/v1/evaluations", json={"test_set_id": ts_id, "run_ids": run_ids, "metrics": metrics,
                                            "name": "nightly"})
    assert r.status_code == 202, r.text
    return wait_job(c, r.json()["id"])


def test_one_run_gets_a_report_in_every_format(client: TestClient) -> None:
    ts = upload_testset(client)
    a = upload_run(client, ts["id"], RUN_A, "bm25")
    job = _evaluate(client, ts["id"], [a["id"]], ["ndcg@10", "mrr", "P@1"])
    r = get_report(client, job["id"], format="html", download="false")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    assert "Evaluation report: bm25" in r.text and "data:image/svg+xml;base64," in r.text
    assert "1 judged queries have no ranking in the run" in r.text  # never silent about the missing query
    md = get_report(client, job["id"], format="markdown")
    assert md.status_code == 200 and md.text.startswith("## Evaluation report: bm25")
    assert "attachment" in md.headers["content-disposition"]
    body = json.loads(get_report(client, job["id"], format="json").text)
    assert body["schema"] == "rankscope.report.run" and body["run"] == "bm25"
    assert body["means"]["mrr"] == pytest.approx(job["runs"][0]["means"]["mrr"])
    assert body["analysis"]["first_rank_source"] == "stored"  # ranks stored when the run was scored
    assert body["analysis"]["first_rank"]["bm25"]["at_rank_1"] == 1
    zh = get_report(client, job["id"], format="html", lang="zh")
    assert "评估报告：bm25" in zh.text
    r = client.get(f"/api/v1/evaluations/{job['id']}/report", params={"format": "latex"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "format"


def test_live_job_report_shows_failures_and_latency(client: TestClient) -> None:
    ts = upload_testset(client, live_testset(6, ["broken"]), name="live")
    with FakeRetriever() as retriever:
        r = client.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": retriever.url,
                                                          "metrics": ["mrr"], "retries": 0, "name": "fake"})
        job = wait_job(client, r.json()["id"])
    body = json.loads(get_report(client, job["id"], format="json").text)
    live = body["live"]
    assert (live["asked"], live["answered"], live["failed"]) == (7, 6, 1)
    assert live["errors"] == {"q6": "HttpRetrieverError: HTTP 500 Internal Server Error"}
    assert live["latency_ms"]["n"] == 6 and live["latency_ms"]["p50"] > 0
    html = get_report(client, job["id"], format="html").text
    assert "Live retriever" in html and "HTTP 500 Internal Server Error" in html


def test_reports_are_rendered_once_from_stored_scores_and_dropped_on_change(db_url: str) -> None:
    with make_client(db_url) as c:
        ts = upload_testset(c)
        a = upload_run(c, ts["id"], RUN_A, "bm25")
        b = upload_run(c, ts["id"], RUN_B, "dense", fmt="ranked")
        job = _evaluate(c, ts["id"], [a["id"], b["id"]], ["mrr", "ndcg@10"])
        first = get_report(c, job["id"], format="json")
        assert first.status_code == 200
        content = json.loads(first.text)
        assert content["schema"] == "rankscope.report" and content["systems"] == ["bm25", "dense"]
        means = {r["name"]: r["means"] for r in job["runs"]}
        assert content["comparison"]["means"]["dense"]["mrr"] == pytest.approx(means["dense"]["mrr"])
        engine = create_engine(db_url)
        with engine.connect() as conn:
            stamp = conn.execute(text("SELECT rendered_at FROM reports WHERE job_id = :j AND format = 'json' "
                                      "AND lang = 'en'"), {"j": job["id"]}).scalar_one()
        assert get_report(c, job["id"], format="json").text == first.text  # from the cache
        with engine.connect() as conn:
            again = conn.execute(text("SELECT rendered_at FROM reports WHERE job_id = :j AND format = 'json' "
                                      "AND lang = 'en'"), {"j": job["id"]}).scalar_one()
        assert again == stamp
        with_base = json.loads(get_report(c, job["id"], format="json", baseline_run_id=b["id"]).text)
        assert with_base["reference"] == "dense"
        r = c.get(f"/api/v1/evaluations/{job['id']}/report", params={"baseline_run_id": 999})
        assert r.status_code == 422 and r.json()["errors"][0]["field"] == "baseline_run_id"
        # a run of the evaluation is deleted: its cached reports go, the next one shows what is left
        assert c.delete(f"/api/v1/runs/{a['id']}").status_code == 204
        with engine.connect() as conn:
            left = conn.execute(text("SELECT count(*) FROM reports WHERE job_id = :j"), {"j": job["id"]}).scalar_one()
        assert left == 0
        after = json.loads(get_report(c, job["id"], format="json").text)
        assert after["schema"] == "rankscope.report.run" and after["run"] == "dense"
        engine.dispose()


def test_report_of_an_unfinished_evaluation_is_409(db_url: str) -> None:
    with make_client(db_url, workers=0) as c:
        ts = upload_testset(c)
        a = upload_run(c, ts["id"], RUN_A, "bm25")
        r = c.post("/api/v1/evaluations", json={"test_set_id": ts["id"], "run_ids": [a["id"]]})
        r = c.get(f"/api/v1/evaluations/{r.json()['id']}/report")
        assert r.status_code == 409 and r.json()["errors"][0]["field"] == "job_id"
