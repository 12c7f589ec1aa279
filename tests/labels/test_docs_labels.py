"""Every example of docs/labels.md runs, in order, from a folder beside ../shared/data.

Fenced blocks:

* ``python`` — executed (one namespace for the whole page);
* ``bash`` — each ``rankscope ...`` command is run and must exit 0; a ``text`` block right after
  one holds that command's output, compared line by line (trailing spaces ignored);
* ``bash llm`` / ``python llm`` — commands for a real endpoint: each ``rankscope judge`` /
  ``synth`` command runs exactly as written with ``--dry-run`` (nothing is sent), then for real
  with its ``--base-url`` pointed at the local stand-in server (``vllm serve`` / ``ollama pull``
  lines set up a server and are skipped); ``python llm`` blocks get the stand-in's URL for
  ``http://localhost:8000/v1``;
* ``json`` — each line parses; a pool record must be a line of the pool file written before.

Anything else in a ``bash`` block fails the test, so the page cannot drift from what runs.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from conftest import DATA, REPO, require
from rankscope.cli.app import main

from .fake_llm import FakeLLM

DOC = REPO / "docs" / "labels.md"
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.DOTALL | re.MULTILINE)


def blocks(text: str) -> list[tuple[str, str]]:
    return [(m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)]


def commands(body: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", body)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def run(cmd: str, capsys: pytest.CaptureFixture[str]) -> str:
    args = shlex.split(cmd)
    assert args[0] == "rankscope", f"not a rankscope command in a bash block: {cmd}"
    with pytest.raises(SystemExit) as exit_info:
        main(args[1:])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 0, f"{cmd}\n{err}"
    return out


def with_base_url(cmd: str, url: str) -> str:
    return re.sub(r"--base-url \S+", f"--base-url {url}", cmd)


def same_output(shown: str, got: str) -> None:
    want = [line.rstrip() for line in shown.strip().splitlines()]
    have = [line.rstrip() for line in got.strip().splitlines()]
    assert have == want, "\n".join(have)


def test_docs_labels_examples_run(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    require(DATA / "runs_dl_hard")
    (tmp_path / "shared").symlink_to(DATA.parent, target_is_directory=True)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for var in ("OPENAI_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.setenv(var, f"test-key-{var.lower()}")
    found = blocks(DOC.read_text(encoding="utf-8"))
    assert len(found) > 10
    namespace: dict[str, object] = {}
    last_out: str | None = None
    ran = {"python": 0, "bash": 0, "llm": 0, "text": 0}
    with FakeLLM() as llm:
        for info, body in found:
            kind = info.split()
            if kind == ["python"] or kind == ["python", "llm"]:
                code = body.replace("http://localhost:8000/v1", llm.url) if "llm" in kind else body
                exec(compile(code, f"{DOC}:python", "exec"), namespace)
                ran["python"] += 1
                last_out = None
            elif kind == ["bash"]:
                for cmd in commands(body):
                    last_out = run(cmd, capsys)
                    ran["bash"] += 1
            elif kind == ["bash", "llm"]:
                for cmd in commands(body):
                    if cmd.startswith(("vllm ", "ollama ")):
                        continue
                    if cmd.startswith(("rankscope judge", "rankscope synth")):
                        if "--dry-run" not in cmd:
                            run(cmd + " --dry-run", capsys)
                        calls = llm.calls
                        last_out = run(with_base_url(cmd, llm.url), capsys)
                        assert "--dry-run" in cmd or llm.calls > calls or "0 judged now" in last_out
                    else:
                        last_out = run(cmd, capsys)
                    ran["llm"] += 1
            elif kind == ["text"]:
                assert last_out is not None, "a text block must follow a command"
                same_output(body, last_out)
                ran["text"] += 1
                last_out = None
            elif kind == ["json"]:
                for line in body.strip().splitlines():
                    rec = json.loads(line)
                    if "best_rank" in rec:
                        assert line in Path("dl-hard-pool.jsonl").read_text(encoding="utf-8").splitlines()
                    else:
                        assert {"query_id", "doc_id", "grade", "source"} <= set(rec)
            else:
                pytest.fail(f"unknown block kind {info!r} in {DOC.name}")
        auth = {r["headers"].get("Authorization") for r in llm.requests}  # keys go in the header only
        assert auth == {None, "Bearer test-key-openai_api_key", "Bearer test-key-deepseek_api_key"}
    assert ran["python"] >= 3 and ran["bash"] >= 4 and ran["llm"] >= 6 and ran["text"] >= 2, ran
    for f in work.rglob("*"):
        if f.is_file():
            assert b"test-key-" not in f.read_bytes(), f
