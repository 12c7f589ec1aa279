"""The natural width of a LaTeX tabular, computed from Computer Modern font metrics.

No TeX engine is needed: the width of a cell is the sum of the advance widths of
its characters in cmr10 (``cmr10_widths.json``, read from the font), scaled to the
font size of the table; bold text (cmbx10) is 15% wider; characters that rankscope
escapes or sets in math mode take the width of the glyph LaTeX actually uses;
CJK characters are one em wide.  A tabular is as wide as the sum of its column
widths plus ``2 * tabcolsep`` per column.

:func:`fit` picks the largest of ``\\small``, ``\\footnotesize``, ``\\scriptsize``
at which a table fits :data:`LINE_WIDTH` (the ``\\textwidth`` of the standard
``article`` class at 10 pt: 345 pt).

>>> round(text_width("0.123"), 2), round(text_width("0.123", bold=True), 2)
(22.77, 26.18)
>>> fit(300.0, 7)
('\\\\small', 0.925)
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

__all__ = ["text_width", "fit", "table_width", "LINE_WIDTH", "TABCOLSEP", "SIZES"]

LINE_WIDTH = 345.0  # \textwidth of article at 10pt (one-column page), in pt
TABCOLSEP = 4.0  # set by the generated tables (LaTeX's default is 6pt)
# font size commands and the width of their Computer Modern design size relative to cmr10 (digits: 4.625, 4.25, 4.06 pt)
SIZES: tuple[tuple[str, float], ...] = ((r"\small", 0.925), (r"\footnotesize", 0.85), (r"\scriptsize", 0.81))
_BOLD = 1.15  # cmbx10 / cmr10 (digits 5.75 vs 5 pt)
# glyphs LaTeX takes from elsewhere than cmr10's ASCII positions (escapes, math, symbols), in pt at 10 pt
_OVERRIDES = {"_": 5.0, "<": 7.78, ">": 7.78, "{": 5.0, "}": 5.0, "|": 2.78, "\\": 5.0, "~": 5.0, "^": 5.0,
              "–": 5.0, "—": 10.0, "−": 7.78, "†": 4.44, "‡": 4.44, "α": 6.4, "Δ": 8.33, "±": 7.78, "≈": 7.78,
              "×": 7.78, "·": 2.78, "…": 10.0, "★": 10.0, "≥": 7.78, "≤": 7.78}


@cache
def _widths() -> dict[str, float]:
    data = json.loads(resources.files("rankscope.report").joinpath("cmr10_widths.json").read_text(encoding="utf-8"))
    table: dict[str, float] = data["cmr10"]
    return {**table, **_OVERRIDES}


def text_width(text: str, bold: bool = False, scale: float = 1.0) -> float:
    """Width in pt of ``text`` set in cmr10 (``scale`` 1: 10 pt), wider in bold."""
    widths = _widths()
    total = 0.0
    for ch in text:
        w = widths.get(ch)
        if w is None:
            w = 10.0 if ord(ch) > 0x2E7F else 7.0  # CJK: one em; other symbols: a generous estimate
        total += w
    return total * scale * (_BOLD if bold else 1.0)


def table_width(column_widths: list[float], scale: float = 1.0, span: float = 0.0) -> float:
    """Width of a tabular whose widest cells are ``column_widths`` (at 10 pt), at font ``scale``.

    ``span`` is the width of a cell spanning every column (a group heading), if wider.
    """
    inner = sum(column_widths) * scale
    cols = len(column_widths)
    return max(inner, span * scale) + 2 * TABCOLSEP * cols


def fit(natural: float, columns: int, span: float = 0.0) -> tuple[str | None, float]:
    """The font size command at which a table of ``natural`` width (the sum of its column widths at 10 pt)
    fits :data:`LINE_WIDTH`, and its scale; ``(None, factor)`` when even ``\\scriptsize`` is too wide
    (the table is then scaled down by ``factor`` with ``\\resizebox``)."""
    for command, scale in SIZES:
        if max(natural, span) * scale + 2 * TABCOLSEP * columns <= LINE_WIDTH:
            return command, scale
    scale = SIZES[-1][1]
    return None, LINE_WIDTH / (max(natural, span) * scale + 2 * TABCOLSEP * columns)
