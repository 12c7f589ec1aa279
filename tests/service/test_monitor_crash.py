"""Monitors survive SIGKILL: of the whole service (API and workers in one process) and of a worker process beside an
API-only one.  No round runs twice or is lost, a scheduled time that passed while nothing ran is said as missed, an
open alert stays one episode (its webhook is not sent again), and every event the service acknowledged is stored."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

from .monitor_helpers import SwitchRetriever, WebhookSink, canary_testset, wait_for
from .postgres import free_port


def _serve(db_url: str, port: int, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-c", "from rankscope.cli.app import main; main()", "serve", "--db", db_url,
           "--port", str(port), "--lease-seconds", "1", "--allow-retriever", "127.0.0.1:*", "--allow-webhook",
           "127.0.0.1:*", *extra]
    proc = subprocess.Popen(cmd, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
        if proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"the server did not start:\n{log.read_text()}")


def _kill(proc: subprocess.Popen[bytes]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


def _rounds(base: str, mid: int) -> list[dict[str, Any]]:
    return list(httpx.get(f"{base}/api/v1/monitors/{mid}/rounds", timeout=10).json())


class _Sender(threading.Thread):
    """Posts batches of 20 distinct events until stopped; keeps the keys' queries of the batches acknowledged."""

    def __init__(self, base: str, mid: int) -> None:
        super().__init__(daemon=True)
        self.base, self.mid = base, mid
        self.acked: list[str] = []
        self.stop = threading.Event()
        self.n = 0

    def run(self) -> None:
        with httpx.Client(timeout=5) as c:
            while not self.stop.is_set():
                batch = [f"event {self.n + i}" for i in range(20)]
                body = "\n".join(json.dumps({"time": 1_700_000_000 + self.n + i, "query": q, "results": ["d1"]})
                                 for i, q in enumerate(batch))
                self.n += 20
                try:
                    r = c.post(f"{self.base}/api/v1/monitors/{self.mid}/events", content=body.encode())
                except httpx.HTTPError:
                    time.sleep(0.05)
                    continue
                if r.status_code == 200 and r.json()["accepted"] == 20:
                    self.acked.extend(batch)


@pytest.mark.slow
@pytest.mark.parametrize("split", [False, True], ids=["service", "worker"])
def test_sigkill_keeps_rounds_alerts_and_events(db_url: str, tmp_path: Path, split: bool) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    # split: an API-only process (no workers) and a worker process beside it, which is the one killed
    api = _serve(db_url, port, log, *(["--workers", "0"] if split else ["--workers", "1"]))
    worker_port = free_port()

    def start_worker() -> subprocess.Popen[bytes]:
        return _serve(db_url, worker_port, tmp_path / "worker.log", "--workers", "1") if split else api

    worker = start_worker()
    procs = [api, worker]
    try:
        with SwitchRetriever(delay=0.05) as retriever, WebhookSink() as sink:
            body = json.dumps(canary_testset(60))
            ts = httpx.post(f"{base}/api/v1/testsets", files={"file": ("c.json", body)},
                            data={"format": "json"}).json()
            mid = httpx.post(f"{base}/api/v1/monitors", json={
                "name": "canary", "kind": "canary", "test_set_id": ts["id"], "retriever_url": retriever.url,
                "metrics": ["ndcg@10"], "schedule": {"every_seconds": 2}, "rules": ["drop ndcg@10 0.1"],
                "webhook_url": sink.url}).json()["id"]
            traffic = httpx.post(f"{base}/api/v1/monitors", json={"name": "prod", "kind": "traffic"}).json()["id"]
            wait_for("a baseline round", lambda: any(r["status"] == "done" for r in _rounds(base, mid)), 90)
            retriever.mode = "bad"
            wait_for("the alert", lambda: httpx.get(f"{base}/api/v1/monitors/{mid}").json()["alerts"], 90)
            wait_for("its webhook", lambda: sink.posts, 30)
            sender = _Sender(base, traffic)
            sender.start()
            wait_for("a round running", lambda: any(r["status"] == "running" for r in _rounds(base, mid)), 30)
            time.sleep(0.5)
            victim = worker if split else api
            _kill(victim)
            time.sleep(5)  # more than one scheduled time passes with nothing running the monitor
            if split:
                worker = start_worker()
                procs.append(worker)
            else:
                api = worker = _serve(db_url, port, log, "--workers", "1")
                procs.append(api)
            time.sleep(1.0)
            sender.stop.set()
            sender.join(10)
            killed_round = None
            rounds = wait_for("two rounds after the restart", lambda: (rs := _rounds(base, mid)) and sum(
                1 for r in rs if r["status"] == "done") >= 4 and rs, 120)
            times = [r["scheduled_for"] for r in rounds]
            assert len(times) == len(set(times)), "a scheduled time ran twice"
            missed = [r for r in rounds if r["status"] == "missed"]
            assert missed and all(r["summary"]["reason"] in ("down", "overlap") for r in missed)
            assert any(r["summary"]["reason"] == "down" for r in missed), rounds
            for r in rounds:  # the round that was running when the worker died finished, once
                if r["job_id"]:
                    job = httpx.get(f"{base}/api/v1/evaluations/{r['job_id']}").json()
                    assert job["status"] in ("done", "running", "queued"), job
                    if job["status"] == "done":
                        assert job["progress"]["finished"] == 60 and job["progress"]["failed"] == 0
                        killed_round = killed_round or r
            status = httpx.get(f"{base}/api/v1/monitors/{mid}").json()
            assert len(status["alerts"]) == 1  # the same episode, still open
            time.sleep(1.0)
            firing = [p for p in sink.posts if p["status"] == "firing"]
            assert len(firing) == 1, sink.posts
            engine = create_engine(db_url)
            with engine.connect() as conn:
                stored = {q for (q,) in conn.execute(text("SELECT query FROM monitor_events WHERE monitor_id = :m"),
                                                     {"m": traffic})}
                dupes = conn.execute(text("SELECT COUNT(*) - COUNT(DISTINCT key) FROM monitor_events")).scalar_one()
            engine.dispose()
            assert sender.acked and set(sender.acked) <= stored, "an acknowledged event was lost"
            assert dupes == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
