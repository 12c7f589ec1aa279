"""Every example of docs/chunking.md runs, in order: ``python`` blocks in one namespace, each ``rankscope``
command of a ``bash`` block exits 0, each ``json`` block parses (test-set records)."""

from __future__ import annotations

import json
import os
import re
import shlex

import pytest

from conftest import DATA, REPO, require
from rankscope.cli.app import main

DOC = REPO / "docs" / "chunking.md"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)


def test_every_example_runs(tmp_path, capsys):
    require(DATA / "zh_cmrc2018_retrieval")
    text = DOC.read_text(encoding="utf-8").replace("../shared/data", str(DATA))
    namespace: dict[str, object] = {}
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        for kind, body in ((m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)):
            if kind == "python":
                exec(compile(body, str(DOC), "exec"), namespace)  # the page's own examples
            elif kind == "bash":
                joined = re.sub(r"\\\n\s*", " ", body)
                for line in (x.strip() for x in joined.splitlines()):
                    if not line or line.startswith("#"):
                        continue
                    args = shlex.split(line)
                    assert args[0] == "rankscope", line
                    with pytest.raises(SystemExit) as exit_info:
                        main(args[1:])
                    assert exit_info.value.code == 0, (line, capsys.readouterr().err)
            elif kind == "json":
                record = json.loads(body)
                assert record["evidence"][0]["text"] == namespace["corpus"]["d1"][32:62]  # type: ignore[index]
            else:
                pytest.fail(f"unexpected code block kind {kind!r} in {DOC.name}")
    finally:
        os.chdir(here)
    assert (tmp_path / "chunking.html").exists()
