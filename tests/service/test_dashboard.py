"""The dashboard a team keeps open: names, counts, warnings, marks, deletes, translations, /docs."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from fastapi.testclient import TestClient

from .conftest import RUN_A, RUN_B, upload_run, upload_testset, wait_job

TEMPLATES = Path(__file__).parents[2] / "src" / "rankscope" / "service" / "web" / "templates"


def _page(c: TestClient, url: str, until: str | None = None, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while True:
        r = c.get(url)
        assert r.status_code == 200, (url, r.status_code, r.text[:300])
        if until is None or until in r.text:
            return r.text
        assert time.monotonic() < deadline, f"{until!r} never appeared on {url}"
        time.sleep(0.1)


def _many_queries(n: int = 30) -> tuple[dict[str, object], str, str]:
    queries = [{"id": f"q{i}", "text": f"question {i}", "relevant": {f"d{i}": 1}} for i in range(n)]
    worse = "".join(f"q{i} Q0 x{i} 1 2.0 a\nq{i} Q0 d{i} 2 1.0 a\n" for i in range(n))
    better = json.dumps({f"q{i}": [f"d{i}"] for i in range(n)})
    return {"queries": queries}, worse, better


def test_evaluation_pages_show_names_counts_marks_and_every_metric(client: TestClient) -> None:
    data, worse, better = _many_queries()
    ts = upload_testset(client, data, name="support questions")
    a = upload_run(client, ts["id"], worse, "bm25")
    b = upload_run(client, ts["id"], better, "dense", fmt="ranked")
    r = client.post("/evaluations", data={"test_set_id": str(ts["id"]), "run_ids": [str(a["id"]), str(b["id"])],
                                          "metrics": "mrr P@1 ndcg@10"}, follow_redirects=False)
    assert r.status_code == 303
    job_id = r.headers["location"].rsplit("/", 1)[1]
    job = wait_job(client, job_id)
    assert job["name"] == "bm25 vs dense · mrr"  # started from the UI, named
    listing = _page(client, "/evaluations")
    assert "bm25 vs dense · mrr" in listing and "support questions" in listing
    assert "60 of 60 scores: 30 queries × 2 runs" in listing  # run × query pairs, said so
    _page(client, f"/evaluations/{job_id}", until='id="report-frame"')
    page = _page(client, f"/evaluations/{job_id}", until="† significantly better than the baseline")
    assert f'href="/testsets/{ts["id"]}" id="testset-link">support questions</a>' in page
    assert '<span class="sig">†</span>' in page  # dense is significantly better: the reports' mark
    assert "† significantly better than the baseline" in page  # and the reports' legend
    head = re.search(r'<table class="grid sortable" id="per-query">\s*<thead>(.*?)</thead>', page, re.S)
    assert head is not None
    for run in ("bm25", "dense"):
        for metric in ("mrr", "P@1", "ndcg@10"):
            assert f"{run} · {metric}" in head.group(1)
    assert page.count('data-value="') >= 30 * 6
    zh = client.get(f"/evaluations/{job_id}?lang=zh").text
    assert "逐查询结果" in zh and "显著优于基线" in zh
    assert client.get("/static/sort.js").status_code == 200


def test_runs_that_do_not_match_the_test_set_are_flagged_and_not_ticked(client: TestClient) -> None:
    ts = upload_testset(client)
    good = upload_run(client, ts["id"], json.dumps({"q1": ["d1"], "q2": ["d3"], "q3": ["d4"]}), "good", fmt="ranked")
    partial = upload_run(client, ts["id"], RUN_A, "partial")  # q1, q2 only
    other = upload_run(client, ts["id"], "x1 Q0 d1 1 1.0 a\nx2 Q0 d2 1 1.0 a\n", "other-ids")
    assert (good["n_judged"], partial["n_judged"], other["n_judged"]) == (3, 2, 0)
    page = client.get(f"/testsets/{ts['id']}").text
    rows = {m.group(2): m.group(1) for m in re.finditer(r'<tr class="cov-(\w+)">.*?<td>(\w[\w-]*)</td>', page, re.S)}
    assert rows == {"good": "ok", "partial": "warn", "other-ids": "fail"}
    assert f'value="{other["id"]}" >' in page or f'value="{other["id"]}" ></td>' in page  # not ticked
    assert f'value="{good["id"]}" checked' in page
    assert "1 judged queries missing" in page


def test_deletes_show_what_goes_with_them(client: TestClient) -> None:
    ts = upload_testset(client)
    a = upload_run(client, ts["id"], RUN_A, "bm25")
    b = upload_run(client, ts["id"], RUN_B, "dense", fmt="ranked")
    r = client.post("/api/v1/evaluations", json={"test_set_id": ts["id"], "run_ids": [a["id"], b["id"]],
                                                 "metrics": ["mrr"]})
    job = wait_job(client, r.json()["id"])
    assert "its scores are removed from 1 evaluations" in client.get(f"/runs/{a['id']}/delete").text
    r = client.post(f"/runs/{a['id']}/delete", follow_redirects=False)
    assert r.status_code == 303 and client.get(f"/api/v1/runs/{a['id']}").status_code == 404
    assert "deletes 1 runs and 1 evaluations" in client.get(f"/testsets/{ts['id']}/delete").text
    assert client.get(f"/evaluations/{job['id']}/delete").status_code == 200
    r = client.post(f"/evaluations/{job['id']}/delete", follow_redirects=False)
    assert r.status_code == 303 and client.get(f"/api/v1/evaluations/{job['id']}").status_code == 404
    r = client.post(f"/testsets/{ts['id']}/delete", follow_redirects=False)
    assert r.status_code == 303
    assert client.get("/api/v1/testsets").json() == [] and client.get("/api/v1/runs").json() == []
    r = client.get(f"/testsets/{ts['id']}")
    assert r.status_code == 404 and r.text.startswith("<!doctype html>") and 'id="error"' in r.text


def test_the_templates_show_no_english_outside_a_message() -> None:
    """Every visible text of a page is a message (``_()``), said in the page's language; the catalog test checks
    that each has its Chinese."""
    for path in TEMPLATES.glob("*.html"):
        text = re.sub(r"{%.*?%}|{{.*?}}|<script.*?</script>|<style.*?</style>", "", path.read_text("utf-8"), flags=re.S)
        words = [w for w in re.findall(r">([^<>]*[A-Za-z]{3,}[^<>]*)<", text)
                 if w.strip() and w.replace("rankscope", "").strip(" ·")]  # the product name is not translated
        assert not words, (path.name, words)


def test_docs_serve_the_openapi_ui_locally(client: TestClient) -> None:
    page = client.get("/docs")
    assert page.status_code == 200 and "/static/swagger/swagger-ui-bundle.js" in page.text
    assert "/api/v1/openapi.json" in page.text and "cdn" not in page.text.lower()
    assert client.get("/static/swagger/swagger-ui-bundle.js").status_code == 200
    spec = client.get("/api/v1/openapi.json").json()
    assert "HTTPValidationError" not in json.dumps(spec)
    op = spec["paths"]["/api/v1/runs"]["post"]["responses"]
    for code in ("400", "401", "403", "404", "413", "422"):
        assert op[code]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}
    report = spec["paths"]["/api/v1/evaluations/{job_id}/report"]["get"]["responses"]
    assert {"200", "202", "409"} <= report.keys()
