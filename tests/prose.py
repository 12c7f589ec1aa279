"""What Chinese output must look like: Chinese sentences, full-width punctuation, no English prose left over.

``english_left(text)`` lists the runs of three or more English words in ``text`` (outside code: option names,
paths, metric names, quoted values, the names a reader searches for in parentheses are not runs of words);
``assert_chinese(text)`` fails on any of them, on mixed punctuation, and on text without a Chinese character.

>>> english_left("共评估 50 个查询，缺失查询计零（missing=zero）")
[]
>>> english_left("警告：the run has no query in common")
['the run has no query in common']
>>> english_left("格式（query Q0 doc rank score tag）", allowed=("query Q0 doc rank score tag",))
[]
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["CJK", "MIXED", "english_left", "assert_chinese", "unwrap", "whole_lines"]

CJK = re.compile(r"[\u4e00-\u9fff]")
#: an ASCII colon, comma, semicolon or parenthesis right after a Chinese character (mixed punctuation)
MIXED = re.compile(r"[\u4e00-\u9fff][:,;()]")
#: code-like tokens that are not prose: options, paths, dotted or @-names, key=value, quoted text, URLs, `code`
_CODE = re.compile(r"`[^`]*`|'[^']*'|\"[^\"]*\"|https?://\S+|\S*[-/\\@=_.:<>|\[\]{}]\S*|\b[A-Z][A-Z0-9_]+\b")
_WORDS = re.compile(r"[A-Za-z]+(?:[ ]+[A-Za-z]+){2,}")


_WIDE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")


def unwrap(text: str) -> str:
    """``text`` as a reader reads wrapped prose: each line break (with the indentation after it) read as the space the
    wrapping took out, or as nothing between two Chinese characters or marks.

    >>> unwrap("1 query evaluated; 1 qrels\\n    query missing")
    '1 query evaluated; 1 qrels query missing'
    >>> unwrap("报告已写入\\n    /tmp/r.md；评估的\\n    结果")
    '报告已写入 /tmp/r.md；评估的结果'
    """
    def joined(m: re.Match[str]) -> str:
        before, after = text[m.start() - 1:m.start()], text[m.end():m.end() + 1]
        if before in ("/", "|") or (_WIDE.fullmatch(before) and _WIDE.fullmatch(after)):  # a path or a list cut
            return ""
        return " "

    return re.sub(r"[ \t]*\n[ \t]*", joined, text)


def whole_lines(text: str) -> str:
    """``text`` with each printed line whole again: its continuation lines (indented) joined to it (:func:`unwrap`).

    >>> whole_lines("judged 4 pairs: 3\\n    graded\\nqrels -> /tmp/\\n    a.qrels\\n")
    'judged 4 pairs: 3 graded\\nqrels -> /tmp/a.qrels\\n'
    """
    if not text:
        return text
    return "".join(unwrap(line) + "\n" for line in re.split(r"\n(?! )", text.strip("\n")))


def english_left(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """Runs of three or more English words in ``text`` that are neither code nor in ``allowed``."""
    for phrase in allowed:
        text = text.replace(phrase, " ")
    found = []
    for line in text.splitlines():
        prose = _CODE.sub(" ", line)
        found += [m.group(0) for m in _WORDS.finditer(prose)]
    return found


def assert_chinese(text: str, allowed: Iterable[str] = ()) -> None:
    """``text`` is Chinese: a Chinese character, no English prose left, no mixed punctuation."""
    assert CJK.search(text), text
    left = english_left(text, allowed)
    assert not left, f"English left in Chinese output: {left}\n{text}"
    bad = [line for line in text.splitlines() if MIXED.search(line)]
    assert not bad, f"mixed punctuation: {bad}"
