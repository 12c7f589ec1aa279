"""``rankscope datasets list``: the test collections bundled with rankscope."""

from __future__ import annotations

import json

import typer

from rankscope.cli.app import app, user_errors
from rankscope.cli.options import LangOption

datasets_app = typer.Typer(help="The test collections bundled with rankscope.", no_args_is_help=True)
app.add_typer(datasets_app, name="datasets")


@datasets_app.command("list")
@user_errors
def list_command(
    as_json: bool = typer.Option(False, "--json", help="print the catalog as JSON"),
    lang: LangOption = None,
) -> None:
    """List the bundled datasets: language, size, licence and source.

    Examples:

      rankscope datasets list

      rankscope datasets list --json
    """
    from rankscope.datasets import list_datasets

    rows = list_datasets()
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    from rankscope.cli.messages import say

    lg = lang.value if lang is not None else "en"
    table = Table(title=say("datasets.title", lg), title_justify="left")
    for col, justify in [("name", "left"), ("language", "left"), ("documents", "right"), ("queries", "right"),
                         ("judgments", "right"), ("graded", "left"), ("licence", "left")]:
        table.add_column(say(f"datasets.{col}", lg), justify=justify)  # type: ignore[arg-type]
    for d in rows:
        table.add_row(d["name"], d["language"], str(d["documents"]), str(d["queries"]), str(d["judgments"]),
                      say("datasets.yes" if d["graded"] else "datasets.no", lg), d["licence"])
    console = Console()
    if not console.is_terminal:
        console = Console(width=140)
    console.print(table)
    for d in rows:
        console.print(f"[bold]{d['name']}[/bold]" + say("datasets.about", lg, description=d["description"],
                                                        source=d["source"]), highlight=False)
