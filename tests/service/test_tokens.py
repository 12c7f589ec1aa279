"""The service's token: strength estimated (zxcvbn), wrong tries throttled per client, and never needed on the
command line (``--token-file``, ``RANKSCOPE_TOKEN``)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from rankscope.errors import InvalidParameterError
from rankscope.service.settings import Settings, check_token

from .conftest import make_client
from .postgres import free_port

GOOD = "Wq3-vT8s-Lm2x-Pz7k"


@pytest.mark.parametrize("weak", ["passwordpassword", "aaaaaaaaaaaaaaaa", "0123456789abcdef", "qwertyuiopasdfgh",
                                  "correcthorsecorrecthorse"])
def test_long_but_guessable_tokens_are_refused(weak: str) -> None:
    with pytest.raises(InvalidParameterError, match="too weak: it is guessed in about 10\\^"):
        check_token(weak)
    with pytest.raises(InvalidParameterError, match="too weak"):
        Settings(db_url="sqlite://", token=weak)


def test_random_tokens_pass() -> None:
    import secrets

    for _ in range(20):
        check_token(secrets.token_urlsafe(24))
    assert check_token(GOOD) == GOOD


def test_wrong_logins_are_throttled_per_client(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 't.sqlite3'}", token=GOOD) as c:
        own = {"Origin": "http://127.0.0.1"}
        codes = [c.post("/login", data={"token": f"wrong-{i}"}, headers=own, follow_redirects=False).status_code
                 for i in range(15)]
        assert codes[:10] == [401] * 10 and codes[10:] == [429] * 5
        r = c.post("/login", data={"token": GOOD}, headers=own, follow_redirects=False)
        assert r.status_code == 429 and int(r.headers["retry-after"]) > 0  # not even the right one, for a while
        assert "try again in" in r.text
        # the API shares the count: a wrong bearer token is answered 429 too, a missing one is not a guess
        r = c.get("/api/v1/testsets", headers={"Authorization": f"Bearer {GOOD}"})
        assert r.status_code == 429 and r.headers["retry-after"]


def test_wrong_bearer_tokens_are_throttled(tmp_path: Path) -> None:
    with make_client(f"sqlite:///{tmp_path / 'b.sqlite3'}", token=GOOD) as c:
        t0 = time.monotonic()
        codes = [c.get("/api/v1/testsets", headers={"Authorization": f"Bearer guess-{i}"}).status_code
                 for i in range(200)]
        assert codes.count(401) == 10 and codes.count(429) == 190, codes[:15]
        assert time.monotonic() - t0 < 30
        assert c.get("/api/v1/health").status_code == 200


@pytest.mark.slow
def test_the_token_file_keeps_the_token_off_the_command_line(tmp_path: Path) -> None:
    token_file = tmp_path / "token.txt"
    token_file.write_text(GOOD + "\n")
    port = free_port()
    cmd = [sys.executable, "-c", "from rankscope.cli.app import main; main()", "serve", "--db",
           f"sqlite:///{tmp_path / 's.sqlite3'}", "--port", str(port), "--workers", "0", "--token-file",
           str(token_file)]
    env = {k: v for k, v in os.environ.items() if k != "RANKSCOPE_TOKEN"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{base}/api/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        assert httpx.get(f"{base}/api/v1/testsets").status_code == 401
        assert httpx.get(f"{base}/api/v1/testsets", headers={"Authorization": f"Bearer {GOOD}"}).status_code == 200
        assert GOOD.encode() not in Path(f"/proc/{proc.pid}/cmdline").read_bytes()
    finally:
        proc.terminate()
        proc.wait(10)
    both = subprocess.run([*cmd, "--token", GOOD], capture_output=True, text=True, timeout=60)
    assert both.returncode == 2 and "give the token once" in both.stderr


def test_the_docs_never_put_a_token_on_the_command_line() -> None:
    root = Path(__file__).resolve().parents[2]
    for doc in (root / "docs" / "service.md", root / "README.md"):
        for line in doc.read_text(encoding="utf-8").splitlines():
            if "rankscope serve" in line and "--token " in line:
                assert '--token "$' not in line and "--token change-me" not in line, (doc.name, line)
    from rankscope.cli.serve_cmd import serve_command

    assert "--token " not in (serve_command.__doc__ or "")
