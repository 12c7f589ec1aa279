"""JSON Lines test sets and BEIR files: one line reader for both, lines end at "\\n" only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rankscope.data.testset import TestSet
from rankscope.errors import ParseError


def test_line_separator_inside_a_json_string_is_not_a_line_break(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    text = "first\u2028second\u0085third"  # str.splitlines() would break this valid JSON line
    first = json.dumps({"id": "q1", "query": text, "relevant": ["d1"]}, ensure_ascii=False)
    second = json.dumps({"id": "q2", "query": "b", "relevant": ["d2"]})
    p.write_text(f"{first}\r\n\n{second}\n", encoding="utf-8")
    ts = TestSet.from_jsonl(p)
    assert [q.text for q in ts.queries] == [text, "b"]


def test_beir_corpus_that_is_not_utf8_is_a_parse_error(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "hello"}\n', encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8")
    (folder / "corpus.jsonl").write_bytes(b'{"_id": "d1", "text": "caf\xe9"}\n')
    with pytest.raises(ParseError, match=r"corpus\.jsonl.*not UTF-8"):
        TestSet.from_beir(folder)


def test_bad_json_line_is_named(tmp_path: Path) -> None:
    p = tmp_path / "queries.jsonl"
    p.write_text('{"id": "q1", "query": "a", "relevant": ["d1"]}\n\n{oops\n', encoding="utf-8")
    with pytest.raises(ParseError, match=r"t?queries\.jsonl:3: invalid JSON"):
        TestSet.from_jsonl(p)
