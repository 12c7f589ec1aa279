"""Upload readers: JSON through rankscope.io, errors name the uploaded file and the line (not the temp copy)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from rankscope.service.ingest import Uploaded, UploadError, read_run_upload, read_testset_upload
from rankscope.service.uploads import Counter


def _counter() -> Counter:
    return Counter(max_bytes=1 << 20, max_rows=10_000)


def test_run_json_errors_name_the_uploaded_file_and_line(tmp_path: Path) -> None:
    up = Uploaded(io.BytesIO(b'{"q1": {"d1": 1.0},\n "q2": oops}\n'), "bm25.json")
    with pytest.raises(UploadError, match=r"^bm25\.json:2: invalid JSON") as info:
        read_run_upload(tmp_path, _counter(), up, "json", "bm25")
    assert info.value.field == "file"


def test_run_ranked_lists_are_read(tmp_path: Path) -> None:
    run = read_run_upload(tmp_path, _counter(), Uploaded(io.BytesIO(b'{"q1": ["d2", "d1"]}'), "r.json"), "ranked",
                          "dense")
    assert run.to_dict() == {"q1": {"d2": 2.0, "d1": 1.0}}


def test_trec_queries_jsonl_errors_name_the_queries_file(tmp_path: Path) -> None:
    def read(queries: bytes) -> object:
        return read_testset_upload(tmp_path, _counter(), Uploaded(io.BytesIO(b"q1 0 d1 1\n"), "qrels.txt"), "trec",
                                   queries=Uploaded(io.BytesIO(queries), "queries.jsonl", "queries"))

    with pytest.raises(UploadError, match=r"^queries\.jsonl:3: invalid JSON") as info:
        read(b'{"_id": "q1", "text": "hello"}\n\n{bad\n')
    assert info.value.field == "queries"
    assert read(b'{"_id": "q1", "text": "hello"}\n').queries == [("q1", "hello")]  # type: ignore[attr-defined]
