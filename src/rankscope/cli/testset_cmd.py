"""``rankscope testset check FILE`` (audit: duplicates, empty queries, missing ids, grades) and
``rankscope testset convert IN OUT`` (JSON / JSONL / BEIR).  Both read LlamaIndex and RAGAS test sets too and say
which format was read; ``--corpus`` is where the reference contexts of a RAGAS test set are looked up."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from rankscope.cli.app import app, user_errors
from rankscope.cli.options import LangOption, RelevanceLevel
from rankscope.i18n import NC_, _, gettext, ngettext

#: how grave a problem of a test set's records is
_SEVERITIES = {"warning": NC_("severity", "warning"), "error": NC_("severity", "error")}

testset_app = typer.Typer(help="Inspect test sets (queries + judgments).", no_args_is_help=True)
app.add_typer(testset_app, name="testset")


class CheckFormat(str, Enum):
    table = "table"
    json = "json"


def _ids(items: list[Any], limit: int = 8, lang: str = "en") -> str:
    """The first ``limit`` items, listed as ``lang`` lists them, and how many more there are."""
    shown = ("、" if lang == "zh" else ", ").join(str(x) for x in items[:limit])
    more = len(items) - limit
    return shown + ("" if more <= 0 else f" …（+{more}）" if lang == "zh" else f" … (+{more})")


@testset_app.command("check")
@user_errors
def check_command(
    file: Annotated[Path, typer.Argument(help="test set: .json, .jsonl (rankscope, LlamaIndex, RAGAS), or a BEIR "
                                              "folder")],
    fmt: Annotated[CheckFormat, typer.Option("--format", "-f", help="table or json")] = CheckFormat.table,
    corpus: Annotated[Optional[Path], typer.Option("--corpus", show_default="the test set's corpus",
                                                   help="corpus: .jsonl, .json, .tsv, .csv")] = None,
    split: Annotated[
        Optional[str], typer.Option("--split", show_default="test", help="BEIR qrels split")
    ] = None,
    near: Annotated[float, typer.Option("--near", help="trigram Jaccard for near-duplicates")] = 0.8,
    relevance_level: RelevanceLevel = 1,
    strict: Annotated[bool, typer.Option("--strict", help="exit 1 when any problem is found")] = False,
    lang: LangOption = None,
) -> None:
    """Audit FILE: what reading it found (unknown keys, null or empty ids), duplicate / near-duplicate /
    empty queries, queries without a relevant id, relevant ids missing from the corpus, grade distribution.

    Examples:

      rankscope testset check testset.jsonl

      rankscope testset check beir/scifact --split test --strict
    """
    import warnings

    from rankscope.data.testset_audit import audit_testset
    from rankscope.io.testset import read_any, read_corpus

    with warnings.catch_warnings():  # every finding is in the table / JSON below
        warnings.simplefilter("ignore")
        docs = read_corpus(corpus) if corpus is not None else None
        ts = read_any(file, split=split or "test", lenient=True, corpus=docs)
    audit = audit_testset(ts, near_threshold=near, relevance_level=relevance_level)
    if fmt is CheckFormat.json:
        typer.echo(json.dumps({"format": ts.format, **audit.to_dict()}, ensure_ascii=False, indent=2))
    else:
        _print_table(audit, lang.value if lang is not None else "en", ts.format)
    if strict and audit.problems:
        raise typer.Exit(1)


def _print_table(audit: Any, lang: str = "en", fmt: str | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    from rankscope.i18n import colon, paren
    from rankscope.report.fit import fit
    from rankscope.report.wrap import print_prose

    table = Table(title=_("test set {name}", name=audit.name).text(lang), title_justify="left")
    table.add_column(gettext("check", lang))
    table.add_column(gettext("count", lang), justify="right")
    table.add_column(gettext("examples", lang))
    if fmt is not None:
        from rankscope.io.testset import format_name

        table.add_row(gettext("format", lang), "", format_name(fmt, lang))
    table.add_row(_("queries").text(lang), str(audit.queries), "")
    table.add_row(gettext("judged queries", lang), str(audit.judged_queries),
                  ngettext("{n} judgment", "{n} judgments", audit.judgments).text(lang))
    if audit.with_answers:
        table.add_row(gettext("queries with reference answers", lang), str(audit.with_answers), "")
    if audit.corpus_size is not None:
        table.add_row(gettext("corpus documents", lang), str(audit.corpus_size), "")
    table.add_section()
    dup_ids = [" = ".join(g) for g in audit.duplicates]
    table.add_row(gettext("duplicate queries (groups)", lang), str(len(audit.duplicates)), _ids(dup_ids, 4, lang))
    near = [f"{a} ~ {b}{paren(f'{s:.2f}', lang)}" for a, b, s in audit.near_duplicates]
    table.add_row(_("near-duplicate pairs (≥ {t})", t=f"{audit.near_threshold:g}").text(lang), str(len(near)),
                  _ids(near, 4, lang))
    table.add_row(gettext("empty queries", lang), str(len(audit.empty)), _ids(audit.empty, lang=lang))
    note = _("; {n} have answers",
             n=len(audit.no_relevant_with_answers)).text(lang) if audit.no_relevant_with_answers else ""
    table.add_row(gettext("queries without a relevant id", lang), str(len(audit.no_relevant)),
                  _ids(audit.no_relevant, lang=lang) + note)
    if audit.corpus_size is not None:
        miss = [f"{q}:{d}" for q, d in audit.missing_from_corpus]
        table.add_row(gettext("relevant ids missing from corpus", lang), str(len(miss)), _ids(miss, 4, lang))
    if audit.load_issues:
        from rankscope.data.testset import Where

        table.add_section()
        for issue in audit.load_issues:
            where = f"{Where(issue.where).text(lang)}{colon(lang)}" if issue.where else ""
            severity = gettext(_SEVERITIES[issue.severity], lang, context="severity")
            table.add_row(f"{severity}{colon(lang)}{issue.field or gettext('record', lang)}",
                          str(issue.count), f"{where}{issue.reason(lang)}")
    table.add_section()
    for grade, n in sorted(audit.grades.items()):
        table.add_row(_("judgments with grade {grade}", grade=grade).text(lang), str(n), "")
    if audit.relevant_per_query:
        r = audit.relevant_per_query
        table.add_row(gettext("relevant ids per query", lang), "",
                      _("min {min}, median {median}, mean {mean}, max {max}", min=f"{r['min']:g}",
                        median=f"{r['median']:g}", mean=f"{r['mean']:.2f}", max=f"{r['max']:g}").text(lang))
    console = Console()
    console.print(fit(table))
    print_prose(console, ngettext("{n} problem found", "{n} problems found", audit.problems).text(lang)
                if audit.problems else gettext("no problem found", lang))


class ConvertFormat(str, Enum):
    json = "json"
    jsonl = "jsonl"
    beir = "beir"


@testset_app.command("convert")
@user_errors
def convert_command(
    source: Annotated[Path, typer.Argument(help="test set: .json, .jsonl (rankscope, LlamaIndex, RAGAS), or a BEIR "
                                                "folder")],
    target: Annotated[Path, typer.Argument(help="output: .json, .jsonl, or a folder (BEIR)")],
    to: Annotated[
        Optional[ConvertFormat], typer.Option("--to", show_default="from TARGET", help="output format")
    ] = None,
    split: Annotated[str, typer.Option("--split", help="BEIR qrels split to read / write")] = "test",
    corpus: Annotated[Optional[Path], typer.Option("--corpus", show_default="the test set's corpus",
                                                   help="corpus: .jsonl, .json, .tsv, .csv")] = None,
    lang: LangOption = None,
) -> None:
    """Convert a test set between JSON, JSONL and BEIR folders (LlamaIndex and RAGAS test sets are read too).

    Examples:

      rankscope testset convert testset.json testset.jsonl

      rankscope testset convert beir/scifact scifact.jsonl --split test
    """
    from rankscope.data.testset import TestSet
    from rankscope.io.testset import format_name, read_corpus

    if not source.exists():
        raise FileNotFoundError(2, "no such file", str(source))
    ts = TestSet.from_file(source, split=split, corpus=read_corpus(corpus) if corpus is not None else None)
    fmt = to or (ConvertFormat.json if target.suffix.lower() == ".json"
                 else ConvertFormat.jsonl if target.suffix.lower() in (".jsonl", ".ndjson") else ConvertFormat.beir)
    if fmt is ConvertFormat.json:
        ts.to_json(target)
    elif fmt is ConvertFormat.jsonl:
        ts.to_jsonl(target)
    else:
        ts.to_beir(target, split=split)
    from rankscope.cli.messages import print_lines

    lg = lang.value if lang is not None else "en"
    if ts.format not in (None, "json", "jsonl", "beir"):  # a format of another tool: say which one was read
        print_lines([f"{source}: {_('read as {format}', format=format_name(ts.format, lg)).text(lg)}"], lg)
    print_lines([_("{queries}, {judgments} -> {target} ({fmt})", queries=ngettext("{n} query", "{n} queries", len(ts)),
                   judgments=ngettext("{n} judgment", "{n} judgments",
                                      len(ts.qrels)), target=target, fmt=fmt.value).text(lg)],
                lg)
