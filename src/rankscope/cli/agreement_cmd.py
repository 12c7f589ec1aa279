"""``rankscope agreement``: how far model labels agree with human labels, and whether the system ranking holds."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from rankscope.cli.app import app, user_errors
from rankscope.cli.compare_cmd import Correction
from rankscope.cli.llm_options import RUNS_CONTEXT, Format, Output, RunFiles, run_files
from rankscope.cli.options import LangOption, PairedTest, Permutations, RelevanceLevel
from rankscope.i18n import N_, NC_, _, gettext

#: how a significance verdict changes from human to model labels
_FLIPS = {"reversed": NC_("flip", "reversed"), "lost": NC_("flip", "lost"), "gained": NC_("flip", "gained")}


class Weights(str, Enum):
    linear = "linear"
    quadratic = "quadratic"
    none = "none"


@app.command("agreement", context_settings=RUNS_CONTEXT)
@user_errors
def agreement_command(
    ctx: typer.Context,
    qrels: Annotated[Path, typer.Option("--qrels", help="human labels")],
    judged: Annotated[Path, typer.Option("--judged", help="model labels (rankscope judge --out)")],
    runs: RunFiles = None,
    metric: Annotated[
        Optional[list[str]], typer.Option("-m", "--metric", show_default="ndcg@10",
                                          help="metric for the system ranking, repeatable")
    ] = None,
    relevance_level: RelevanceLevel = 1,
    weights: Annotated[Weights, typer.Option("--weights", help="weights of the graded κ")] = Weights.linear,
    bootstrap: Annotated[int, typer.Option("--bootstrap", help="bootstrap resamples for the κ intervals")] = 1000,
    alpha: Annotated[float, typer.Option("--alpha", help="significance level; intervals at 1 - alpha")] = 0.05,
    test: Annotated[PairedTest, typer.Option("--test", help="paired test of the verdicts")] = PairedTest.t,
    correction: Annotated[Correction, typer.Option("--correction", help="multiple-comparison correction")] = (
        Correction.holm),
    permutations: Permutations = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="random seed")] = 0,
    lang: LangOption = None,
    fmt: Format = Output.table,
) -> None:
    """How far the labels JUDGED agree with QRELS: Cohen's κ, and with --runs whether the systems rank the same.

    κ binary and weighted, with bootstrap intervals and the confusion matrix; with --runs, Kendall τ and τ_AP of the
    system rankings and the pairwise verdicts that flip.

    Examples:

      rankscope agreement --qrels qrels.txt --judged labels.qrels

      rankscope agreement --qrels qrels.txt --judged labels.qrels --runs bm25.trec dense.trec hybrid.trec -m ndcg@10
    """
    assert lang is not None  # settled by user_errors
    from rankscope.cli.compare_cmd import read_named_runs
    from rankscope.labels.agreement import label_agreement
    from rankscope.labels.provenance import read_labels
    from rankscope.labels.reading import read_label_agreement, read_ranking_agreement
    from rankscope.labels.system_ranking import ranking_agreement

    files = run_files(ctx, runs, required=False)
    human = read_labels(qrels).qrels
    model = read_labels(judged, source="model").qrels
    agr = label_agreement(human, model, relevance_level=relevance_level, weights=weights.value,
                          resamples=bootstrap, alpha=alpha, rng=seed)
    ra = None
    if files:
        ra = ranking_agreement(human, model, read_named_runs(files)[0], metric or None, test=test.value, alpha=alpha,
                               correction=correction.value, relevance_level=relevance_level,
                               permutations=permutations, rng=seed)
    if fmt is Output.json:
        out: dict[str, Any] = {"labels": agr.to_dict(), "ranking": ra.to_dict() if ra else None,
                               "reading": read_label_agreement(agr, lang.value)
                               + (read_ranking_agreement(ra, lang.value) if ra else [])}
        typer.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    _print(agr, ra, lang.value)


def _print(agr: Any, ra: Any, lang: str) -> None:
    from rich.console import Console
    from rich.table import Table

    from rankscope.cli.messages import print_lines
    from rankscope.labels.reading import read_label_agreement, read_ranking_agreement

    console = Console()
    if not console.is_terminal:
        console = Console(width=140)
    print_lines([_("{pairs} documents judged by both; {human_only} by the human labels only, {model_only} by the "
                   "model only; {negative} left out (negative grade)", pairs=agr.pairs, human_only=agr.human_only,
                   model_only=agr.model_only, negative=agr.negative).text(lang)], lang)
    cm = Table(title=gettext("confusion matrix", lang), title_justify="left")
    cm.add_column(gettext("human \\ model", lang))
    for g in agr.grades:
        cm.add_column(str(g), justify="right")
    for g, row in zip(agr.grades, agr.confusion.astype(int).tolist()):
        cm.add_row(str(g), *map(str, row))
    console.print(cm)
    print_lines([_("exact agreement {exact:.3f}; binary agreement (grade ≥ {level}) {binary:.3f}; intervals: "
                   "{resamples} bootstrap resamples over documents, level {confidence:g}", exact=agr.exact,
                   level=agr.relevance_level, binary=agr.binary, resamples=agr.resamples,
                   confidence=1 - agr.alpha).text(lang), *read_label_agreement(agr, lang)], lang)
    if ra is None:
        return
    print_lines(["", _("system ranking on {queries} queries judged by both ({human_only} human-only and "
                       "{model_only} model-only queries left out)", queries=ra.queries,
                       human_only=ra.human_only_queries, model_only=ra.model_only_queries).text(lang)], lang)
    columns = [gettext(c, lang) for c in (N_("run"), N_("human"), N_("model"), N_("rank (human)"),
                                          N_("rank (model)"))]
    for r in ra.rankings:
        t = Table(title=r.metric, title_justify="left")
        for i, col in enumerate(columns):
            t.add_column(col, justify="left" if i == 0 else "right")
        ho, mo = r.order("human"), r.order("model")
        for s, h, m in zip(r.systems, r.human_means, r.model_means):
            t.add_row(s, f"{h:.4f}", f"{m:.4f}", str(ho.index(s) + 1), str(mo.index(s) + 1))
        console.print(t)
    flips = [_("flip ({kind}) {metric}: {b} vs {a}: human {human:+d} (p={human_p:.3g}), model {model:+d} "
               "(p={model_p:.3g})", kind=gettext(_FLIPS[v.kind], lang, context="flip"), metric=v.metric, b=v.b, a=v.a,
               human=v.human, human_p=v.human_p, model=v.model, model_p=v.model_p).text(lang) for v in ra.flips]
    print_lines([*flips, *read_ranking_agreement(ra, lang)], lang)
