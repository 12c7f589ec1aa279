"""``rankscope --help`` and ``rankscope COMMAND --help`` in the reader's language.

The English help is the code's own: each command's docstring, each option's ``help=`` and the phrase of its
``show_default=``.  ``make catalog`` extracts them as messages in the context ``help`` (:mod:`rankscope._extract`),
so their Chinese is in the one catalog with every other message; a help text without a translation (or whose English
changed since) is said in English.

:func:`localize` is all the command line calls: it gives each command of the tree a ``format_help`` (click's public
method for a command's help) that prints the help with rich from what click's documented API says of the command
(its usage pieces, its parameters' help records, its subcommands), each text said in the reader's language and laid
out as every table rankscope prints (:func:`rankscope.report.fit.fit`: an option name, a default or a choice list is
never cut; in a narrow terminal each option is a line of its own with its help under it).  Nothing is read before help
is printed, so the commands themselves (and ``rankscope trec_eval``, which never gets here) start as fast as before.
Each paragraph of prose is put on one line (:func:`reflow`) for the terminal to wrap.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from enum import Enum
from functools import cache
from typing import Any

from rankscope.i18n import NC_, gettext, pgettext

__all__ = ["commands", "localize", "reflow", "said"]

#: click's help of ``--help``, marked here for the catalog (said from it as the other help texts are)
HELP_OPTION = NC_("help", "Show this message and exit.")


def commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """``(path, command)`` for the click command ``command`` and every command under it (``""`` is the top)."""
    yield " ".join(path), command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from commands(sub, (*path, name))


def said(text: str | None, lang: str) -> str:
    """A help text of the code (a docstring, a ``help=``, a ``show_default=`` phrase) in ``lang``, cleaned as
    :func:`inspect.cleandoc` cleans a docstring.

    >>> said("significance level", "zh"), said("significance level", "en")
    ('显著性水平', 'significance level')
    """
    clean = inspect.cleandoc(text or "")
    return gettext(clean, lang, context="help") if clean else clean


def localize(command: Any, lang: str) -> Any:
    """Make the click command ``command`` (``typer.main.get_command(app)``) print its help, and its subcommands', in
    ``lang``; return it."""
    for _, cmd in commands(command):
        def format_help(ctx: Any, formatter: Any, _cmd: Any = cmd) -> None:
            _print_help(_cmd, ctx, lang)

        cmd.format_help = format_help
    return command


def reflow(text: str | None) -> str | None:
    """``text`` (a docstring) with each paragraph of prose on one line, for the terminal to wrap: a sentence would
    otherwise break where the source wraps.  A paragraph with an indented line (an example command) is kept as it
    is.

    >>> print(reflow("Grade POOL.\\n\\nEach query\\nis graded.\\n\\nExamples:\\n\\n  rankscope judge a\\n  b"))
    Grade POOL.
    <BLANKLINE>
    Each query is graded.
    <BLANKLINE>
    Examples:
    <BLANKLINE>
      rankscope judge a
      b
    """
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(paragraph if paragraph.startswith(("\b", " ")) or "\n " in paragraph
                       else " ".join(line.strip() for line in paragraph.splitlines()) for paragraph in paragraphs)


def _print_help(cmd: Any, ctx: Any, lang: str) -> None:
    """The help of ``cmd`` (run in ``ctx``) in ``lang``: usage, its help text, its arguments, options and commands,
    each in a panel as typer draws them."""
    from rich.console import Console
    from rich.padding import Padding
    from rich.text import Text

    console = Console(highlight=False)
    usage = " ".join([ctx.command_path, *cmd.collect_usage_pieces(ctx)])
    console.print(Padding(_highlighted(Text(pgettext("help", "Usage: {command}", command=usage).text(lang))), 1),
                  style="bold")
    if cmd.help:
        text = reflow(said(cmd.help, lang).partition("\f")[0]) or ""
        console.print(Padding(_help_prose()(Text.from_markup(text), "", _highlighted), (0, 1, 1, 1)))
    params = [p for p in cmd.get_params(ctx) if not getattr(p, "hidden", False)]
    for title, kind in ((NC_("help", "Arguments"), "argument"), (NC_("help", "Options"), "option")):
        rows = [(param, record) for param in params if param.param_type_name == kind
                for record in [param.get_help_record(ctx)] if record is not None]
        if rows:
            _panel(console, gettext(title, lang, context="help"), _options_table(rows, ctx, lang))
    subcommands = [sub for name in getattr(cmd, "list_commands", lambda _: [])(ctx)
                   for sub in [cmd.get_command(ctx, name)] if sub is not None and not sub.hidden]
    if subcommands:
        _panel(console, gettext(NC_("help", "Commands"), lang, context="help"), _commands_table(subcommands, lang))


def _panel(console: Any, title: str, table: Any) -> None:
    from rich.panel import Panel

    from rankscope.report.fit import fit

    console.print(Panel(fit(table), border_style="dim", title=title, title_align="left"))


def _options_table(rows: list[tuple[Any, tuple[str, str]]], ctx: Any, lang: str) -> Any:
    """One row per parameter: ``*`` when it is required, its names and metavar (click's help record), its help, its
    default and ``[required]``."""
    from rich.columns import Columns
    from rich.table import Table
    from rich.text import Text

    prose = _help_prose()
    table = Table(highlight=True, show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1))
    starred = any(param.required for param, _ in rows)
    for param, (names, _) in rows:
        items: list[Any] = []
        if param.help:  # click's own --help says HELP_OPTION
            items.append(prose(Text.from_markup(reflow(said(param.help, lang)) or ""), "", _highlighted))
        default = _default(param, ctx, lang)
        if default is not None:
            items.append(prose(pgettext("help", "[default: {value}]", value=default).text(lang), "dim", None))
        if param.required:
            items.append(prose(gettext(NC_("help", "[required]"), lang, context="help"), "dim red", None))
        cells = [_highlighted(Text(names, style="bold cyan")), Columns(items)]
        table.add_row(*([Text("*" if param.required else "", style="red")] if starred else []), *cells)
    return table


def _default(param: Any, ctx: Any, lang: str) -> str | None:
    """The default ``param`` shows: its ``show_default`` phrase in parentheses (full width in Chinese, which does
    not put ASCII ones next to its characters), or its default value when it is shown; ``None`` when nothing is
    shown (nor for an empty default, as typer does)."""
    if isinstance(param.show_default, str):
        return pgettext("help", "({phrase})", phrase=said(param.show_default, lang)).text(lang)
    if not (param.show_default or ctx.show_default) or param.default is None or getattr(param, "is_flag", False):
        return None
    value = param.default
    if isinstance(value, (list, tuple)):
        return ", ".join(str(getattr(v, "value", v)) for v in value) or None
    return str(value.value if isinstance(value, Enum) else value) or None  # an empty text: nothing to show


def _commands_table(subcommands: list[Any], lang: str) -> Any:
    """One row per command: its name and the first paragraph of its help."""
    from rich.table import Table
    from rich.text import Text

    table = Table(highlight=False, show_header=False, expand=True, box=None, pad_edge=False, padding=(0, 1))
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(ratio=10)
    for sub in subcommands:
        summary = sub.short_help or said(sub.help, lang).partition("\n\n")[0]
        table.add_row(Text(sub.name or ""), _help_prose()(Text.from_markup(reflow(summary) or ""), "", None))
    return table


def _highlighted(text: Any) -> Any:
    """``text`` with its option names (``--qrels``, ``-m``) in typer's colours."""
    from rich.highlighter import RegexHighlighter

    class Options(RegexHighlighter):
        highlights = [r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])", r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])"]
        base_style = ""

    return Options()(text)


