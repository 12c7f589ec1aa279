"""Decompression bombs against a real server process: 413, and its peak memory stays bounded.

The server runs as a subprocess (``rankscope serve --max-data-mb 8``); its peak resident set
(``VmHWM`` of /proc) is read before and after the uploads: a 1.6 MB gzip of 512 MB of qrels
and a zip whose corpus member inflates to 512 MB add less than 100 MB, and nothing is left in
its temporary folder.  The same for a bomb inside a bomb (a few KB: a gzip of ten gzip members of
64 MB each) sent in every upload field of the API: every layer counts against the one limit.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path

import httpx
import pytest

from .postgres import free_port

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")

PAYLOAD = 512 * 1024 * 1024


def _peak_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM")


def _deflate(pattern: bytes, total: int, wbits: int) -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = pattern * ((1 << 20) // len(pattern))
    out = [comp.compress(block) for _ in range(total // len(block))]
    out.append(comp.flush())
    return b"".join(out)


def _gzip_bomb() -> bytes:
    return _deflate(b"q1 0 d1 1\n", PAYLOAD, 31)


def _zip_bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("s/queries.jsonl", b'{"_id": "q1", "text": "a"}\n')
        zf.writestr("s/qrels/test.tsv", b"query-id\tcorpus-id\tscore\nq1\td1\t1\n")
        with zf.open("s/corpus.jsonl", "w", force_zip64=True) as fh:
            block = b'{"_id": "d", "text": "' + b"a" * ((1 << 20) - 40) + b'"}\n'
            for _ in range(PAYLOAD // len(block)):
                fh.write(block)
    return buf.getvalue()


class Server:
    """``rankscope serve --max-data-mb 8`` in a subprocess with its own temporary folder."""

    def __init__(self, tmp_path: Path, *extra: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.tmp = tmp_path / "server-tmp"
        self.tmp.mkdir()
        self.log = tmp_path / "server.log"
        self.cmd = [sys.executable, "-c", "from rankscope.cli.app import main; main()", "serve", "--db",
                    f"sqlite:///{tmp_path / 'm.sqlite3'}", "--port", str(self.port), "--workers", "0",
                    "--max-data-mb", "8", *extra]

    def __enter__(self) -> Server:
        env = {**os.environ, "TMPDIR": str(self.tmp)}
        self.proc = subprocess.Popen(self.cmd, stdout=self.log.open("wb"), stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.base}/api/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert self.proc.poll() is None and time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.1)
        httpx.get(f"{self.base}/api/v1/testsets", timeout=10)  # warm: the first request imports the routes' modules
        return self

    def peak_mib(self) -> float:
        return _peak_kib(self.proc.pid) / 1024

    def left_in_tmp(self) -> list[Path]:
        return [f for f in self.tmp.rglob("*") if f.is_file() and f.stat().st_size]

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def nested_bomb() -> bytes:
    """gzip(ten gzip members of 64 MB of zeros): 640 MB behind two layers, a few KB on the wire."""
    return gzip.compress(_deflate(b"\0", 64 << 20, 31) * 10, 9)


QUERIES = b"q1\tfirst query\n"
CORPUS = b"d1\tthe first document\n"
POOL = b'{"query_id": "q1", "doc_id": "d1"}\n'
LABELS = b"q1 0 d1 1\n"


def _field_cases(bomb: bytes, test_set_id: int) -> list[tuple[str, str, dict[str, tuple[str, bytes]], dict[str, str]]]:
    """``(name, path, files, form)`` of every upload field of the API, the bomb in one field each."""
    cases: list[tuple[str, str, dict[str, tuple[str, bytes]], dict[str, str]]] = []
    for fmt in ("trec", "json", "jsonl"):
        cases.append((f"testset file ({fmt})", "/api/v1/testsets", {"file": (f"t.{fmt}.gz", bomb)}, {"format": fmt}))
    cases.append(("testset queries", "/api/v1/testsets",
                  {"file": ("q.qrels", LABELS), "queries": ("q.tsv.gz", bomb)}, {"format": "trec"}))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("s/queries.jsonl", b'{"_id": "q1", "text": "a"}\n')
        zf.writestr("s/qrels/test.tsv", b"query-id\tcorpus-id\tscore\nq1\td1\t1\n")
        zf.writestr("s/corpus.jsonl.gz", bomb)
    cases.append(("testset beir member", "/api/v1/testsets", {"file": ("b.zip", buf.getvalue())}, {"format": "beir"}))
    for fmt in ("trec", "json", "ranked"):
        cases.append((f"run file ({fmt})", "/api/v1/runs", {"file": (f"r.{fmt}.gz", bomb)},
                      {"format": fmt, "test_set_id": str(test_set_id)}))
    judging = {"pool": ("pool.jsonl", POOL), "queries": ("q.tsv", QUERIES), "corpus": ("c.tsv", CORPUS),
               "labels": ("l.qrels", LABELS), "provenance": ("l.qrels.provenance.jsonl",
                                                           b'{"query_id": "q1", "doc_id": "d1", "grade": 1, '
                                                           b'"source": "model"}\n')}
    for field in judging:
        files = {**judging, field: (judging[field][0] + ".gz", bomb)}
        cases.append((f"judging {field}", "/api/v1/judging", files, {}))
    return cases


@pytest.mark.slow
def test_a_bomb_inside_a_bomb_in_every_upload_field_gets_413_with_bounded_memory(tmp_path: Path) -> None:
    bomb = nested_bomb()
    assert len(bomb) < 20_000
    with Server(tmp_path) as srv:
        r = httpx.post(f"{srv.base}/api/v1/testsets", files={"file": ("q.qrels", LABELS)}, data={"format": "trec"},
                       timeout=30)
        assert r.status_code == 201, r.text
        before = srv.peak_mib()
        for name, path, files, form in _field_cases(bomb, r.json()["id"]):
            r = httpx.post(f"{srv.base}{path}", files=files, data=form, timeout=120)
            assert r.status_code == 413, (name, r.text)
            assert str(8 * 1024 * 1024) in r.text, (name, r.text)
            grown = srv.peak_mib() - before
            assert grown < 100, f"{name}: peak memory grew by {grown:.0f} MiB"
        assert srv.left_in_tmp() == []


@pytest.mark.slow
def test_bombs_get_413_and_memory_stays_bounded(tmp_path: Path) -> None:
    gz, zp = _gzip_bomb(), _zip_bomb()
    assert len(gz) < 2_000_000 and len(zp) < 2_000_000
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    tmp = tmp_path / "server-tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    cmd = [sys.executable, "-c", "from rankscope.cli.app import main; main()", "serve", "--db",
           f"sqlite:///{tmp_path / 'm.sqlite3'}", "--port", str(port), "--workers", "0", "--max-data-mb", "8"]
    log = tmp_path / "server.log"
    proc = subprocess.Popen(cmd, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/api/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        httpx.get(f"{base}/api/v1/testsets", timeout=10)  # warm: the first request imports the routes' modules
        before = _peak_kib(proc.pid)
        r = httpx.post(f"{base}/api/v1/testsets", files={"file": ("qrels.gz", gz)}, data={"format": "trec"},
                       timeout=120)
        assert r.status_code == 413, r.text
        assert r.json()["errors"][0]["field"] == "file" and str(8 * 1024 * 1024) in r.text
        r = httpx.post(f"{base}/api/v1/testsets", files={"file": ("beir.zip", zp)}, data={"format": "beir"},
                       timeout=120)
        assert r.status_code == 413, r.text
        grown_mib = (_peak_kib(proc.pid) - before) / 1024
        assert grown_mib < 100, f"peak memory grew by {grown_mib:.0f} MiB"
        left = sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file())
        assert left == 0, list(tmp.rglob("*"))
    finally:
        proc.terminate()
        proc.wait(10)
