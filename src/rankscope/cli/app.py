"""The typer application and the error handling shared by every command.

A user mistake (any :class:`~rankscope.errors.RankscopeError`, or a missing
file) prints one line ``rankscope: error: ...`` on stderr and exits with code 2;
never a traceback.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import typer

from rankscope.cli.messages import user_error_message
from rankscope.errors import RankscopeError

F = TypeVar("F", bound=Callable[..., Any])

app = typer.Typer(
    name="rankscope",
    help="Evaluate retrieval for RAG: trec_eval-exact metrics, comparisons, reports.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# command modules register themselves on `app` when imported
COMMAND_MODULES = ["rankscope.cli.evaluate_cmd", "rankscope.cli.metrics_cmd", "rankscope.cli.testset_cmd",
                   "rankscope.cli.serve_cmd"]
COMMAND_MODULES += ["rankscope.cli.compare_cmd", "rankscope.cli.check_cmd", "rankscope.cli.power_cmd"]
COMMAND_MODULES += ["rankscope.cli.datasets_cmd", "rankscope.cli.demo_cmd", "rankscope.cli.run_cmd"]
COMMAND_MODULES += ["rankscope.cli.pool_cmd", "rankscope.cli.judge_cmd", "rankscope.cli.agreement_cmd",
                    "rankscope.cli.synth_cmd"]
COMMAND_MODULES += ["rankscope.cli.chunking_cmd", "rankscope.cli.spans_cmd"]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error and exit."""
    typer.echo(f"rankscope: error: {message}", err=True)
    raise typer.Exit(code)


def user_errors(func: F) -> F:
    """Decorator: turn user mistakes into a one-line message and exit code 2."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (RankscopeError, OSError) as exc:
            message = user_error_message(exc)
            if message is None:
                raise
            fail(message)

    return wrapper  # type: ignore[return-value]


def load_plugins(modules: list[str] | None) -> None:
    """Import ``--plugin`` modules so that the metrics they register can be used."""
    for mod in modules or []:
        try:
            importlib.import_module(mod)
        except ImportError as exc:
            fail(f"cannot import plugin module {mod!r}: {exc}")


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("trec_eval", "trec-eval"):  # before importing every command: faster start-up
        from rankscope.trec_eval.cli import main as trec_main

        raise SystemExit(trec_main(args[1:]))
    for mod in COMMAND_MODULES:
        importlib.import_module(mod)
    try:  # typer >= 0.2x vendors click
        from typer._click import exceptions as click_errors
    except ImportError:  # pragma: no cover - older typer uses click itself
        from click import exceptions as click_errors  # type: ignore[no-redef]
    try:
        code = app(args=args, prog_name="rankscope", standalone_mode=False)
    except click_errors.ClickException as exc:  # a usage mistake (unknown option, bad choice...): one line
        ctx = getattr(exc, "ctx", None)
        if isinstance(exc, getattr(click_errors, "NoArgsIsHelpError", ())):  # typer has printed the help
            raise SystemExit(exc.exit_code) from None
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        typer.echo(f"rankscope: error: {' '.join(exc.format_message().split())}{hint}", err=True)
        raise SystemExit(2) from None
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        raise SystemExit(1) from None
    raise SystemExit(code if isinstance(code, int) else 0)
