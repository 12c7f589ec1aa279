"""``rankscope fuse``: fuse run files into one TREC run (every method of :mod:`rankscope.retrieval.fusion`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from rankscope.cli.app import app, fail, user_errors
from rankscope.cli.messages import print_lines
from rankscope.cli.options import Depth, LangOption, RelevanceLevel
from rankscope.i18n import _


def parse_params(given: list[str] | None) -> dict[str, float]:
    """``--param name=value`` (repeatable) as a dict of numbers."""
    out: dict[str, float] = {}
    for text in given or []:
        name, sep, value = text.partition("=")
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not sep or not name.strip() or number != number:
            fail(_("--param takes name=value with a number, e.g. k=60; got {given!r}", given=text))
        out[name.strip()] = int(number) if number.is_integer() and name.strip() in ("n_segments", "w") else number
    return out


def parse_weights(text: str | None) -> list[float] | None:
    """``--weights 0.3,0.7`` as a list of numbers."""
    if text is None:
        return None
    try:
        return [float(x) for x in text.split(",")]
    except ValueError:
        fail(_("--weights takes numbers separated by commas, e.g. 0.3,0.7; got {given!r}", given=text))


@app.command("fuse")
@user_errors
def fuse_command(
    runs: Annotated[list[Path], typer.Argument(help="run files to fuse (two or more)")],
    output: Annotated[Path, typer.Option("--output", "-o", metavar="FILE", help="the fused run (TREC)")],
    method: Annotated[str, typer.Option("--method", metavar="NAME",
                                        help="fusion method (listed above; ranx's names work too)")]
    = "rrf",
    norm: Annotated[str, typer.Option("--norm", metavar="NAME",
                                      help="score normalisation: minmax, zscore, min-max, max, sum, zmuv, rank, "
                                           "borda, min-max-inverted or none")] = "minmax",
    weights: Annotated[Optional[str], typer.Option("--weights", metavar="W1,W2,...", show_default="none",
                                                   help="one weight per run, in the order of the files")] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", metavar="NAME=VALUE", show_default="none",
                                                       help="a parameter of the method (k=60, phi=0.8, gamma=0.5, "
                                                            "sigma=0.01, n_segments=10, w=2), repeatable")] = None,
    qrels: Annotated[Optional[Path], typer.Option("--qrels", metavar="FILE", show_default="none",
                                                  help="judgments to train a supervised method on (bayesfuse, "
                                                       "posfuse, probfuse, segfuse, slidefuse, mapfuse)")] = None,
    depth: Depth = None,
    name: Annotated[Optional[str], typer.Option("--name", metavar="TAG", show_default="METHOD(RUNS)",
                                                help="the run tag written in the fused file")] = None,
    relevance_level: RelevanceLevel = 1,
    lang: LangOption = None,
) -> None:
    """Fuse RUNS into one run with a fusion method and write it as TREC.

    Methods: rrf, combsum, combmnz, combmax, combmin, combmed, combanz, combgmnz, wsum, wmnz, mixed,
    isr, log_isr, logn_isr, rbc, borda, weighted_borda, condorcet, weighted_condorcet, and, trained
    on --qrels, bayesfuse, posfuse, probfuse, segfuse, slidefuse, mapfuse.

    Examples:

      rankscope fuse bm25.trec dense.trec -o hybrid.trec

      rankscope fuse bm25.trec e5.trec -o h.trec --method wsum --weights 0.3,0.7

      rankscope fuse bm25.trec e5.trec -o h.trec --method posfuse --qrels q.txt
    """
    from rankscope.cli.compare_cmd import run_names
    from rankscope.io import read_qrels, read_run, write_run
    from rankscope.retrieval.fusion import fuse, get_method

    assert lang is not None  # settled by user_errors
    lg = lang.value
    if len(runs) < 2:
        fail(_("give two or more run files to fuse, got {n}", n=len(runs)))
    spec = get_method(method)
    named = dict(zip(run_names(runs), (read_run(p) for p in runs)))
    kwargs: dict[str, Any] = dict(parse_params(param))
    if spec.supervised and qrels is None:
        fail(_("{method} is trained on judgments: give --qrels", method=spec.name))
    if qrels is not None and not spec.supervised:
        fail(_("{method} learns nothing from judgments: leave out --qrels", method=spec.name))
    fused = fuse(named, spec.name, norm=None if norm.lower() == "none" else norm, weights=parse_weights(weights),
                 depth=depth, name=name, qrels=read_qrels(qrels) if qrels is not None else None,
                 relevance_level=relevance_level, **kwargs)
    write_run(fused, output)
    print_lines([_("{method} of {n} runs -> {path}: {queries} queries, {rows} rows", method=spec.name, n=len(runs),
                   path=str(output), queries=len(fused.query_ids), rows=len(fused)).text(lg)], lg)
