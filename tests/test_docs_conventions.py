"""The ``pycon`` examples of docs/conventions.md run as written (doctest)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

DOC = Path(__file__).parents[1] / "docs" / "conventions.md"


def test_conventions_examples_run() -> None:
    blocks = re.findall(r"^```pycon\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.S | re.M)
    assert blocks, "docs/conventions.md has no pycon example"
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, text in enumerate(blocks):
        runner.run(parser.get_doctest(text, {}, f"conventions.md[{i}]", str(DOC), 0))
    assert runner.failures == 0 and runner.tries > 0
