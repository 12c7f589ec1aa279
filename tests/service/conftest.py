"""Fixtures of the service tests: every API test runs against SQLite and against a real PostgreSQL."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from rankscope.service.app import create_app
from rankscope.service.settings import Settings

from .postgres import PostgresCluster

_counter = itertools.count()

TESTSET = {
    "queries": [
        {"id": "q1", "text": "what is bm25", "relevant": {"d1": 2, "d2": 1}},
        {"id": "q2", "text": "dense retrieval", "relevant": ["d3"]},
        {"id": "q3", "text": "rerankers", "relevant": {"d4": 1, "d5": 0}},
    ],
    "corpus": {
        "d1": "BM25 is a ranking function based on term frequencies.",
        "d2": "Okapi BM25 weighting.",
        "d3": "Dense retrieval embeds queries and documents.",
        "d4": "Rerankers. Cross-encoders rescore candidates.",
    },
}
RUN_A = "q1 Q0 d1 1 3.0 a\nq1 Q0 d9 2 2.0 a\nq1 Q0 d2 3 1.0 a\nq2 Q0 d7 1 2.0 a\nq2 Q0 d3 2 1.0 a\n"
RUN_B = json.dumps({"q1": ["d2", "d1"], "q2": ["d3"], "q3": ["d4", "d5"]})


def _literal(host: object) -> bool:
    import ipaddress

    if host is None:
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    try:
        ipaddress.ip_address(text.strip("[]").split("%")[0])
    except ValueError:
        return False
    return True


class NameResolved(AssertionError):
    pass


@pytest.fixture(autouse=True)
def no_name_resolution(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The service tests resolve no host name (they reach servers by IP literal), and neither does the service
    unless a test gave it a name: any lookup of a name in this process fails the test.  A test that means to
    resolve a name simulates the resolver (monkeypatch ``socket.getaddrinfo`` itself)."""
    import socket

    asked: list[str] = []
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
        if not _literal(host):
            asked.append(str(host))
            raise NameResolved(f"the test resolved the host name {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)  # type: ignore[arg-type]

    def by_name(name: object, *args: object) -> object:
        asked.append(str(name))
        raise NameResolved(f"the test resolved the host name {name!r}")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "gethostbyname", by_name)
    monkeypatch.setattr(socket, "gethostbyname_ex", by_name)
    yield asked
    assert asked == [], f"host names resolved: {asked}"


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PostgresCluster]:
    cluster = PostgresCluster()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'service.sqlite3'}"
    cluster: PostgresCluster = request.getfixturevalue("pg_cluster")
    return cluster.create_database(f"t{next(_counter)}_{int(time.time() * 1000) % 10**8}")


def make_client(db_url: str, **settings: Any) -> TestClient:
    opts: dict[str, Any] = {"workers": 1, "poll_seconds": 0.05, "lease_seconds": 5.0,
                            "allow_retrievers": ("127.0.0.1:*",)}
    opts.update(settings)
    return TestClient(create_app(Settings(db_url=db_url, **opts)), base_url="http://127.0.0.1")


@pytest.fixture
def client(db_url: str) -> Iterator[TestClient]:
    with make_client(db_url) as c:
        yield c


def upload_testset(c: TestClient, data: Any = None, name: str = "toy", fmt: str = "json") -> dict[str, Any]:
    body = json.dumps(TESTSET if data is None else data)
    r = c.post("/api/v1/testsets", files={"file": ("toy.json", body)}, data={"format": fmt, "name": name})
    assert r.status_code == 201, r.text
    return dict(r.json())


def upload_run(c: TestClient, test_set_id: int, text: str, name: str, fmt: str = "trec") -> dict[str, Any]:
    r = c.post("/api/v1/runs", files={"file": (f"{name}.txt", text)},
               data={"test_set_id": str(test_set_id), "format": fmt, "name": name})
    assert r.status_code == 201, r.text
    return dict(r.json())


def wait_job(c: TestClient, job_id: str, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = c.get(f"/api/v1/evaluations/{job_id}")
        assert r.status_code == 200, r.text
        body = dict(r.json())
        if body["status"] in ("done", "failed"):
            return body
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s: {body}")


def get_report(c: TestClient, job_id: str, timeout: float = 60, **params: Any) -> Any:
    """GET an evaluation's report, following 202 (being rendered in the background) until it is there."""
    deadline = time.monotonic() + timeout
    while True:
        r = c.get(f"/api/v1/evaluations/{job_id}/report", params=params)
        if r.status_code != 202:
            return r
        assert r.json()["status"] == "rendering" and r.headers["retry-after"] == "1"
        assert time.monotonic() < deadline, "the report was never rendered"
        time.sleep(0.05)
