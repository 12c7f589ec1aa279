"""``rankscope evaluate``: score one run against qrels."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from rankscope.cli.app import app, load_plugins, user_errors
from rankscope.cli.inputs import swapped_inputs
from rankscope.cli.messages import float32_notices, print_lines
from rankscope.cli.options import (
    Address,
    BlockRows,
    Depth,
    Engine,
    LangOption,
    MemoryLimit,
    Missing,
    MissingPolicy,
    PerQueryDir,
    Plugins,
    ProvenanceFile,
    RelevanceLevel,
    ReportFiles,
    RunColumns,
    ScenarioOption,
    ScorePrecision,
    ScorePrecisionOption,
    Unjudged,
    UnjudgedOption,
    run_reader_options,
)
from rankscope.i18n import _, gettext, ngettext

if TYPE_CHECKING:
    from rankscope.engine import EvaluationResult


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"


@app.command("evaluate")
@user_errors
def evaluate_command(
    files: Annotated[
        Optional[list[Path]],
        typer.Argument(metavar="[QRELS RUN]", show_default=False,
                       help="the qrels and the run, in trec_eval's order (or give --qrels and --run)"),
    ] = None,
    run: Annotated[
        Optional[list[Path]],
        typer.Option("--run", metavar="FILE", show_default="the RUN argument",
                     help="run file (TREC, JSON, CSV/TSV, Parquet); several runs: --run a --run b, or "
                          "--run runs/*.gz (with --qrels)"),
    ] = None,
    qrels: Annotated[
        Optional[Path],
        typer.Option("--qrels", metavar="FILE", show_default="the QRELS argument",
                     help="qrels file (TREC, JSON, CSV/TSV, Parquet, BEIR)"),
    ] = None,
    span_qrels: Annotated[
        Optional[Path],
        typer.Option("--span-qrels", metavar="FILE", show_default="none",
                     help="span judgments instead of qrels: query_id, doc_id, start, end[, grade] "
                          "(JSONL, JSON, CSV/TSV, Parquet); needs --chunks"),
    ] = None,
    chunks: Annotated[
        Optional[Path],
        typer.Option("--chunks", metavar="FILE", show_default="none",
                     help="where the run's chunk ids lie: chunk_id, doc_id, start, end (JSONL, CSV, ...)"),
    ] = None,
    rule: Annotated[
        str, typer.Option("--rule", metavar="RULE", help="chunk qrels from spans: any, contains, chars>=N, fraction>=F")
    ] = "any",
    metric: Annotated[
        Optional[list[str]],
        typer.Option("-m", "--metric", metavar="METRIC", show_default="ndcg@10 map mrr recall@100 P@10 hit_rate@10",
                     help="metric, repeatable or comma-separated (ndcg@1,3,5, P@5, ndcg_cut_10...)"),
    ] = None,
    relevance_level: RelevanceLevel = 1,
    missing: MissingPolicy = Missing.zero,
    depth: Depth = None,
    score_precision: ScorePrecisionOption = ScorePrecision.float32,
    unjudged: UnjudgedOption = Unjudged.keep,
    provenance: ProvenanceFile = None,
    per_query: Annotated[bool, typer.Option("--per-query", "-q", help="also print per-query values")] = False,
    fmt: Annotated[OutputFormat, typer.Option("--format", "-f", help="what to print")] = OutputFormat.table,
    report: ReportFiles = None,
    save: Annotated[
        Optional[Path],
        typer.Option("--save", metavar="FILE", show_default="none",
                     help="also save the evaluation (JSON) to compare with later: "
                     "rankscope compare FILE new.trec --qrels QRELS"),
    ] = None,
    scenario: ScenarioOption = None,
    lang: LangOption = None,
    columns: RunColumns = None,
    plugin: Plugins = None,
    memory_limit: MemoryLimit = None,
    block_rows: BlockRows = None,
    engine: Engine = "local",
    address: Address = None,
    per_query_dir: PerQueryDir = None,
) -> None:
    """Evaluate RUN against QRELS and print the metrics with their rating, advice and the production standard met.

    The files come in trec_eval's order (QRELS RUN) or as --qrels and --run; span judgments take
    --span-qrels and --chunks.  --report writes the one-run report (HTML, Markdown, JSON, LaTeX);
    --scenario checks the means against a scenario's benchmark figures.

    Examples:

      rankscope evaluate qrels.txt bm25.trec

      rankscope evaluate --qrels qrels.txt --run bm25.trec -m ndcg@10,recall@5,mrr --scenario faq --report bm25.html

      rankscope evaluate qrels.dev.tsv run.dev.tsv -m mrr@10 --columns qid,docid,rank
    """
    assert lang is not None  # settled by user_errors
    from rankscope.extras import need_for_reports

    need_for_reports(report)  # a missing extra is said before any work, not after the results
    load_plugins(plugin)
    from rankscope.cli.judgments import read_judgments, result_lines
    from rankscope.engine.policies import Policies
    from rankscope.errors import InvalidParameterError
    from rankscope.io import read_run

    source_note = None

    qrels, runs = _files(files, qrels, run, span_qrels)
    if (len(runs) > 1 or per_query_dir is not None or engine != "local") and (span_qrels or chunks):
        raise InvalidParameterError(_("span judgments are evaluated one run at a time, on this machine"))
    if len(runs) > 1 or per_query_dir is not None:
        from rankscope.cli.evaluate_many import evaluate_command_many

        evaluate_command_many(qrels, runs, metric, relevance_level, missing.value, depth,
                              score_precision.value, fmt.value, memory_limit, block_rows, engine, address,
                              per_query_dir, unjudged.value, provenance, lang.value)
        return
    run_path = runs[0]
    if scenario is not None:
        from rankscope.interpret.presets import get_scenario

        get_scenario(scenario)  # an unknown name fails before the files are read
    if (qrels is None) == (span_qrels is None):
        raise InvalidParameterError(_("give either --qrels or --span-qrels (with --chunks)"))
    if span_qrels is not None:
        from rankscope.data.chunking import Chunking
        from rankscope.data.spans import SpanQrels

        if chunks is None:
            raise InvalidParameterError(_("--span-qrels needs --chunks (chunk_id, doc_id, start, end of the run's "
                                          "ids)"))
        if provenance is not None:
            raise InvalidParameterError(_("--provenance goes with --qrels"))
        judgments: object = SpanQrels.from_file(span_qrels)
        plain: object = None
        chunking = Chunking.from_file(chunks)
    else:
        if chunks is not None:
            raise InvalidParameterError(_("--chunks goes with --span-qrels"))
        with swapped_inputs(qrels, [run_path]):
            judgments, plain, source_note = read_judgments(qrels, provenance, metrics=metric)  # type: ignore[arg-type]
        chunking = None
    with swapped_inputs(qrels, [run_path]):
        # a run file is streamed (memory follows the block size) unless something needs it whole: span
        # judgments, --columns, a report (it reads the rankings)
        whole = chunking is not None or columns is not None or bool(report)
        loaded = read_run(run_path, **run_reader_options(columns)) if whole else None
        from rankscope.cli.evaluate_many import evaluate_runs
        from rankscope.engine import Evaluator

        policies = Policies.of("evaluate", relevance_level=relevance_level, missing=missing.value, depth=depth,
                               score_precision=score_precision.value, unjudged=unjudged.value)
        ev = Evaluator(judgments, metric or None, policies=policies, chunking=chunking, rule=rule)
        if engine != "local":
            result = evaluate_runs(ev, [run_path], engine=engine, address=address)[0]
        else:
            result = ev.evaluate(run_path if loaded is None else loaded, memory_limit=memory_limit,
                                 block_rows=block_rows)
    from rankscope.cli.evaluate_many import named, with_tag

    [result], tags = named([result], [run_path])  # the run's file stem in every line, its TREC tag beside it
    verdict = _verdict(result, scenario, lang.value)
    if fmt is OutputFormat.json:
        out = with_tag(result.to_dict(per_query=per_query), tags)
        out["verdict"] = {k: verdict[k] for k in ("ceilings", "ratings", "standards", "scenario")}
        from rankscope.report.json_report import json_ready

        typer.echo(json.dumps(json_ready(out), ensure_ascii=False, indent=2, allow_nan=False))
    elif fmt is OutputFormat.csv:
        _print_csv(result, per_query)
        for n in result.notices:  # the JSON holds them; CSV has no place for a sentence
            print_lines([_("note: {text}", text=n.text(lang.value)).text(lang.value)], lang.value, err=True)
    else:
        _print_table(result, per_query, verdict, tags.get(result.run_name))
    print_lines(float32_notices([result], lang.value), lang.value, err=fmt is not OutputFormat.table)
    # judged@10, ids that never match, model labels, condensed lists (the JSON holds judged@10 and the
    # warnings: only the warnings are repeated, on stderr; beside CSV everything goes to stderr)
    judged, warnings = result_lines(result, lang.value)
    lines = ([source_note] if source_note else []) + judged + warnings
    print_lines(warnings if fmt is OutputFormat.json else lines, lang.value, err=fmt is not OutputFormat.table)
    for path in report or []:
        from rankscope.report import write_report

        shown = plain if type(judgments).__name__ == "SubtopicQrels" else judgments  # the documents' qrels
        written = write_report(result, path, lang=lang.value, qrels=None if chunking is not None else shown,
                               runs=loaded, scenario=scenario)
        print_lines([_("report written to {path}", path=written).text(lang.value)], lang.value, err=True)
    if save is not None:
        from rankscope.saved import save as save_to

        save_to(result, save)
        print_lines([_("evaluation saved to {path}", path=save).text(lang.value)], lang.value, err=True)


def _files(files: list[Path] | None, qrels: Path | None, run: list[Path] | None,
           span_qrels: Path | None) -> tuple[Path | None, list[Path]]:
    """The qrels file and the run files: positional (QRELS RUN, as trec_eval takes them) or --qrels / --run (more
    runs after --run are the shell's expansion of ``--run runs/*.gz``; a quoted pattern is expanded here)."""
    from rankscope.cli.evaluate_many import expand_runs
    from rankscope.errors import InvalidParameterError

    if run and (qrels is not None or span_qrels is not None):
        return qrels, expand_runs([*run, *(files or [])])
    if files:
        if qrels is not None or run or span_qrels is not None:
            raise InvalidParameterError(_("give the files either positionally (QRELS RUN) or with "
                                          "--qrels/--span-qrels and --run, not both"))
        if len(files) != 2:
            given = " ".join(map(str, files))
            raise InvalidParameterError(_("rankscope evaluate QRELS RUN takes two files, got {n}: {files}",
                                          n=len(files), files=given))
        return files[0], [files[1]]
    if not run:
        raise InvalidParameterError(_("no run given: add --run FILE, or give both files as trec_eval takes them: "
                                      "rankscope evaluate QRELS RUN"))
    return qrels, expand_runs(run)


def _verdict(result: EvaluationResult, scenario: str | None, lang: str) -> dict[str, Any]:
    """The one-run report of ``result`` without the per-query parts (ratings, standards, scenario)."""
    from rankscope.report.run_report import build_run_report

    return build_run_report(result, lang=lang, scenario=scenario, per_query=False)


def _print_csv(result: EvaluationResult, per_query: bool) -> None:
    import csv
    import sys

    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["query_id", *result.labels])
    if per_query:
        for qid, row in result.per_query.to_dict().items():
            w.writerow([qid, *(f"{v:.6g}" for v in row.values())])
    w.writerow(["all", *(f"{v:.6g}" for v in result.mean().values())])


