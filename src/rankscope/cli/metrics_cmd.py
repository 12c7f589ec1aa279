"""``rankscope metrics``: list every registered metric, generated from the registry."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from rankscope.cli.app import app, load_plugins, user_errors
from rankscope.cli.options import LangOption
from rankscope.i18n import N_, NC_, gettext

#: the table's columns: message ``cli.metrics.<column>``
#: the table's column heads (English, said through the catalog)
COLUMNS = (N_("metric"), N_("cutoff"), "ir_measures", "trec_eval", N_("aliases"), N_("what it measures"))
#: whether a metric takes a cutoff
CUTOFFS = {"none": NC_("cutoff", "none"), "optional": NC_("cutoff", "optional"), "required": NC_("cutoff", "required")}


@app.command("metrics")
@user_errors
def metrics_command(
    plugin: Annotated[Optional[list[str]], typer.Option("--plugin", show_default="none",
                                                        help="import this module first")] = None,
    lang: LangOption = None,
) -> None:
    """List the known metrics with their spellings.

    Examples:

      rankscope metrics

      rankscope metrics --plugin mymetrics --lang zh
    """
    assert lang is not None  # settled by user_errors
    load_plugins(plugin)
    from rich.console import Console
    from rich.table import Table

    from rankscope.measures import all_specs
    from rankscope.report.fit import fit
    from rankscope.report.wrap import Prose

    lg = lang.value
    table = Table()
    for col in COLUMNS:
        table.add_column(gettext(col, lg))
    for spec in all_specs():
        trec = ", ".join(spec.trec_spellings())
        summary = spec.summary_in(lg)  # a plugin metric's own summary when it has no translation
        table.add_row(spec.name, gettext(CUTOFFS[spec.cutoff], lg, context="cutoff"), spec.ir_measures or "", trec,
                      ", ".join(spec.aliases), Prose(summary))  # wrapped by word (Chinese too)
    Console().print(fit(table))
