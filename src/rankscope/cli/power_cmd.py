"""``rankscope power``: how many queries a paired t-test needs to detect a difference."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer

from rankscope.choices import term
from rankscope.cli.app import app, fail, user_errors
from rankscope.cli.messages import print_lines
from rankscope.cli.options import LangOption, RelevanceLevel
from rankscope.i18n import _, gettext


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
        typer.Option("--delta", show_default="none: required",
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
    lang: LangOption = None,
) -> None:
    """Queries needed to detect a mean difference DELTA with a paired t-test at ALPHA and POWER.

    Give two runs and --qrels (the standard deviation of the per-query differences
    of --metric is measured), or --sd and --delta directly.

    Examples:

      rankscope power --delta 0.02 --sd 0.15

      rankscope power bm25.trec dense.trec --qrels qrels.txt -m ndcg@10 --delta 0.02
    """
    from rankscope.stats.power import SD_ZERO, estimate, queries_needed

    assert lang is not None  # settled by user_errors
    lg = lang.value
    alt = alternative.value
    out: list[str] = []
    warn = {SD_ZERO: gettext("the per-query differences do not vary (their standard deviation is 0: every query "
                             "differs by the same amount): the t-test's power formula is degenerate and any 2 "
                             "queries 'detect' the difference; check the runs", lg)}
    if sd is not None and runs:
        fail(_("give either two runs or --sd, not both"))
    if delta is None:
        why = _("give the difference to detect (delta): the smallest difference that matters to you; power at the "
                'observed difference ("observed power") only restates the p-value')
        fail(_("--delta is required: {why}", why=why))
    if sd is not None:
        n = queries_needed(sd, delta, alpha, power, alt)
        if sd == 0:
            print_lines([_("warning: {text}", text=warn[SD_ZERO]).text(lg)], lg, err=True)
        print_lines([_("queries needed: {n} (sd of per-query differences {sd}, delta {delta}, alpha {alpha}, power "
                       "{power}, {alt} paired t-test)", n=n, sd=f"{sd:g}", delta=f"{delta:g}", alpha=f"{alpha:g}",
                       power=f"{power:g}", alt=term(alt, lg)).text(lg)], lg)
        return
    if not runs or len(runs) != 2 or qrels is None:
        fail(_("give two run files and --qrels, or --sd and --delta"))
    from rankscope.cli.compare_cmd import run_stem
    from rankscope.comparison import aligned_scores
    from rankscope.engine import Evaluator
    from rankscope.io import read_qrels, read_run

    ev = Evaluator(read_qrels(qrels), [metric], relevance_level=relevance_level)
    a, b = (ev.evaluate(read_run(p), name=f"run{i}") for i, p in enumerate(runs))
    __, scores = aligned_scores([a, b])
    est = estimate(scores[1, :, 0] - scores[0, :, 0], delta, alpha, power, alt)
    print_lines([_("warning: {text}", text=warn.get(w, w)).text(lg) for w in est.warnings], lg, err=True)
    out.append(_("metric {metric}: {n} queries, mean difference {diff} ({b} - {a}), sd of per-query differences "
                 "{sd}", metric=metric, n=est.n, diff=f"{est.mean_diff:+.4f}", b=run_stem(runs[1]),
                 a=run_stem(runs[0]), sd=f"{est.sd_diff:.4f}").text(lg))
    out.append(_("power to detect {delta} with {n} queries: {power}", delta=f"{est.delta:+.4f}", n=est.n,
                 power=f"{est.current_power:.3f}").text(lg))
    out.append(_("queries needed for power {power} at alpha {alpha} ({alt}): {n}", power=f"{power:g}",
                 alpha=f"{alpha:g}", alt=term(alt, lg), n=est.queries_needed).text(lg))
    print_lines(out, lg)
