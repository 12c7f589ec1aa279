"""The service resolves a host name only when a user wrote one (a retriever URL's host); the tests resolve none.

The autouse fixture ``no_name_resolution`` (conftest) fails any service test in which a host name is looked
up; here a service bound on every address (``0.0.0.0``, so that "is this URL my own address?" asks which
addresses are the machine's) runs a live job against a retriever at an IP literal: no name is resolved.
"""

from __future__ import annotations

from pathlib import Path

from .conftest import make_client, upload_testset, wait_job
from .fake_retriever import FakeRetriever, live_testset


def test_a_live_job_on_a_wildcard_bind_resolves_no_name(tmp_path: Path, no_name_resolution: list[str]) -> None:
    with FakeRetriever() as retriever, make_client(
            f"sqlite:///{tmp_path / 'n.sqlite3'}", host="0.0.0.0", port=8000, allowed_hosts=("127.0.0.1",),
            token="correct-horse-battery-staple-9") as c:
        auth = {"Authorization": "Bearer correct-horse-battery-staple-9"}
        c.headers.update(auth)
        ts = upload_testset(c, live_testset(4))
        r = c.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": retriever.url,
                                                     "metrics": ["mrr"]})
        assert r.status_code == 202, r.text
        assert wait_job(c, r.json()["id"])["status"] == "done"
        # its own address under another spelling is still refused, without a lookup
        for url in ("http://127.0.0.1:8000/x", "http://[::1]:8000/x"):
            r = c.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": url})
            assert r.status_code == 403 and "own address" in r.text, url
    assert no_name_resolution == []


def test_the_own_address_check_of_a_wildcard_bind_looks_up_no_name(no_name_resolution: list[str]) -> None:
    # a retriever at an address that is not a loopback one: is it the machine's own? The answer comes from the
    # addresses a socket can bind to, not from resolving the machine's name
    from rankscope.service.egress import EgressPolicy

    policy = EgressPolicy.from_entries(["198.51.100.7:8000", "[2001:db8::7]:8000"], own=[("0.0.0.0", 8000)])
    for url in ("http://198.51.100.7:8000/search", "http://[2001:db8::7]:8000/search"):
        assert policy.check(url) == url
        policy.check_resolved(url)
    assert no_name_resolution == []
