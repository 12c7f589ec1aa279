r"""The catalog's extractor of Python messages (``babel.cfg``, ``make catalog``): Babel's own reads each ``_()`` call
from the tokens and, before Python 3.12, cannot see one inside an f-string (``f"{_('Warning')}: ..."``); this one
reads the syntax tree, so every call is found wherever it is written.  A message chosen by a condition
(``gettext("PASS" if passed else "FAIL", lang)``) gives both.

The command line's help is English written once too, where typer reads it: a command's docstring (a function under
``@app.command(...)`` or ``@app.callback(...)``), each ``help="..."`` and each phrase ``show_default="..."``.  In a
module that imports typer these are messages in the context ``help`` (:mod:`rankscope.cli.help` says them).

>>> import io
>>> code = b'x = gettext("PASS" if ok else "FAIL", lang)\ny = _(f"{_(\'Warning\')}: ...")\n'
>>> [m[2] for m in python(io.BytesIO(code), {"_": None, "gettext": None}, [], {})]
[('PASS', None), ('FAIL', None), 'Warning']
>>> code = b"import typer\n@app.command('x')\ndef x(n: int = typer.Option(1, help='how many')):\n    '''Do X.'''\n"
>>> [m[2] for m in python(io.BytesIO(code), {"_": None}, [], {})]
[('help', 'Do X.'), ('help', 'how many')]
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator, Mapping
from typing import IO, Any

__all__ = ["json_fields", "python"]


def python(fileobj: IO[bytes], keywords: Mapping[str, Any], comment_tags: Any, options: Mapping[str, Any]
           ) -> Iterator[tuple[int, str, str | tuple[str | None, ...] | None, list[str]]]:
    """Every call of a keyword function (``_``, ``ngettext``, ``pgettext``, ``N_`` ...) in the module read from
    ``fileobj``: (line, function, its positional string arguments (``None`` for another value), no comments)."""
    source = fileobj.read().decode(options.get("encoding", "utf-8"))
    tree = ast.parse(source)
    if "import typer" in source:
        yield from _help(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in keywords and node.args:
            rest = tuple(_string(a) for a in node.args[1:])
            for first in _choices(node.args[0]):
                args = (first, *rest)
                yield node.lineno, node.func.id, args if len(args) > 1 else args[0], []


def _help(tree: ast.Module) -> Iterator[tuple[int, str, tuple[str, str], list[str]]]:
    """The help texts of a typer command line: docstrings of commands and callbacks, ``help=`` and the phrases of
    ``show_default=`` (as ``NC_("help", text)``, cleaned as :func:`inspect.cleandoc` cleans a docstring)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in ("command", "callback")
                for d in node.decorator_list):
            doc = ast.get_docstring(node, clean=True)
            if doc:
                yield node.lineno, "NC_", ("help", doc), []
        elif isinstance(node, ast.Call):
            for keyword in node.keywords:
                said = _string(keyword.value) if keyword.arg in ("help", "show_default") else None
                if said:
                    yield keyword.value.lineno, "NC_", ("help", inspect.cleandoc(said)), []


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _choices(node: ast.expr) -> list[str]:
    """The strings an argument can be: a literal, or each literal branch of ``a if c else b``."""
    if isinstance(node, ast.IfExp):
        return _choices(node.body) + _choices(node.orelse)
    said = _string(node)
    return [] if said is None else [said]


def json_fields(fileobj: IO[bytes], keywords: Mapping[str, Any], comment_tags: Any, options: Mapping[str, Any]
                ) -> Iterator[tuple[int, str, tuple[str, str], list[str]]]:
    """The English texts of a JSON data file a user reads (``babel.cfg``: the bundled datasets' ``catalog.json``, the
    interpretation guide's ``bands.json`` and ``presets.json``): every string held (at any depth) under a key named in
    the option ``fields``, as ``NC_(context, text)``.  A field is ``key`` (the option ``context``) or
    ``key:context``; the code says the text with ``gettext(text, lang, context=context)``.

    >>> import io
    >>> data = b'{"cranfield": {"title": "Cranfield", "documents": 1400, "levels": {"poor": "poor"}, "note": "n"}}'
    >>> options = {"fields": "title levels note:guide-note", "context": "dataset"}
    >>> [m[2] for m in json_fields(io.BytesIO(data), {}, [], options)]
    [('dataset', 'Cranfield'), ('dataset', 'poor'), ('guide-note', 'n')]
    """
    import json

    data = json.loads(fileobj.read().decode(options.get("encoding", "utf-8")))
    fields = {}
    for field in str(options.get("fields", "")).split():
        key, _, context = field.partition(":")
        fields[key] = context or str(options["context"])

    def texts(value: Any) -> Iterator[str]:
        if isinstance(value, str) and value:
            yield value
        elif isinstance(value, dict):
            for inner in value.values():
                yield from texts(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from texts(inner)

    def walk(value: Any) -> Iterator[tuple[int, str, tuple[str, str], list[str]]]:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key in fields:
                    yield from ((0, "NC_", (fields[key], text), []) for text in texts(inner))
                else:
                    yield from walk(inner)
        elif isinstance(value, list):
            for inner in value:
                yield from walk(inner)

    yield from walk(data)
