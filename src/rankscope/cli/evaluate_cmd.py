"""``rankscope evaluate``: score one run against qrels."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from rankscope.cli.app import app, load_plugins, user_errors
from rankscope.cli.messages import float32_notices
from rankscope.cli.options import (
    Address,
    BlockRows,
    Depth,
    Engine,
    MemoryLimit,
    Missing,
    MissingPolicy,
    PerQueryDir,
    Plugins,
    RelevanceLevel,
    ScorePrecision,
    ScorePrecisionOption,
)

if TYPE_CHECKING:
    from rankscope.engine import EvaluationResult


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


@app.command("evaluate", context_settings={"allow_extra_args": True})
@user_errors
def evaluate_command(
    ctx: typer.Context,
    run: Annotated[list[Path], typer.Option("--run", help="run file (TREC, JSON, CSV/TSV, Parquet); several runs: "
                                            "--run a --run b, or --run runs/*.gz")],
    qrels: Annotated[
        Optional[Path], typer.Option("--qrels", help="qrels file (TREC, JSON, CSV/TSV, Parquet, BEIR)")
    ] = None,
    span_qrels: Annotated[
        Optional[Path],
        typer.Option("--span-qrels", help="span judgments instead of qrels: query_id, doc_id, start, end[, grade] "
                                          "(JSONL, JSON, CSV/TSV, Parquet); needs --chunks"),
    ] = None,
    chunks: Annotated[
        Optional[Path],
        typer.Option("--chunks", help="where the run's chunk ids lie: chunk_id, doc_id, start, end (JSONL, CSV, ...)"),
    ] = None,
    rule: Annotated[
        str, typer.Option("--rule", help="chunk qrels from spans: any, contains, chars>=N, fraction>=F")
    ] = "any",
    metric: Annotated[
        Optional[list[str]],
        typer.Option("-m", "--metric", help="metric, repeatable or comma-separated (ndcg@1,3,5, P@5, ndcg_cut_10...)"),
    ] = None,
    relevance_level: RelevanceLevel = 1,
    missing: MissingPolicy = Missing.zero,
    depth: Depth = None,
    score_precision: ScorePrecisionOption = ScorePrecision.float32,
    per_query: Annotated[bool, typer.Option("--per-query", "-q", help="also print per-query values")] = False,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="output format")] = OutputFormat.table,
    plugin: Plugins = None,
    memory_limit: MemoryLimit = None,
    block_rows: BlockRows = None,
    engine: Engine = "local",
    address: Address = None,
    per_query_dir: PerQueryDir = None,
) -> None:
    """Evaluate RUN against QRELS (or span judgments + chunks) and print the metrics."""
    load_plugins(plugin)
    from rankscope.cli.evaluate_many import evaluate_command_many, expand_runs

    runs = expand_runs([*run, *ctx.args])
    if len(runs) > 1 or per_query_dir is not None or engine != "local":
        if span_qrels is not None or chunks is not None:
            from rankscope.errors import InvalidParameterError

            raise InvalidParameterError("span judgments are evaluated one run at a time, on this machine")
        evaluate_command_many(qrels, runs, metric, relevance_level, missing.value, depth,
                              score_precision.value, fmt.value, memory_limit, block_rows, engine, address,
                              per_query_dir, per_query)
        return
    run_path = runs[0]
    from rankscope.engine import evaluate
    from rankscope.errors import InvalidParameterError
    from rankscope.io import read_qrels, read_run

    if (qrels is None) == (span_qrels is None):
        raise InvalidParameterError("give either --qrels or --span-qrels (with --chunks)")
    if span_qrels is not None:
        from rankscope.data.chunking import Chunking
        from rankscope.data.spans import SpanQrels

        if chunks is None:
            raise InvalidParameterError("--span-qrels needs --chunks (chunk_id, doc_id, start, end of the run's ids)")
        judgments: object = SpanQrels.from_file(span_qrels)
        chunking = Chunking.from_file(chunks)
    else:
        if chunks is not None:
            raise InvalidParameterError("--chunks goes with --span-qrels")
        judgments, chunking = read_qrels(qrels), None  # type: ignore[arg-type]
    result = evaluate(
        judgments, run_path if chunking is None else read_run(run_path), metric or None,
        relevance_level=relevance_level, missing=missing.value, depth=depth, score_precision=score_precision.value,
        chunking=chunking, rule=rule, memory_limit=memory_limit, block_rows=block_rows,
    )
    print_result(result, fmt.value, per_query)


def print_result(result: EvaluationResult, fmt: str, per_query: bool) -> None:
    """Print one run's result as a table, JSON or CSV, then the float32 notices."""
    if fmt == OutputFormat.json.value:
        typer.echo(json.dumps(result.to_dict(per_query=per_query), ensure_ascii=False, indent=2))
    elif fmt == OutputFormat.csv.value:
        _print_csv(result, per_query)
    else:
        _print_table(result, per_query)
    for line in float32_notices([result]):
        typer.echo(line, err=fmt != OutputFormat.table.value)


def _print_csv(result: EvaluationResult, per_query: bool) -> None:
    import csv
    import sys

    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["query_id", *result.labels])
    if per_query:
        for qid, row in result.per_query.to_dict().items():
            w.writerow([qid, *(f"{v:.6g}" for v in row.values())])
    w.writerow(["all", *(f"{v:.6g}" for v in result.mean().values())])


def _print_table(result: EvaluationResult, per_query: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"run {result.run_name}", title_justify="left")
    table.add_column("query" if per_query else "metric")
    if per_query:
        for label in result.labels:
            table.add_column(label, justify="right")
        for qid, row in result.per_query.to_dict().items():
            table.add_row(qid, *(f"{v:.4f}" for v in row.values()))
        table.add_row("[bold]all[/bold]", *(f"[bold]{v:.4f}[/bold]" for v in result.mean().values()))
    else:
        table.add_column("value", justify="right")
        for label, v in result.mean().items():
            table.add_row(label, f"{v:.4f}")
    q = result.queries
    console = Console()
    console.print(table)
    console.print(
        f"{q.evaluated} queries evaluated (missing={result.policies.missing}); "
        f"{q.missing_from_run} qrels queries missing from the run; {q.not_in_qrels} run queries not in the qrels"
    )
    spans = result.spans
    if spans is not None:
        from rankscope.data.span_rules import SpanCoverage

        console.print(f"span judgments on chunking {spans['chunking']!r}; chunk qrels by rule {spans['chunk_rule']}; "
                      + SpanCoverage(**spans["coverage"]).message()
                      + (f" {spans['queries_without_chunk']} queries have no span any chunk touches."
                         if spans["queries_without_chunk"] else ""), highlight=False)
