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

__all__ = ["wrap_cells", "wrap_text", "print_prose", "has_cjk", "Prose"]

#: marks that never start a line, and marks that never end one
_NO_START = set("，。、；：！？）」』》〉】…—％,.;:!?)]}%”’")
_NO_END = set("（「『《〈【([{“‘")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
#: a space, a run of Chinese characters (cut into words), a run of Latin letters / digits / ASCII symbols (one
#: unbreakable word), or one other character (a full-width mark)
_TOKEN = re.compile(rf"\s+|[{_HAN}]+|[^\s{_HAN}\u3000-\u303f\uff00-\uffef]+|.", re.S)
_HAN_RUN = re.compile(rf"[{_HAN}]+")
#: comparisons kept beside both sides (``p = 0.02``)
_OPERATORS = {"=", "≥", "≤", ">=", "<=", "<", ">", "±", "≈", "≠"}
#: brackets whose short content stays on one line, and how short (cells)
_PAIRS = {"（": "）", "(": ")"}
_WHOLE = 24
#: a number with its closing mark, which a paragraph's last line should not hold alone
_LONE = re.compile(r"[-+]?\d[\d.,]*%?[，。、；：！？）」』》…％,.;:!?)\]%”’]*")

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


def _words(text: str, whole: bool = True) -> list[str]:
    """``text`` cut into the pieces a line may break between (spaces are pieces of their own): marks glued to their
    neighbour; a comparison glued to both sides (``p = 0.0203``, ``recall@5 >= 0.8``: a value stays beside what it
    is the value of); a short bracketed phrase kept whole (``（差值 +0.0186）``, ``(median 3)``).  ``whole=False``:
    without these two (what a line narrower than such a piece breaks between).

    >>> [w for w in _words("p = 0.0203，α = 0.05；（差值 +0.0186）") if not w.isspace()]
    ['p = 0.0203，', 'α = 0.05；', '（差值 +0.0186）']
    """
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
    return _keep_whole(_glue_operators(glued)) if whole else glued


def _glue_operators(pieces: list[str]) -> list[str]:
    """``a``, `` ``, ``=``, `` ``, ``b`` as the one piece ``a = b`` (any of :data:`_OPERATORS`)."""
    out: list[str] = []
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        if (piece in _OPERATORS and len(out) >= 2 and out[-1].isspace() and not out[-2].isspace()
                and i + 2 < len(pieces) and pieces[i + 1].isspace() and not pieces[i + 2].isspace()):
            space = out.pop()
            out[-1] += space + piece + pieces[i + 1] + pieces[i + 2]
            i += 3
            continue
        out.append(piece)
        i += 1
    return out


def _keep_whole(pieces: list[str]) -> list[str]:
    """A bracketed phrase no wider than :data:`_WHOLE` cells as one piece (with the marks glued around it)."""
    from rich.cells import cell_len

    out: list[str] = []
    i = 0
    while i < len(pieces):
        piece = pieces[i]
        opening = next((c for c in piece if c in _PAIRS), None)
        if opening is not None and _PAIRS[opening] not in piece[piece.index(opening):]:
            j, joined = i, piece
            while j + 1 < len(pieces) and cell_len(joined) <= _WHOLE and _PAIRS[opening] not in pieces[j]:
                j += 1
                joined += pieces[j]
            if j > i and _PAIRS[opening] in pieces[j] and cell_len(joined) <= _WHOLE:
                out.append(joined)
                i = j + 1
                continue
        out.append(piece)
        i += 1
    return out


def _widow(line: list[str]) -> bool:
    """Whether a last line holding only ``line`` would be a number and its closing mark alone (``0.999。``)."""
    body = [p for p in line if not p.isspace()]
    return len(body) == 1 and _LONE.fullmatch(body[0]) is not None


def wrap_cells(text: str, width: int) -> list[str]:
    """``text`` as lines no wider than ``width`` display cells (see the module doc); existing newlines are kept.

    A paragraph never ends on a line holding only a number and its closing mark: the word before it comes along.
    A single piece wider than the line breaks after a ``|``, ``,`` or ``/`` it holds (a list of names stays a list
    of whole names), else by cells.

    >>> wrap_cells("可达上限为 0.999。", 12)
    ['可达上限', '为 0.999。']
    >>> wrap_cells("production:minimum|good|excellent", 24)
    ['production:minimum|good|', 'excellent']
    """
    lines: list[str] = []
    for para in text.split("\n"):
        lines.extend(para[start:end] for start, end in _line_ranges(para, width))
    return lines


