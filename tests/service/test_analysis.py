"""Comparisons, report downloads and the CI check over stored runs."""

from __future__ import annotations

import json

import pytest

from rankscope.comparison import compare

from .conftest import RUN_A, RUN_B, get_report, make_client, upload_run, upload_testset, wait_job
from .test_api import _qrels


@pytest.fixture
def stored(db_url: str):  # type: ignore[no-untyped-def]
    with make_client(db_url) as c:
        ts = upload_testset(c)
        a = upload_run(c, ts["id"], RUN_A, "bm25")
        b = upload_run(c, ts["id"], RUN_B, "dense", fmt="ranked")
        yield c, ts, a, b


def test_comparison_matches_compare(stored) -> None:  # type: ignore[no-untyped-def]
    c, ts, a, b = stored
    r = c.post("/api/v1/comparisons", json={"test_set_id": ts["id"], "run_ids": [a["id"], b["id"]],
                                            "metrics": ["ndcg@10", "mrr"], "baseline_run_id": a["id"]})
    assert r.status_code == 200, r.text
    body = r.json()
    from rankscope import Run

    want = compare(_qrels(), [Run.from_dict({"q1": {"d1": 3, "d9": 2, "d2": 1}, "q2": {"d7": 2, "d3": 1}}, "bm25"),
                              Run.from_ranked_lists(json.loads(RUN_B), "dense")], ["ndcg@10", "mrr"],
                   baseline="bm25")
    assert body["systems"] == ["bm25", "dense"] and body["run_ids"] == {"bm25": a["id"], "dense": b["id"]}
    assert body["means"]["dense"] == pytest.approx(want.means["dense"])
    assert body["pairs"][0]["p_value"] == pytest.approx(want.pairs[0].p_value)
    r = c.post("/api/v1/comparisons", json={"test_set_id": ts["id"], "run_ids": [a["id"], b["id"]],
                                            "metrics": ["ndcg@10"], "baseline_run_id": 999})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "baseline_run_id"


