"""Schemathesis: generated requests for every operation of the spec; the answers conform to the spec.

Checks: no 5xx, every status code and content type is documented, every response body (errors
included: ``{"detail", "errors": [...]}``) matches its schema, documented headers are sent, and
valid/invalid data is accepted/refused as the schema says.  Bounded: 20 examples per operation,
derandomized, SQLite.  And the whole of Schemathesis (``schemathesis run --checks all``: examples,
coverage, fuzzing and stateful phases, undeclared methods and their ``Allow``) against a server on
127.0.0.1: no failure (:mod:`.schemathesis_hooks` says what no schema can: a file's content).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import httpx
import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from rankscope.service.app import create_app
from rankscope.service.settings import Settings

from .conftest import RUN_A, TESTSET

_DB = Path(tempfile.mkdtemp(prefix="rankscope-fuzz-")) / "fuzz.sqlite3"
APP = create_app(Settings(db_url=f"sqlite:///{_DB}", workers=0, max_upload_bytes=1 << 20,
                          allowed_hosts=("testserver", "localhost")))
with TestClient(APP) as _c:  # some stored objects, so that ids 1 and 2 exist (and a judging task 1)
    _c.post("/api/v1/testsets", files={"file": ("t.json", json.dumps(TESTSET))}, data={"format": "json"})
    _c.post("/api/v1/runs", files={"file": ("a.trec", RUN_A)}, data={"test_set_id": "1"})
    _c.post("/api/v1/runs", files={"file": ("b.trec", RUN_A)}, data={"test_set_id": "1", "name": "b"})
    _pool = "".join(json.dumps({"query_id": q, "doc_id": d}) + "\n" for q, d in (("q1", "d1"), ("q2", "d3")))
    _c.post("/api/v1/judging", files={"pool": ("pool.jsonl", _pool)}, data={"test_set_id": "1"})
    _alice = _c.post("/api/v1/judging/1/annotators", json={"name": "alice"}).json()["token"]
    _c.post("/api/v1/judging/1/judgments", json={"item_id": 1, "grade": 2}, headers={"X-Annotator-Token": _alice})

schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", APP)
# the coverage phase's examples are built when the tests are collected, in every process that collects them (about
# 8 s each, on the fast tier's path too): the whole of Schemathesis below runs that phase against a real server
schema.config.phases.coverage.enabled = False
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          response_headers_conformance, negative_data_rejection]


@schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_api_conforms_to_its_spec(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=CHECKS)


@pytest.mark.slow
def test_the_whole_of_schemathesis_finds_no_failure(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from .live_server import LiveServer

    with LiveServer(f"sqlite:///{tmp_path / 'st.sqlite3'}", workers=0, max_upload_bytes=1 << 20) as server:
        with httpx.Client(base_url=server.url) as c:
            c.post("/api/v1/testsets", files={"file": ("t.json", json.dumps(TESTSET))}, data={"format": "json"})
            c.post("/api/v1/runs", files={"file": ("a.trec", RUN_A)}, data={"test_set_id": "1"})
            c.post("/api/v1/runs", files={"file": ("b.trec", RUN_A)}, data={"test_set_id": "1", "name": "b"})
            c.post("/api/v1/judging", files={"pool": ("pool.jsonl", _pool)}, data={"test_set_id": "1"})
        here = Path(__file__).resolve().parent
        env = {**os.environ, "SCHEMATHESIS_HOOKS": "service.schemathesis_hooks",
               "PYTHONPATH": os.pathsep.join([str(here.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}
        cli = Path(sys.executable).with_name("schemathesis")
        proc = subprocess.run([str(cli), "run", f"{server.url}/api/v1/openapi.json", "--checks", "all",
                               "--exclude-checks", "positive_data_acceptance", "--max-examples", "8", "--seed", "1",
                               "--generation-deterministic", "--no-color"],
                              capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    tail = proc.stdout[-6000:]
    assert proc.returncode == 0, tail
    assert " failed" not in tail.split("Test cases:")[-1], tail
