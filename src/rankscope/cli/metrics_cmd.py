"""``rankscope metrics``: list every registered metric, generated from the registry."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from rankscope.cli.app import app, load_plugins, user_errors


@app.command("metrics")
@user_errors
def metrics_command(
    plugin: Annotated[Optional[list[str]], typer.Option("--plugin", show_default="none",
                                                        help="import this module first")] = None,
) -> None:
    """List the known metrics with their spellings.

    Examples:

      rankscope metrics

      rankscope metrics --plugin mymetrics
    """
    load_plugins(plugin)
    from rich.console import Console
    from rich.table import Table

    from rankscope.measures import all_specs

    table = Table()
    for col in ("metric", "cutoff", "ir_measures", "trec_eval", "aliases", "what it measures"):
        table.add_column(col)
    for spec in all_specs():
        trec = ", ".join(spec.trec_spellings())
        table.add_row(spec.name, spec.cutoff, spec.ir_measures or "", trec, ", ".join(spec.aliases), spec.summary)
    Console().print(table)
