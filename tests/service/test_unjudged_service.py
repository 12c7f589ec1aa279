"""Never silent in the service: judged@10, unjudged warnings, condensed lists, runs that share no query,
and document texts cut at the stored length — in the API JSON and on the dashboard pages (en, zh)."""

from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from rankscope.service.ingest import MAX_DOC_CHARS

from .conftest import get_report, upload_run, upload_testset, wait_job

# pooled qrels: every query judges ten documents (two relevant), so a top 10 could be fully judged
POOLED = {"queries": [{"id": f"q{i}", "text": f"question {i}",
                       "relevant": {**{f"d{i}-{j}": 1 for j in range(2)}, **{f"d{i}-{j}": 0 for j in range(2, 10)}}}
                      for i in range(6)]}
# a new retriever: one relevant judged document, then nine nobody judged
NEW = "".join(f"q{i} Q0 d{i}-0 1 10 new\n" + "".join(f"q{i} Q0 fresh{i}-{j} {j + 1} {9 - j} new\n"
                                                      for j in range(1, 10)) for i in range(6))
OLD = "".join(f"q{i} Q0 d{i}-{j} {j + 1} {10 - j} old\n" for i in range(6) for j in range(10))


def _evaluate(c: TestClient, ts: int, runs: list[int], **extra: object) -> dict[str, object]:
    r = c.post("/api/v1/evaluations", json={"test_set_id": ts, "run_ids": runs, "metrics": ["P@10", "ndcg@10"],
                                           **extra})
    assert r.status_code == 202, r.text
    job = wait_job(c, r.json()["id"])
    assert job["status"] == "done", job
    return job


def _page(c: TestClient, url: str, until: str, timeout: float = 30) -> str:
    deadline = time.monotonic() + timeout
    while until not in (text := c.get(url).text):
        assert time.monotonic() < deadline, f"{until!r} never appeared on {url}"
        time.sleep(0.1)
    return text


def test_judged_at_10_and_mostly_unjudged_in_the_api_and_the_pages(client: TestClient) -> None:
    ts = upload_testset(client, POOLED, name="pooled")["id"]
    new = upload_run(client, ts, NEW, "new")["id"]
    old = upload_run(client, ts, OLD, "old")["id"]
    job = _evaluate(client, ts, [new, old])
    runs = {r["name"]: r for r in job["runs"]}
    assert runs["new"]["judged"]["judged@10"] == pytest.approx(0.1) and runs["new"]["judged"]["mostly_unjudged"]
    assert runs["old"]["judged"]["judged@10"] == 1.0 and not runs["old"]["judged"]["mostly_unjudged"]
    assert runs["new"]["judged"]["model_labels"] is None  # no provenance: no model share claimed
    kinds = {w["kind"] for w in runs["new"]["warnings"]}
    assert "mostly_unjudged" in kinds, runs["new"]["warnings"]
    assert not any(w["kind"] == "mostly_unjudged" for w in runs["old"]["warnings"])
    page = _page(client, f"/evaluations/{job['id']}", until="judged@10")
    assert '<td class="num judged"' in page and "0.100" in page and "1.000" in page
    assert "only 10.0% of its top-10 documents are judged" in page, page[-3000:]
    zh = _page(client, f"/evaluations/{job['id']}?lang=zh", until="judged@10")
    assert "前 10 篇文档中只有 10.0% 已评判" in zh


def test_condensed_lists_are_a_policy_of_the_api_and_the_form_and_said_on_the_page(client: TestClient) -> None:
    ts = upload_testset(client, POOLED, name="pooled")["id"]
    new = upload_run(client, ts, NEW, "new")["id"]
    keep = _evaluate(client, ts, [new])
    cond = _evaluate(client, ts, [new], unjudged="condense")
    assert keep["runs"][0]["means"]["P@10"] == pytest.approx(0.1)
    assert cond["runs"][0]["means"]["P@10"] == pytest.approx(0.1)  # one document left of ten: P@10 counts the cutoff
    assert cond["runs"][0]["means"]["ndcg@10"] >= keep["runs"][0]["means"]["ndcg@10"]
    assert cond["runs"][0]["judged"]["judged@10"] == pytest.approx(0.1)  # judged@10 is counted before condensing
    assert any(w["kind"] == "condensed" for w in cond["runs"][0]["warnings"])
    assert not any(w["kind"] == "condensed" for w in keep["runs"][0]["warnings"])
    page = _page(client, f"/evaluations/{cond['id']}", until='id="condensed"')
    assert "condensed lists: unjudged documents removed before ranking" in page
    assert "压缩列表" in _page(client, f"/evaluations/{cond['id']}?lang=zh", until='id="condensed"')
    assert 'id="condensed"' not in _page(client, f"/evaluations/{keep['id']}", until="judged@10")
    form = client.get(f"/testsets/{ts}?lang=en").text
    assert '<option value="condense">condense (removed before ranking)</option>' in form
    r = client.post("/evaluations", data={"test_set_id": str(ts), "run_ids": [str(new)], "metrics": "P@10",
                                          "unjudged": "condense"}, follow_redirects=False)
    assert r.status_code == 303
    job = wait_job(client, r.headers["location"].rsplit("/", 1)[1])
    assert any(w["kind"] == "condensed" for w in job["runs"][0]["warnings"])
    bad = client.post("/api/v1/evaluations", json={"test_set_id": ts, "run_ids": [new], "unjudged": "drop"})
    assert bad.status_code == 422 and "condense" in bad.text


