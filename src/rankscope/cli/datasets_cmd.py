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
    """A text field of a dataset's catalog entry (``title``, ``description``, ``licence``, ``source``: English,
    extracted into the message catalog in the context ``dataset``) in ``lang``.

    >>> said({"licence": "none stated (research collection, see README)"}, "licence", "zh")
    '未声明（研究用测试集，见 README）'
    """
    return gettext(str(info[field]), lang, context="dataset")

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
