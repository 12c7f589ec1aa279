"""The examples issue 17 added to the docs run as written: docs/notebooks.md entirely, and the sections
"Three-column runs" of docs/io.md and "One run" of docs/reports.md (``python`` blocks in one namespace per
page, each ``rankscope`` command of a ``bash`` block exits 0), on the real data in ../shared/data."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from conftest import DATA, REPO, require
from rankscope.cli.app import main

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)


def _run_blocks(text: str, where: str, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    namespace: dict[str, object] = {}
    for kind, body in ((m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)):
        if kind == "python":
            exec(compile(body, where, "exec"), namespace)
        elif kind == "bash":
            joined = re.sub(r"\\\n\s*", " ", body)
            for line in (x.strip() for x in joined.splitlines()):
                if not line or line.startswith("#"):
                    continue
                args = shlex.split(line)
                assert args[0] == "rankscope", line
                with pytest.raises(SystemExit) as exit_info:
                    main(args[1:])
                assert exit_info.value.code in (0, None), (line, capsys.readouterr().err)
        else:
            pytest.fail(f"unexpected code block kind {kind!r} in {where}")
    return namespace


def _section(doc: str, heading: str) -> str:
    text = (REPO / "docs" / doc).read_text(encoding="utf-8")
    level = heading.split(" ", 1)[0]
    body = text.split(heading, 1)[1]
    return re.split(rf"^{level} ", body, maxsplit=1, flags=re.MULTILINE)[0]


@pytest.fixture
def in_tmp(tmp_path: Path) -> Path:
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path  # type: ignore[misc]
    finally:
        os.chdir(here)


def test_notebooks_doc_runs(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require(DATA / "runs_dl_hard")
    text = (REPO / "docs" / "notebooks.md").read_text(encoding="utf-8").replace("../shared/data", str(DATA))
    ns = _run_blocks(text, "docs/notebooks.md", capsys)
    out = capsys.readouterr().out
    assert "EvaluationResult('PYSERINI', 50 queries: ndcg@10=0.3037" in out
    assert "'effect_size', 'significant']" in out
    assert (in_tmp / "recall5.png").stat().st_size > 1000 and (in_tmp / "comparison.json").exists()
    assert "<table" in ns["comparison"]._repr_html_()  # type: ignore[attr-defined]


def test_io_three_column_section_runs(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run_blocks(_section("io.md", "### Three-column runs"), "docs/io.md", capsys)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "run.dev.tsv: column 3 read as rank, 1 = best"
    assert out[1] == "{'1': {'D7': -1.0, 'D3': -2.0}, '2': {'D9': -1.0}}"
    assert "--columns qid,docid,rank" in out[2] and "query '1' has 2, 1, 3;" in out[2]


def test_reports_one_run_section_runs(in_tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require(DATA / "runs_dl_hard")
    text = _section("reports.md", "## One run").replace("../shared/data", str(DATA))
    _run_blocks(text, "docs/reports.md", capsys)
    for name in ("bm25.html", "bm25.md", "bm25.tex"):
        assert (in_tmp / name).stat().st_size > 1000, name
    assert "Document retrieval / document QA" in (in_tmp / "bm25.md").read_text(encoding="utf-8")
