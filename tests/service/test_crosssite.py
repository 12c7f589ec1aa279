"""Cross-site and server-side request safety: Host check, same-origin writes, retriever allow-list, tokens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clirun import cli
from rankscope.errors import InvalidParameterError
from rankscope.service.settings import Settings

from .conftest import TESTSET, make_client, upload_testset


def _upload(c: object, **headers: str) -> object:
    return c.post("/testsets", files={"file": ("t.json", json.dumps(TESTSET))},  # type: ignore[attr-defined]
                  data={"format": "json", "name": "planted"}, headers=headers, follow_redirects=False)


def test_host_header_must_name_the_service(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 'h.sqlite3'}") as c:
        for host in ("evil.example", "evil.example:8000", "127.0.0.1.nip.io", "attacker"):
            r = c.get("/api/v1/testsets", headers={"Host": host})
            assert r.status_code == 400, host
            assert r.json()["errors"][0]["field"] == "Host"
            assert c.get("/testsets", headers={"Host": host}).status_code == 400
        for host in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "127.0.0.1"):
            assert c.get("/api/v1/testsets", headers={"Host": host}).status_code == 200, host
    with make_client(f"sqlite:///{tmp_path / 'h2.sqlite3'}", host="0.0.0.0", token="Hv4q-0123456789abcdef-t",
                     allowed_hosts=("rankscope.corp",)) as c:
        ok = {"Authorization": "Bearer Hv4q-0123456789abcdef-t"}
        assert c.get("/api/v1/testsets", headers={"Host": "rankscope.corp", **ok}).status_code == 200
        assert c.get("/api/v1/testsets", headers={"Host": "10.0.0.7:8000", **ok}).status_code == 200
        assert c.get("/api/v1/testsets", headers={"Host": "evil.example", **ok}).status_code == 400


def test_writes_from_another_origin_are_refused(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 'o.sqlite3'}") as c:
        # a page on another local port (same site, other origin), another site, an opaque origin
        for headers in ({"Origin": "http://127.0.0.1:9999"}, {"Origin": "http://evil.example"},
                        {"Origin": "null"}, {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Site": "cross-site"}):
            r = _upload(c, **headers)
            assert r.status_code == 403, headers  # type: ignore[attr-defined]
            assert r.json()["errors"][0]["field"] == "Origin"  # type: ignore[attr-defined]
            r = c.post("/api/v1/evaluations", json={"test_set_id": 1, "run_ids": [1]}, headers=headers)
            assert r.status_code == 403
        assert c.get("/api/v1/testsets").json() == []
        # the dashboard's own pages (same origin) and API clients without browser headers work
        assert _upload(c, Origin="http://127.0.0.1").status_code == 303  # type: ignore[attr-defined]
        assert _upload(c, **{"Sec-Fetch-Site": "same-origin"}).status_code == 303  # type: ignore[attr-defined]
        ts = upload_testset(c)
        assert c.delete(f"/api/v1/testsets/{ts['id']}", headers={"Origin": "http://localhost:1234"}).status_code == 403
        assert c.get(f"/api/v1/testsets/{ts['id']}").status_code == 200
        assert c.delete(f"/api/v1/testsets/{ts['id']}").status_code == 204


def test_cookie_signed_writes_need_the_dashboards_origin(tmp_path: Path) -> None:
    token = "a-long-enough-token-123"
    with make_client(f"sqlite:///{tmp_path / 'c.sqlite3'}", token=token) as c:
        r = c.post("/login", data={"token": token, "next": "/"}, headers={"Origin": "http://127.0.0.1"},
                   follow_redirects=False)
        assert r.status_code == 303 and "rankscope_token" in r.headers["set-cookie"]
        assert c.get("/api/v1/testsets").status_code == 200  # reading with the cookie
        assert _upload(c).status_code == 403  # type: ignore[attr-defined]
        assert _upload(c, Origin="http://127.0.0.1").status_code == 303  # type: ignore[attr-defined]
        c.cookies.clear()
        r = c.post("/api/v1/testsets", files={"file": ("t.json", json.dumps(TESTSET))}, data={"format": "json"},
                   headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 201  # a script with the token


def test_retriever_allow_list_and_own_address(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 'r.sqlite3'}", allow_retrievers=("127.0.0.1:9200", "search.internal"),
                     port=8000, workers=0) as c:  # no worker: the jobs accepted are never run (no name resolved)
        ts = upload_testset(c)

        def live(url: str) -> object:
            return c.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": url})

        for url, words in (("http://127.0.0.1:9300/s", "allow-list"), ("http://10.0.0.1/s", "allow-list"),
                           ("http://search.internal:6379/s", "allow-list"),  # a host without a port: 80, 443 only
                           ("http://127.0.0.1:8000/api/v1/testsets", "own address"),
                           ("http://localhost:8000/x", "own address"), ("http://[::1]:8000/x", "own address"),
                           ("http://user:pw@search.internal/x", "user")):
            r = live(url)
            # a URL the service may not call: 403 (forbidden by its configuration); a malformed one: 422
            assert r.status_code == (422 if words == "user" else 403), url  # type: ignore[attr-defined]
            err = r.json()["errors"][0]  # type: ignore[attr-defined]
            assert err["field"] == "retriever_url" and words in err["problem"], (url, err)
        assert live("http://search.internal/q").status_code == 202  # type: ignore[attr-defined]
        assert live("http://127.0.0.1:9200/q").status_code == 202  # type: ignore[attr-defined]
    with make_client(f"sqlite:///{tmp_path / 'r2.sqlite3'}", allow_retrievers=()) as c:
        ts = upload_testset(c)
        r = c.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": "http://127.0.0.1:1/"})
        assert r.status_code == 403 and "--allow-retriever" in r.json()["errors"][0]["problem"]


def test_weak_tokens_are_refused() -> None:
    for weak in (" ", "secret", "short-token", "has spaces in it but long"):
        with pytest.raises(InvalidParameterError, match="too weak"):
            Settings(db_url="sqlite://", token=weak)
    proc = cli("serve", "--host", "0.0.0.0", "--token", " ", "--db", "sqlite://", width=200)
    assert proc.returncode == 2 and "too weak" in proc.stderr and proc.stderr.count("\n") == 1
    with pytest.raises(InvalidParameterError, match="allow-retriever"):
        Settings(db_url="sqlite://", allow_retrievers=("http://x/y",))
