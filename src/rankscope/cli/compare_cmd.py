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
    MaxPermutations,
    Missing,
    MissingPolicy,
    PairedTest,
    Permutations,
    Plugins,
    ProvenanceFile,
    QrelsFile,
    RelevanceLevel,
    ScorePrecision,
    ScorePrecisionOption,
    Unjudged,
    UnjudgedOption,
)

if TYPE_CHECKING:
    from rankscope.comparison import Comparison


class Output(str, Enum):
    table = "table"
    json = "json"


def run_stem(path: Path) -> str:
    """The name a run file is known by: its file name without ``.gz`` and its extension (``bm25.trec.gz`` -> bm25)."""
    name = path.name.removesuffix(".gz")
    stem = Path(name).stem
    return stem or name


def read_named_runs(paths: list[Path]) -> tuple[dict[str, Any], dict[str, str]]:
    """Read run files named by their file stem (the TREC tag column is often wrong), and each run's tag.

    Stems that repeat fall back to file names, then to the paths given.  The runs keep
    their own name (the TREC tag), so :func:`rankscope.compare` shows it where it differs.
    """
    from rankscope.io import read_run

    runs = [read_run(p) for p in paths]
    for naming in (run_stem, lambda p: p.name, str):
        names = [naming(p) for p in paths]
        if len(set(names)) == len(names):
            break
    else:
        fail("the same run file is given twice")
    tags = {name: run.name for name, run in zip(names, runs) if run.name not in (name, "run", "")}
    return dict(zip(names, runs)), tags


def resolve_run_name(option: str, given: str, names: list[str], tags: dict[str, str], paths: list[Path]) -> str:
    """The run ``given`` designates: a run name (file stem), a TREC tag or one of the paths; ambiguity is an error."""
    hits = []
    for name, path in zip(names, paths):
        how = ("name" if given == name else "TREC tag" if tags.get(name) == given
               else "file" if given in (str(path), path.name) or Path(given) == path else None)
        if how is not None:
            hits.append((name, path, how))
    if len(hits) == 1:
        return hits[0][0]
    if hits:
        fail(f"{option} {given!r} is ambiguous: it is "
             + " and ".join(f"the {how} of {path} (run {name!r})" for name, path, how in hits)
             + "; give the file path or the run name")
    listed = ", ".join(name + (f" (tag {tags[name]})" if name in tags else "") for name in names)
    fail(f"{option} {given!r} is neither a run name, a TREC tag nor one of the run files (runs: {listed})")


@app.command("compare")
@user_errors
def compare_command(
    runs: Annotated[list[Path], typer.Argument(help="two or more run files (TREC, JSON, CSV/TSV, Parquet)")],
    qrels: QrelsFile,
    metric: Annotated[
        Optional[list[str]],
        typer.Option("-m", "--metric", help="metric, repeatable or comma-separated (default: ndcg@10 map mrr ...)"),
    ] = None,
    test: Annotated[
        PairedTest,
        typer.Option("--test", help="paired t, wilcoxon, randomization (sign flips), or tukey-hsd (Sakai's randomized "
                     "Tukey HSD over all systems at once, with compact-letter groups)"),
    ] = PairedTest.t,
    correction: Annotated[
        Optional[Correction],
        typer.Option("--correction", help="multiple-comparison correction over all pairs x metrics (default holm; "
                     "not with --test tukey-hsd, which is simultaneous over the pairs of each metric)"),
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="significance level")] = 0.05,
    baseline: Annotated[
        Optional[str],
        typer.Option("--baseline", help="compare every run with this one (file stem, TREC tag or file path)"),
    ] = None,
    permutations: Permutations = 10_000,
    max_permutations: MaxPermutations = None,
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
    unjudged: UnjudgedOption = Unjudged.keep,
    provenance: ProvenanceFile = None,
    plugin: Plugins = None,
) -> None:
    """Compare RUNS pairwise on the same queries: means with CIs, paired tests, effect sizes."""
    load_plugins(plugin)
    from rankscope.cli.judgments import read_judgments
    from rankscope.comparison import compare

    if len(runs) < 2:
        fail("compare needs at least 2 run files")
    judgments, q, source_note = read_judgments(qrels, provenance)
    named, tags = read_named_runs(runs)
    base = None if baseline is None else resolve_run_name("--baseline", baseline, list(named), tags, runs)
    if source_note:
        typer.echo(source_note, err=fmt is Output.json)
    comparison = compare(
        judgments, named, metric or None, test=test.value, alpha=alpha,
        correction=None if correction is None else correction.value, baseline=base, permutations=permutations,
        max_permutations=max_permutations, bootstrap=bootstrap, rng=seed, relevance_level=relevance_level,
        missing=missing.value, depth=depth, score_precision=score_precision.value, unjudged=unjudged.value,
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
    from rankscope.report.terminal import print_comparison

    print_comparison(comparison, lang=lang, qrels=qrels, runs=runs)
