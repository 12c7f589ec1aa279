"""Compressed input under one limit: every gzip layer of every reader counts, and memory stays under the limit.

A "bomb inside a bomb" — a gzip of ten gzip members, each 64 MiB of zeros (a few KB on disk) — is read
by every library reader under a 16 MiB decompression limit: each stops with the limit's error, and the
peak of the memory Python allocated meanwhile (``tracemalloc``) stays under the limit plus a margin.
"""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from rankscope.errors import ParseError
from rankscope.io import read_qrels, read_run
from rankscope.io._source import MAX_LAYERS, decompression_limit, max_decompressed, open_inflated, read_bytes

LIMIT = 16 << 20
MARGIN = 24 << 20
MEMBER = 64 << 20


@cache
def nested_bomb(line: bytes = b"\0") -> bytes:
    """gzip(ten gzip members of MEMBER bytes of ``line`` repeated): 640 MiB, two layers."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = line * ((1 << 20) // len(line))
    member = b"".join([*(comp.compress(block) for _ in range(MEMBER // len(block))), comp.flush()])
    return gzip.compress(member * 10, 9)


def _peak_while(call: Callable[[], Any]) -> tuple[BaseException | None, int]:
    tracemalloc.start()
    try:
        call()
        raised = None
    except Exception as exc:
        raised = exc
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return raised, peak


def _consume_stream(path: Path) -> None:
    from rankscope.io.stream import run_blocks

    for _ in run_blocks(path, "trec", block_rows=10_000):
        pass


def _texts(path: Path) -> None:
    from rankscope.labels.texts import read_texts

    read_texts(path, "corpus")


def _spans(path: Path) -> None:
    from rankscope.io.spans import read_span_qrels

    read_span_qrels(path)


def _load_json(path: Path) -> None:
    from rankscope.io.jsonfmt import load_json

    load_json(path)


def _json_lines(path: Path) -> None:
    from rankscope.io.jsonfmt import load_json_lines

    load_json_lines(path)


def _chunking(path: Path) -> None:
    from rankscope.io.spans import read_chunking

    read_chunking(path)


def _subtopics(path: Path) -> None:
    from rankscope.io.subtopics import read_subtopic_qrels

    read_subtopic_qrels(path)


def _labels(path: Path) -> None:
    from rankscope.labels.provenance import read_labels

    read_labels(path)


def _opened(path: Path) -> None:
    with open_inflated(path) as fh:
        while fh.read(1 << 20):
            pass


READERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "qrels trec": ("q.trec.gz", lambda p: read_qrels(p, format="trec")),
    "qrels auto": ("q.txt.gz", read_qrels),
    "qrels json": ("q.json.gz", lambda p: read_qrels(p, format="json")),
    "qrels jsonl": ("q.jsonl.gz", lambda p: read_qrels(p, format="jsonl")),
    "qrels tsv": ("q.tsv.gz", lambda p: read_qrels(p, format="tsv")),
    "run trec": ("r.trec.gz", lambda p: read_run(p, format="trec")),
    "run trec exact": ("r.trec.gz", lambda p: read_run(p, format="trec", fast=False)),
    "run json": ("r.json.gz", lambda p: read_run(p, format="json")),
    "run jsonl": ("r.jsonl.gz", lambda p: read_run(p, format="jsonl")),
    "run csv": ("r.csv.gz", lambda p: read_run(p, format="csv")),
    "run parquet": ("r.parquet.gz", lambda p: read_run(p, format="parquet")),
    "run arrow": ("r.arrow.gz", lambda p: read_run(p, format="arrow")),
    "qrels beir": ("test.tsv.gz", lambda p: read_qrels(p, format="beir")),
    "subtopic qrels": ("s.qrels.gz", _subtopics),
    "labels (qrels + provenance)": ("l.qrels.gz", _labels),
    "chunking": ("k.jsonl.gz", _chunking),
    "run streamed": ("r.trec.gz", _consume_stream),
    "texts (judging)": ("c.jsonl.gz", _texts),
    "span qrels": ("s.jsonl.gz", _spans),
    "load_json": ("x.json.gz", _load_json),
    "load_json_lines": ("x.jsonl.gz", _json_lines),
    "open_inflated": ("x.gz", _opened),
    "read_bytes": ("x.gz", read_bytes),
}


@pytest.mark.slow
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_bomb_inside_a_bomb_stops_at_the_limit_in_every_reader(tmp_path: Path, reader: str) -> None:
    name, read = READERS[reader]
    path = tmp_path / name
    path.write_bytes(nested_bomb())
    with decompression_limit(LIMIT):
        raised, peak = _peak_while(lambda: read(path))
    assert isinstance(raised, ParseError), raised
    assert f"more than {LIMIT} bytes once decompressed" in str(raised) and name in str(raised)
    # the streamed reader holds a line that has no end yet twice while its buffer grows (the old and the new)
    allowed = (2 * LIMIT if reader == "run streamed" else LIMIT) + MARGIN
    assert peak < allowed, f"{reader}: peak {peak / 2**20:.0f} MiB"


def test_nested_gzip_within_the_limit_is_read_like_the_plain_file(tmp_path: Path) -> None:
    text = b"q1 Q0 d1 1 2.5 r\nq1 Q0 d2 2 1.5 r\nq2 Q0 d1 1 0.5 r\n"
    plain, twice = tmp_path / "r.trec", tmp_path / "r2.trec.gz"
    plain.write_bytes(text)
    twice.write_bytes(gzip.compress(gzip.compress(text)))
    assert read_run(twice).to_dict() == read_run(plain).to_dict()
    assert read_bytes(twice) == text


def test_every_layer_counts_against_the_limit() -> None:
    from rankscope.io._source import inflate

    inner = gzip.compress(b"x" * 1000)
    # the outer layer's output counts too
    with decompression_limit(1000 + len(inner) - 1), pytest.raises(ParseError, match="once decompressed"):
        b"".join(inflate([gzip.compress(inner)], "x")[0])
    with decompression_limit(1000 + len(inner)):
        assert b"".join(inflate([gzip.compress(inner)], "x")[0]) == b"x" * 1000


def test_more_layers_than_the_most_are_refused(tmp_path: Path) -> None:
    data = b"q1 0 d1 1\n"
    for _ in range(MAX_LAYERS + 1):
        data = gzip.compress(data)
    path = tmp_path / "q.gz"
    path.write_bytes(data)
    with pytest.raises(ParseError, match=f"compressed more than {MAX_LAYERS} times"):
        read_qrels(path, format="trec")


def test_the_limit_comes_from_the_environment_or_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    from rankscope.io._source import DEFAULT_MAX_DECOMPRESSED

    monkeypatch.delenv("RANKSCOPE_MAX_DECOMPRESSED_MB", raising=False)
    assert max_decompressed() == DEFAULT_MAX_DECOMPRESSED
    monkeypatch.setenv("RANKSCOPE_MAX_DECOMPRESSED_MB", "2")
    assert max_decompressed() == 2 << 20
    with decompression_limit(None):
        assert max_decompressed() is None
    monkeypatch.setenv("RANKSCOPE_MAX_DECOMPRESSED_MB", "0")
    assert max_decompressed() is None


def test_a_truncated_layer_is_named(tmp_path: Path) -> None:
    path = tmp_path / "r.trec.gz"
    path.write_bytes(gzip.compress(b"q1 Q0 d1 1 1.0 r\n" * 50)[:-12])
    with pytest.raises(ParseError, match=r"r\.trec\.gz: truncated gzip data"):
        read_run(path, format="trec")
