"""The catalog's extractor of Python messages (``babel.cfg``, ``make catalog``): Babel's own reads each ``_()`` call
from the tokens and, before Python 3.12, cannot see one inside an f-string (``f"{_('Warning')}: ..."``); this one
reads the syntax tree, so every call is found wherever it is written.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from typing import IO, Any

__all__ = ["python"]


def python(fileobj: IO[bytes], keywords: Mapping[str, Any], comment_tags: Any, options: Mapping[str, Any]
           ) -> Iterator[tuple[int, str, str | tuple[str | None, ...] | None, list[str]]]:
    """Every call of a keyword function (``_``, ``ngettext``, ``pgettext``, ``N_`` ...) in the module read from
    ``fileobj``: (line, function, its positional string arguments (``None`` for another value), no comments)."""
    tree = ast.parse(fileobj.read().decode(options.get("encoding", "utf-8")))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in keywords:
            args = tuple(a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None
                         for a in node.args)
            if args and args[0] is not None:
                yield node.lineno, node.func.id, args if len(args) > 1 else args[0], []
