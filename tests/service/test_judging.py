"""People judging a pool through the API: tasks from a stored test set or uploaded texts, invited annotators
(their tokens), blind pre-labels, progress, agreement (checked against scikit-learn), export to qrels +
provenance."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from rankscope.labels import read_labels

from .conftest import upload_testset

POOL = [{"query_id": "q1", "doc_id": "d1", "best_rank": 1, "runs": {"bm25": 1}},
        {"query_id": "q1", "doc_id": "d2", "best_rank": 2, "runs": {"bm25": 2, "dense": 3}},
        {"query_id": "q2", "doc_id": "d3", "best_rank": 1, "runs": {"dense": 1}},
        {"query_id": "q3", "doc_id": "d4", "best_rank": 4, "runs": {"bm25": 4}}]


def jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def new_task(c: TestClient, files: dict[str, Any], status: int = 201, **data: str) -> dict[str, Any]:
    files = {"pool": ("pool.jsonl", jsonl(POOL)), **files}
    r = c.post("/api/v1/judging", files=files, data=data)
    assert r.status_code == status, r.text
    return dict(r.json())


_TOKENS: dict[tuple[int, int, str], str] = {}


def invite(c: TestClient, task: int, who: str, blind: bool = True) -> str:
    """The invitation token of ``who`` (invited once per client and task)."""
    key = (id(c), task, who)
    if key not in _TOKENS:
        r = c.post(f"/api/v1/judging/{task}/annotators", json={"name": who, "blind": blind})
        assert r.status_code == 201, r.text
        body = r.json()
        assert body["link"] == f"/judging/{task}/join?token={body['token']}" and body["blind"] is blind
        _TOKENS[key] = body["token"]
    return _TOKENS[key]


def as_(c: TestClient, task: int, who: str) -> dict[str, str]:
    return {"X-Annotator-Token": invite(c, task, who)}


def judge(c: TestClient, task: int, item: int, who: str, grade: int | None, **extra: Any) -> dict[str, Any]:
    body = {"item_id": item, **({"grade": grade} if grade is not None else {"skip": True}), **extra}
    r = c.post(f"/api/v1/judging/{task}/judgments", json=body, headers=as_(c, task, who))
    assert r.status_code == 200, r.text
    return dict(r.json())


def items(c: TestClient, task: int, **params: Any) -> list[dict[str, Any]]:
    r = c.get(f"/api/v1/judging/{task}/items", params=params)
    assert r.status_code == 200, r.text
    return list(r.json())


def test_two_annotators_judge_a_pool_of_a_stored_test_set(client: TestClient, tmp_path: Path) -> None:
    from sklearn.metrics import cohen_kappa_score

    ts = upload_testset(client)
    task = new_task(client, {}, test_set_id=str(ts["id"]), name="toy pool", order="pool")
    assert (task["name"], task["n_items"], task["n_queries"], task["n_prelabels"]) == ("toy pool", 4, 3, 0)
    assert task["info"]["texts"] == f"test set {ts['id']} 'toy'" and task["info"]["runs"] == ["bm25", "dense"]
    listed = items(client, task["id"])
    assert [(i["query_id"], i["doc_id"]) for i in listed] == [(r["query_id"], r["doc_id"]) for r in POOL]
    assert listed[0]["query_text"] == "what is bm25" and listed[0]["doc_text"].startswith("BM25 is a ranking")
    assert listed[1]["runs"] == {"bm25": 2, "dense": 3} and listed[0]["prelabel"] is None

    # alice walks the pool with /next; bob judges three items and skips one
    grades = {"alice": [3, 1, 2, 0], "bob": [2, 1, 2, None]}
    for who, gs in grades.items():
        after = -1
        for g in gs:
            nxt = client.get(f"/api/v1/judging/{task['id']}/next", params={"annotator": who, "after": after}).json()
            item = nxt["item"]
            judge(client, task["id"], item["id"], who, g, note=f"{who} on {item['doc_id']}")
            after = item["position"]
        done = client.get(f"/api/v1/judging/{task['id']}/next", params={"annotator": who}).json()
        assert done == {"item": None, "remaining": 0}
    # judging again replaces the judgment (one row per item and annotator)
    judge(client, task["id"], listed[0]["id"], "alice", 3, note="sure")
    got = client.get(f"/api/v1/judging/{task['id']}").json()
    assert got["annotators"] == [
        {"annotator": "alice", "judged": 4, "skipped": 0, "remaining": 0, "prelabel_shown": 0},
        {"annotator": "bob", "judged": 3, "skipped": 1, "remaining": 0, "prelabel_shown": 0}]
    progress = client.get(f"/api/v1/judging/{task['id']}/progress").json()
    assert progress[0] == {"query_id": "q1", "query_text": "what is bm25", "items": 2,
                           "annotators": {"alice": {"judged": 2, "skipped": 0}, "bob": {"judged": 2, "skipped": 0}}}
    assert progress[2]["annotators"]["bob"] == {"judged": 0, "skipped": 1}
    notes = client.get(f"/api/v1/judging/{task['id']}/judgments", params={"annotator": "alice"}).json()
    assert [n["note"] for n in notes][:2] == ["sure", "alice on d2"]

    # agreement: Cohen's κ on the three items both graded, as scikit-learn computes it
    agr = client.get(f"/api/v1/judging/{task['id']}/agreement", params={"relevance_level": 2}).json()
    pair = agr["pairs"][0]
    assert (pair["a"], pair["b"], pair["both"], pair["only_a"], pair["only_b"]) == ("alice", "bob", 3, 1, 0)
    a, b = [3, 1, 2], [2, 1, 2]
    assert pair["kappa_weighted"]["value"] == pytest.approx(
        cohen_kappa_score(a, b, weights="linear", labels=[1, 2, 3]))
    assert pair["kappa_binary"]["value"] == pytest.approx(
        cohen_kappa_score([g >= 2 for g in a], [g >= 2 for g in b]))
    assert pair["exact"] == pytest.approx(2 / 3) and agr["prelabels"] == []

    # export: one annotator, or everyone merged (median: the lower of two grades); provenance names them
    alice = client.get(f"/api/v1/judging/{task['id']}/qrels", params={"annotator": "alice"})
    assert alice.headers["content-type"].startswith("text/plain")
    assert alice.text.splitlines() == ["q1 0 d1 3", "q1 0 d2 1", "q2 0 d3 2", "q3 0 d4 0"]
    both = client.get(f"/api/v1/judging/{task['id']}/export").json()
    assert both["qrels"].splitlines() == ["q1 0 d1 2", "q1 0 d2 1", "q2 0 d3 2", "q3 0 d4 0"]
    assert both["summary"] == {"items": 4, "human": 4, "merge": "median", "merged": 3, "disagreements": 1,
                               "skipped": 0, "prelabels": 0, "unlabelled": 0, "not_blind": 0}
    (tmp_path / "h.qrels").write_text(both["qrels"])
    side = client.get(f"/api/v1/judging/{task['id']}/provenance")
    assert side.headers["content-type"].startswith("application/x-ndjson")
    (tmp_path / "h.qrels.provenance.jsonl").write_text(side.text)
    labels = read_labels(tmp_path / "h.qrels")
    rows = {(r["doc_id"]): r for r in labels.table.to_pylist()}
    assert rows["d1"]["annotator"] == "alice,bob" and rows["d4"]["annotator"] == "alice"
    assert labels.counts() == {"human": 4, "model": 0, "failed": 0}
    top = client.get(f"/api/v1/judging/{task['id']}/qrels", params={"merge": "max"}).text
    assert "q1 0 d1 3" in top

    r = client.delete(f"/api/v1/judging/{task['id']}")
    assert r.status_code == 204 and client.get(f"/api/v1/judging/{task['id']}").status_code == 404
    assert client.get("/api/v1/judging").json() == []


def test_uploaded_texts_and_blind_prelabels(client: TestClient) -> None:
    queries = jsonl([{"_id": "q1", "text": "什么是 BM25"}, {"_id": "q2", "text": "dense retrieval"},
                     {"_id": "q3", "text": "rerankers"}])
    long_doc = "长文档 " * 40_000  # 160,000 characters: shown cut, and said so
    corpus = gzip.compress(jsonl([{"_id": "d1", "title": "BM25", "text": "一种排序函数"},
                                  {"_id": "d2", "text": "Okapi BM25"}, {"_id": "d3", "text": long_doc},
                                  {"_id": "d4", "text": "Cross-encoders"}, {"_id": "dx", "text": "unused"}]).encode())
    labels = "q1 0 d1 2\nq1 0 d2 0\nq9 0 d1 1\n"
    side = jsonl([{"query_id": "q1", "doc_id": "d1", "grade": 2, "source": "model", "model": "m", "prompt": "p"},
                  {"query_id": "q1", "doc_id": "d2", "grade": 0, "source": "model", "model": "m", "prompt": "p"},
                  {"query_id": "q2", "doc_id": "d3", "grade": None, "source": "model", "model": "m", "prompt": "p",
                   "error": "unreadable reply"},
                  {"query_id": "q9", "doc_id": "d1", "grade": 1, "source": "model", "model": "m", "prompt": "p"}])
    task = new_task(client, {"queries": ("queries.jsonl", queries), "corpus": ("corpus.jsonl.gz", corpus),
                             "labels": ("judged.qrels", labels), "provenance": ("judged.qrels.provenance.jsonl", side)})
    info = task["info"]
    assert (task["n_prelabels"], info["prelabels"], info["prelabels_failed"], info["prelabels_outside_pool"]) == \
        (2, 3, 1, 1)
    assert info["docs_cut"] == 1 and info["prelabel_models"] == ["m / p"] and info["order"] == "shuffled"
    assert info["texts"] == "queries.jsonl and corpus.jsonl.gz"
    listed = {i["doc_id"]: i for i in items(client, task["id"])}
    assert listed["d1"]["query_text"] == "什么是 BM25" and listed["d1"]["doc_text"] == "BM25 一种排序函数"
    assert listed["d3"]["doc_cut"] and listed["d3"]["doc_length"] == len(long_doc)
    assert len(listed["d3"]["doc_text"]) == 100_000
    assert all(i["prelabel"] is None for i in listed.values())  # blind unless asked
    shown = {i["doc_id"]: i["prelabel"] for i in items(client, task["id"], prelabels="true")}
    assert shown["d1"] == {"grade": 2, "source": "model", "model": "m", "prompt": "p", "error": None}
    assert shown["d3"]["grade"] is None and shown["d3"]["error"] == "unreadable reply" and shown["d4"] is None

    # carol (who may see pre-labels) judges d1 blind, then asks the service for d2's pre-label and judges it:
    # not blind, and a later re-judgment keeps it so; the client cannot say otherwise
    invite(client, task["id"], "carol", blind=False)
    judge(client, task["id"], listed["d1"]["id"], "carol", 2)
    params = {"prelabels": "true", "offset": listed["d2"]["position"], "limit": 1}
    r = client.get(f"/api/v1/judging/{task['id']}/items", params=params, headers=as_(client, task["id"], "carol"))
    assert r.status_code == 200 and r.json()[0]["prelabel"]["grade"] == 0
    judge(client, task["id"], listed["d2"]["id"], "carol", 1)
    again = judge(client, task["id"], listed["d2"]["id"], "carol", 1)
    assert again["prelabel_shown"] is True
    r = client.post(f"/api/v1/judging/{task['id']}/judgments", headers=as_(client, task["id"], "carol"),
                    json={"item_id": listed["d1"]["id"], "grade": 2, "prelabel_shown": False})
    assert r.status_code == 422  # not a field of the request: the service decides
    agr = client.get(f"/api/v1/judging/{task['id']}/agreement").json()
    vs = agr["prelabels"][0]
    assert (vs["annotator"], vs["both"], vs["not_blind"], vs["exact"]) == ("carol", 1, 1, 1.0)
    assert agr["pairs"] == []
    got = client.get(f"/api/v1/judging/{task['id']}").json()["annotators"][0]
    assert got["prelabel_shown"] == 1 and got["remaining"] == 2

    # export with the pre-labels: human wins, the model fills in, the failure is kept in the sidecar
    out = client.get(f"/api/v1/judging/{task['id']}/export", params={"prelabels": "true"}).json()
    assert out["qrels"].splitlines() == ["q1 0 d1 2", "q1 0 d2 1"]
    assert out["summary"]["human"] == 2 and out["summary"]["prelabels"] == 0
    assert out["summary"]["prelabels_failed"] == 1 and out["summary"]["unlabelled"] == 2
    sources = [json.loads(line)["source"] for line in out["provenance"].splitlines()]
    assert sources == ["human", "human", "model"]
    blind = {json.loads(line)["doc_id"]: json.loads(line).get("blind") for line in out["provenance"].splitlines()}
    assert blind == {"d1": True, "d2": False, "d3": None} and out["summary"]["not_blind"] == 1


def test_mistakes_get_clear_4xx(client: TestClient) -> None:
    ts = upload_testset(client)

    def problem(r: Any, status: int, field: str) -> str:
        assert r.status_code == status, r.text
        body = r.json()
        assert body["errors"][0]["field"] == field, body
        return str(body["detail"])

    pool_missing = [*POOL, {"query_id": "q1", "doc_id": "d9"}]
    r = client.post("/api/v1/judging", files={"pool": ("p.jsonl", jsonl(pool_missing))},
                    data={"test_set_id": str(ts["id"])})
    assert "1 of 5 documents of the pool have no text in test set" in problem(r, 422, "test_set_id")
    r = client.post("/api/v1/judging", files={"pool": ("mine.jsonl", jsonl(POOL) + "{oops\n")},
                    data={"test_set_id": str(ts["id"])})
    assert problem(r, 422, "pool").startswith("pool: mine.jsonl:5: invalid JSON")
    r = client.post("/api/v1/judging", files={"pool": ("p.jsonl", jsonl(POOL)), "queries": ("q.tsv", "q1\tx\n")},
                    data={"test_set_id": str(ts["id"])})
    problem(r, 422, "test_set_id")
    r = client.post("/api/v1/judging", files={"pool": ("p.jsonl", jsonl(POOL))})
    problem(r, 422, "test_set_id")
    r = client.post("/api/v1/judging", files={"pool": ("p.jsonl", jsonl(POOL))}, data={"test_set_id": "999"})
    problem(r, 404, "test_set_id")  # names nothing
    r = client.post("/api/v1/judging", files={"pool": ("p.jsonl", jsonl(POOL)), "queries": ("q.tsv", "q1\tx\n"),
                                              "corpus": ("c.tsv", "d1\tx\n")})
    assert "2 of 3 queries of the pool have no text in q.tsv and c.tsv" in problem(r, 422, "queries")
    r = client.post("/api/v1/judging", files={"pool": ("p.jsonl", jsonl(POOL)), "labels": ("l.qrels", "q1 0 d1\n")},
                    data={"test_set_id": str(ts["id"])})
    assert "l.qrels:1" in problem(r, 422, "labels")

    task = new_task(client, {}, test_set_id=str(ts["id"]))
    other = new_task(client, {}, test_set_id=str(ts["id"]))
    item = items(client, task["id"])[0]["id"]
    foreign = items(client, other["id"])[0]["id"]
    url = f"/api/v1/judging/{task['id']}/judgments"
    ann = as_(client, task["id"], "ann")
    problem(client.post(url, json={"item_id": item, "grade": 4}, headers=ann), 422, "grade")
    problem(client.post(url, json={"item_id": item, "grade": 1, "skip": True}, headers=ann), 422, "grade")
    problem(client.post(url, json={"item_id": item}, headers=ann), 422, "grade")
    problem(client.post(url, json={"item_id": item, "annotator": "a,b", "grade": 1}, headers=ann), 422, "annotator")
    problem(client.post(url, json={"item_id": foreign, "grade": 1}, headers=ann), 404, "item_id")
    problem(client.post(url, json={"item_id": item, "grade": 1}), 401, "X-Annotator-Token")
    problem(client.post(url, json={"item_id": item, "grade": 1}, headers={"X-Annotator-Token": "forged"}), 401,
            "X-Annotator-Token")
    problem(client.post(f"/api/v1/judging/{task['id']}/annotators", json={"name": "ann"}), 409, "name")
    assert "nothing to export" in problem(client.get(f"/api/v1/judging/{task['id']}/qrels"), 409, "path")
    judge(client, task["id"], item, "annette", 1)
    r = client.get(f"/api/v1/judging/{task['id']}/qrels", params={"annotator": "anette"})
    assert "did you mean: annette?" in problem(r, 404, "annotator")
    problem(client.get("/api/v1/judging/999"), 404, "path")
    problem(client.get(f"/api/v1/judging/{task['id']}/agreement", params={"relevance_level": 0}), 422,
            "relevance_level")


def test_the_migration_creates_what_the_models_declare(tmp_path: Path) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from rankscope.service.db import Base, Database
    from rankscope.service.migrations import upgrade

    db = Database(f"sqlite:///{tmp_path / 'm.sqlite3'}")
    upgrade(db)
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == [], diff


def test_dashboard_forms_refuse_mistakes_and_other_origins(client: TestClient) -> None:
    ts = upload_testset(client)
    missing = jsonl([*POOL, {"query_id": "q1", "doc_id": "d9"}])
    r = client.post("/judging", files={"pool": ("p.jsonl", missing)}, data={"test_set_id": str(ts["id"])})
    assert r.status_code == 422 and 'id="error"' in r.text
    assert "1 of 5 documents of the pool have no text in test set" in r.text
    r = client.post("/judging", files={"pool": ("p.jsonl", jsonl(POOL))}, data={"test_set_id": str(ts["id"])},
                    follow_redirects=False)
    assert r.status_code == 303
    task = r.headers["location"].rsplit("/", 1)[1]
    assert client.get(f"/judging/{task}/judge").status_code == 401  # nobody judges without an invitation
    r = client.post(f"/judging/{task}/annotators", data={"annotator": "a,b"})
    assert r.status_code == 422 and "annotator: must not contain commas" in r.text
    page = client.post(f"/judging/{task}/annotators", data={"annotator": "alice"}).text
    link = page.split('id="invite-link" value="')[1].split('"')[0]
    assert link.startswith(f"http://127.0.0.1/judging/{task}/join?token=")
    r = client.get(link.replace("http://127.0.0.1", ""), follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == f"/judging/{task}/judge"
    page = client.get(f"/judging/{task}/judge").text
    assert "judging as alice" in page
    item = page.split('name="item_id" value="')[1].split('"')[0]
    form = {"item_id": item, "grade": "2", "note": ""}
    own = {"Origin": "http://127.0.0.1"}
    r = client.post(f"/judging/{task}/judge", data={**form, "grade": "7"}, headers=own)
    assert r.status_code == 422 and "grade: expected 0, 1, 2, 3 or skip" in r.text
    r = client.post(f"/judging/{task}/judge", data=form)  # signed in by the invitation's cookie: Origin needed
    assert r.status_code == 403 and r.json()["errors"][0]["field"] == "Origin"
    r = client.post(f"/judging/{task}/judge", data=form, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and r.json()["errors"][0]["field"] == "Origin"
    assert client.get(f"/api/v1/judging/{task}").json()["annotators"] == []  # nothing stored
    r = client.post(f"/judging/{task}/judge", data={**form, "annotator": "bob"}, headers={"Origin": "http://127.0.0.1"},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith(f"/judging/{task}/judge?item=")
    got = client.get(f"/api/v1/judging/{task}").json()["annotators"]
    assert [(a["annotator"], a["judged"]) for a in got] == [("alice", 1)]  # the invitation's name, not the form's
    assert client.get(f"/judging/{task}/join", params={"token": "forged"}).status_code == 401
    assert "其中" in client.get(f"/judging/{task}?lang=zh").text


def test_one_test_set_file_gives_queries_and_documents(client: TestClient) -> None:
    from .conftest import TESTSET

    task = new_task(client, {"queries": ("toy.json", json.dumps(TESTSET))}, order="pool")
    assert task["info"]["texts"] == "toy.json" and task["n_items"] == 4
    first = items(client, task["id"])[0]
    assert (first["query_text"], first["doc_text"]) == ("what is bm25", TESTSET["corpus"]["d1"])


def test_prelabel_receipts_are_kept_through_the_export(client: TestClient) -> None:
    # what rankscope judge recorded of each answer (raw reply, time, endpoint, prompt hash, tokens, cache hit) is
    # kept with the pre-label and comes back in the export's sidecar; blind is the service's own record
    ts = upload_testset(client)
    receipt = {"reply": '{"grade": 1}', "time": "2025-01-31T12:00:00Z", "endpoint": "http://127.0.0.1:8000/v1",
               "prompt_hash": "ab" * 32, "tokens_in": 812, "tokens_out": 9, "cached": False}
    side = jsonl([{"query_id": "q1", "doc_id": "d1", "grade": 1, "source": "model", "model": "m", "prompt": "p",
                   **receipt},
                  {"query_id": "q2", "doc_id": "d3", "grade": 2, "source": "model", "model": "m", "prompt": "p",
                   **receipt, "reply": "2", "tokens_in": 700, "cached": True},
                  {"query_id": "q3", "doc_id": "d4", "grade": None, "source": "model", "model": "m", "prompt": "p",
                   "error": "unreadable reply", **receipt, "reply": "maybe?"}])
    task = new_task(client, {"labels": ("judged.qrels", "q1 0 d1 1\nq2 0 d3 2\n"),
                             "provenance": ("judged.qrels.provenance.jsonl", side)}, test_set_id=str(ts["id"]))
    listed = {i["doc_id"]: i for i in items(client, task["id"])}
    invite(client, task["id"], "dana", blind=True)
    judge(client, task["id"], listed["d1"]["id"], "dana", 3)
    out = client.get(f"/api/v1/judging/{task['id']}/export", params={"prelabels": "true"}).json()
    rows = {r["doc_id"]: r for r in map(json.loads, out["provenance"].splitlines())}
    assert rows["d1"]["source"] == "human" and rows["d1"]["blind"] is True and rows["d1"]["annotator"] == "dana"
    assert "reply" not in rows["d1"] and "tokens_in" not in rows["d1"]  # a person's label: no receipt
    assert {k: rows["d3"][k] for k in receipt} == {**receipt, "reply": "2", "tokens_in": 700, "cached": True}
    assert "blind" not in rows["d3"] and rows["d3"]["model"] == "m"
    assert rows["d4"]["grade"] is None and rows["d4"]["reply"] == "maybe?" and rows["d4"]["error"] == "unreadable reply"
    assert rows["d4"]["prompt_hash"] == "ab" * 32


def test_three_annotators_get_fleiss_kappa_and_krippendorffs_alpha(client: TestClient) -> None:
    import krippendorff
    import numpy as np
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    ts = upload_testset(client)
    task = new_task(client, {}, test_set_id=str(ts["id"]), name="three", order="pool")["id"]
    listed = items(client, task)
    grades = {"alice": [3, 1, 2, 0], "bob": [2, 1, 2, 0], "carol": [3, 0, 2, 1]}
    for who, gs in grades.items():
        for item, g in zip(listed, gs):
            judge(client, task, item["id"], who, g)
    agr = client.get(f"/api/v1/judging/{task}/agreement").json()
    group = agr["group"]
    matrix = np.array(list(grades.values()))  # annotators x items, every item graded by all three
    table, _ = aggregate_raters(matrix.T)
    assert group["fleiss_kappa"]["value"] == pytest.approx(fleiss_kappa(table))
    assert group["krippendorff_alpha_ordinal"]["value"] == pytest.approx(
        krippendorff.alpha(reliability_data=matrix.astype(float), level_of_measurement="ordinal"))
    assert (group["annotators"], group["items_graded_by_all"], group["bootstrap"]["over"]) == (
        ["alice", "bob", "carol"], 4, "queries")
    page = client.get(f"/judging/{task}").text
    assert 'id="agreement-group"' in page and "Fleiss" in page and "Krippendorff" in page
    # two annotators: pairs only, no group reading
    two = new_task(client, {}, test_set_id=str(ts["id"]), name="two", order="pool")["id"]
    for who in ("alice", "bob"):
        for item, g in zip(items(client, two), grades[who]):
            judge(client, two, item["id"], who, g)
    assert client.get(f"/api/v1/judging/{two}/agreement").json()["group"] is None
