"""parse_run / parse_testset read JSON through rankscope.io: errors name the uploaded file and the line."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("sqlalchemy")

from rankscope.errors import ParseError
from rankscope.service.ingest import parse_run, parse_testset


def test_run_json_errors_name_the_uploaded_file_and_line(tmp_path: Path) -> None:
    p = tmp_path / "upload.tmp"
    p.write_text('{"q1": {"d1": 1.0},\n "q2": oops}\n', encoding="utf-8")
    with pytest.raises(ParseError, match=r"^bm25\.json:2: invalid JSON"):
        parse_run(p, "json", "bm25", filename="bm25.json")


def test_run_ranked_lists_are_read(tmp_path: Path) -> None:
    p = tmp_path / "upload.tmp"
    p.write_text('{"q1": ["d2", "d1"]}', encoding="utf-8")
    assert parse_run(p, "ranked", "dense").to_dict() == {"q1": {"d2": 2.0, "d1": 1.0}}


def test_trec_queries_jsonl_errors_name_the_queries_file(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.tmp"
    qrels.write_text("q1 0 d1 1\n", encoding="utf-8")
    queries = tmp_path / "queries.tmp"
    queries.write_text('{"_id": "q1", "text": "hello"}\n\n{bad\n', encoding="utf-8")
    with pytest.raises(ParseError, match=r"^queries\.jsonl:3: invalid JSON"):
        parse_testset(qrels, "trec", queries_path=queries, queries_filename="queries.jsonl")
    queries.write_text('{"_id": "q1", "text": "hello"}\n', encoding="utf-8")
    assert parse_testset(qrels, "trec", queries_path=queries).queries == [("q1", "hello")]
