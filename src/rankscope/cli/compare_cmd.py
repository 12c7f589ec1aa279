"""``rankscope compare``: paired significance tests between runs, with an optional report file."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from rankscope.cli.app import app, fail, load_plugins, user_errors
from rankscope.cli.messages import float32_notices
from rankscope.cli.options import (
    Correction,
    Depth,
    Lang,
    Missing,
    MissingPolicy,
    PairedTest,
    Permutations,
    Plugins,
    QrelsFile,
    RelevanceLevel,
    ScorePrecision,
    ScorePrecisionOption,
)

if TYPE_CHECKING:
    from rankscope.comparison import Comparison


class Output(str, Enum):
    table = "table"
    json = "json"


def read_named_runs(paths: list[Path]) -> dict[str, Any]:
    """Read run files; each is named by its tag column, or by its file name when tags repeat."""
    from rankscope.io import read_run

    runs = [read_run(p) for p in paths]
    names = [r.name for r in runs]
    if len(set(names)) < len(names):
        names = [p.stem for p in paths]
    if len(set(names)) < len(names):
        names = [str(p) for p in paths]
    if len(set(names)) < len(names):
        fail("the same run file is given twice")
    out = {}
    for name, run in zip(names, runs):
        run.name = name
        out[name] = run
    return out


def resolve_baseline(baseline: str | None, names: list[str], paths: list[Path]) -> str | None:
    """``--baseline`` may be a run's name or one of the given file paths."""
    if baseline is None or baseline in names:
        return baseline
    for name, p in zip(names, paths):
        if Path(baseline) == p or Path(baseline).name == p.name:
            return name
    fail(f"--baseline {baseline!r} is neither a run name nor one of the run files (runs: {', '.join(names)})")


@app.command("compare")
@user_errors
def compare_command(
    runs: Annotated[list[Path], typer.Argument(help="two or more run files (TREC, JSON, CSV/TSV, Parquet)")],
    qrels: QrelsFile,
    metric: Annotated[
        Optional[list[str]],
        typer.Option("-m", "--metric", help="metric, repeatable or comma-separated (default: ndcg@10 map mrr ...)"),
    ] = None,
    test: Annotated[PairedTest, typer.Option("--test", help="paired test")] = PairedTest.t,
    correction: Annotated[
        Correction, typer.Option("--correction", help="multiple-comparison correction over all pairs x metrics")
    ] = Correction.holm,
    alpha: Annotated[float, typer.Option("--alpha", help="significance level")] = 0.05,
    baseline: Annotated[
        Optional[str], typer.Option("--baseline", help="compare every run with this one (name or file)")
    ] = None,
    permutations: Permutations = 10_000,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="bootstrap resamples for the intervals")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="random seed (same seed, same p-values)")] = 0,
    report: Annotated[
        Optional[list[Path]], typer.Option("--report", help="write a report: out.html, out.md, out.json or out.tex")
    ] = None,
    lang: Annotated[Lang, typer.Option("--lang", help="language of the report and explanations")] = Lang.en,
    fmt: Annotated[Output, typer.Option("--format", "-f", help="terminal output")] = Output.table,
    relevance_level: RelevanceLevel = 1,
    missing: MissingPolicy = Missing.zero,
    depth: Depth = None,
    score_precision: ScorePrecisionOption = ScorePrecision.float32,
    plugin: Plugins = None,
) -> None:
    """Compare RUNS pairwise on the same queries: means with CIs, paired tests, effect sizes."""
    load_plugins(plugin)
    from rankscope.comparison import compare
    from rankscope.io import read_qrels

    if len(runs) < 2:
        fail("compare needs at least 2 run files")
    q = read_qrels(qrels)
    named = read_named_runs(runs)
    base = resolve_baseline(baseline, list(named), runs)
    comparison = compare(
        q, named, metric or None, test=test.value, alpha=alpha, correction=correction.value, baseline=base,
        permutations=permutations, bootstrap=bootstrap, rng=seed, relevance_level=relevance_level,
        missing=missing.value, depth=depth, score_precision=score_precision.value,
    )
    if fmt is Output.json:
        typer.echo(json.dumps(comparison.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print(comparison, lang.value, q, named)
    for line in float32_notices(comparison.results.values(), lang.value):
        typer.echo(line, err=fmt is Output.json)
    for path in report or []:
        try:
            from rankscope.report import write_report
        except ImportError as exc:
            fail(f"cannot write {path}: the report module is not available ({exc})")
        written = write_report(comparison, path, lang=lang.value, qrels=q, runs=named)
        typer.echo(f"report written to {written}", err=True)


def _print(comparison: Comparison, lang: str, qrels: Any, runs: dict[str, Any]) -> None:
    try:
        from rankscope.report.terminal import print_comparison
    except ImportError:
        print_table(comparison)
        return
    print_comparison(comparison, lang=lang, qrels=qrels, runs=runs)


def print_table(comparison: Comparison) -> None:
    """A plain rich rendering: means with intervals, then one row per pair and metric."""
    from rich.console import Console
    from rich.table import Table

    c = comparison
    level = round(100 * (1 - c.alpha))
    means = Table(title=f"means ({len(c.query_ids)} queries, {level}% bootstrap CI)", title_justify="left")
    means.add_column("system")
    for label in c.labels:
        means.add_column(label, justify="right")
    for s in c.systems:
        cells = []
        for label in c.labels:
            lo, hi = c.mean_ci[s][label]
            star = "*" if c.best(label) == s else ""
            cells.append(f"{c.means[s][label]:.4f}{star} [{lo:.3f}, {hi:.3f}]")
        means.add_row(s, *cells)
    pairs = Table(title=f"paired {c.test} test, {c.correction} correction, alpha={c.alpha:g}", title_justify="left")
    for col in ("a", "b", "metric", "diff b-a", f"{level}% CI", "rel %", "d", "p", "p adj", "W/T/L"):
        pairs.add_column(col, justify="left" if col in ("a", "b", "metric") else "right")
    for p in c.pairs:
        sig = " *" if p.significant else ""
        rel = "" if p.rel_improvement is None else f"{p.rel_improvement:+.1f}"
        d = "" if p.cohen_d is None else f"{p.cohen_d:.2f}"
        pairs.add_row(
            p.a, p.b, p.metric, f"{p.diff:+.4f}", f"[{p.diff_ci[0]:+.3f}, {p.diff_ci[1]:+.3f}]", rel, d,
            f"{p.p_value:.3g}", f"{p.p_adjusted:.3g}{sig}", f"{p.wins}/{p.ties}/{p.losses}",
        )
    console = Console()
    console.print(means)
    console.print(pairs)
