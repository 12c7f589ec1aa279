"""The README's "Evaluate your own retriever" example runs as written (on the shipped examples/questions.json)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _section_code(title: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_evaluate_your_own_retriever_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(_section_code("Evaluate your own retriever"), "README.md", "exec"), namespace)
    ev = namespace["ev"]
    out = capsys.readouterr().out
    assert "document (qrels, 8 queries)" in out
    assert set(ev.mean()) == {"retrieved", "document"} and 0.5 < ev.mean()["document"]["mrr"] <= 1.0
    assert (tmp_path / "runs" / "mine.jsonl").exists()
    # the second run resumes from the cache (same retriever, k, test set)
    exec(compile(_section_code("Evaluate your own retriever"), "README.md", "exec"), namespace)
    assert namespace["ev"].from_cache == 8


def test_rag_evaluation_doc_opens_with_the_same_example() -> None:
    doc = (ROOT / "docs" / "rag-evaluation.md").read_text(encoding="utf-8")
    first = re.search(r"```python\n(.*?)```", doc, re.S).group(1)
    assert first == _section_code("Evaluate your own retriever")
