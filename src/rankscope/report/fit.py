"""Tables that fit the terminal: nothing a user must read or type is ever cut.

rich cuts a cell with ``…`` when a table is wider than the terminal (``Recall…``, ``[+0.042, +0.15…``,
``production:minimum|go…``).  :func:`fit` wraps a :class:`rich.table.Table` in a renderable that, at the width
it is given when printed (the terminal's, or what is left inside a panel), takes the first layout that cuts nothing:

1. the table as it is, when every column has room for its widest cell;
2. every column wrapped between words: plain cells are wrapped by :func:`~rankscope.report.wrap.wrap_cells`
   (a number, a name, ``p = 0.02`` or ``（差值 +0.0186）`` is never split), and each column is at least as wide
   as its widest word;
3. one block per row: the row's first cell as a heading, then each other column's header and the row's value
   (a table without headers: the row's cells but the last on one line, the last indented below it) — the layout
   of a narrow terminal, where even the widest words side by side do not fit.

The title stays above the table (on a line of its own, left aligned, when it is wider than the table); the
caption is printed under it as prose, left aligned and wrapped to the terminal (never squeezed to the table's
width).

>>> from rich.console import Console
>>> from rich.table import Table
>>> table = Table(title="Paired comparisons")
>>> for head in ("Metric", "95% CI", "p adj."):
...     table.add_column(head, no_wrap=True)
>>> table.add_row("span_precision_omega", "[+417.933, +510.508]", "0.004 ± 0.002")
>>> console = Console(width=40, color_system=None)
>>> with console.capture() as captured:
...     console.print(fit(table))
>>> print("\\n".join(line.rstrip() for line in captured.get().splitlines()))
Paired comparisons
span_precision_omega
  95% CI  [+417.933, +510.508]
  p adj.  0.004 ± 0.002
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

__all__ = ["fit", "Fitted"]

#: the width at which a table is measured as if nothing constrained it
_UNBOUNDED = 10_000


def fit(table: Any) -> Fitted:
    """``table`` (a :class:`rich.table.Table`) as a renderable that never cuts a cell (see the module doc)."""
    return Fitted(table)


def _plain(cell: Any, markup: bool = True) -> Any:
    """A cell as the renderable the wrapped layout prints: text (a ``str`` with rich markup, or a
    :class:`~rich.text.Text`) becomes :class:`~rankscope.report.wrap.Prose`, which breaks only between words;
    items side by side (:class:`rich.columns.Columns`) can be measured; anything else is kept."""
    from rich.columns import Columns
    from rich.text import Text

    from rankscope.report.wrap import Prose

    if isinstance(cell, Columns):
        return _Flow(cell)
    if isinstance(cell, str):
        cell = Text.from_markup(cell) if markup else Text(cell)
    if not isinstance(cell, Text):
        return cell
    return Prose(cell)


def _as_text(cell: Any) -> Any:
    """A cell as one :class:`~rich.text.Text` for a heading (``None`` for an empty cell)."""
    from rich.text import Text

    from rankscope.report.wrap import Prose

    if cell is None:
        return None
    if isinstance(cell, str):
        text = Text.from_markup(cell)
    elif isinstance(cell, Text):
        text = cell
    elif isinstance(cell, Prose):
        text = Text(cell.text, style=cell.style)
    else:
        return None
    return text if text.plain.strip() else None


class _Flow:
    """A :class:`rich.columns.Columns` (items side by side, as many as fit on a line) that can be measured: at
    least its widest item's widest word, at most its items side by side."""

    def __init__(self, columns: Any) -> None:
        self.columns = columns

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        sizes = [Measurement.get(console, options, _plain(item)) for item in self.columns.renderables]
        gap = self.columns.padding[1] if isinstance(self.columns.padding, tuple) else 1
        return Measurement(max((m.minimum for m in sizes), default=0),
                           sum(m.maximum for m in sizes) + gap * max(len(sizes) - 1, 0)).with_maximum(
            options.max_width)

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        columns = copy.copy(self.columns)
        columns.renderables = [_plain(item) for item in self.columns.renderables]
        yield columns


