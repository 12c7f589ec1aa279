"""``rankscope pool``: the documents in the runs' top ranks that still need a label, and judged@k per run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from rankscope.cli.app import app, fail, user_errors
from rankscope.cli.llm_options import RUNS_CONTEXT, Format, Output, RunFiles, run_files
from rankscope.cli.options import LangOption
from rankscope.i18n import _, gettext, pgettext

if TYPE_CHECKING:
    from rankscope.labels.pool import Pool


def read_label_files(qrels: Path | None, judged: Path | None) -> tuple[Any, dict[str, int] | None]:
    """Human labels from ``qrels`` and model labels from ``judged`` (each with its provenance sidecar if any),
    combined with human labels winning; returns the labels and the combine counts (None when not combined)."""
    from rankscope.labels.provenance import combine, read_labels

    human = read_labels(qrels) if qrels is not None else None
    model = read_labels(judged, source="model") if judged is not None else None
    if human is not None and model is not None:
        both = combine(human, model)
        return both.labels, {"overridden": both.overridden, "disagreements": both.disagreements}
    return (human if human is not None else model), None


@app.command("pool", context_settings=RUNS_CONTEXT)
@user_errors
def pool_command(
    ctx: typer.Context,
    runs: RunFiles = None,
    qrels: Annotated[Optional[Path], typer.Option("--qrels", show_default="none",
                                                  help="existing (human) judgments")] = None,
    judged: Annotated[
        Optional[Path], typer.Option("--judged", show_default="none",
                                     help="model labels (rankscope judge --out); human labels win")
    ] = None,
    depth: Annotated[int, typer.Option("--depth", "-k", help="pool the top DEPTH documents of every run")] = 10,
    out: Annotated[Optional[Path], typer.Option("--out", show_default="none: print judged@DEPTH only",
                                                help="write the pool here (JSON Lines)")] = None,
    combined_out: Annotated[
        Optional[Path], typer.Option("--combined-out", show_default="none",
                                     help="write --qrels + --judged (human wins) as qrels + sidecar")
    ] = None,
    per_query: Annotated[bool, typer.Option("--per-query", help="judged@k per query in the JSON output")] = False,
    fmt: Format = Output.table,
    lang: LangOption = None,
    audit_sample: Annotated[
        Optional[int], typer.Option("--audit-sample", show_default="none",
                                    help="draw N of the pool's queries for people to judge (all their documents)")
    ] = None,
    audit_out: Annotated[
        Optional[Path], typer.Option("--audit-out", show_default="OUT with .audit before its suffix",
                                     help="write the audit's documents here (JSON Lines) and the sample beside it")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="seed of the audit sample")] = 0,
) -> None:
    """Pool the top DEPTH documents of RUNS that have no label yet; print judged@DEPTH per run.

    With --judged, model labels count as judged too and model@DEPTH (their share of the top
    DEPTH) is shown.  With --audit-sample N, N of the pool's queries are drawn at random (--seed)
    for people to judge in full: `agreement --audit` then gives prediction-powered estimates.

    Examples:

      rankscope pool --runs bm25.trec dense.trec --qrels qrels.txt --depth 10 --out pool.jsonl

      rankscope pool --runs bm25.trec dense.trec --qrels qrels.txt --judged labels.qrels --combined-out all.qrels
    """
    from rankscope.cli.compare_cmd import read_named_runs
    from rankscope.labels.pool import build_pool

    files = run_files(ctx, runs)
    named, _tags = read_named_runs(files)
    labels, merged = read_label_files(qrels, judged)
    pool = build_pool(named, labels, depth=depth)
    if out is not None:
        pool.write_jsonl(out)
    audit = None
    if audit_sample is not None:
        audit = _write_audit(pool, audit_sample, seed, audit_out, out)
    if combined_out is not None:
        if labels is None:
            fail(_("--combined-out needs --qrels and/or --judged"))
        labels.write(combined_out)
    if fmt is Output.json:
        data = pool.to_dict(per_query)
        data.update({"labels": labels.counts() if labels is not None else None, "combined": merged,
                     "out": str(out) if out else None,
                     "audit": None if audit is None else {**audit[0].to_dict(), "out": str(audit[1]),
                                                          "documents": audit[2]}})
        typer.echo(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        said = lang.value if lang is not None else "en"
        _print(pool, labels, merged, out, combined_out, said)
        if audit is not None:
            from rankscope.cli.messages import print_lines

            print_lines([_("audit: {n} of the pool's {frame} queries drawn at random (seed {seed}), {documents} "
                           "documents for people to judge -> {out} (sample beside it)", n=len(audit[0].sampled),
                           frame=len(audit[0].frame), seed=seed, documents=audit[2], out=audit[1]).text(said)], said)


def _write_audit(pool: Pool, n: int, seed: int, audit_out: Path | None, out: Path | None) -> tuple[Any, Path, int]:
    """Draw the audit sample, write its documents (pool records) and the sample description beside them."""
    import json as json_

    from rankscope.labels.ppi import audit_sidecar, draw_audit

    if audit_out is None:
        if out is None:
            fail(_("--audit-sample needs --audit-out or --out"))
        audit_out = out.with_name(out.stem + ".audit" + (out.suffix or ".jsonl"))
    sample = draw_audit(pool.table["query_id"].to_pylist(), n, seed=seed)
    chosen = set(sample.sampled)
    records = [r for r in pool.records() if r["query_id"] in chosen]
    with open(audit_out, "w", encoding="utf-8") as fh:
        fh.writelines(json_.dumps(r, ensure_ascii=False) + "\n" for r in records)
    audit_sidecar(audit_out).write_text(json_.dumps(sample.to_dict(), ensure_ascii=False, indent=1) + "\n",
                                        encoding="utf-8")
    return sample, audit_out, len(records)


def _print(pool: Pool, labels: Any, merged: dict[str, int] | None, out: Path | None, combined: Path | None,
           lang: str = "en") -> None:
    from rich.console import Console
    from rich.table import Table

    from rankscope.cli.messages import print_lines
    from rankscope.report.fit import fit

    k = pool.depth
    has_model = labels is not None and (labels.counts()["model"] > 0 or labels.counts()["failed"] > 0)
    table = Table(title=_("judged@{k} before judging", k=k).text(lang), title_justify="left")
    columns = [_("run").text(lang), pgettext("column", "queries").text(lang), _("top-{k} docs", k=k).text(lang),
               gettext("judged", lang),
               f"judged@{k}", *([f"model@{k}"] if has_model else []), ""]
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i in (0, len(columns) - 1) else "right")
    for s in pool.summaries:
        flag = gettext("mostly unjudged: its scores may be underestimated", lang) if s.mostly_unjudged else ""
        model = [f"{s.model_at_k:.3f}"] if has_model and s.model_at_k is not None else []
        table.add_row(s.run, str(s.queries), str(s.retrieved), str(s.judged), f"{s.judged_at_k:.3f}", *model, flag)
    console = Console()
    console.print(fit(table))
    lines = []
    if labels is not None:
        lines.append(_("labels: {human} human, {model} model, {failed} failed model judgments (counted as unjudged)",
                       **labels.counts()).text(lang))
    if merged is not None:
        lines.append(_("combined: {overridden} model labels replaced by a human label ({disagreements} of them "
                       "with another grade)", **merged).text(lang))
    where = _(" -> {out}", out=out).text(lang) if out else gettext(" (give --out to write it)", lang)
    lines.append(_("pool: {n} documents to judge over {queries} queries (depth {k}){where}", n=len(pool),
                   queries=pool.queries, k=k, where=where).text(lang))
    if combined is not None:
        lines.append(_("combined labels -> {out} (+ provenance sidecar)", out=combined).text(lang))
    print_lines(lines, lang)
