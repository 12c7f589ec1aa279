"""The HTTP API against SQLite and PostgreSQL: uploads, jobs, stored per-query results, errors."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from rankscope import Qrels, Run
from rankscope.data.testset import TestSet
from rankscope.engine import evaluate

from .conftest import RUN_A, RUN_B, TESTSET, make_client, upload_run, upload_testset, wait_job

METRICS = ["ndcg@10", "P@2", "recall@10", "mrr", "map"]


def _qrels() -> Qrels:
    rel: dict[str, dict[str, int]] = {}
    for q in TESTSET["queries"]:
        r = q["relevant"]
        rel[q["id"]] = dict(r) if isinstance(r, dict) else {d: 1 for d in r}
    return Qrels.from_dict(rel)


def test_testset_crud(client: TestClient) -> None:
    ts = upload_testset(client)
    assert (ts["n_queries"], ts["n_judgments"], ts["n_documents"]) == (3, 5, 4)
    assert ts["created_at"].endswith(("Z", "+00:00"))
    assert [t["id"] for t in client.get("/api/v1/testsets").json()] == [ts["id"]]
    assert client.get(f"/api/v1/testsets/{ts['id']}").json()["name"] == "toy"
    queries = client.get(f"/api/v1/testsets/{ts['id']}/queries").json()
    assert queries[0] == {"query_id": "q1", "text": "what is bm25"}
    assert client.delete(f"/api/v1/testsets/{ts['id']}").status_code == 204
    r = client.get(f"/api/v1/testsets/{ts['id']}")
    assert r.status_code == 404
    assert r.json()["errors"][0]["field"] == "path"


def test_evaluation_matches_the_engine(client: TestClient) -> None:
    ts = upload_testset(client)
    a = upload_run(client, ts["id"], RUN_A, "bm25")
    b = upload_run(client, ts["id"], RUN_B, "dense", fmt="ranked")
    assert (a["n_queries"], a["n_rows"]) == (2, 5)
    r = client.post("/api/v1/evaluations", json={"test_set_id": ts["id"], "run_ids": [a["id"], b["id"]],
                                                 "metrics": METRICS, "name": "nightly"})
    assert r.status_code == 202, r.text
    assert r.json()["status"] in ("queued", "running", "done")
    job = wait_job(client, r.json()["id"])
    assert job["status"] == "done", job
    assert job["progress"] == {"total": 6, "finished": 6, "failed": 0, "runs": 2}

    qrels = _qrels()
    expected = {
        a["id"]: evaluate(qrels, Run.from_dict({"q1": {"d1": 3, "d9": 2, "d2": 1}, "q2": {"d7": 2, "d3": 1}}),
                          METRICS),
        b["id"]: evaluate(qrels, Run.from_ranked_lists(json.loads(RUN_B)), METRICS),
    }
    by_run = {run["run_id"]: run for run in job["runs"]}
    for run_id, res in expected.items():
        assert by_run[run_id]["means"] == pytest.approx(res.mean())
        assert by_run[run_id]["queries"]["evaluated"] == 3
        page = client.get(f"/api/v1/evaluations/{job['id']}/queries", params={"run_id": run_id}).json()
        stored = {item["query_id"]: item["scores"] for item in page["items"]}
        want = res.per_query.to_dict()
        assert stored.keys() == want.keys()
        for q, scores in want.items():
            assert stored[q] == pytest.approx(scores)
    assert by_run[a["id"]]["queries"]["missing_from_run"] == 1
    listed = client.get("/api/v1/evaluations", params={"test_set_id": ts["id"]}).json()
    assert [j["id"] for j in listed] == [job["id"]]

    # deleting a run removes its scores but keeps the other run's
    assert client.delete(f"/api/v1/runs/{a['id']}").status_code == 204
    left = client.get(f"/api/v1/evaluations/{job['id']}/queries").json()["items"]
    assert {item["run_id"] for item in left} == {b["id"]} and len(left) == 3
    assert client.delete(f"/api/v1/evaluations/{job['id']}").status_code == 204
    assert client.get(f"/api/v1/evaluations/{job['id']}").status_code == 404


def test_formats_of_test_sets(client: TestClient) -> None:
    jsonl = "\n".join(json.dumps(q) for q in TESTSET["queries"])
    r = client.post("/api/v1/testsets", files={"file": ("t.jsonl", jsonl)}, data={"format": "jsonl"})
    assert r.status_code == 201 and r.json()["n_queries"] == 3
    files = {"file": ("qrels.txt", "q1 0 d1 1\nq2 0 d3 2\n"), "queries": ("queries.tsv", "q1\tfirst\nq2\tsecond\n")}
    r = client.post("/api/v1/testsets", files=files, data={"format": "trec", "name": "trec set"})
    assert r.status_code == 201, r.text
    qs = client.get(f"/api/v1/testsets/{r.json()['id']}/queries").json()
    assert qs == [{"query_id": "q1", "text": "first"}, {"query_id": "q2", "text": "second"}]


def test_beir_zip_of_scifact(client: TestClient, tmp_path: Path, data_dir: Path) -> None:
    folder = data_dir / "beir_scifact"
    archive = tmp_path / "scifact.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in ("queries.jsonl", "corpus.jsonl", "qrels/test.tsv"):
            zf.write(folder / rel, f"scifact/{rel}")
    with archive.open("rb") as fh:
        r = client.post("/api/v1/testsets", files={"file": ("scifact.zip", fh)}, data={"format": "beir"})
    assert r.status_code == 201, r.text
    want = TestSet.from_beir(folder)
    body = r.json()
    assert (body["n_queries"], body["n_judgments"], body["n_documents"]) == (
        len(want), len(want.qrels), len(want.corpus or {}))
    r = client.post("/api/v1/testsets", files={"file": ("x.zip", b"PK-not-a-zip")}, data={"format": "beir"})
    assert r.status_code == 422 and "zip" in r.json()["errors"][0]["problem"]


def test_errors_name_the_field(client: TestClient) -> None:
    ts = upload_testset(client)
    run = upload_run(client, ts["id"], RUN_A, "bm25")
    r = client.post("/api/v1/evaluations", json={"test_set_id": ts["id"], "run_ids": [run["id"]],
                                                 "metrics": ["ndgc@10"]})
    assert r.status_code == 422
    err = r.json()["errors"][0]
    assert err["field"] == "metrics" and "ndgc@10" in err["problem"] and err["suggestions"]
    assert any(s.startswith("ndcg") for s in err["suggestions"])

    r = client.post("/api/v1/evaluations", json={"test_set_id": ts["id"], "run_ids": [], "metrics": ["map"]})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "run_ids"
    r = client.post("/api/v1/evaluations", json={"test_set_id": 999, "run_ids": [run["id"]]})
    assert r.status_code == 404 and r.json()["errors"][0]["field"] == "test_set_id"  # names nothing
    r = client.post("/api/v1/evaluations", json={"test_set_id": ts["id"], "run_ids": [run["id"]], "depth": 0})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "depth"

    r = client.post("/api/v1/runs", files={"file": ("bad.trec", "q1 Q0 d1 1 3.0 a\nq1 Q0 d2\n")},
                    data={"test_set_id": str(ts["id"])})
    assert r.status_code == 422
    err = r.json()["errors"][0]
    assert err["field"] == "file" and ":2:" in err["problem"]
    r = client.post("/api/v1/runs", files={"file": ("x.trec", RUN_A)}, data={"test_set_id": "12345"})
    assert r.status_code == 404 and r.json()["errors"][0]["field"] == "test_set_id"
    r = client.post("/api/v1/testsets", files={"file": ("t.json", "{not json")}, data={"format": "json"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "file"
    assert "line 1" in r.json()["errors"][0]["problem"] or ":1:" in r.json()["errors"][0]["problem"]
    r = client.post("/api/v1/testsets", files={"file": ("t.json", "{}")}, data={"format": "xml"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "format"
    r = client.post("/api/v1/testsets", files={"file": ("t.json", "")}, data={"format": "json"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "file"


def test_schema_is_migrated_once(db_url: str) -> None:
    with make_client(db_url) as c:
        upload_testset(c)
    with make_client(db_url) as c:  # second start: migrations are a no-op, data kept
        assert len(c.get("/api/v1/testsets").json()) == 1


def test_upload_limit_413(db_url: str) -> None:
    with make_client(db_url, max_upload_bytes=2000) as c:
        big = "q1 Q0 d1 1 3.0 a\n" * 500
        r = c.post("/api/v1/testsets", files={"file": ("big.json", big)}, data={"format": "json"})
        assert r.status_code == 413
        assert r.json()["errors"][0]["field"] == "body"

        def chunks():  # no Content-Length: refused while streaming
            yield b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="r.trec"\r\n\r\n'
            for _ in range(100):
                yield b"q1 Q0 d1 1 3.0 a\n" * 10

        r = c.post("/api/v1/runs", content=chunks(), headers={"content-type": "multipart/form-data; boundary=XyZ"})
        assert r.status_code == 413
        assert c.get("/api/v1/testsets").json() == []


def test_token_auth(db_url: str) -> None:
    with make_client(db_url, token="s3cret-Tq7wZk2p-token", token_attempts=10_000) as c:  # throttling: elsewhere
        assert c.get("/api/v1/health").status_code == 200
        spec = c.get("/api/v1/openapi.json", headers={"Authorization": "Bearer s3cret-Tq7wZk2p-token"}).json()
        assert c.get("/api/v1/openapi.json").status_code == 401
        for path, ops in spec["paths"].items():
            for method in ops:
                url = path.replace("{test_set_id}", "1").replace("{run_id}", "1").replace("{job_id}", "abc")
                for headers in ({}, {"Authorization": "Bearer wrong"}, {"X-API-Token": "s3cret-token-01234"}):
                    r = c.request(method.upper(), url, headers=headers)
                    if path == "/api/v1/health":
                        assert r.status_code == 200
                    else:
                        assert r.status_code == 401, (method, path, headers)
                        assert r.json()["errors"][0]["field"] == "Authorization"
        ok = {"Authorization": "Bearer s3cret-Tq7wZk2p-token"}
        assert c.get("/api/v1/testsets", headers=ok).status_code == 200
        assert c.get("/api/v1/testsets", headers={"X-API-Token": "s3cret-Tq7wZk2p-token"}).status_code == 200
        r = c.get("/", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/login")


def test_dashboard_pages_and_form_errors(client: TestClient) -> None:
    r = client.post("/testsets", files={"file": ("bad.json", "{oops")}, data={"format": "json"})
    assert r.status_code == 422 and 'id="error"' in r.text and "bad.json" in r.text
    ts = upload_testset(client)
    r = client.post("/runs", files={"file": ("r.trec", "q1 Q0 d1\n")}, data={"test_set_id": str(ts["id"])})
    assert r.status_code == 422 and ":1:" in r.text
    r = client.post("/runs", files={"file": ("r.trec", RUN_A)}, data={"test_set_id": str(ts["id"]), "name": "bm25"},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/testsets/{ts['id']}"
    r = client.post("/evaluations", data={"test_set_id": str(ts["id"]), "run_ids": "1", "metrics": "ndgc@10"})
    assert r.status_code == 422 and "did you mean" in r.text
    r = client.post("/evaluations", data={"test_set_id": str(ts["id"]), "run_ids": "1", "metrics": "mrr P@1"},
                    follow_redirects=False)
    assert r.status_code == 303
    job = wait_job(client, r.headers["location"].rsplit("/", 1)[1])
    for url in ("/testsets", "/runs", "/evaluations", f"/evaluations/{job['id']}", "/compare",
                f"/evaluations/{job['id']}/queries/q1", f"/testsets/{ts['id']}?lang=zh"):
        page = client.get(url)
        assert page.status_code == 200 and page.text.startswith("<!doctype html>"), url
    assert "测试集" in client.get("/testsets").text  # the ?lang=zh choice is kept in a cookie