class Fitted:
    """A table laid out to the width it is printed at without cutting a cell (see :func:`fit`)."""

    def __init__(self, table: Any) -> None:
        self.table = table

    # -- measuring ---------------------------------------------------------------------------------------------

    def _wrapped(self) -> Any:
        """A copy of the table whose plain cells (and headers) wrap between words."""
        table = copy.copy(self.table)
        table.columns = []
        for column in self.table.columns:
            col = copy.copy(column)
            col.header = _plain(column.header)
            col._cells = [_plain(cell) for cell in column._cells]
            col.no_wrap, col.overflow, col.width = False, "fold", None
            table.columns.append(col)
        table.title = table.caption = None
        return table

    @staticmethod
    def _ranges(table: Any, console: Any, options: Any) -> list[tuple[int, int]]:
        """``(min, max)`` width of each column, padding included."""
        wide = options.update_width(_UNBOUNDED)
        return [tuple(table._measure_column(console, wide, column)) for column in table.columns]  # type: ignore[misc]

    def __rich_measure__(self, console: Any, options: Any) -> Any:
        from rich.measure import Measurement

        ranges = self._ranges(self._wrapped(), console, options)
        narrowest = max((low for low, _ in ranges), default=1) + 4  # a value of the one-block-per-row layout
        widest = sum(high for _, high in ranges) + self.table._extra_width
        return Measurement(min(narrowest, widest), widest).with_maximum(options.max_width)

    # -- rendering ---------------------------------------------------------------------------------------------

    def __rich_console__(self, console: Any, options: Any) -> Iterator[Any]:
        from rich.cells import cell_len
        from rich.text import Text

        width = options.max_width
        source = self.table
        wrapped = self._wrapped()
        ranges = self._ranges(wrapped, console, options)
        extra = source._extra_width
        widest = sum(high for _, high in ranges) + extra
        title = source.title if isinstance(source.title, (str, Text)) and str(source.title).strip() else None
        laid: Any
        if widest <= width:
            laid = copy.copy(source)
            shown = min(width, widest) if not source.expand else width
        elif sum(low for low, _ in ranges) + extra <= width:
            laid = wrapped
            self._share(laid, ranges, width - extra)
            shown = min(width, sum(c.width + laid._get_padding_width(c._index) for c in laid.columns) + extra)
        else:
            yield from self._title_line(title, console, width)
            yield from self._blocks(console, options)
            yield from self._caption_lines(console, width)
            return
        laid.caption = None
        if title is not None and cell_len(Text.from_markup(title).plain if isinstance(title, str)
                                          else title.plain) > shown:
            laid.title = None
            yield from self._title_line(title, console, width)
        else:
            laid.title = source.title
        yield laid
        yield from self._caption_lines(console, width)

    @staticmethod
    def _share(table: Any, ranges: list[tuple[int, int]], room: int) -> None:
        """Give each column of ``table`` its narrowest width, then what is left: whole to the columns that need least
        to be unwrapped (a short header or number stays on one line), then shared among the others in proportion
        to what each still lacks."""
        widths = [low for low, _ in ranges]
        left = room - sum(widths)
        lacking = sorted(range(len(widths)), key=lambda i: ranges[i][1] - widths[i])
        while lacking and left >= ranges[lacking[0]][1] - widths[lacking[0]]:
            i = lacking.pop(0)
            left -= ranges[i][1] - widths[i]
            widths[i] = ranges[i][1]
        total = sum(ranges[i][1] - widths[i] for i in lacking)
        for i in lacking:
            extra = left * (ranges[i][1] - widths[i]) // total if total else 0
            widths[i] += extra
        left = room - sum(widths)
        for i in lacking[:max(left, 0)]:  # what rounding left
            widths[i] += 1
        for column, total_width in zip(table.columns, widths):
            column.width = max(0, total_width - table._get_padding_width(column._index))

    def _title_line(self, title: Any, console: Any, width: int) -> Iterator[Any]:
        from rankscope.report.wrap import Prose

        if title is None:
            return
        text = _as_text(title)
        if text is not None:
            yield Prose(text.plain, " ".join(s for s in (str(self.table.title_style or "table.title"),
                                                         str(text.style or "")) if s))

    def _caption_lines(self, console: Any, width: int) -> Iterator[Any]:
        from rankscope.report.wrap import Prose

        text = _as_text(self.table.caption)
        if text is not None:
            yield Prose(text.plain, " ".join(s for s in (str(self.table.caption_style or "table.caption"),
                                                         str(text.style or "")) if s))

    def _blocks(self, console: Any, options: Any) -> Iterator[Any]:
        """One block per row (see the module doc)."""
        from rich.padding import Padding
        from rich.table import Table
        from rich.text import Text

        from rankscope.report.wrap import Prose

        columns = self.table.columns
        rows = list(zip(*(list(c._cells) for c in columns))) if columns else []
        headed = self.table.show_header and any(_as_text(c.header) is not None for c in columns)
        for row in rows:
            if headed:
                heading, pairs = _as_text(row[0]), [(columns[i].header, row[i]) for i in range(1, len(row))]
            else:
                parts = [t for t in (_as_text(c) for c in row[:-1]) if t is not None]
                heading = Text(" ").join(parts) if parts else None
                pairs = [(None, row[-1])] if row else []
            if heading is not None:
                yield Prose(heading.plain, " ".join(s for s in ("bold", str(heading.style or "")) if s))
            grid = Table.grid(padding=(0, 2))
            if headed:
                grid.add_column(style="dim")
            grid.add_column()
            for head, cell in pairs:
                if cell is None or (_as_text(cell) is None and isinstance(cell, (str, Text))):
                    continue
                grid.add_row(*([_plain(head), _plain(cell)] if headed else [_plain(cell)]))
            if grid.row_count:
                inner = Fitted(grid) if headed else grid
                yield Padding(inner, (0, 0, 0, 2 if headed else 4))
