"""``rankscope serve``: the refusal to listen on a non-loopback address without a token."""

from __future__ import annotations

import subprocess
import sys

import pytest

from rankscope.service.settings import Settings, is_loopback


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::"])
def test_non_loopback_without_token_is_refused(host: str) -> None:
    proc = subprocess.run([sys.executable, "-c", "from rankscope.cli.app import main; main()", "serve",
                           "--host", host, "--db", "sqlite://"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("rankscope: error: refusing to listen on") and "--token" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_loopback_detection_and_settings() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("127.1.2.3") and is_loopback("::1")
    assert not is_loopback("example.org") and not is_loopback("10.0.0.1")
    with pytest.raises(ValueError, match="workers"):
        Settings(db_url="sqlite://", workers=-1)
    assert Settings(db_url="sqlite://", token="").token is None
