"""``rankscope chunking``: compare chunkings of a corpus on span judgments, with paired tests."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from rankscope.cli.app import app, user_errors
from rankscope.cli.messages import print_lines
from rankscope.cli.options import LangOption, PairedTest, Permutations
from rankscope.i18n import _, gettext, ngettext

if TYPE_CHECKING:
    from rankscope.chunking.compare import ChunkingComparison


class Output(str, Enum):
    table = "table"
    json = "json"


@app.command("chunking")
@user_errors
def chunking_command(
    testset: Annotated[
        Optional[Path], typer.Argument(help="test set with a corpus and span judgments (JSON/JSONL/BEIR folder)")
    ] = None,
    dataset: Annotated[
        Optional[str], typer.Option("--dataset", show_default="none: the TESTSET argument",
                                    help="a bundled dataset instead of a file (e.g. cmrc2018)")
    ] = None,
    chunking: Annotated[
        Optional[list[str]],
        typer.Option("--chunking", "-c", show_default="none",
                     help="splitter spec, repeatable: fixed:256, fixed:256:64, recursive:512:64, "
                                              "sentences:256, paragraphs, tokens:128:16:jieba"),
    ] = None,
    chunks: Annotated[
        Optional[list[Path]],
        typer.Option("--chunks", show_default="none",
                     help="a chunk table, repeatable (chunk_id, doc_id, start, end; named by file stem)"),
    ] = None,
    retriever: Annotated[str, typer.Option("--retriever", "-r", help="bm25, e5, dense or hybrid")] = "bm25",
    metric: Annotated[
        Optional[list[str]],
        typer.Option("-m", "--metric",
                     show_default="span recall/precision/IoU, ndcg, mrr, context size at k, precision omega",
                     help="metric, repeatable"),
    ] = None,
    k: Annotated[int, typer.Option("-k", help="cutoff of the default metrics")] = 5,
    span_qrels: Annotated[
        Optional[Path], typer.Option("--span-qrels", show_default="the test set's",
                                     help="span judgments to use instead of the test set's")
    ] = None,
    from_answers: Annotated[
        bool, typer.Option("--from-answers", help="judge spans by locating the reference answers in the documents")
    ] = False,
    rule: Annotated[
        str, typer.Option("--rule", help="chunk qrels from spans: any, contains, chars>=N, fraction>=F")
    ] = "any",
    test: Annotated[PairedTest, typer.Option("--test", help="paired test: t, wilcoxon, randomization")] = PairedTest.t,
    correction: Annotated[
        Optional[str], typer.Option("--correction", show_default="holm", help="holm, bonferroni, bh or none")
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", help="significance level")] = 0.05,
    baseline: Annotated[Optional[str], typer.Option("--baseline", show_default="none: every pair is compared",
                                                    help="compare every chunking with this one")] = None,
    permutations: Permutations = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="random seed")] = 0,
    max_queries: Annotated[
        int, typer.Option("--max-queries", help="evaluate at most N queries (evenly sampled); 0 = all")
    ] = 0,
    cache_dir: Annotated[
        Optional[Path], typer.Option("--cache-dir", show_default="none: embeddings are not kept",
                                     help="keep e5 embeddings here between runs")
    ] = None,
    report: Annotated[
        Optional[list[Path]], typer.Option("--report", show_default="none",
                                           help="write a report: out.html (with the recall-versus-"
                                                            "context plot), out.md, out.json or out.tex")
    ] = None,
    lang: LangOption = None,
    fmt: Annotated[Output, typer.Option("--format", "-f", help="terminal output")] = Output.table,
) -> None:
    """Compare chunkings of one corpus with one retriever, scored on span judgments that survive re-chunking.

    Examples:

      rankscope chunking --dataset cmrc2018 -c fixed:128 -c fixed:256 -c fixed:512 --max-queries 200

      rankscope chunking testset.jsonl -c recursive:512:64 -c sentences:256 -r bm25 --report chunking.html
    """
    assert lang is not None  # settled by user_errors
    from rankscope.extras import need_for_reports

    need_for_reports(report)  # a missing extra is said before any work, not after the results
    from rankscope.chunking.compare import compare_chunkings
    from rankscope.cli.demo_chunking import sample_queries
    from rankscope.data.chunking import Chunking
    from rankscope.data.testset import TestSet
    from rankscope.errors import InvalidParameterError

    if (testset is None) == (dataset is None):
        raise InvalidParameterError(_("give a test set file or --dataset NAME (one of them)"))
    if max_queries < 0:
        raise InvalidParameterError(_("--max-queries must be >= 0, got {n}", n=max_queries))
    if dataset is not None:
        from rankscope.datasets import load_dataset

        ts = load_dataset(dataset)
    else:
        assert testset is not None
        ts = TestSet.from_file(testset)
    if ts.corpus is None:
        raise InvalidParameterError(_("test set {name!r} has no corpus to chunk", name=ts.name))
    spans: Any = None
    notes: list[str] = []
    if span_qrels is not None and from_answers:
        raise InvalidParameterError(_("give --span-qrels or --from-answers, not both"))
    if span_qrels is not None:
        from rankscope.data.spans import SpanQrels

        spans = SpanQrels.from_file(span_qrels, corpus=ts.corpus)
    elif from_answers:
        from rankscope.data.span_build import locate_answers

        built = locate_answers(ts)
        spans = built.spans
        notes.append(built.report.message(lang.value))
    named: dict[str, Any] = {spec: spec for spec in chunking or []}
    for path in chunks or []:
        ch = Chunking.from_file(path, corpus=ts.corpus)
        named[ch.name] = ch
    judged = spans if spans is not None else ts.spans
    pool = set(judged.queries) if judged is not None else set()
    ids = [q.id for q in ts.queries if q.id in pool]
    cc = compare_chunkings(ts, named, retriever, metric or None, k=k, spans=spans, rule=rule,
                           queries=sample_queries(ids, max_queries or None), test=test.value, alpha=alpha,
                           correction=correction, baseline=baseline, permutations=permutations, rng=seed,
                           cache_dir=cache_dir)
    if fmt is Output.json:
        typer.echo(json.dumps({**cc.to_dict(), "notes": notes}, ensure_ascii=False, indent=2))
    else:
        print_chunkings(cc, lang.value, notes)
    for path in report or []:
        written = cc.write_report(path, lang.value)
        print_lines([_("report written to {path}", path=written).text(lang.value)], lang.value, err=True)


def print_chunkings(cc: ChunkingComparison, lang: str = "en", notes: list[str] | None = None) -> None:
    """The chunking table, then the comparison as ``rankscope compare`` prints it."""
    from rich.console import Console
    from rich.table import Table

    from rankscope.report.fit import fit
    from rankscope.report.terminal import print_report

    console = Console()
    table = Table(title=gettext("Chunkings", lang), title_justify="left")
    heads = (gettext("chunking", lang), gettext("chunks", lang), gettext("mean size (characters)", lang),
             gettext("characters held twice or more", lang), gettext("spans not inside one chunk", lang))
    for i, head in enumerate(heads):
        table.add_column(head, justify="right" if i else "left")
    for row in cc.table():
        cov = cc.chunkings[row["chunking"]]["coverage"]
        table.add_row(row["chunking"], str(row["chunks"]), f"{row['mean_size']:.0f}", str(row["overlap_chars"]),
                      f"{row['spans_not_in_one_chunk']} / {cov.get('spans', 0)}")
    console.print(fit(table))
    if cc.per_chunking:  # measured on each chunking, not tested across them (said by the report's warnings)
        per = Table(title=gettext("Per chunking (not compared across chunkings)", lang), title_justify="left")
        per.add_column(gettext("chunking", lang))
        for label in cc.per_chunking:
            per.add_column(label, justify="right")
        means = cc.per_chunking_means()
        for name in cc.names:
            per.add_row(name, *(f"{means[name][label]:.4f}" if abs(means[name][label]) < 100
                                 else f"{means[name][label]:.0f}" for label in cc.per_chunking))
        console.print(fit(per))
    lines = [*(notes or []), _("One retriever ({retriever}) built on each chunking; {queries} queries with {spans} "
                               "judged spans. Span measures score the judged characters; ordinary measures score "
                               "chunk qrels derived with the rule {rule}. Paired tests compare the chunkings query "
                               "by query.", retriever=cc.retriever, rule=cc.rule, k=cc.k,
                               queries=cc.build.get("queries", 0), spans=cc.build.get("spans", 0)).text(lang)]
    for name, ev in cc.evaluations.items():
        if ev.errors:
            lines.append(ngettext("{name}: {n} query failed and scores 0 (first: {first})",
                                  "{name}: {n} queries failed and score 0 (first: {first})", len(ev.errors), name=name,
                                  first=next(iter(ev.errors.values()))).text(lang))
    print_lines(lines, lang)
    print_report(cc.report(lang), console)