@cache
def _help_prose() -> type:
    """The renderable of help prose (a class made on first use: rankscope.report is slow to import)."""
    from rankscope.report.wrap import Prose, has_cjk, wrap_text

    class HelpProse(Prose):
        """Help prose: each line that is prose (not indented, or Chinese) wrapped between words to the width rich
        gives it, continuation lines indented as the line is; an indented line that is not Chinese (an example
        command) left to rich; option names highlighted."""

        def __init__(self, text: Any, style: str, highlighter: Any) -> None:
            super().__init__(text, style)
            self.highlighter = highlighter

        def __rich_console__(self, console: Any, options: Any) -> Any:
            from rich.text import Text

            source = self.rich if self.rich is not None else Text(self.text, style=self.style)
            lines: list[Any] = []
            for line in source.split("\n", allow_blank=True):
                body = line.plain.lstrip(" ")
                indent = line.plain[:len(line.plain) - len(body)]
                if indent and not has_cjk(body):
                    lines.append(line)
                    continue
                lines += [Text(indent) + part for part in wrap_text(line[len(indent):],
                                                                    options.max_width - len(indent))] or [Text()]
            text = Text("\n").join(lines)
            text.style = self.style
            yield text if self.highlighter is None else self.highlighter(text)

    return HelpProse
