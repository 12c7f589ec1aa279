"""Decompression bombs against a real server process: 413, and its peak memory stays bounded (issue 12, #1).

The server runs as a subprocess (``rankscope serve --max-data-mb 8``); its peak resident set
(``VmHWM`` of /proc) is read before and after the uploads: a 1.6 MB gzip of 512 MB of qrels
and a zip whose corpus member inflates to 512 MB add less than 100 MB, and nothing is left in
its temporary folder.
"""

from __future__ import annotations

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
