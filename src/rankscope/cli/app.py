"""The typer application and the error handling shared by every command.

A user mistake (any :class:`~rankscope.errors.RankscopeError`, or a missing
file) prints one line ``rankscope: error: ...`` on stderr and exits with code 2;
never a traceback.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import typer

from rankscope.cli.messages import user_error_message
from rankscope.errors import RankscopeError
from rankscope.i18n import Message, _, gettext

F = TypeVar("F", bound=Callable[..., Any])

app = typer.Typer(
    name="rankscope",
    help="Evaluate retrieval for RAG: trec_eval-exact metrics, comparisons, reports.\n\n"
         "Examples:\n\n"
         "  rankscope demo\n\n"
         "  rankscope evaluate qrels.txt run.trec -m ndcg@10,mrr\n\n"
         "  rankscope compare bm25.trec dense.trec --qrels qrels.txt --report report.html",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        from rankscope._version import __version__

        typer.echo(f"rankscope {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version of rankscope and exit."),
) -> None:
    # the help of `rankscope` is the Typer's help= above (a docstring here would be said nowhere)
    return None


@app.command("trec_eval", context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
             add_help_option=False)
def _trec_eval(ctx: typer.Context) -> None:
    """A drop-in for trec_eval 9.0.8: same flags, same measure names, byte-identical output (rankscope trec_eval -h)."""
    from rankscope.trec_eval.cli import main as trec_main

    raise typer.Exit(trec_main(list(ctx.args)))


def _click_style_metavars() -> None:
    """Show value types as click CLIs do (FILE, N, TEXT, [zero|ignore]; nothing for a flag), not typer's ``<path>``,
    ``<list[str]>`` or ``<bool>``.  Options that declare a ``metavar`` show it; an argument's metavar is its name."""
    from typer import core

    option, argument = getattr(core, "TyperOption", None), getattr(core, "TyperArgument", None)
    if option is None or argument is None or not hasattr(option, "display_type_rich"):
        return  # an older typer prints click's metavars itself

    def click_name(param: Any, ctx: Any) -> str | None:
        desc = getattr(param, "type_descriptor", None)
        if desc is None:
            return None
        if desc.is_choice:
            return "[" + param.display_type(ctx).strip("<>").removeprefix("list[").removesuffix("]") + "]"
        if desc.is_path:
            return "PATH"
        label = param.display_type(ctx).strip("<>").removeprefix("list[").removesuffix("]")
        return {"int": "N", "float": "NUMBER", "str": "TEXT", "bool": "BOOLEAN"}.get(label, label.upper())

    def option_type(self: Any, ctx: Any) -> str | None:
        if getattr(self, "is_flag", False):
            return None
        return self.metavar if self.metavar is not None else click_name(self, ctx)

    def argument_type(self: Any, ctx: Any) -> str | None:
        return None if self.metavar is not None else click_name(self, ctx)

    option.display_type_rich = option_type
    argument.display_type_rich = argument_type


_click_style_metavars()

# command modules register themselves on `app` when imported
COMMAND_MODULES = ["rankscope.cli.evaluate_cmd", "rankscope.cli.metrics_cmd", "rankscope.cli.testset_cmd",
                   "rankscope.cli.serve_cmd"]
COMMAND_MODULES += ["rankscope.cli.compare_cmd", "rankscope.cli.check_cmd", "rankscope.cli.power_cmd"]
COMMAND_MODULES += ["rankscope.cli.datasets_cmd", "rankscope.cli.demo_cmd", "rankscope.cli.run_cmd"]
COMMAND_MODULES += ["rankscope.cli.pool_cmd", "rankscope.cli.judge_cmd", "rankscope.cli.agreement_cmd",
                    "rankscope.cli.synth_cmd"]
COMMAND_MODULES += ["rankscope.cli.chunking_cmd", "rankscope.cli.spans_cmd"]
COMMAND_MODULES += ["rankscope.cli.fuse_cmd", "rankscope.cli.tune_cmd"]
COMMAND_MODULES += ["rankscope.cli.monitor_cmd"]


def command_lang() -> str:
    """The language of the command running: its ``--lang`` (:func:`rankscope.choices.speaking`, settled by
    :func:`user_errors`), else the default; English when the default itself is wrong (a bad ``RANKSCOPE_LANG``)."""
    from rankscope.choices import resolve_lang

    try:
        return resolve_lang()
    except RankscopeError:
        return "en"


