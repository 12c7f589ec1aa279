"""Schemathesis: generated requests for every operation of the spec; the answers conform to the spec.

Checks: no 5xx, every status code and content type is documented, every response body (errors
included: ``{"detail", "errors": [...]}``) matches its schema, documented headers are sent, and
valid/invalid data is accepted/refused as the schema says.  Bounded: 20 examples per operation,
derandomized, SQLite.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

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
with TestClient(APP) as _c:  # some stored objects, so that ids 1 and 2 exist
    _c.post("/api/v1/testsets", files={"file": ("t.json", json.dumps(TESTSET))}, data={"format": "json"})
    _c.post("/api/v1/runs", files={"file": ("a.trec", RUN_A)}, data={"test_set_id": "1"})
    _c.post("/api/v1/runs", files={"file": ("b.trec", RUN_A)}, data={"test_set_id": "1", "name": "b"})

schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", APP)
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          response_headers_conformance, negative_data_rejection]


@schema.parametrize()
@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_api_conforms_to_its_spec(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=CHECKS)
