"""Count the code blocks of README*.md and docs/ that the test suite runs (conftest.py, sybil).

    python scripts/doc_blocks.py          # per page, then: doc blocks run R / total T

A fenced block counts as run unless a ``<!-- skip: ... -->`` directive covers it (its reason is listed);
every other block is evaluated by a rule of conftest.py, and one no rule knows fails the suite.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from sybil import Document
from sybil.parsers.markdown import SkipParser
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

ROOT = Path(__file__).resolve().parents[1]


def _conftest():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("_docs_conftest", ROOT / "conftest.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def count(path: Path) -> tuple[int, list[tuple[int, str]]]:
    """(fenced blocks, [(line, reason) of each skipped one])."""
    document = Document(path.read_text(encoding="utf-8"), str(path))
    fences = sorted(r.start for r in FencedCodeBlockLexer(language=r".*")(document))
    skipped: list[tuple[int, str]] = []
    active: tuple[int, str] | None = None
    for region in sorted(SkipParser()(document), key=lambda r: r.start):
        action, reason = region.parsed
        if action == "next":
            nxt = next(f for f in fences if f > region.start)
            skipped.append((document.text.count("\n", 0, nxt) + 1, str(reason)))
        elif action == "start":
            active = (region.start, str(reason))
        elif action == "end" and active:
            skipped += [(document.text.count("\n", 0, f) + 1, active[1])
                        for f in fences if active[0] < f < region.start]
            active = None
    return len(fences), skipped


def main() -> int:
    conftest = _conftest()
    pages = sorted({p for pattern in conftest.DOC_PATTERNS for p in ROOT.glob(pattern)})
    total = run = 0
    for page in pages:
        n, skipped = count(page)
        total, run = total + n, run + n - len(skipped)
        print(f"{page.relative_to(ROOT)}: {n - len(skipped)}/{n}")
        for line, reason in skipped:
            print(f"    line {line} skipped: {reason}")
    print(f"doc blocks run {run} / total {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
