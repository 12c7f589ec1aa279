"""``rankscope --help`` and ``rankscope COMMAND --help`` in the reader's language.

The English help is the code's own: each command's docstring, each option's ``help=`` and ``show_default=``, typer's
labels.  Another language's is data beside this module, ``<lang>.json`` (only ``zh.json`` so far):

``labels``
    typer's words: the Usage prefix, the Arguments / Options / Commands panels, ``[default: …]``, ``[required]``,
    ``[env var: …]``, the help of ``--help``.
``commands``
    per command path (``""`` for ``rankscope`` itself, ``"evaluate"``, ``"testset check"`` ...): ``en``, the English
    help it translates (the docstring, line by line) and ``zh``, its translation (the example command lines kept as
    they are); ``options``, per click parameter name, the ``{"en", "zh"}`` of that command's own options.
``options``
    per click parameter name, the ``{"en", "zh"}`` of an option that several commands declare with the same help
    (``--lang``, ``--qrels``, ``--depth`` ...); a command's own entry comes first.
``defaults``
    the ``show_default`` phrases (``"none: required"``), by their English.

A translation is used only where its ``en`` is the English the code says now: a changed English help shows in
English until its translation follows (tests/test_cli_help_zh.py fails meanwhile, as it does for a command or an
option without an entry).

:func:`localize` is all the command line calls: nothing is read or changed until help is printed, so the commands
themselves (and ``rankscope trec_eval``, which never gets here) start as fast as before.  Then, in every language,
each paragraph of prose is put on one line (:func:`reflow`) for the terminal to wrap.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["catalog", "commands", "localize", "reflow", "translate"]

#: typer.rich_utils' English label for each catalog label
LABELS = {"arguments": "ARGUMENTS_PANEL_TITLE", "options": "OPTIONS_PANEL_TITLE", "commands": "COMMANDS_PANEL_TITLE",
          "default": "DEFAULT_STRING", "required": "REQUIRED_LONG_STRING", "envvar": "ENVVAR_STRING",
          "deprecated": "DEPRECATED_STRING"}


@cache
def catalog(lang: str) -> dict[str, Any]:
    """The help catalog of ``lang`` (``{}`` when there is none)."""
    path = resources.files(__name__).joinpath(f"{lang}.json")
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """``(path, command)`` for the click command ``command`` and every command under it (``""`` is the top)."""
    yield " ".join(path), command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from commands(sub, (*path, name))


def localize(command: Any, lang: str) -> Any:
    """Make the click command ``command`` (``typer.main.get_command(app)``) print its help, and its subcommands', in
    ``lang``; return it.  Nothing is read or changed before help is printed: then the whole tree is translated (a
    group lists its commands' summaries), each paragraph is put on one line (:func:`reflow`, English too) and typer's
    labels are said in ``lang`` while the help prints; the option and command tables fit the terminal
    (:func:`_fitted_panels`)."""
    prepared: list[bool] = []

    for _, cmd in commands(command):
        def format_help(ctx: Any, formatter: Any, _original: Any = cmd.format_help) -> None:
            if not prepared:
                translate(command, lang)
                for _, each in commands(command):
                    each.help = reflow(each.help)
                prepared.append(True)
            labels = catalog(lang).get("labels")
            if labels is None:  # no help in lang: English
                with _wrapped_prose(), _fitted_panels():
                    _original(ctx, formatter)
                return
            helper = ctx.command.get_help_option(ctx)
            if helper is not None:
                helper.help = labels["help"]
            with _labels(labels, ctx), _wrapped_prose(), _fitted_panels():
                _original(ctx, formatter)

        cmd.format_help = format_help
    return command


def reflow(text: str | None) -> str | None:
    """``text`` (a docstring) with each paragraph of prose on one line, for the terminal to wrap: typer's rich markup
    keeps a docstring's line breaks, so a sentence would break where the source wraps.  A paragraph with an indented
    line (an example command) is kept as it is.

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


def translate(command: Any, lang: str) -> None:
    """Replace the help texts of ``command`` and the commands under it by their translation in ``lang``: the
    command's help, each option's ``help`` and phrase ``show_default``, where the catalog translates the English the
    code says."""
    table = catalog(lang)
    if not table:
        return
    for path, cmd in commands(command):
        entry = table["commands"].get(path, {})
        if cmd.help and inspect.cleandoc(cmd.help) == "\n".join(entry.get("en", ())):
            cmd.help = "\n".join(entry["zh"])
        for param in cmd.params:
            said = next((found for found in (entry.get("options", {}).get(param.name), table["options"].get(param.name))
                         if found is not None and found["en"] == getattr(param, "help", None)), None)
            if said is not None:
                param.help = said["zh"]
            if isinstance(param.show_default, str) and param.show_default in table["defaults"]:
                _show_default(param, table["defaults"][param.show_default])


def _show_default(param: Any, phrase: str) -> None:
    """Show ``phrase`` as the default of ``param``: in full-width parentheses (typer puts ASCII ones around a phrase,
    which Chinese does not use next to its characters)."""
    param.show_default = phrase

    def default_string(**_: Any) -> str:
        return f"（{phrase}）"

    param._get_default_string = default_string


@contextmanager
def _labels(labels: dict[str, str], ctx: Any) -> Iterator[None]:
    """typer's labels said from ``labels`` while the help of ``ctx`` prints; put back afterwards (a test may print
    English help next, in the same process)."""
    from typer import rich_utils

    saved = {name: getattr(rich_utils, name) for name in LABELS.values()}
    for key, name in LABELS.items():
        setattr(rich_utils, name, labels[key])
    ctx.formatter_class = _usage_formatter(type(ctx).formatter_class, labels["usage"])
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(rich_utils, name, value)
        del ctx.formatter_class


@contextmanager
def _wrapped_prose() -> Iterator[None]:
    """While help prints, its prose wraps by the rules of every text rankscope prints (:func:`_rich_text`, Chinese
    option help and ``[默认：…]`` too: :func:`_parameter_help`); put back afterwards."""
    from typer import rich_utils

    saved = {name: getattr(rich_utils, name) for name in ("_make_rich_text", "_get_parameter_help")}
    rich_utils._make_rich_text = _rich_text(rich_utils._make_rich_text)
    rich_utils._get_parameter_help = _parameter_help(rich_utils._get_parameter_help)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(rich_utils, name, value)


@contextmanager
def _fitted_panels() -> Iterator[None]:
    """While help prints, typer's option and command tables are laid out by :func:`rankscope.report.fit.fit`: an
    option name, a default or a choice list is never cut with ``…`` (``production:minimum|go…``); in a narrow
    terminal each option is a line of its own with its help under it."""
    from typer import rich_utils

    from rankscope.report.fit import fit

    panel = rich_utils.Panel

    def fitted_panel(renderable: Any, *args: Any, **kwargs: Any) -> Any:
        from rich.table import Table

        return panel(fit(renderable) if isinstance(renderable, Table) else renderable, *args, **kwargs)

    rich_utils.Panel = fitted_panel  # type: ignore[assignment,misc]
    try:
        yield
    finally:
        rich_utils.Panel = panel  # type: ignore[misc]


def _usage_formatter(base: type, usage: str) -> type:
    """click's help formatter saying ``usage`` instead of ``Usage: ``."""

    class Formatter(base):  # type: ignore[valid-type,misc]
        def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
            super().write_usage(prog, args, usage if prefix is None else prefix)

    return Formatter


def _rich_text(make: Any) -> Any:
    """typer's ``_make_rich_text``, but prose is wrapped by :func:`rankscope.report.wrap.wrap_text` where rich would
    break inside ``(k = 60)`` or ``p = 0.05``, cut a Chinese word or start a line with a closing mark (the same rules
    as every other text rankscope prints); an indented line (an example command) is left to rich."""

    def make_rich_text(*, text: str, style: str = "", markup_mode: Any) -> Any:
        if markup_mode != "rich":
            return make(text=text, style=style, markup_mode=markup_mode)
        from rich.text import Text
        from typer import rich_utils

        return _help_prose()(Text.from_markup(inspect.cleandoc(text), style=style), style, rich_utils.highlighter)

    return make_rich_text


@cache
def _parameter_help(get: Any) -> Any:
    """typer's ``_get_parameter_help``, but a Chinese ``[默认：…]`` wraps between words too (rich would cut it short
    with an ellipsis in a narrow terminal: it has no space to break at)."""
    from rankscope.report.wrap import has_cjk

    def get_parameter_help(**kwargs: Any) -> Any:
        from rich.text import Text

        columns = get(**kwargs)
        columns.renderables = [_help_prose()(item.plain, item.style, None)
                               if isinstance(item, Text) and has_cjk(item.plain) else item
                               for item in columns.renderables]
        return columns

    return get_parameter_help


@cache
def _help_prose() -> type:
    """The renderable of Chinese help text (a class made on first use: rankscope.report is slow to import)."""
    from rankscope.report.wrap import Prose, has_cjk, wrap_text

    class HelpProse(Prose):
        """Help prose: each line that is prose (not indented, or Chinese) wrapped between words to the width rich
        gives it, continuation lines indented as the line is; an indented line that is not Chinese (an example
        command) left to rich; option names highlighted as typer does."""

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
