"""Everything rankscope says to a user can say itself in every language (issue 17 §5), checked on the source.

* Every error and warning of rankscope's own (a :class:`~rankscope.errors.RankscopeError` or
  :class:`~rankscope.errors.RankscopeWarning`, or a subclass anywhere in ``src/``) is raised keyed:
  ``raise SomeError(f"English ...").keyed("key", **values)``.  The key names a message ``error.<key>`` /
  ``warning.<key>`` of the message files, filled by exactly the values the call passes.
* The command line's :func:`rankscope.cli.app.fail` is always given its message key.
* The message files of every language hold the same keys with the same placeholders; the Chinese ones use
  full-width punctuation.
* That the English message file says what the code says is checked where the suite reaches each message
  (``RANKSCOPE_CHECK_MESSAGES=1``, set by the root conftest: :meth:`rankscope.errors.Keyed.keyed`).

A site that cannot be keyed where it is constructed (a helper that keys the error it returns) is listed in
``KEYED_ELSEWHERE`` with where that happens.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rankscope.interpret.i18n import LANGS, messages

SRC = Path(__file__).resolve().parents[1] / "src" / "rankscope"
FILES = sorted(SRC.rglob("*.py"))
FIELD = re.compile(r"\{(\w+)")
CJK = re.compile(r"[\u4e00-\u9fff]")
#: an ASCII colon, comma, semicolon, parenthesis, question or exclamation mark right after a Chinese character, or
#: a Chinese character right after an ASCII comma, semicolon or colon (mixed punctuation)
MIXED = re.compile(r"[\u4e00-\u9fff][:,;()?!]|[,;:][\u4e00-\u9fff]")

#: (file relative to src/rankscope, function) whose constructions are keyed by their caller, and why
KEYED_ELSEWHERE: dict[tuple[str, str], str] = {
    ("errors.py", "Keyed.keyed"): "the class docstring's example",
}
#: the front end that must print trec_eval's own messages, in English whatever the language
TREC_EVAL_FRONT = ("trec_eval/",)


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _rel(path: Path) -> str:
    return path.relative_to(SRC).as_posix()


def _trees() -> dict[str, ast.Module]:
    return {_rel(p): ast.parse(p.read_text(encoding="utf-8"), str(p)) for p in FILES}


TREES = _trees()


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _families() -> dict[str, str]:
    """Every class of ``src/`` that derives from RankscopeError ("error") or RankscopeWarning ("warning")."""
    family = {"RankscopeError": "error", "RankscopeWarning": "warning"}
    bases: dict[str, list[str]] = {}
    for tree in TREES.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases[node.name] = [n for b in node.bases if (n := _name(b))]
    changed = True
    while changed:
        changed = False
        for cls, names in bases.items():
            if cls in family:
                continue
            found = [family[n] for n in names if n in family]
            if found:
                family[cls] = "warning" if "warning" in found else "error"
                changed = True
    return family


FAMILIES = _families()


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _scope(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> str:
    names = []
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(node.name)
    return ".".join(reversed(names))


def _keyed_call(node: ast.Call, parents: dict[ast.AST, ast.AST]) -> ast.Call | None:
    """The ``.keyed(...)`` call made directly on ``node``'s value, if any."""
    attr = parents.get(node)
    if isinstance(attr, ast.Attribute) and attr.attr == "keyed":
        call = parents.get(attr)
        if isinstance(call, ast.Call) and call.func is attr:
            return call
    return None