def _print_table(result: EvaluationResult, per_query: bool, verdict: dict[str, Any], tag: str | None = None) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from rankscope.choices import term
    from rankscope.report.fit import fit
    from rankscope.report.run_terminal import BAND_STYLES, print_run_verdict
    from rankscope.report.wrap import print_prose

    lang = verdict["lang"]
    run = _("{name} (TREC tag {tag})", name=result.run_name, tag=tag).text(lang) if tag else result.run_name
    table = Table(title=_("run {run}", run=run).text(lang), title_justify="left")
    table.add_column(gettext("query", lang) if per_query else gettext("metric", lang))
    if per_query:
        for label in result.labels:
            table.add_column(label, justify="right")
        for qid, row in result.per_query.to_dict().items():
            table.add_row(qid, *(f"{v:.4f}" for v in row.values()))
        table.add_row(f"[bold]{gettext('all', lang)}[/bold]",
                      *(f"[bold]{v:.4f}[/bold]" for v in result.mean().values()))
    else:
        table.add_column(gettext("value", lang), justify="right")
        table.add_column(gettext("rating", lang))
        for label, v in result.mean().items():
            r = verdict["ratings"][label]
            table.add_row(label, f"{v:.4f}", Text(r["level_name"], style=BAND_STYLES.get(r["level"], "")) if r else "–")
    q = result.queries
    console = Console()
    console.print(fit(table))
    summary = _("{evaluated} evaluated (missing={missing}); {missing_from_run} missing from the run; "
                "{not_in_qrels} not in the qrels", evaluated=ngettext("{n} query", "{n} queries", q.evaluated),
                missing=term(result.policies.missing, lang, "missing"),
                missing_from_run=ngettext("{n} qrels query", "{n} qrels queries", q.missing_from_run),
                not_in_qrels=ngettext("{n} run query", "{n} run queries", q.not_in_qrels)).text(lang)
    summary += "".join(("；" if lang == "zh" else "; ") + n.text(lang) for n in result.notices)
    print_prose(console, summary, rest="    ")
    spans = result.spans
    if spans is not None:
        from rankscope.data.span_rules import SpanCoverage

        text = (_("span judgments on chunking {chunking!r}; chunk qrels by rule {rule}; ", chunking=spans["chunking"],
                  rule=spans["chunk_rule"]).text(lang)
                + SpanCoverage(**spans["coverage"]).message(lang)
                + (ngettext(" {n} query has no span any chunk touches.",
                            " {n} queries have no span any chunk touches.",
                            spans["queries_without_chunk"]).text(lang)
                   if spans["queries_without_chunk"] else ""))
        print_prose(console, text, rest="    ")
    print_run_verdict(verdict, console)
