"""``rankscope check``: a CI gate.  Exit 0 when every requirement holds, 1 when one fails, 2 on bad input, 3 when
none fails but a maximum drop could not be decided (too few queries, no variation, an unstable p-value)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from rankscope.cli.app import app, fail, load_plugins, user_errors
from rankscope.cli.inputs import swapped_inputs
from rankscope.cli.messages import print_lines
from rankscope.cli.options import (
    Depth,
    LangOption,
    MaxDropTest,
    MaxPermutations,
    Missing,
    MissingPolicy,
    Plugins,
    ProvenanceFile,
    QrelsFile,
    RelevanceLevel,
    RunColumns,
    ScorePrecision,
    ScorePrecisionOption,
    Unjudged,
    UnjudgedOption,
)
from rankscope.i18n import _


@app.command("check")
@user_errors
def check_command(
    qrels: QrelsFile,
    run: Annotated[Path, typer.Option("--run", metavar="FILE", help="the run to check")],
    require: Annotated[
        Optional[list[str]],
        typer.Option("--require", "-r", metavar="METRIC>=VALUE", show_default="none",
                     help='a requirement, repeatable: "recall@5>=0.8", "mrr>=70%"'),
    ] = None,
    preset: Annotated[
        Optional[list[str]],
        typer.Option("--preset", metavar="NAME", show_default="none",
                     help="a named standard, repeatable: production:minimum|good|excellent, "
                     "benchmark:faq|document_qa|academic_search|enterprise_kb"),
    ] = None,
    baseline: Annotated[
        Optional[Path],
        typer.Option("--baseline", metavar="FILE", show_default="none", help="the baseline run of --max-drop"),
    ] = None,
    max_drop: Annotated[
        Optional[list[str]],
        typer.Option("--max-drop", metavar="METRIC=DROP", show_default="none",
                     help="The largest drop of a metric the run may show against --baseline, as an absolute value "
                          '("ndcg@10=0.02") or relative to the baseline\'s mean ("ndcg@10=2%"); repeatable. '
                          "A one-sided non-inferiority test decides each drop."),
    ] = None,
    test: Annotated[
        MaxDropTest,
        typer.Option("--test", help="test of the mean for --max-drop: betting (a bound valid at any number of "
                     "queries and any skew; a metric without a fixed range uses bootstrap), t, randomization (sign "
                     "flips) or bootstrap (studentized); the last three carry a calibration warning where they were "
                     "measured above their level; wilcoxon is refused"),
    ] = MaxDropTest.betting,
    alpha: Annotated[
        float,
        typer.Option("--alpha", metavar="ALPHA",
                     help="one-sided level of each --max-drop test: 0.05 gives a one-sided bound at 95% "
                     "(the lower end of a two-sided interval at 90%), 0.025 matches a two-sided interval at 95%"),
    ] = 0.05,
    permutations: Annotated[
        int, typer.Option("--permutations", metavar="N", help="sign flips (randomization) or resamples (bootstrap)")
    ] = 10_000,
    max_permutations: MaxPermutations = None,
    seed: Annotated[
        int, typer.Option("--seed", metavar="N", help="random seed of the betting, randomization and bootstrap tests")
    ] = 0,
    summary: Annotated[
        Optional[Path],
        typer.Option("--summary", metavar="FILE", show_default="none",
                     help="also write a Markdown summary to this file (e.g. $GITHUB_STEP_SUMMARY)"),
    ] = None,
    json_out: Annotated[
        Optional[Path],
        typer.Option("--json", metavar="FILE", show_default="none", help="also write the results as JSON"),
    ] = None,
    relevance_level: RelevanceLevel = 1,
    missing: MissingPolicy = Missing.zero,
    depth: Depth = None,
    unjudged: UnjudgedOption = Unjudged.keep,
    score_precision: ScorePrecisionOption = ScorePrecision.float32,
    provenance: ProvenanceFile = None,
    columns: RunColumns = None,
    plugin: Plugins = None,
    lang: LangOption = None,
) -> None:
    """Check RUN against requirements; print one line per requirement; exit 0 (pass), 1 (fail), 2 (bad input) or 3
    (undecided: a maximum drop on fewer than 2 queries, without variation or with an unstable p-value).

    A requirement repeated (in any spelling, or by a preset too) is checked once.

    Examples:

      rankscope check --qrels qrels.txt --run bm25.trec -r "recall@5>=0.8" -r "mrr>=0.7"

      rankscope check --qrels qrels.txt --run new.trec --preset production:good --summary summary.md

      rankscope check --qrels qrels.txt --run new.trec --baseline main.trec --max-drop ndcg@10=0.02
    """
    load_plugins(plugin)
    from rankscope.cli.compare_cmd import read_named_runs
    from rankscope.cli.judgments import read_judgments
    from rankscope.gate import check

    if max_drop and baseline is None:
        fail(_("--max-drop needs --baseline RUN"))
    if baseline is not None and not max_drop:
        fail(_("--baseline needs at least one --max-drop METRIC=DROP"))
    for path in (summary, json_out):
        if path is not None and not path.parent.exists():
            fail(_("cannot write {path}: folder {folder} does not exist", path=path, folder=path.parent))
    # runs are named by their file stem; a TREC tag that differs is shown
    files = [run] if baseline is None else [run, baseline]
    with swapped_inputs(qrels, files):
        judgments, __, source_note = read_judgments(qrels, provenance)
        named, tags = read_named_runs(files, columns)
    loaded = list(named.values())
    if source_note:
        print_lines([source_note], lang.value if lang is not None else "en")
    result = check(
        judgments, loaded[0], require or [], preset=preset or None,
        baseline=loaded[1] if len(loaded) > 1 else None, max_drops=max_drop or [], names=list(named), tags=tags,
        test=test.value, alpha=alpha, permutations=permutations, max_permutations=max_permutations, rng=seed,
        relevance_level=relevance_level, missing=missing.value, depth=depth, unjudged=unjudged.value,
        score_precision=score_precision.value,
    )
    assert lang is not None  # settled by user_errors
    print_lines(result.lines(lang.value), lang.value)
    if summary is not None:
        summary.write_text(result.to_markdown(lang.value), encoding="utf-8")
    if json_out is not None:
        json_out.write_text(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    raise typer.Exit(result.exit_code)
