"""Wrapping prose for the terminal, measured in display cells (a Chinese character takes two).

:func:`wrap_cells` fills lines up to a width in cells (:func:`rich.cells.cell_len`, the width the
terminal draws).  It breaks at spaces and between Chinese words, never inside a Latin word, a number
or a Chinese word (``评级`` stays whole: words come from jieba's segmentation when jieba is installed,
as with ``pip install 'rankscope[bm25]'``; without it a break may fall between any two characters,
which Chinese typesetting allows).  It follows the line-breaking rules of Chinese text (W3C clreq):
no line starts with a closing mark (，。、；：！？）」》”…) and none ends with an opening one (（「《“).
Only a single token wider than the whole line is cut, by cells.

>>> wrap_cells("评级和生产标准将每个均值与完美排序比较。", 12)
['评级和生产', '标准将每个', '均值与完美', '排序比较。']
>>> wrap_cells("a quick brown fox jumps over the lazy dog", 10)
['a quick', 'brown fox', 'jumps over', 'the lazy', 'dog']
>>> wrap_cells("共50个查询（missing=zero）。", 20)
['共50个查询', '（missing=zero）。']
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["wrap_cells", "print_prose", "has_cjk", "Prose"]

#: marks that never start a line, and marks that never end one
_NO_START = set("，。、；：！？）」』》〉】…—％,.;:!?)]}%”’")
_NO_END = set("（「『《〈【([{“‘")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: a space, a run of Chinese characters (cut into words), a run of Latin letters / digits / ASCII symbols (one
#: unbreakable word), or one other character (a full-width mark)
_TOKEN = re.compile(rf"\s+|[{_HAN}]+|[^\s{_HAN}\u3000-\u303f\uff00-\uffef]+|.", re.S)
_HAN_RUN = re.compile(rf"[{_HAN}]+")

def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Chinese character or full-width mark.

    >>> has_cjk("评级"), has_cjk("rating")
    (True, False)
    """
    return _CJK.search(text) is not None


@functools.cache
def _segmenter() -> Any:
    """jieba's word segmentation (``lcut``), or None when jieba is not installed."""
    try:
        import jieba
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    import logging

    jieba.setLogLevel(logging.WARNING)
    return jieba.lcut


def _words(text: str) -> list[str]:
    """``text`` cut into the pieces a line may break between (marks glued to their neighbour)."""
    out: list[str] = []
    for tok in _TOKEN.findall(text):
        if len(tok) > 1 and _HAN_RUN.fullmatch(tok):
            lcut = _segmenter()
            out.extend(lcut(tok) if lcut is not None else list(tok))
        else:
            out.append(tok)
    glued: list[str] = []
    for tok in out:
        if glued and (tok[0] in _NO_START or glued[-1][-1] in _NO_END) and not tok.isspace():
            glued[-1] += tok
        else:
            glued.append(tok)
    return glued


def wrap_cells(text: str, width: int) -> list[str]:
    """``text`` as lines no wider than ``width`` display cells (see the module doc); existing newlines are kept."""
    from rich.cells import cell_len, chop_cells

    width = max(int(width), 2)
    lines: list[str] = []
    for para in text.split("\n"):
        line = ""
        for tok in _words(para):
            if tok.isspace():
                if line:
                    line += tok
                continue
            if cell_len(line + tok) <= width or not line.strip():  # the space before tok counts too
                line = line + tok if line.strip() else tok
            else:
                lines.append(line.rstrip())
                line = tok
            while cell_len(line) > width:  # one token wider than the line: cut by cells
                head, *rest = chop_cells(line, width)
                lines.append(head)
                line = "".join(rest)
        lines.append(line.rstrip())
    return lines


def print_prose(console: Any, text: str, *, first: str = "", rest: str | None = None, style: str = "") -> None:
    """Print ``text`` on ``console`` wrapped to its width in cells, ``first`` before the first line and ``rest``
    (default: as many spaces as ``first`` is wide) before the others."""
    from rich.cells import cell_len
    from rich.text import Text

    rest = " " * cell_len(first) if rest is None else rest
    lines = wrap_cells(text, console.width - max(cell_len(first), cell_len(rest)))
    body = "\n".join((first if i == 0 else rest) + ln for i, ln in enumerate(lines))
    console.print(Text(body, style=style), soft_wrap=True, highlight=False)


class Prose:
    """Prose as a rich renderable (a table cell) wrapped by :func:`wrap_cells` to the width rich gives it: Chinese
    breaks between words, as rich (which breaks only at spaces) does not.

    >>> from rich.console import Console
    >>> from rich.table import Table
    >>> table = Table.grid()
    >>> table.add_column(width=10)
    >>> table.add_row(Prose("前 k 个结果中相关文档的比例"))
    >>> console = Console(width=40, color_system=None)
    >>> with console.capture() as captured:
    ...     console.print(table)
    >>> for line in captured.get().splitlines():
    ...     print(line.rstrip())
    前 k 个
    结果中相关
    文档的比例
    """

    def __init__(self, text: str, style: str = "") -> None:
        self.text = text
        self.style = style

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.cells import cell_len
        from rich.measure import Measurement

        widest = max((cell_len(w) for line in self.text.split("\n") for w in _words(line) if not w.isspace()),
                     default=0)
        longest = max((cell_len(line) for line in self.text.split("\n")), default=0)
        return Measurement(min(widest, options.max_width), min(longest, options.max_width))

    def __rich_console__(self, console: Any, options: Any) -> Any:
        from rich.text import Text

        yield Text("\n".join(wrap_cells(self.text, options.max_width)), style=self.style)

    def __str__(self) -> str:
        return self.text
