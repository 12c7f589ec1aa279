"""``rankscope datasets list``: the test collections bundled with rankscope."""

from __future__ import annotations

import json
from typing import Any

import typer

from rankscope.cli.app import app, user_errors
from rankscope.cli.options import LangOption
from rankscope.i18n import _, gettext, pgettext

__all__ = ["said"]


def said(info: dict[str, Any], field: str, lang: str = "en") -> str:
    """A text field of a dataset's catalog entry in ``lang``: ``<field>_<lang>`` (``description_zh``) when the catalog
    holds one, else the English ``<field>``.

    >>> said({"licence": "CC BY-SA 4.0", "description": "Chinese Wikipedia", "description_zh": "中文维基百科"},
    ...      "description", "zh")
    '中文维基百科'
    """
    return str(info.get(f"{field}_{lang}", info[field]))

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
    from rich.text import Text

    from rankscope.report.fit import fit
    from rankscope.report.wrap import print_prose

    lg = lang.value if lang is not None else "en"
    table = Table(title=gettext("Bundled datasets (load with rankscope.load_dataset(name))", lg), title_justify="left")
    for col, justify in [(pgettext("column", "name"), "left"), (pgettext("column", "language"), "left"),
                         (pgettext("column", "documents"), "right"), (pgettext("column", "queries"), "right"),
                         (pgettext("column", "judgments"), "right"), (pgettext("column", "graded"), "left"),
                         (pgettext("column", "licence"), "left")]:
        table.add_column(col.text(lg), justify=justify)  # type: ignore[arg-type]
    for d in rows:
        table.add_row(d["name"], d["language"], str(d["documents"]), str(d["queries"]), str(d["judgments"]),
                      gettext("yes" if d["graded"] else "no", lg), said(d, "licence", lg))
    console = Console()
    console.print(fit(table))
    for d in rows:
        about = _(": {description} Source: {source}", description=said(d, "description", lg),
                  source=said(d, "source", lg)).text(lg)
        print_prose(console, Text.from_markup(f"[bold]{d['name']}[/bold]") + Text(about), rest="    ")
