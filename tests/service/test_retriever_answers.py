"""What a retriever answers is bounded and never kept: an answer over the size cap is that query's failure (peak
memory checked), and a failed query's stored error is the service's own fixed description, never the peer's
words; an allow-list entry without a port opens only the web's ports."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from .conftest import make_client, upload_testset, wait_job
from .fake_retriever import FakeRetriever, live_testset


def _rss_peak_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _said(error: object) -> str:
    """A stored error without the kind the runner puts before it (``HttpRetrieverError: ...``)."""
    return str(error).split(": ", 1)[1] if str(error).split(":")[0] in ("HttpRetrieverError", "BadAnswer") \
        else str(error)


def _live(tmp_path: Path, words: list[str], **settings: object) -> tuple[dict[str, dict[str, object]], float]:
    """Run a live job over ``words`` queries; ``({query text: live result}, peak memory growth in MiB)``."""
    with FakeRetriever() as retriever, make_client(f"sqlite:///{tmp_path / 'r.sqlite3'}", **settings) as c:
        ts = upload_testset(c, live_testset(1, words))
        texts = {q["id"]: q["text"] for q in live_testset(1, words)["queries"]}
        before = _rss_peak_mib()
        r = c.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"], "retriever_url": retriever.url,
                                                     "metrics": ["mrr"], "retries": 0, "concurrency": 8})
        assert r.status_code == 202, r.text
        job = wait_job(c, r.json()["id"], timeout=120)
        grown = _rss_peak_mib() - before
        rows = c.get(f"/api/v1/evaluations/{job['id']}/live-results").json()
        return {texts[row["query_id"]]: row for row in rows}, grown


def test_an_answer_over_the_cap_is_that_querys_failure(tmp_path: Path) -> None:
    words = ["huge"] * 4 + ["declared"] * 2 + ["zipped"] * 2
    got, grown = _live(tmp_path, words, max_answer_bytes=1 << 20)
    assert got["query 0"]["error"] is None  # the ordinary query is answered
    for text, row in got.items():
        if text != "query 0":
            assert _said(row["error"]) == ("answer larger than 1048576 bytes (the limit of one answer; raise it "
                                           "with `rankscope serve --max-answer-mb`)"), (text, row)
            assert row["attempts"] == 1  # not asked again: it would answer the same
    assert grown < 150, f"peak memory grew by {grown:.0f} MiB for 8 answers of 200 MB"


def test_stored_errors_are_fixed_descriptions(tmp_path: Path) -> None:
    got, _ = _live(tmp_path, ["secret", "reason", "broken", "garbage"])
    errors = {text.split()[0]: _said(row["error"]) for text, row in got.items() if row["error"]}
    assert errors == {"secret": "bad answer: not a list of hits with an id and a score each",
                      "reason": "HTTP 500 Internal Server Error", "broken": "HTTP 500 Internal Server Error",
                      "garbage": "bad answer: not a list of hits with an id and a score each"}
    assert not any("TOPSECRET" in e for e in errors.values())


def test_an_entry_without_a_port_opens_only_the_web_ports(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 'p.sqlite3'}", allow_retrievers=("127.0.0.1",), workers=0) as c:
        ts = upload_testset(c)
        for port, status in ((80, 202), (443, 202), (8080, 403), (22, 403), (6379, 403)):
            r = c.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"],
                                                         "retriever_url": f"http://127.0.0.1:{port}/s"})
            assert r.status_code == status, (port, r.text)


def test_a_closed_and_an_open_port_fail_alike_at_the_allow_list(tmp_path: Path) -> None:
    """Ports outside the allow-list are refused before any connection: nothing tells closed from open."""
    import socket

    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    listening.listen()
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    closed_port = closed.getsockname()[1]
    closed.close()
    accepted: list[object] = []
    threading.Thread(target=lambda: accepted.append(listening.accept()), daemon=True).start()
    try:
        with make_client(f"sqlite:///{tmp_path / 'o.sqlite3'}", allow_retrievers=("127.0.0.1",)) as c:
            ts = upload_testset(c)
            problems = []
            for port in (listening.getsockname()[1], closed_port):
                r = c.post("/api/v1/evaluations/live", json={"test_set_id": ts["id"],
                                                             "retriever_url": f"http://127.0.0.1:{port}/s"})
                assert r.status_code == 403
                problems.append(r.json()["errors"][0]["problem"].replace(str(port), "PORT"))
            assert problems[0] == problems[1]
            time.sleep(0.3)
            assert accepted == []
    finally:
        listening.close()
