"""Ingest under load (bench/bench_monitor_ingest.py, shortened): 500 events/s against SQLite and PostgreSQL, every
acknowledged event stored once, no request failed, and a scoring job created during the load still finishes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.parametrize("db", ["sqlite", "postgresql"])
def test_500_events_a_second_lose_nothing(db: str, tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    cmd = [sys.executable, str(ROOT / "bench" / "bench_monitor_ingest.py"), "--seconds", "6", "--rate", "50",
           "--per-request", "10", "--queries", "200", "--clients", "16", "--json", str(out)]
    if db == "postgresql":
        cmd.append("--postgres")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert out.exists(), done.stdout + done.stderr
    res = json.loads(out.read_text())
    assert res["lost"] == 0 and res["failed_requests"] == 0, res
    assert res["stored_events"] == res["acked_events"] == 3000, res
    assert res["scoring_during_load_s"] == res["scoring_during_load_s"]  # not nan: the scoring job finished
    assert done.returncode == 0, done.stdout + done.stderr
