"""``rankscope check``: a CI gate.  Exit 0 when every requirement holds, 1 when one fails, 2 on bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from rankscope.cli.app import app, fail, load_plugins, user_errors
from rankscope.cli.options import (
    Depth,
    MaxDropTest,
    MaxPermutations,
    Missing,
    MissingPolicy,
    Plugins,
    ProvenanceFile,
    QrelsFile,
    RelevanceLevel,
    Unjudged,
    UnjudgedOption,
)


@app.command("check")
@user_errors
def check_command(
    qrels: QrelsFile,
    run: Annotated[Path, typer.Option("--run", help="the run to check")],
    require: Annotated[
        Optional[list[str]],
        typer.Option("--require", "-r", help='requirement, repeatable: "recall@5>=0.8", "mrr>=0.7"'),
    ] = None,
    preset: Annotated[
        Optional[list[str]],
        typer.Option("--preset", help="named standard: production:minimum|good|excellent, "
                     "benchmark:faq|document_qa|academic_search|enterprise_kb"),
    ] = None,
    baseline: Annotated[Optional[Path], typer.Option("--baseline", help="baseline run file for --max-drop")] = None,
    max_drop: Annotated[
        Optional[list[str]],
        typer.Option("--max-drop", help='largest allowed drop vs the baseline, repeatable: "ndcg@10=0.02" or "=2%"'),
    ] = None,
    test: Annotated[
        MaxDropTest,
        typer.Option("--test", help="test of the mean for --max-drop: t, randomization (sign flips) or bootstrap "
                     "(studentized; best on skewed differences); wilcoxon is refused"),
    ] = MaxDropTest.t,
    alpha: Annotated[
        float,
        typer.Option("--alpha", help="one-sided level of each --max-drop test: 0.05 gives a 95%% one-sided bound "
                     "(the lower end of a 90%% two-sided interval), 0.025 matches a 95%% two-sided interval"),
    ] = 0.05,
    permutations: Annotated[
        int, typer.Option("--permutations", help="sign flips (randomization) or resamples (bootstrap)")
    ] = 10_000,
    max_permutations: MaxPermutations = None,
    seed: Annotated[int, typer.Option("--seed", help="random seed of the randomization and bootstrap tests")] = 0,
    summary: Annotated[
        Optional[Path], typer.Option("--summary", help="also write a Markdown summary to this file")
    ] = None,
    json_out: Annotated[Optional[Path], typer.Option("--json", help="also write the results as JSON")] = None,
    relevance_level: RelevanceLevel = 1,
    missing: MissingPolicy = Missing.zero,
    depth: Depth = None,
    unjudged: UnjudgedOption = Unjudged.keep,
    provenance: ProvenanceFile = None,
    plugin: Plugins = None,
) -> None:
    """Check RUN against requirements; print one line per requirement; exit 0 (pass), 1 (fail) or 2 (bad input)."""
    load_plugins(plugin)
    from rankscope.cli.compare_cmd import read_named_runs
    from rankscope.cli.judgments import read_judgments
    from rankscope.gate import check

    if max_drop and baseline is None:
        fail("--max-drop needs --baseline RUN")
    if baseline is not None and not max_drop:
        fail("--baseline needs at least one --max-drop METRIC=DROP")
    for path in (summary, json_out):
        if path is not None and not path.parent.exists():
            fail(f"cannot write {path}: folder {path.parent} does not exist")
    # runs are named by their file stem; a TREC tag that differs is shown
    named, tags = read_named_runs([run] if baseline is None else [run, baseline])
    loaded = list(named.values())
    judgments, _, source_note = read_judgments(qrels, provenance)
    if source_note:
        typer.echo(source_note)
    result = check(
        judgments, loaded[0], require or [], preset=preset or None,
        baseline=loaded[1] if len(loaded) > 1 else None, max_drops=max_drop or [], names=list(named), tags=tags,
        test=test.value, alpha=alpha, permutations=permutations, max_permutations=max_permutations, rng=seed,
        relevance_level=relevance_level, missing=missing.value, depth=depth, unjudged=unjudged.value,
    )
    for line in result.lines():
        typer.echo(line)
    if summary is not None:
        summary.write_text(result.to_markdown(), encoding="utf-8")
    if json_out is not None:
        json_out.write_text(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    raise typer.Exit(result.exit_code)
