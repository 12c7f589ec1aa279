"""The registry loads its built-in families once, safely under concurrent first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import threading
from rankscope.measures import parse_metric
errors = []
barrier = threading.Barrier(8)
def work():
    barrier.wait()
    try:
        parse_metric("ndcg@10"); parse_metric("bpref"); parse_metric("IPrec@0.1")
    except Exception as exc:
        errors.append(repr(exc))
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(len(errors))
"""


@pytest.mark.slow
def test_concurrent_first_use_sees_every_builtin_metric() -> None:
    # a fresh interpreter each time, so the registry's first load is what the threads race on
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "0", out.stdout + out.stderr
