"""Schemathesis: generated requests from the OpenAPI spec never get a 5xx (bounded examples, SQLite)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from rankscope.service.app import create_app
from rankscope.service.settings import Settings

from .conftest import RUN_A, TESTSET

_DB = Path(tempfile.mkdtemp(prefix="rankscope-fuzz-")) / "fuzz.sqlite3"
APP = create_app(Settings(db_url=f"sqlite:///{_DB}", workers=0, max_upload_bytes=1 << 20,
                          allowed_hosts=("testserver",)))
with TestClient(APP) as _c:  # some stored objects, so that ids 1 and 2 exist
    _c.post("/api/v1/testsets", files={"file": ("t.json", json.dumps(TESTSET))}, data={"format": "json"})
    _c.post("/api/v1/runs", files={"file": ("a.trec", RUN_A)}, data={"test_set_id": "1"})
    _c.post("/api/v1/runs", files={"file": ("b.trec", RUN_A)}, data={"test_set_id": "1", "name": "b"})

schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_server_errors(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=[not_a_server_error])