def test_report_downloads(stored) -> None:  # type: ignore[no-untyped-def]
    c, ts, a, b = stored
    job = c.post("/api/v1/evaluations", json={"test_set_id": ts["id"], "run_ids": [a["id"], b["id"]],
                                              "metrics": ["ndcg@10", "mrr"]}).json()
    job = wait_job(c, job["id"])
    for fmt, needle in (("html", "<html"), ("markdown", "|"), ("json", '"schema_version"'), ("latex", "tabular")):
        r = get_report(c, job["id"], format=fmt, lang="zh")
        assert r.status_code == 200, (fmt, r.text[:300])
        assert needle in r.text and "dense" in r.text
        assert "attachment" in r.headers["content-disposition"]
    r = c.get(f"/api/v1/evaluations/{job['id']}/report", params={"format": "pdf"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "format"


def test_check_pass_and_fail(stored) -> None:  # type: ignore[no-untyped-def]
    c, ts, a, b = stored
    ok = c.post("/api/v1/check", json={"test_set_id": ts["id"], "run_id": b["id"],
                                       "requirements": ["recall@10 >= 0.5"]}).json()
    assert ok["passed"] is True and ok["outcomes"][0]["passed"] is True
    bad = c.post("/api/v1/check", json={"test_set_id": ts["id"], "run_id": a["id"],
                                        "requirements": ["recall@10 >= 0.9", "mrr >= 0.1"]}).json()
    assert bad["passed"] is False and [o["passed"] for o in bad["outcomes"]] == [False, True]
    r = c.post("/api/v1/check", json={"test_set_id": ts["id"], "run_id": a["id"], "requirements": ["ndgc@10>=1"]})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "requirements"
    r = c.post("/api/v1/check", json={"test_set_id": ts["id"], "run_id": a["id"]})
    assert r.status_code == 422 and "nothing to check" in r.json()["errors"][0]["problem"]


def test_comparison_check_and_compare_page_warn_about_missing_queries(stored) -> None:  # type: ignore[no-untyped-def]
    # bm25 ranks q1 and q2 only: q3 scores 0 for it, and every answer of the service says so with the count
    c, ts, a, b = stored
    body = c.post("/api/v1/comparisons", json={"test_set_id": ts["id"], "run_ids": [a["id"], b["id"]],
                                               "metrics": ["mrr"], "baseline_run_id": a["id"]}).json()
    assert body["queries"]["bm25"]["missing_from_run"] == 1
    (w,) = [w for w in body["warnings"] if w["kind"] == "missing_zero"]
    assert (w["system"], w["count"], w["total"]) == ("bm25", 1, 3) and "no ranking for 1 of the 3" in w["message"]
    check = c.post("/api/v1/check", json={"test_set_id": ts["id"], "run_id": a["id"], "requirements": ["mrr>=0.1"],
                                          "baseline_run_id": b["id"], "max_drops": ["mrr=0.5"]}).json()
    assert any(w["kind"] == "missing_zero" and w["system"] == "bm25" for w in check["warnings"])
    assert any(line.startswith("WARNING  bm25 has no ranking for 1 of the 3") for line in check["lines"])
    assert "Warning:** bm25 has no ranking" in check["markdown"]
    assert check["outcomes"][1]["lower_bound"] is not None
    r = c.post("/api/v1/check", json={"test_set_id": ts["id"], "run_id": a["id"], "baseline_run_id": b["id"],
                                      "max_drops": ["mrr=0.5"], "test": "wilcoxon"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "test"
    r = c.post("/api/v1/comparisons", json={"test_set_id": ts["id"], "run_ids": [a["id"], b["id"]],
                                            "metrics": ["mrr"], "test": "tukey-hsd"})
    assert r.status_code == 200 and r.json()["groups"]["mrr"].keys() == {"bm25", "dense"}
    for lang, needle in (("en", "bm25 has no ranking for 1 of the 3 qrels queries"),
                         ("zh", "bm25 缺少 qrels 中 3 个查询里的 1 个")):
        page = c.get("/compare", params={"lang": lang, "test_set_id": ts["id"], "run_ids": [a["id"], b["id"]],
                                         "baseline": a["id"], "metrics": "mrr"})
        assert page.status_code == 200 and needle in page.text


def test_metric_lists_policies_and_the_report_reads_stored_scores(stored, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    c, ts, a, b = stored
    body = {"test_set_id": ts["id"], "run_ids": [a["id"], b["id"]], "metrics": ["ndcg@1,3", "mrr"],
            "score_precision": "float64"}
    job = wait_job(c, c.post("/api/v1/evaluations", json=body).json()["id"])
    assert job["status"] == "done", job
    assert job["params"]["score_precision"] == "float64"
    assert set(job["runs"][0]["means"]) == {"ndcg@1", "ndcg@3", "mrr"}
    assert job["runs"][0]["queries"]["float32_reordered"] == 0
    # the report compares the per-query scores the job stored: the metrics are not evaluated again
    import rankscope.engine.evaluator as evaluator_mod

    calls: list[tuple[str, ...]] = []
    real = evaluator_mod.Evaluator.__init__

    def spy(self, qrels, metrics=None, **kw):  # type: ignore[no-untyped-def]
        calls.append(tuple(metrics or ()))
        real(self, qrels, metrics, **kw)

    monkeypatch.setattr(evaluator_mod.Evaluator, "__init__", spy)
    r = get_report(c, job["id"], format="json")
    assert r.status_code == 200, r.text
    report = r.json()
    assert report["metrics"] == ["ndcg@1", "ndcg@3", "mrr"] and report["policies"]["score_precision"] == "float64"
    assert report["analysis"]["first_rank_source"] == "reciprocal_rank"  # 1/RR of the stored mrr: exact
    assert all(m[0].startswith(("ndcg@", "recall@", "precision@")) for m in calls)  # only the curves
    for bad, field in (({"score_precision": "half"}, "score_precision"), ({"metrics": ["recall5"]}, "metrics")):
        r = c.post("/api/v1/evaluations", json={**body, **bad})
        assert r.status_code == 422
        assert r.json()["errors"][0]["field"] == field
        assert field != "metrics" or "recall@5" in r.json()["errors"][0]["problem"]


def test_check_decides_drops_by_the_gates_default_test_and_never_passes_an_undecided_one(stored) -> None:  # type: ignore[no-untyped-def]
    c, ts, a, b = stored
    body = {"test_set_id": ts["id"], "run_id": a["id"], "baseline_run_id": b["id"], "max_drops": ["mrr=0.5"]}
    out = c.post("/api/v1/check", json=body).json()
    assert out["outcomes"][0]["test"] == "betting" and any("betting test" in line for line in out["lines"])
    assert out["verdict"] in ("pass", "fail")
    # the same ranking under another name: no difference varies, no test can bound the drop
    same = upload_run(c, ts["id"], RUN_A, "bm25-again")
    out = c.post("/api/v1/check", json={**body, "baseline_run_id": same["id"]}).json()
    assert out["outcomes"][0]["status"] == "undecided"
    assert out["passed"] is False and out["undecided"] is True and out["verdict"] == "undecided"
    assert out["exit_code"] == 3
    assert out["lines"][-1].startswith("gate UNDECIDED") and "PASS" not in "\n".join(out["lines"])
    assert "UNDECIDED" in out["markdown"] and "✅" not in out["markdown"]
    zh = c.post("/api/v1/check", json={**body, "baseline_run_id": same["id"], "lang": "zh"})
    assert zh.status_code == 200, zh.text
    assert zh.json()["lines"][-1].startswith("门禁未决") and "未决" in zh.json()["markdown"]