def fail(message: Message, code: int = 2) -> NoReturn:
    """Print a one-line error in the command's language (``message``, a :class:`~rankscope.i18n.Message`) and
    exit."""
    _exit_with(message.text(command_lang()), code)


def _exit_with(text: str, code: int = 2) -> NoReturn:
    """Print ``rankscope: error: <text>`` (``text`` already in the command's language) and exit with ``code``."""

    typer.echo(_("rankscope: error: {message}", message=text).text(command_lang()), err=True)
    raise typer.Exit(code)


def _show_warnings(shown: Callable[..., None]) -> Callable[..., None]:
    """How a command shows a warning: rankscope's own (:class:`~rankscope.errors.RankscopeWarning`) as one line
    ``rankscope: warning: ...`` in the command's language, any other as ``shown`` (Python's way) shows it."""

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        from rankscope.cli.messages import print_lines
        from rankscope.errors import RankscopeWarning

        if not isinstance(message, RankscopeWarning):
            return shown(message, category, *args, **kwargs)
        lang = command_lang()
        print_lines([_("rankscope: warning: {text}", text=message.text(lang)).text(lang)], lang, err=True)
        return None

    return show


def user_errors(func: F) -> F:
    """Decorator: turn user mistakes into a one-line message and exit code 2.

    It also settles the command's language: a ``lang`` parameter left unset (``None``) becomes the default of
    :func:`rankscope.choices.resolve_lang`, and errors are said in that language.
    """
    from rankscope.choices import Lang, speaking

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import warnings

        lang = "en"  # until the command's own language is known (a bad RANKSCOPE_LANG is said in English)
        try:
            with speaking(kwargs.get("lang")) as lang, warnings.catch_warnings():
                if "lang" in kwargs:
                    kwargs["lang"] = Lang(lang)
                warnings.showwarning = _show_warnings(warnings.showwarning)
                return func(*args, **kwargs)
        except (RankscopeError, OSError) as exc:
            message = user_error_message(exc, lang)
            if message is None:
                raise
            with speaking(lang):
                _exit_with(message)

    return wrapper  # type: ignore[return-value]


def load_plugins(modules: list[str] | None) -> None:
    """Import ``--plugin`` modules so that the metrics they register can be used."""
    for mod in modules or []:
        try:
            importlib.import_module(mod)
        except ImportError as exc:
            fail(_("cannot import plugin module {module!r}: {exc}", module=mod, exc=exc))


#: the arguments of the command running (after ``rankscope``), for suggestions that must run as typed
COMMAND_LINE: list[str] = []


@functools.cache
def _command() -> Any:
    """The click command of :data:`app`, built once per process: typer reads every command's signature to build it
    (a third of a second), and a program that calls :func:`main` again (a test suite, a notebook) need not pay it
    again.  Its help is made to speak the language of each call by :func:`rankscope.cli.help.localize`."""
    return typer.main.get_command(app)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    COMMAND_LINE[:] = args  # what was typed: a suggested command line is this one, corrected
    if args and args[0] in ("trec_eval", "trec-eval") and args[1:2] not in (["--help"],):  # before importing every
        # command: faster start-up
        from rankscope.trec_eval.cli import main as trec_main

        raise SystemExit(trec_main(args[1:]))
    for mod in COMMAND_MODULES:
        importlib.import_module(mod)
    try:  # typer >= 0.2x vendors click
        from typer._click import exceptions as click_errors
    except ImportError:  # pragma: no cover - older typer uses click itself
        from click import exceptions as click_errors  # type: ignore[no-redef]
    from rankscope.cli.usage import usage_lang

    lang = usage_lang(args)  # the language of --help too, decided as for a usage mistake
    from rankscope.cli.help import localize

    try:  # the command, whose help (if printed) says itself in lang
        code = localize(_command(), lang)(args=args, prog_name="rankscope", standalone_mode=False)
    except click_errors.ClickException as exc:  # a usage mistake (unknown option, bad choice...): one line
        if isinstance(exc, getattr(click_errors, "NoArgsIsHelpError", ())):  # typer has printed the help
            raise SystemExit(exc.exit_code) from None
        from rankscope.cli.usage import usage_line

        typer.echo(usage_line(exc, lang, args), err=True)
        raise SystemExit(2) from None
    except typer.Abort:

        typer.echo(gettext("Aborted!", lang), err=True)
        raise SystemExit(1) from None
    raise SystemExit(code if isinstance(code, int) else 0)
