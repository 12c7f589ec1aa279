"""``rankscope monitor list|status|ingest`` against a running service."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from clirun import cli
from prose import unwrap

from .live_server import LiveServer
from .monitor_helpers import wait_for
from .postgres import free_port


@pytest.mark.slow
def test_ingest_status_and_list(tmp_path: Path) -> None:
    with LiveServer(f"sqlite:///{tmp_path / 's.sqlite3'}", monitor_poll_seconds=0.1) as server:
        r = httpx.post(f"{server.url}/api/v1/monitors", json={"name": "prod-search", "kind": "traffic",
                                                               "window_seconds": 60, "rules": ["empty_rate <= 0.1"]})
        assert r.status_code == 201
        t0 = (time.time() // 60 - 5) * 60
        lines = [json.dumps({"time": t0 + i, "query": f"q{i}", "results": [] if i % 2 else [{"id": "d1"}],
                             "retriever": "v2", "latency_ms": 10}) for i in range(30)]
        lines.insert(3, '{"query": "x", "reslts": []}')
        events = tmp_path / "events.jsonl"
        events.write_text("\n".join(lines) + "\n", encoding="utf-8")
        done = cli("monitor", "ingest", events, "--monitor", "prod-search", "--server", server.url)
        assert done.returncode == 0, done.stderr
        assert "30 events stored in prod-search, 1 rejected" in done.stdout
        assert f"{events}:4: unknown field 'reslts'" in unwrap(done.stdout)  # wrapped at the terminal's 60 columns
        wait_for("the window", lambda: httpx.get(f"{server.url}/api/v1/monitors/1").json()["status"] == "alert")
        status = cli("monitor", "status", "prod-search", "--server", server.url)
        assert status.returncode == 1  # an open alert
        assert "ALERT" in status.stdout and "empty_rate" in status.stdout and "0.5" in status.stdout
        assert "1 event rejected: unknown_field" in unwrap(status.stdout)
        zh = cli("monitor", "status", "1", "--server", server.url, env={"RANKSCOPE_LANG": "zh"})
        assert "告警" in zh.stdout and zh.returncode == 1
        listed = cli("monitor", "list", "--server", server.url)
        assert listed.returncode == 0 and "prod-search" in listed.stdout and "v2: 30 events" in unwrap(listed.stdout)
        as_json = cli("monitor", "list", "--server", server.url, "--json")
        assert json.loads(as_json.stdout)[0]["name"] == "prod-search"
        wrong = cli("monitor", "status", "prod-serch", "--server", server.url)
        assert wrong.returncode == 2 and "did you mean 'prod-search'" in wrong.stderr


def test_a_service_that_is_not_there_is_said() -> None:
    done = cli("monitor", "list", "--server", f"http://127.0.0.1:{free_port()}")
    assert done.returncode == 2 and "cannot reach the service" in done.stderr and "Traceback" not in done.stderr