def test_nothing_judged_names_the_cause_and_one_id_of_each_side(client: TestClient) -> None:
    ts = upload_testset(client, POOLED, name="pooled")["id"]
    chunks = upload_run(client, ts, json.dumps({f"q{i}": [f"d{i}-0#0", f"d{i}-0#1"] for i in range(6)}),
                        "chunks", fmt="ranked")["id"]
    job = _evaluate(client, ts, [chunks])
    run = job["runs"][0]
    assert run["judged"]["nothing_judged"] and run["judged"]["mismatch"]["cause"] == "chunk"
    (w,) = [w for w in run["warnings"] if w["kind"] == "nothing_judged"]
    assert '"d0-0#0"' in json.dumps(w) and '"d0-0"' in json.dumps(w)  # one example id of each side
    page = _page(client, f"/evaluations/{job['id']}", until="the ids do not match")
    assert "chunk ids" in page and "d0-0#0" in page and "d0-0" in page


def test_a_run_sharing_no_query_is_refused_with_a_hint(client: TestClient) -> None:
    ts = upload_testset(client, POOLED, name="pooled")["id"]
    other = upload_run(client, ts, "".join(f"topic-q{i} Q0 d{i}-0 1 1.0 x\n" for i in range(6)), "other")["id"]
    r = client.post("/api/v1/evaluations", json={"test_set_id": ts, "run_ids": [other]})
    assert r.status_code == 422, r.text
    body = r.text
    assert "no query in common" in body and "hint" in body and "run_ids" in body
    page = client.post("/evaluations", data={"test_set_id": str(ts), "run_ids": [str(other)], "metrics": "P@10"},
                       follow_redirects=False)
    assert page.status_code == 422 and "no query in common" in page.text


def test_document_texts_cut_at_the_stored_length_are_counted_and_shown(client: TestClient) -> None:
    data = {"queries": [{"id": "q1", "text": "a question", "relevant": {"d1": 1}}],
            "corpus": {"d1": "x" * (MAX_DOC_CHARS + 1), "d2": "short"}}
    ts = upload_testset(client, data, name="long docs")
    assert ts["n_documents"] == 2 and ts["n_documents_cut"] == 1
    assert client.get(f"/api/v1/testsets/{ts['id']}").json()["n_documents_cut"] == 1
    page = client.get(f"/testsets/{ts['id']}").text
    assert f"1 document texts were longer than {MAX_DOC_CHARS} characters" in page
    assert f"超过 {MAX_DOC_CHARS} 个字符" in client.get(f"/testsets/{ts['id']}?lang=zh").text
    short = upload_testset(client, POOLED, name="pooled")
    assert short["n_documents_cut"] == 0 and 'id="docs-cut"' not in client.get(f"/testsets/{short['id']}").text


def test_the_service_reports_carry_judged_at_10_and_the_warnings(client: TestClient) -> None:
    ts = upload_testset(client, POOLED, name="pooled")["id"]
    new = upload_run(client, ts, NEW, "new")["id"]
    one = _evaluate(client, ts, [new])
    report = get_report(client, one["id"], format="json")
    assert report.status_code == 200, report.text
    assert report.json()["judged"]["new"]["judged@10"] == pytest.approx(0.1)
    assert "judged@10" in get_report(client, one["id"], format="markdown").text
    old = upload_run(client, ts, OLD, "old")["id"]
    two = _evaluate(client, ts, [new, old], unjudged="condense")
    text = get_report(client, two["id"], format="markdown").text
    assert "judged@10" in text and "condensed lists" in text.lower(), text[:2000]
