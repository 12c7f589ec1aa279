"""The one line for a command-line usage mistake (an unknown option or command, a bad choice, a missing
argument), said in the command's language.

typer parses the command line with (its copy of) click, whose errors are English sentences.  In English they are
printed as click words them; in another language each kind of mistake is said from its parts (the option, the
value given, the choices, click's close-match suggestions), with the ``rankscope COMMAND --help`` hint.

>>> from typer._click.exceptions import NoSuchOption
>>> usage_line(NoSuchOption("--lng", possibilities=["--lang"]), "zh", ["evaluate", "--lng"])
'rankscope：错误：没有选项 --lng（可能的选项：--lang）（用法见 rankscope evaluate --help）'
>>> usage_line(NoSuchOption("--lng", possibilities=["--lang"]), "en", ["evaluate", "--lng"])
'rankscope: error: No such option: --lng (Possible options: --lang)'
"""

from __future__ import annotations

import re
from typing import Any

from rankscope.i18n import N_, _, gettext, pgettext

__all__ = ["usage_line", "usage_lang"]

#: commands whose ``--lang`` is the language of the prompts they write, not of what they print
PROMPT_LANG = ("judge", "synth")
#: the range checks of an option's ``min=`` / ``max=`` (pydantic's error types)
#: pydantic's range errors of an option's min= / max=
RANGES = {"greater_than_equal": N_("Invalid value for {option}: Input should be greater than or equal to {bound}"),
          "less_than_equal": N_("Invalid value for {option}: Input should be less than or equal to {bound}"),
          "greater_than": N_("Invalid value for {option}: Input should be greater than {bound}"),
          "less_than": N_("Invalid value for {option}: Input should be less than {bound}")}


def usage_lang(args: list[str]) -> str:
    """The language of a command line that could not be parsed: its ``--lang`` if valid, else the default."""
    from rankscope.choices import LANGS, resolve_lang
    from rankscope.errors import RankscopeError

    if not args or args[0] not in PROMPT_LANG:
        for i, arg in enumerate(args):
            value = arg.partition("=")[2] if arg.startswith("--lang=") else args[i + 1] if (
                arg == "--lang" and i + 1 < len(args)) else None
            if value in LANGS:
                return value
    try:
        return resolve_lang()
    except RankscopeError:  # a bad RANKSCOPE_LANG: the usage mistake first, in English
        return "en"


def usage_line(exc: Any, lang: str, args: list[str]) -> str:
    """The line printed for the click usage error ``exc``: ``rankscope: error: ... (see '... --help')``."""
    ctx = getattr(exc, "ctx", None)
    if lang == "en":
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        return f"rankscope: error: {' '.join(exc.format_message().split())}{hint}"
    path = ctx.command_path if ctx is not None else "rankscope" + (
        f" {args[0]}" if args and not args[0].startswith("-") else "")
    return _("rankscope: error: {message}",
             message=_said(exc, lang) + _(" (see '{command} --help')", command=path).text(lang)).text(lang)


def _said(exc: Any, lang: str) -> str:
    """The mistake in ``lang``, from its parts."""
    name = type(exc).__name__
    option = getattr(exc, "option_name", None)
    if name == "NoSuchOption":
        found = sorted(getattr(exc, "possibilities", None) or [])
        return _("No such option: {option}", option=option).text(lang) + (
            _(" (Possible options: {options})",
              options="、".join(found) if lang == "zh" else ", ".join(found)).text(lang)
            if found else "")
    if name == "BadOptionUsage" and exc.message.endswith("requires an argument."):
        return _("Option {option!r} requires an argument.", option=option).text(lang)
    if name == "BadOptionUsage" and exc.message.endswith("does not take a value."):  # --flag=value
        return _("Option {option!r} does not take a value.", option=option).text(lang)
    param = getattr(exc, "param", None)
    if name == "MissingParameter" and param is not None:
        name = param.get_error_hint()
        return (_("Missing argument {name}.", name=name) if getattr(param, "param_type_name", "") == "argument"
                else _("Missing option {name}.", name=name)).text(lang)
    if name == "BadParameter" and param is not None:
        errors = exc.__cause__.errors() if hasattr(exc.__cause__, "errors") else [{}]
        kind, given = errors[0].get("type"), errors[0].get("input")
        choices = getattr(getattr(param, "type_descriptor", None), "choices", None)
        if choices and kind == "value_error":
            listed = ("、" if lang == "zh" else ", ").join(repr(getattr(c, "value", c)) for c in choices)
            return _("Invalid value for {option}: {value} is not one of {choices}.", option=param.get_error_hint(),
                     value=repr(given), choices=listed).text(lang)
        if kind in ("float_parsing", "int_parsing", "int_from_float"):
            return _("Invalid value for {option}: {value} is not a number" if kind == "float_parsing"
                     else "Invalid value for {option}: {value} is not an integer", option=param.get_error_hint(),
                     value=repr(given)).text(lang)
        bounds = errors[0].get("ctx") or {}
        if kind in RANGES and len(bounds) == 1:  # min= / max= of an option: --port 0, --block-rows 0
            return _(RANGES[kind], option=param.get_error_hint(), bound=next(iter(bounds.values()))).text(lang)
        return _("Invalid value for {option}: {reason}", option=param.get_error_hint(), reason=exc.message).text(lang)
    command = re.fullmatch(r"No such command '(.+?)'\.(?: Did you mean (.+)\?)?", exc.message)
    if command:
        return _("No such command {command}.", command=repr(command[1])).text(lang) + (
            _(" Did you mean {suggestions}?", suggestions=command[2]).text(lang) if command[2] else "")
    extra = re.fullmatch(r"Got unexpected extra arguments? \((.*)\)", exc.message)
    if extra:
        return _("Got unexpected extra arguments ({args})", args=extra[1]).text(lang)
    if exc.message == "Missing command.":  # a group given options but no command
        return gettext("Missing command.", lang)
    return pgettext("usage error", "{reason}", reason=" ".join(exc.format_message().split())).text(lang)

