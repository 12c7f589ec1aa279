"""Options shared by the commands that call an LLM (``judge``, ``synth``) and by those that take runs.

``--runs A B C`` works as in the issue's examples: the first file binds to
``--runs`` and the others arrive as extra arguments (:func:`run_files` joins them);
``--runs A --runs B`` works too.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from rankscope.choices import Lang  # declared once, with the library and the service
from rankscope.cli.app import fail
from rankscope.i18n import _, gettext

DEFAULT_CACHE = Path(".rankscope") / "labels.sqlite"

RUNS_CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": False}


class Output(str, Enum):
    table = "table"
    json = "json"


BaseUrl = Annotated[str, typer.Option("--base-url", help="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1")]
Model = Annotated[str, typer.Option("--model", help="model name as the endpoint knows it")]
ApiKeyEnv = Annotated[
    Optional[str],
    typer.Option("--api-key-env", show_default="none: send no key", help="environment variable holding the API key"),
]
LangOpt = Annotated[
    Optional[Lang],
    typer.Option("--lang", show_default="messages: RANKSCOPE_LANG, else zh under a zh_* locale, else en; prompt: en",
                 help="language of the messages and of the prompt (the prompt is English unless --lang is given)"),
]
Concurrency = Annotated[int, typer.Option("--concurrency", help="requests in flight at once")]
Timeout = Annotated[float, typer.Option("--timeout", help="seconds to wait for one reply")]
Retries = Annotated[int, typer.Option("--retries", help="retries of a call that fails (429, 5xx, timeout)")]
MaxWait = Annotated[float, typer.Option("--max-wait", help="longest wait in seconds (Retry-After, backoff)")]
CacheFile = Annotated[Path, typer.Option("--cache", help="SQLite cache of answers (re-runs pay only for new pairs)")]
NoCache = Annotated[bool, typer.Option("--no-cache", help="do not read or write the cache")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="print calls, estimated tokens and cost; send nothing")]
PriceIn = Annotated[Optional[float], typer.Option("--price-in", show_default="none: no cost estimate",
                                                  help="price per million input tokens")]
PriceOut = Annotated[Optional[float], typer.Option("--price-out", show_default="none: no cost estimate",
                                                   help="price per million output tokens")]
MaxDocChars = Annotated[int, typer.Option("--max-doc-chars", help="cut longer documents (the cut is counted)")]
MaxTokens = Annotated[Optional[int], typer.Option("--max-tokens", show_default="no cap",
                                                  help="cap on the reply length")]
Progress = Annotated[
    Optional[bool], typer.Option("--progress/--no-progress", help="progress bar (default: on a terminal)")
]
RunFiles = Annotated[
    Optional[list[Path]], typer.Option("--runs", show_default="none",
                                       help="run files: --runs A B C (or --runs A --runs B)")
]
Format = Annotated[Output, typer.Option("--format", "-f", help="table or json")]


def run_files(ctx: typer.Context, runs: list[Path] | None, required: bool = True) -> list[Path]:
    """The files given to ``--runs`` plus the extra arguments after them."""
    extra = [Path(a) for a in ctx.args]
    stray = [a for a in ctx.args if a.startswith("-")]
    if stray:
        fail(_("no such option: {option} (see '{command} --help')", option=stray[0], command=ctx.command_path))
    files = [*(runs or []), *extra]
    if extra and not runs:
        fail(_("unexpected argument {value!r}; give run files with --runs A B C", value=ctx.args[0]))
    if required and not files:
        fail(_("give the run files with --runs A B C"))
    return files


def prompt_lang(ctx: typer.Context, lang: Lang | None) -> str:
    """The language of the prompt: ``--lang`` when it is given on the command line, else English (the language a
    session speaks in, from ``RANKSCOPE_LANG`` or the locale, does not choose the prompt: that would change the
    labels and miss the cache)."""
    source = ctx.get_parameter_source("lang")
    given = source is not None and source.name != "DEFAULT"
    return lang.value if given and lang is not None else "en"


def price_line(cost: float | None, lang: str = "en") -> str:
    """The cost part of a dry-run summary."""
    if cost is None:
        return gettext("give --price-in and --price-out (per million tokens) for a cost estimate", lang)
    return _("estimated cost {cost:.4f} (at the given prices per million tokens)", cost=cost).text(lang)
