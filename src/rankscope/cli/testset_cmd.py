"""``rankscope testset check FILE`` (audit: duplicates, empty queries, missing ids, grades) and
``rankscope testset convert IN OUT`` (JSON / JSONL / BEIR)."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from rankscope.cli.app import app, user_errors
from rankscope.cli.options import RelevanceLevel

testset_app = typer.Typer(help="Inspect test sets (queries + judgments).", no_args_is_help=True)
app.add_typer(testset_app, name="testset")


class CheckFormat(str, Enum):
    table = "table"
    json = "json"


def _ids(items: list[Any], limit: int = 8) -> str:
    shown = ", ".join(str(x) for x in items[:limit])
    return shown + (f" … (+{len(items) - limit})" if len(items) > limit else "")


@testset_app.command("check")
@user_errors
def check_command(
    file: Annotated[Path, typer.Argument(help="test set: .json, .jsonl, or a BEIR folder")],
    fmt: Annotated[CheckFormat, typer.Option("--format", "-f", help="table or json")] = CheckFormat.table,
    split: Annotated[
        Optional[str], typer.Option("--split", show_default="test", help="BEIR qrels split")
    ] = None,
    near: Annotated[float, typer.Option("--near", help="trigram Jaccard for near-duplicates")] = 0.8,
    relevance_level: RelevanceLevel = 1,
    strict: Annotated[bool, typer.Option("--strict", help="exit 1 when any problem is found")] = False,
) -> None:
    """Audit FILE: what reading it found (unknown keys, null or empty ids), duplicate / near-duplicate /
    empty queries, queries without a relevant id, relevant ids missing from the corpus, grade distribution.

    Examples:

      rankscope testset check testset.jsonl

      rankscope testset check beir/scifact --split test --strict
    """
    import warnings

    from rankscope.data.testset_audit import audit_testset
    from rankscope.data.testset_io import read_any

    with warnings.catch_warnings():  # every finding is in the table / JSON below
        warnings.simplefilter("ignore")
        ts = read_any(file, split=split or "test", lenient=True)
    audit = audit_testset(ts, near_threshold=near, relevance_level=relevance_level)
    if fmt is CheckFormat.json:
        typer.echo(json.dumps(audit.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print_table(audit)
    if strict and audit.problems:
        raise typer.Exit(1)


def _print_table(audit: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"test set {audit.name}", title_justify="left")
    table.add_column("check")
    table.add_column("count", justify="right")
    table.add_column("examples")
    table.add_row("queries", str(audit.queries), "")
    table.add_row("judged queries", str(audit.judged_queries), f"{audit.judgments} judgments")
    if audit.with_answers:
        table.add_row("queries with reference answers", str(audit.with_answers), "")
    if audit.corpus_size is not None:
        table.add_row("corpus documents", str(audit.corpus_size), "")
    table.add_section()
    dup_ids = [" = ".join(g) for g in audit.duplicates]
    table.add_row("duplicate queries (groups)", str(len(audit.duplicates)), _ids(dup_ids, 4))
    near = [f"{a} ~ {b} ({s:.2f})" for a, b, s in audit.near_duplicates]
    table.add_row(f"near-duplicate pairs (≥ {audit.near_threshold:g})", str(len(near)), _ids(near, 4))
    table.add_row("empty queries", str(len(audit.empty)), _ids(audit.empty))
    note = f"; {len(audit.no_relevant_with_answers)} have answers" if audit.no_relevant_with_answers else ""
    table.add_row("queries without a relevant id", str(len(audit.no_relevant)), _ids(audit.no_relevant) + note)
    if audit.corpus_size is not None:
        miss = [f"{q}:{d}" for q, d in audit.missing_from_corpus]
        table.add_row("relevant ids missing from corpus", str(len(miss)), _ids(miss, 4))
    if audit.load_issues:
        table.add_section()
        for issue in audit.load_issues:
            where = f"{issue.where}: " if issue.where else ""
            table.add_row(f"{issue.severity}: {issue.field or 'record'}", str(issue.count), f"{where}{issue.message}")
    table.add_section()
    for grade, n in sorted(audit.grades.items()):
        table.add_row(f"judgments with grade {grade}", str(n), "")
    if audit.relevant_per_query:
        r = audit.relevant_per_query
        table.add_row("relevant ids per query", "",
                      f"min {r['min']:g}, median {r['median']:g}, mean {r['mean']:.2f}, max {r['max']:g}")
    console = Console()
    console.print(table)
    console.print(f"{audit.problems} problem(s) found" if audit.problems else "no problem found")


class ConvertFormat(str, Enum):
    json = "json"
    jsonl = "jsonl"
    beir = "beir"


@testset_app.command("convert")
@user_errors
def convert_command(
    source: Annotated[Path, typer.Argument(help="test set: .json, .jsonl, or a BEIR folder")],
    target: Annotated[Path, typer.Argument(help="output: .json, .jsonl, or a folder (BEIR)")],
    to: Annotated[
        Optional[ConvertFormat], typer.Option("--to", show_default="from TARGET", help="output format")
    ] = None,
    split: Annotated[str, typer.Option("--split", help="BEIR qrels split to read / write")] = "test",
) -> None:
    """Convert a test set between JSON, JSONL and BEIR folders.

    Examples:

      rankscope testset convert testset.json testset.jsonl

      rankscope testset convert beir/scifact scifact.jsonl --split test
    """
    from rankscope.data.testset import TestSet

    if not source.exists():
        raise FileNotFoundError(2, "no such file", str(source))
    ts = TestSet.from_beir(source, split=split) if source.is_dir() else TestSet.from_file(source)
    fmt = to or (ConvertFormat.json if target.suffix.lower() == ".json"
                 else ConvertFormat.jsonl if target.suffix.lower() in (".jsonl", ".ndjson") else ConvertFormat.beir)
    if fmt is ConvertFormat.json:
        ts.to_json(target)
    elif fmt is ConvertFormat.jsonl:
        ts.to_jsonl(target)
    else:
        ts.to_beir(target, split=split)
    typer.echo(f"{len(ts)} queries, {len(ts.qrels)} judgments -> {target} ({fmt.value})")
