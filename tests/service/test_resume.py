"""Crash safety: SIGKILL the server during an 800-query live job, restart it, nothing lost or doubled."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import create_engine, text

from .fake_retriever import FakeRetriever, live_testset
from .postgres import free_port

N = 800


def _start(db_url: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-c", "from rankscope.cli.app import main; main()", "serve", "--db", db_url,
           "--port", str(port), "--workers", "1", "--lease-seconds", "1", "--allow-retriever", "127.0.0.1:*"]
    proc = subprocess.Popen(cmd, stdout=log.open("ab"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
        if proc.poll() is not None:
            break
    proc.kill()
    raise AssertionError(f"server did not start:\n{log.read_text()}")


def _progress(base: str, job_id: str) -> dict[str, Any]:
    return dict(httpx.get(f"{base}/api/v1/evaluations/{job_id}", timeout=10).json())


def test_sigkill_during_live_job_then_resume(db_url: str, tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    with FakeRetriever() as retriever:
        proc = _start(db_url, port, log)
        try:
            body = json.dumps(live_testset(N))
            r = httpx.post(f"{base}/api/v1/testsets", files={"file": ("live.json", body)}, data={"format": "json"})
            ts = r.json()
            r = httpx.post(f"{base}/api/v1/evaluations/live", json={
                "test_set_id": ts["id"], "retriever_url": retriever.url, "k": 5, "metrics": ["mrr", "P@1"],
                "concurrency": 16})
            job_id = r.json()["id"]
            deadline = time.monotonic() + 60
            while _progress(base, job_id)["progress"]["finished"] < N // 4:
                assert time.monotonic() < deadline, "the job made no progress"
                time.sleep(0.02)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        engine = create_engine(db_url)
        with engine.connect() as conn:
            before = dict(conn.execute(text("SELECT query_id, hits FROM live_results WHERE job_id = :j"),
                                       {"j": job_id}).all())
        assert N // 4 <= len(before) < N, "the kill came too late to test resuming"

        proc = _start(db_url, port, log)
        try:
            deadline = time.monotonic() + 60
            while (job := _progress(base, job_id))["status"] not in ("done", "failed"):
                assert time.monotonic() < deadline, f"not resumed: {job}"
                time.sleep(0.1)
        finally:
            proc.terminate()
            proc.wait(10)
    assert job["status"] == "done", job
    assert job["progress"] == {"total": N, "finished": N, "failed": 0, "runs": 1}
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT query_id, hits FROM live_results WHERE job_id = :j"), {"j": job_id}).all()
        scored = conn.execute(text("SELECT query_id, scores FROM query_scores WHERE job_id = :j"),
                              {"j": job_id}).all()
    engine.dispose()
    after = {q: h for q, h in rows}
    assert len(rows) == len(after) == N  # every query stored exactly once
    for q, hits in before.items():  # what was stored before the crash is kept as it was
        assert after[q] == hits
    assert len(scored) == len({q for q, _ in scored}) == N  # scored exactly once
    scores = {q: (json.loads(s) if isinstance(s, str) else s) for q, s in scored}
    assert all(scores[f"q{i}"]["mrr"] == (1.0 if i % 2 == 0 else 0.5) for i in range(N))
    assert set(retriever.calls) == {f"query {i}" for i in range(N)}
