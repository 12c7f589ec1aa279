"""``rankscope power``: how many queries a paired t-test needs to detect a difference."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from rankscope.cli.app import app, fail, user_errors
from rankscope.cli.options import RelevanceLevel


class Alternative(str, Enum):
    two_sided = "two-sided"
    one_sided = "one-sided"


@app.command("power")
@user_errors
def power_command(
    runs: Annotated[
        Optional[list[Path]], typer.Argument(help="two run files: the per-query variance comes from their differences")
    ] = None,
    qrels: Annotated[Optional[Path], typer.Option("--qrels", show_default="none: give --sd",
                                                  help="qrels file (with two runs)")] = None,
    metric: Annotated[str, typer.Option("-m", "--metric", help="the metric")] = "ndcg@10",
    delta: Annotated[
        Optional[float],
        typer.Option("--delta", show_default="none: required unless --sd and the runs say it",
                     help="the smallest difference that matters to you (required: power at the "
                     "observed difference only restates the p-value)"),
    ] = None,
    sd: Annotated[
        Optional[float], typer.Option("--sd", show_default="none: from the two runs",
                                      help="standard deviation of per-query differences (instead of runs)")
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="significance level")] = 0.05,
    power: Annotated[float, typer.Option("--power", help="target power")] = 0.8,
    alternative: Annotated[Alternative, typer.Option("--alternative", help="two-sided or one-sided test")] = (
        Alternative.two_sided
    ),
    relevance_level: RelevanceLevel = 1,
) -> None:
    """Queries needed to detect a mean difference DELTA with a paired t-test at ALPHA and POWER.

    Give two runs and --qrels (the standard deviation of the per-query differences
    of --metric is measured), or --sd and --delta directly.

    Examples:

      rankscope power --delta 0.02 --sd 0.15

      rankscope power bm25.trec dense.trec --qrels qrels.txt -m ndcg@10 --delta 0.02
    """
    from rankscope.stats.power import OBSERVED_POWER, SD_ZERO, estimate, queries_needed

    alt = alternative.value
    if sd is not None and runs:
        fail("give either two runs or --sd, not both")
    if delta is None:
        fail(f"--delta is required: {OBSERVED_POWER}")
    if sd is not None:
        n = queries_needed(sd, delta, alpha, power, alt)
        if sd == 0:
            typer.echo(f"warning: {SD_ZERO}", err=True)
        typer.echo(f"queries needed: {n} (sd of per-query differences {sd:g}, delta {delta:g}, "
                   f"alpha {alpha:g}, power {power:g}, {alt} paired t-test)")
        return
    if not runs or len(runs) != 2 or qrels is None:
        fail("give two run files and --qrels, or --sd and --delta")
    from rankscope.cli.compare_cmd import run_stem
    from rankscope.comparison import aligned_scores
    from rankscope.engine import Evaluator
    from rankscope.io import read_qrels, read_run

    ev = Evaluator(read_qrels(qrels), [metric], relevance_level=relevance_level)
    a, b = (ev.evaluate(read_run(p), name=f"run{i}") for i, p in enumerate(runs))
    _, scores = aligned_scores([a, b])
    est = estimate(scores[1, :, 0] - scores[0, :, 0], delta, alpha, power, alt)
    for w in est.warnings:
        typer.echo(f"warning: {w}", err=True)
    typer.echo(f"metric {metric}: {est.n} queries, mean difference {est.mean_diff:+.4f} "
               f"({run_stem(runs[1])} - {run_stem(runs[0])}), sd of per-query differences {est.sd_diff:.4f}")
    typer.echo(f"power to detect {est.delta:+.4f} with {est.n} queries: {est.current_power:.3f}")
    typer.echo(f"queries needed for power {power:g} at alpha {alpha:g} ({alt}): {est.queries_needed}")
