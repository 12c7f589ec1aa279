"""``rankscope spans``: span judgments on the command line (chunk qrels for any chunking, chunk tables)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from rankscope.cli.app import app, user_errors
from rankscope.cli.messages import print_lines
from rankscope.cli.options import LangOption
from rankscope.i18n import _

spans_app = typer.Typer(help="Span judgments: derive chunk qrels for a chunking, write chunk tables.",
                        no_args_is_help=True)
app.add_typer(spans_app, name="spans")


@spans_app.command("to-qrels")
@user_errors
def to_qrels_command(
    span_qrels: Annotated[Path, typer.Argument(help="span judgments: query_id, doc_id, start, end[, grade]")],
    chunks: Annotated[Path, typer.Option("--chunks", help="chunk table: chunk_id, doc_id, start, end")],
    out: Annotated[Path, typer.Option("--out", "-o", help="qrels file to write (TREC, or .json/.jsonl/.csv/...)")],
    rule: Annotated[
        str, typer.Option("--rule", help="a chunk is relevant when it overlaps a span: any, contains, chars>=N, "
                                         "fraction>=F")
    ] = "any",
    lang: LangOption = None,
) -> None:
    """Write the chunk qrels of CHUNKS derived from SPAN_QRELS, so every measure, comparison and gate works on them.

    Examples:

      rankscope spans to-qrels spans.jsonl --chunks chunks.jsonl --out chunks.qrels

      rankscope spans to-qrels spans.jsonl --chunks chunks.jsonl --out chunks.qrels --rule fraction>=0.5
    """
    from rankscope.data.chunking import Chunking
    from rankscope.data.spans import SpanQrels
    from rankscope.io import write_qrels

    qrels = SpanQrels.from_file(span_qrels).to_qrels(Chunking.from_file(chunks), rule)
    write_qrels(qrels, out)
    lg = lang.value if lang is not None else "en"
    print_lines([_("{n} chunk judgments of {queries} queries written to {out} (rule {rule}); ", n=len(qrels),
                   queries=len(qrels.queries), out=out, rule=qrels.rule).text(lg)
                 + qrels.coverage.message(lg)], lg, err=True)


@spans_app.command("split")
@user_errors
def split_command(
    testset: Annotated[Path, typer.Argument(help="test set with a corpus (JSON/JSONL/BEIR folder)")],
    spec: Annotated[str, typer.Option("--chunking", "-c", help="splitter spec: fixed:256:64, sentences:256, ...")],
    out: Annotated[Path, typer.Option("--out", "-o", help="chunk table to write (.jsonl, .csv, .tsv, .parquet)")],
    span_qrels: Annotated[
        Optional[Path], typer.Option("--span-qrels", show_default="none",
                                     help="also report how these spans fall on the chunks")
    ] = None,
    lang: LangOption = None,
) -> None:
    """Cut the corpus of TESTSET with a splitter and write the chunk table (chunk_id, doc_id, start, end).

    Examples:

      rankscope spans split testset.jsonl -c fixed:256:64 --out chunks.jsonl

      rankscope spans split testset.jsonl -c sentences:256 --out chunks.parquet --span-qrels spans.jsonl
    """
    from rankscope.chunking.splitters import split
    from rankscope.data.spans import SpanQrels
    from rankscope.data.testset import TestSet
    from rankscope.errors import InvalidParameterError

    ts = TestSet.from_file(testset)
    if ts.corpus is None:
        raise InvalidParameterError(_("test set {name!r} has no corpus to split", name=ts.name))
    chunking = split(ts.corpus, spec)
    chunking.to_file(out)
    s = chunking.summary()
    lg = lang.value if lang is not None else "en"
    lines = [_("{chunks} chunks of {documents} documents (mean {size} characters) written to {out}",
               chunks=s["chunks"], documents=s["documents"], size=f"{s['mean_size']:.0f}", out=out).text(lg)]
    spans = SpanQrels.from_file(span_qrels, corpus=ts.corpus) if span_qrels is not None else ts.spans
    if spans is not None:
        lines.append(spans.coverage(chunking).message(lg))
    print_lines(lines, lg, err=True)