def _unkeyed(path: str) -> Iterator[Site]:
    if path.startswith(TREC_EVAL_FRONT):
        return
    tree = TREES[path]
    parents = _parents(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _name(node.func)
        scope = _scope(node, parents)
        if (name in FAMILIES and name not in ("RankscopeError", "RankscopeWarning")) or (
                name in ("RankscopeError", "RankscopeWarning") and path != "errors.py"):
            if _keyed_call(node, parents) is None and (path, scope) not in KEYED_ELSEWHERE:
                yield Site(path, node.lineno, f"{name}(...) in {scope or 'the module'} is not keyed")
        elif name == "warn" and node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr)):
            category = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "category"), None)
            if category is not None and _name(category) in FAMILIES:
                yield Site(path, node.lineno, "warnings.warn(<text>, ...) cannot be keyed: warn a keyed warning")
        elif name == "fail" and path.startswith("cli/") and not any(k.arg == "key" for k in node.keywords) \
                and not (node.args and isinstance(node.args[0], ast.Name) and scope.endswith("wrapper")):
            yield Site(path, node.lineno, f"fail(...) in {scope} has no message key")


def _keys_used(path: str) -> Iterator[tuple[Site, str, set[str] | None]]:
    """Each ``.keyed("key", ...)`` of ``path``: where, the message id(s) it may name, and the values it passes
    (None: passed with ``**``)."""
    for node in ast.walk(TREES[path]):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "keyed"):
            continue
        if not (node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            continue
        key = node.args[0].value
        receiver = node.func.value
        fam = FAMILIES.get(_name(receiver.func) or "") if isinstance(receiver, ast.Call) else None
        values = None if any(k.arg is None for k in node.keywords) else {k.arg for k in node.keywords if k.arg}
        ids = f"{fam}.{key}" if fam else key
        yield Site(path, node.lineno, ids), ids, values


@pytest.mark.parametrize("path", sorted(TREES))
def test_every_error_and_warning_is_keyed(path: str) -> None:
    sites = [str(s) for s in _unkeyed(path)]
    assert not sites, "said in English only:\n" + "\n".join(sites)


@pytest.mark.parametrize("path", sorted(TREES))
def test_every_key_is_in_the_message_files_with_its_values(path: str) -> None:
    en = messages("en")
    problems = []
    for site, ids, values in _keys_used(path):
        candidates = [ids] if "." in ids and ids.split(".")[0] in ("error", "warning") else [
            f"error.{ids}", f"warning.{ids}"]
        found = [c for c in candidates if c in en]
        if not found:
            problems.append(f"{site}: no message {' or '.join(candidates)}")
            continue
        if values is not None and not any(set(FIELD.findall(en[c])) == values for c in found):
            problems.append(f"{site}: {found[0]} takes {sorted(set(FIELD.findall(en[found[0]])))}, "
                            f"the call passes {sorted(values)}")
    assert not problems, "\n".join(problems)


def test_the_message_files_hold_the_same_keys_and_placeholders() -> None:
    en = messages("en")
    for lang in LANGS:
        table = messages(lang)
        assert set(table) == set(en), (lang, sorted(set(table) ^ set(en))[:20])
        for key, text in table.items():  # {term}: the Chinese term of a setting's value (rankscope.choices.TERMS)
            assert set(FIELD.findall(text)) - {"term"} == set(FIELD.findall(en[key])), (lang, key)


def test_chinese_messages_use_full_width_punctuation() -> None:
    bad = {key: text for key, text in messages("zh").items() if MIXED.search(re.sub(r"\{[^}]*\}", "", text))}
    assert not bad, bad


def test_a_key_lives_in_one_message_file() -> None:
    folder = SRC / "interpret" / "messages"
    import json

    for lang in LANGS:
        seen: dict[str, str] = {}
        for part in [folder / f"{lang}.json", *sorted((folder / lang).glob("*.json"))]:
            if not part.exists():
                continue
            for key, _ in json.loads(part.read_text(encoding="utf-8"), object_pairs_hook=list):  # twice in a file too
                assert key not in seen, f"{key} in {seen[key]} and {part.name}"
                seen[key] = part.name


def test_the_check_of_english_messages_is_on_for_the_suite() -> None:
    from rankscope.errors import InvalidParameterError

    with pytest.raises(AssertionError, match=r"error\.no_judgment"):
        InvalidParameterError("not what the message file says").keyed("no_judgment")
