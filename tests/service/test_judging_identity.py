"""Who an annotator is: invitation tokens the service checks (stored hashed), only one's own labels, and pre-labels
served only when the service records that it showed them."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from rankscope.service import store
from rankscope.service.db import Annotator, PrelabelView

from .conftest import make_client, upload_testset
from .test_judging import POOL, jsonl

ADMIN = "adm1n-t0ken-Zq8rW2xN5vK3"


def _task(c: TestClient, headers: dict[str, str] | None = None) -> tuple[int, list[dict[str, object]]]:
    ts = upload_testset(c) if headers is None else None
    if ts is None:
        import json

        from .conftest import TESTSET

        r = c.post("/api/v1/testsets", files={"file": ("t.json", json.dumps(TESTSET))}, data={"format": "json"},
                   headers=headers)
        ts = r.json()
    labels = "q1 0 d1 2\nq1 0 d2 0\n"
    r = c.post("/api/v1/judging", files={"pool": ("p.jsonl", jsonl(POOL)), "labels": ("l.qrels", labels)},
               data={"test_set_id": str(ts["id"]), "order": "pool"}, headers=headers)
    assert r.status_code == 201, r.text
    task = r.json()["id"]
    items = c.get(f"/api/v1/judging/{task}/items", headers=headers).json()
    return task, items


def _invite(c: TestClient, task: int, name: str, blind: bool = True, headers: dict[str, str] | None = None) -> str:
    r = c.post(f"/api/v1/judging/{task}/annotators", json={"name": name, "blind": blind}, headers=headers)
    assert r.status_code == 201, r.text
    return str(r.json()["token"])


def test_an_annotator_is_who_their_token_says(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 'i.sqlite3'}") as c:
        task, items = _task(c)
        alice, bob = _invite(c, task, "alice"), _invite(c, task, "bob", blind=False)
        url = f"/api/v1/judging/{task}/judgments"
        r = c.post(url, json={"item_id": items[0]["id"], "grade": 3, "note": "alice's secret"},
                   headers={"X-Annotator-Token": alice})
        assert r.status_code == 200 and r.json()["annotator"] == "alice"
        # bob cannot judge under alice's name, nor overwrite her grade, nor read her notes
        r = c.post(url, json={"item_id": items[0]["id"], "annotator": "alice", "grade": 0},
                   headers={"X-Annotator-Token": bob})
        assert r.status_code == 403 and r.json()["errors"][0]["field"] == "annotator"
        r = c.get(url, params={"annotator": "alice"}, headers={"X-Annotator-Token": bob})
        assert r.status_code == 403
        assert c.get(url, headers={"X-Annotator-Token": bob}).json() == []
        mine = c.get(url, headers={"X-Annotator-Token": alice}).json()
        assert [(j["annotator"], j["grade"], j["note"]) for j in mine] == [("alice", 3, "alice's secret")]
        listed = c.get(f"/api/v1/judging/{task}/items", params={"annotator": "alice"},
                       headers={"X-Annotator-Token": bob}).status_code
        assert listed == 403
        # nobody judges without a token, and the administrator does not judge under a name either
        assert c.post(url, json={"item_id": items[0]["id"], "annotator": "alice", "grade": 0}).status_code == 401
        assert c.get(url).json()[0]["grade"] == 3
        # the token is stored hashed, never as it is
        db = c.app.state.db  # type: ignore[attr-defined]
        with db.read() as s:
            rows = s.query(Annotator).all()
        assert {a.token_hash for a in rows} == {store.hash_token(alice), store.hash_token(bob)}
        assert alice not in {a.token_hash for a in rows}


def test_pre_labels_are_served_only_when_recorded(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 'p.sqlite3'}") as c:
        task, items = _task(c)
        blind, sees = _invite(c, task, "blind"), _invite(c, task, "sees", blind=False)
        base = f"/api/v1/judging/{task}"
        assert all(i["prelabel"] is None for i in c.get(f"{base}/items", headers={"X-Annotator-Token": sees}).json())
        r = c.get(f"{base}/items", params={"prelabels": "true"}, headers={"X-Annotator-Token": blind})
        assert r.status_code == 403 and r.json()["errors"][0]["field"] == "prelabels"
        r = c.get(f"{base}/next", params={"prelabels": "true"}, headers={"X-Annotator-Token": blind})
        assert r.status_code == 403
        shown = c.get(f"{base}/items", params={"prelabels": "true", "limit": 1},
                      headers={"X-Annotator-Token": sees}).json()
        assert shown[0]["prelabel"]["grade"] == 2
        for token in (blind, sees):
            r = c.post(f"{base}/judgments", json={"item_id": items[0]["id"], "grade": 2},
                       headers={"X-Annotator-Token": token})
            assert r.status_code == 200
        got = {j["annotator"]: j["prelabel_shown"] for j in c.get(f"{base}/judgments").json()}
        assert got == {"blind": False, "sees": True}
        # the administrator looking is recorded too (as nobody's judgment: annotator null)
        c.get(f"{base}/items", params={"prelabels": "true"})
        db = c.app.state.db  # type: ignore[attr-defined]
        with db.read() as s:
            views = [(v.annotator, v.item_id, v.via) for v in s.query(PrelabelView).order_by(PrelabelView.id)]
        assert views == [("sees", items[0]["id"], "api"), (None, items[0]["id"], "api"), (None, items[1]["id"], "api")]
        side = c.get(f"{base}/export").json()
        assert side["summary"]["not_blind"] == 1 and '"blind": false' in side["provenance"]


def test_with_a_service_token_an_annotator_token_opens_only_judging(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 't.sqlite3'}", token=ADMIN) as c:
        admin = {"Authorization": f"Bearer {ADMIN}"}
        task, items = _task(c, admin)
        alice = {"X-Annotator-Token": _invite(c, task, "alice", headers=admin)}
        base = f"/api/v1/judging/{task}"
        assert c.get(f"{base}/next", headers=alice).status_code == 200
        assert c.post(f"{base}/judgments", json={"item_id": items[0]["id"], "grade": 1}, headers=alice).status_code \
            == 200
        for path in (base, f"{base}/export", f"{base}/agreement", f"{base}/annotators", "/api/v1/testsets",
                     "/api/v1/judging"):
            assert c.get(path, headers=alice).status_code == 401, path
        assert c.post(f"{base}/annotators", json={"name": "mallory"}, headers=alice).status_code == 401
        assert c.delete(base, headers=alice).status_code == 401
        other, _ = _task(c, admin)
        r = c.get(f"/api/v1/judging/{other}/items", headers=alice)  # a token of another task
        assert r.status_code == 401
        r = c.get(f"{base}/items", headers={"X-Annotator-Token": "forged"})
        assert r.status_code == 401 and r.json()["errors"][0]["field"] == "X-Annotator-Token"
        # the dashboard: the invitation link works without the service's token, the task page does not
        r = c.get(f"/judging/{task}/join", params={"token": alice["X-Annotator-Token"]}, follow_redirects=False)
        assert r.status_code == 303
        assert "judging as alice" in c.get(f"/judging/{task}/judge").text
        assert c.get(f"/judging/{task}", follow_redirects=False).status_code == 303  # to the login page