def wrap_text(text: Any, width: int) -> list[Any]:
    """A :class:`rich.text.Text` wrapped as :func:`wrap_cells` wraps its plain text, each line keeping its styles."""
    lines: list[Any] = []
    offset = 0
    for para in text.plain.split("\n"):
        lines.extend(text[offset + start:offset + end] for start, end in _line_ranges(para, width))
        offset += len(para) + 1
    return lines


def _line_ranges(para: str, width: int) -> list[tuple[int, int]]:
    """Where each line of the paragraph ``para`` starts and ends (spaces at a break dropped)."""
    from rich.cells import cell_len

    width = max(int(width), 2)
    rows: list[list[tuple[int, str]]] = [[]]  # each line's pieces with where they start
    at = 0
    pieces = [part for piece in _words(para)
              for part in (_words(piece, whole=False) if cell_len(piece) > width else [piece])]
    for tok in pieces:
        here, at = at, at + len(tok)
        row = rows[-1]
        if tok.isspace():
            if row:
                row.append((here, tok))
            continue
        if not row or cell_len("".join(p for _, p in row) + tok) <= width:  # the space before tok counts too
            row.append((here, tok))
        else:
            rows.append([(here, tok)])  # the row keeps its trailing space: a word moved down takes it along
    if len(rows) > 1 and _widow([p for _, p in rows[-1]]):
        before = rows[-2]
        body = [i for i, (_, p) in enumerate(before) if not p.isspace()]
        if len(body) > 1:
            moved = before[body[-1]:]
            if cell_len("".join(p for _, p in moved + rows[-1])) <= width:
                del before[body[-1]:]
                rows[-1] = moved + rows[-1]
    ranges: list[tuple[int, int]] = []
    for row in rows:
        solid = [(start, piece) for start, piece in row if not piece.isspace()]
        if not solid:
            ranges.append((0, 0))
            continue
        first, last = solid[0][0], solid[-1][0] + len(solid[-1][1])
        ranges.extend((first + a, first + b) for a, b in _chop(para[first:last], width))
    return ranges


_SOFT = re.compile(r"[^|,/]*(?:[|,/]+|$)")


def _chop(line: str, width: int) -> list[tuple[int, int]]:
    """Where ``line`` is cut when it is wider than ``width`` (one piece wider than the whole line): after a ``|``,
    ``,`` or ``/``, else by cells."""
    from rich.cells import cell_len, chop_cells

    if cell_len(line) <= width:
        return [(0, len(line))]
    out: list[tuple[int, int]] = []
    start = end = 0
    for part in (m for m in _SOFT.finditer(line) if m.group()):
        if end > start and cell_len(line[start:part.end()]) > width:
            out.append((start, end))
            start = end
        end = part.end()
        while cell_len(line[start:end]) > width:  # no soft break in reach: by cells
            step = len(chop_cells(line[start:end], width)[0])
            out.append((start, start + step))
            start += step
    if end > start:
        out.append((start, end))
    return out


def print_prose(console: Any, text: Any, *, first: str = "", rest: str | None = None, style: str = "") -> None:
    """Print ``text`` (a ``str``, or a :class:`rich.text.Text` whose styles are kept) on ``console`` wrapped to its
    width in cells, ``first`` before the first line and ``rest`` (default: as many spaces as ``first`` is wide)
    before the others: the same rules in every language.

    >>> from rich.console import Console
    >>> console = Console(width=30, color_system=None)
    >>> print_prose(console, "NDCG@10 0.304 poor: the retrieval strategy needs p = 0.0203.", first="  • ")
      • NDCG@10 0.304 poor: the
        retrieval strategy needs
        p = 0.0203.
    """
    from rich.cells import cell_len
    from rich.text import Text

    rest = " " * cell_len(first) if rest is None else rest
    body = text if isinstance(text, Text) else Text(text)
    lines = wrap_text(body, console.width - max(cell_len(first), cell_len(rest)))
    out = Text("\n").join(Text(first if i == 0 else rest) + line for i, line in enumerate(lines))
    out.style = style
    console.print(out, soft_wrap=True, highlight=False)


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

    def __init__(self, text: Any, style: str = "") -> None:
        """``text``: a ``str``, or a :class:`rich.text.Text` whose styles are kept (``style`` goes under them)."""
        self.rich = None if isinstance(text, str) else text
        self.text = text if isinstance(text, str) else text.plain
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

        if self.rich is None:
            yield Text("\n".join(wrap_cells(self.text, options.max_width)), style=self.style)
            return
        text = Text("\n").join(wrap_text(self.rich, options.max_width))
        text.style = self.style  # under the text's own styles
        yield text

    def __str__(self) -> str:
        return self.text
