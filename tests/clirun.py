"""``rankscope ARGS`` run in the test's own process, as a terminal would run it: through ``main`` (so click's usage
mistakes are said as the command line says them), with its own environment and terminal width, stdout and stderr
captured apart.  A subprocess per command cost 1-2 s of imports (typer, rich, jieba) each; this costs none.

>>> done = cli("power", "--delta", "0.02", "--sd", "0.15", env={"RANKSCOPE_LANG": "zh"})
>>> done.returncode, done.stdout.startswith("所需查询数")
(0, True)
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

__all__ = ["cli"]


@contextlib.contextmanager
def _within(folder: Path | None) -> Iterator[None]:
    here = Path.cwd()
    if folder is not None:
        os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)

#: what decides the language and the width; cleared, then set by each call
LANG_VARS = ("RANKSCOPE_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "COLUMNS")


def cli(*args: str | Path, env: dict[str, str] | None = None, cwd: Path | None = None,
        width: int = 60) -> subprocess.CompletedProcess[str]:
    """Run ``rankscope ARGS``; the environment is the test's without a language (``LANG=C.UTF-8``), ``COLUMNS`` is
    ``width``, then ``env`` on top; ``cwd`` the working folder.  Returns what ``subprocess.run`` would."""
    from rankscope.cli.app import main

    base = {k: v for k, v in os.environ.items() if k not in LANG_VARS}
    base.update({"LANG": "C.UTF-8", "COLUMNS": str(width), **(env or {})})
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with mock.patch.dict(os.environ, base, clear=True), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err), _within(cwd):
        try:
            main([str(a) for a in args])
        except SystemExit as stop:
            code = 0 if stop.code is None else stop.code if isinstance(stop.code, int) else 1
    return subprocess.CompletedProcess(["rankscope", *map(str, args)], code, out.getvalue(), err.getvalue())


def outcome(res: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of a :func:`cli` call."""
    return res.returncode, res.stdout, res.stderr
