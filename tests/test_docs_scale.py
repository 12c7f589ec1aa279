"""Every example of docs/scale.md runs, in order: ``python`` blocks in one namespace (the Ray one on a local
Ray), each ``rankscope`` command of a ``bash`` block exits 0."""

from __future__ import annotations

import os
import re
import shlex

import pytest

from conftest import DATA, REPO, require
from rankscope.cli.app import main

DOC = REPO / "docs" / "scale.md"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)


@pytest.mark.ray
def test_every_example_runs(tmp_path, capsys):
    pytest.importorskip("ray")
    require(DATA / "runs_dl_hard")
    text = DOC.read_text(encoding="utf-8").replace("../shared/data", str(DATA))
    namespace: dict[str, object] = {}
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        for kind, body in ((m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)):
            if kind == "python":
                exec(compile(body, str(DOC), "exec"), namespace)
            elif kind == "bash":
                for line in (x.strip() for x in body.splitlines()):
                    if not line or line.startswith("#"):
                        continue
                    args = shlex.split(line)
                    assert args[0] == "rankscope", line
                    with pytest.raises(SystemExit) as exit_info:
                        main(args[1:])
                    assert exit_info.value.code == 0, (line, capsys.readouterr().err)
            else:
                pytest.fail(f"unexpected code block kind {kind!r} in {DOC.name}")
    finally:
        os.chdir(here)
    assert len(list((tmp_path / "per-query").glob("*.tsv"))) == 14
