"""Ids: a deleted object's id is never given again (SQLite's AUTOINCREMENT, a migration for existing databases),
and a query id is a value in the dashboard's links, never a part of their path."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin

from sqlalchemy import text

from .conftest import make_client, upload_run, upload_testset, wait_job

HOSTILE = ("../../../testsets/1/delete", "..", ".", "a/../../b", "q?x=1#frag", "%2e%2e", "q&x")


def test_a_deleted_id_is_never_given_again(db_url: str) -> None:
    with make_client(db_url) as c:
        first = upload_testset(c)["id"]
        second = upload_testset(c, name="second")["id"]
        run = upload_run(c, second, "q1 Q0 d1 1 1.0 r\n", "r")["id"]
        assert c.delete(f"/api/v1/runs/{run}").status_code == 204
        assert c.delete(f"/api/v1/testsets/{second}").status_code == 204
        third = upload_testset(c, name="third")["id"]
        assert third not in (first, second), "a stale id now names another test set"
        assert upload_run(c, third, "q1 Q0 d1 1 1.0 r\n", "r2")["id"] != run
        pool = '{"query_id": "q1", "doc_id": "d1"}\n'
        task = c.post("/api/v1/judging", files={"pool": ("p.jsonl", pool)}, data={"test_set_id": str(third)}).json()
        items = [i["id"] for i in c.get(f"/api/v1/judging/{task['id']}/items").json()]
        assert c.delete(f"/api/v1/judging/{task['id']}").status_code == 204
        again = c.post("/api/v1/judging", files={"pool": ("p.jsonl", pool)}, data={"test_set_id": str(third)}).json()
        assert again["id"] != task["id"]
        assert not set(items) & {i["id"] for i in c.get(f"/api/v1/judging/{again['id']}/items").json()}


def test_an_existing_sqlite_database_is_migrated_to_ids_never_reused(tmp_path: Path) -> None:
    from rankscope.service.db import Database
    from rankscope.service.migrations import upgrade

    db = Database(f"sqlite:///{tmp_path / 'old.sqlite3'}")
    upgrade(db, "0005")
    with db.engine.begin() as conn:
        conn.execute(text("INSERT INTO test_sets (id, name, description, source_format, created_at, n_queries, "
                          "n_judgments, n_documents, n_documents_cut, qrels) VALUES "
                          "(1, 'a', '', 'json', '2026-01-01', 1, 1, 0, 0, x'00'), "
                          "(2, 'b', '', 'json', '2026-01-01', 1, 1, 0, 0, x'00')"))
        conn.execute(text("INSERT INTO runs (id, test_set_id, name, source, source_format, created_at, n_queries, "
                          "n_rows, data) VALUES (7, 2, 'r', 'upload', 'trec', '2026-01-01', 1, 1, x'00')"))
    upgrade(db)
    with db.engine.begin() as conn:
        assert conn.execute(text("SELECT count(*) FROM runs")).scalar() == 1  # nothing lost in the rebuild
        for table in ("test_sets", "runs", "judging_tasks", "judging_items", "judging_annotators", "monitors"):
            sql = conn.execute(text("SELECT sql FROM sqlite_master WHERE name = :t"), {"t": table}).scalar()
            assert "AUTOINCREMENT" in sql, table
        conn.execute(text("DELETE FROM test_sets WHERE id = 2"))
        assert conn.execute(text("SELECT count(*) FROM runs")).scalar() == 0  # foreign keys on again
        conn.execute(text("INSERT INTO test_sets (name, description, source_format, created_at, n_queries, "
                          "n_judgments, n_documents, n_documents_cut, qrels) VALUES "
                          "('c', '', 'json', '2026-01-01', 1, 1, 0, 0, x'00')"))
        assert conn.execute(text("SELECT max(id) FROM test_sets")).scalar() == 3


def test_query_ids_stay_values_in_the_drill_down_links(tmp_path: Path) -> None:
    testset = {"queries": [{"id": q, "text": f"query {i}", "relevant": {"d1": 1}} for i, q in enumerate(HOSTILE)]}
    run = "".join(f"{q} Q0 d1 1 1.0 r\n" for q in HOSTILE if " " not in q)
    with make_client(f"sqlite:///{tmp_path / 'q.sqlite3'}") as c:
        ts = upload_testset(c, testset)
        rid = upload_run(c, ts["id"], run, "r")["id"]
        job = c.post("/api/v1/evaluations", json={"test_set_id": ts["id"], "run_ids": [rid],
                                                  "metrics": ["ndcg@10"]}).json()
        assert wait_job(c, job["id"])["status"] == "done"
        page = c.get(f"/evaluations/{job['id']}").text
        links = re.findall(r'href="(/evaluations/[^"]*/query[^"]*)"', page)
        assert len(links) == len(HOSTILE)
        for link in links:
            target = urljoin(f"http://127.0.0.1/evaluations/{job['id']}", link.replace("&amp;", "&"))
            assert target.startswith(f"http://127.0.0.1/evaluations/{job['id']}/query?id="), target
            r = c.get(target)
            assert r.status_code == 200, (link, r.text[:300])
        shown = {re.search(r"<code>([^<]*)</code>", c.get(
            urljoin("http://127.0.0.1/", link.replace("&amp;", "&"))).text).group(1) for link in links}
        assert len(shown) == len(HOSTILE)
