"""``rankscope agreement``: how far model labels agree with human labels, and whether the system ranking holds."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from rankscope.cli.app import app, fail, user_errors
from rankscope.cli.compare_cmd import Correction
from rankscope.cli.llm_options import RUNS_CONTEXT, Format, Output, RunFiles, run_files
from rankscope.cli.options import LangOption, PairedTest, Permutations, RelevanceLevel
from rankscope.i18n import N_, NC_, _, gettext

#: how a significance verdict changes from human to model labels
_FLIPS = {"reversed": NC_("flip", "reversed"), "lost": NC_("flip", "lost"), "gained": NC_("flip", "gained")}


class PPITarget(str, Enum):
    queries = "queries"
    population = "population"


class Weights(str, Enum):
    linear = "linear"
    quadratic = "quadratic"
    none = "none"


@app.command("agreement", context_settings=RUNS_CONTEXT)
@user_errors
def agreement_command(
    ctx: typer.Context,
    qrels: Annotated[Optional[Path], typer.Option("--qrels", show_default="none", help="human labels")] = None,
    judged: Annotated[Optional[Path], typer.Option("--judged", show_default="none",
                                                   help="model labels (rankscope judge --out)")] = None,
    runs: RunFiles = None,
    metric: Annotated[
        Optional[list[str]], typer.Option("-m", "--metric", show_default="ndcg@10",
                                          help="metric for the system ranking, repeatable")
    ] = None,
    relevance_level: RelevanceLevel = 1,
    weights: Annotated[Weights, typer.Option("--weights", help="weights of the graded κ")] = Weights.linear,
    bootstrap: Annotated[int, typer.Option("--bootstrap",
                                           help="bootstrap resamples of the queries for the intervals")] = 1000,
    alpha: Annotated[float, typer.Option("--alpha", help="significance level; intervals at 1 - alpha")] = 0.05,
    test: Annotated[PairedTest, typer.Option("--test", help="paired test of the verdicts")] = PairedTest.t,
    correction: Annotated[Correction, typer.Option("--correction", help="multiple-comparison correction")] = (
        Correction.holm),
    permutations: Permutations = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="random seed")] = 0,
    lang: LangOption = None,
    fmt: Format = Output.table,
    audit: Annotated[
        Optional[Path], typer.Option("--audit", show_default="none",
                                     help="the audit (pool --audit-sample): prediction-powered estimates, with --runs")
    ] = None,
    annotator: Annotated[
        Optional[list[Path]], typer.Option("--annotator", show_default="none",
                                           help="one person's labels, repeatable: Fleiss' κ and Krippendorff's α "
                                                "among them")
    ] = None,
    ppi_target: Annotated[PPITarget, typer.Option(
        "--ppi-target", help="queries: the metric of these queries with people's labels; population: of the "
                             "population they are drawn from")] = PPITarget.queries,
) -> None:
    """How far the labels JUDGED agree with QRELS: bias, Cohen's κ, and with --runs whether the systems rank the same.

    First the bias (mean grade shift, Stuart-Maxwell test) and, with --runs, how much it moves each run's metric; then
    κ binary and weighted with the confusion matrix; with --runs, Kendall τ and τ_AP of the system rankings and the
    pairwise verdicts that flip.  Intervals resample queries; the readings follow the intervals.

    Examples:

      rankscope agreement --qrels qrels.txt --judged labels.qrels --runs bm25.trec dense.trec hybrid.trec -m ndcg@10

      rankscope agreement --qrels people.qrels --judged labels.qrels --runs bm25.trec dense.trec --audit audit.jsonl

      rankscope agreement --annotator alice.qrels --annotator bob.qrels --annotator carol.qrels
    """
    assert lang is not None  # settled by user_errors
    from rankscope.cli.compare_cmd import read_named_runs
    from rankscope.labels.agreement import label_agreement, own_labels
    from rankscope.labels.provenance import read_labels
    from rankscope.labels.reading import read_bias, read_label_agreement, read_ranking_agreement
    from rankscope.labels.system_ranking import ranking_agreement

    files = run_files(ctx, runs, required=False)
    group = None
    if annotator:
        from rankscope.io import read_qrels
        from rankscope.labels.group_agreement import group_agreement

        names = [p.stem if [q.stem for q in annotator].count(p.stem) == 1 else str(p) for p in annotator]
        group = group_agreement({n: read_qrels(p) for n, p in zip(names, annotator)}, resamples=bootstrap,
                                alpha=alpha, rng=seed)
    if qrels is None or judged is None:
        if group is None or qrels is not None or judged is not None:
            fail(_("give --qrels and --judged (and/or --annotator FILE, repeated)"))
        if fmt is Output.json:
            typer.echo(json.dumps({"annotators": group.to_dict()}, ensure_ascii=False, indent=2))
        else:
            _print_group(group, lang.value)
        return
    if audit is not None and not files:
        fail(_("--audit needs the runs: --runs A B C"))
    target = ppi_target.value
    human_labels, model_labels = read_labels(qrels), read_labels(judged, source="model")
    human, model, __ = own_labels(human_labels, model_labels)
    agr = label_agreement(human_labels, model_labels, relevance_level=relevance_level, weights=weights.value,
                          resamples=bootstrap, alpha=alpha, rng=seed)
    ra = None
    if files:
        ra = ranking_agreement(human, model, read_named_runs(files)[0], metric or None, test=test.value, alpha=alpha,
                               correction=correction.value, relevance_level=relevance_level,
                               permutations=permutations, rng=seed, resamples=bootstrap)
    report = None
    if audit is not None:
        from rankscope.labels.ppi import prediction_powered, read_audit

        report = prediction_powered(human_labels, model_labels,
                                    read_named_runs(files)[0], read_audit(audit), metric or None, alpha=alpha,
                                    target=target, relevance_level=relevance_level)
    if fmt is Output.json:
        out: dict[str, Any] = {"labels": agr.to_dict(), "ranking": ra.to_dict() if ra else None,
                               "ppi": report.to_dict() if report is not None else None,
                               "annotators": group.to_dict() if group is not None else None,
                               "reading": read_bias(agr, lang.value) + _shift_lines(ra, lang.value)
                               + read_label_agreement(agr, lang.value)
                               + (read_ranking_agreement(ra, lang.value) if ra else [])}
        typer.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    _print(agr, ra, lang.value)
    if report is not None:
        _print_ppi(report, lang.value)
    if group is not None:
        _print_group(group, lang.value)


def _print_group(group: Any, lang: str) -> None:
    """Fleiss' κ and Krippendorff's α among the annotators."""
    from rankscope.cli.messages import print_lines
    from rankscope.errors import Items
    from rankscope.labels.reading import read_group_agreement

    print_lines([_("{n} annotators ({names}): {items} documents graded by two or more, {all} by all, over "
                   "{queries} queries", n=len(group.annotators), names=Items(group.annotators).text(lang),
                   items=group.items, all=group.items_all, queries=group.queries).text(lang),
                 *read_group_agreement(group, lang)], lang)


def _print_ppi(report: Any, lang: str) -> None:
    """The prediction-powered estimates: per metric, each run and each difference, with the human-only interval."""
    from rich.console import Console
    from rich.table import Table

    from rankscope.cli.messages import print_lines
    from rankscope.report.fit import fit

    console = Console()  # the terminal's width (COLUMNS when piped, else 80): the tables fit it (report.fit)
    values = {"audited": report.audited, "frame": report.frame, "queries": report.queries,
              "confidence": 1 - report.alpha}
    print_lines(["", (_("prediction-powered estimates (Angelopoulos et al., 2023) on {queries} queries, {audited} of "
                        "{frame} in the audit frame judged by people: each run's metric as people's labels would give "
                        "it on these queries, with {confidence:.0%} intervals (Student t over the audited queries, "
                        "without replacement)", **values) if report.target == "queries" else
                      _("prediction-powered estimates (Angelopoulos et al., 2023) on {queries} queries, {audited} of "
                        "{frame} judged by people: each run's metric on the population of queries these are drawn "
                        "from, with {confidence:.0%} intervals (normal, as ppi_py)", **values)).text(lang)], lang)
    columns = [gettext(c, lang) for c in (N_("run"), N_("model-judged"), N_("PPI"), N_("interval"),
                                          N_("people only"))]
    names = {m: ([*report.systems], [f"{b} − {a}" for a, b in report.pair_names]) for m in report.metrics}
    for m in report.metrics:
        t = Table(title=m, title_justify="left")
        for i, col in enumerate(columns):
            t.add_column(col, justify="left" if i == 0 else "right")
        for est, rows in ((report.runs[m], names[m][0]), (report.pairs.get(m), names[m][1])):
            if est is None:
                continue
            for i, name in enumerate(rows):
                t.add_row(name, f"{est.model_only[i]:.4f}", f"{est.value[i]:.4f}",
                          f"[{est.low[i]:.4f}, {est.high[i]:.4f}]",
                          f"{est.human_value[i]:.4f} [{est.human_low[i]:.4f}, {est.human_high[i]:.4f}]")
        console.print(fit(t))


def _shift_lines(ra: Any, lang: str) -> list[str]:
    """How much the model labels move each run's metric (model − human, with its interval), one line per metric."""
    from rankscope.errors import Items

    if ra is None:
        return []
    out = []
    for r in ra.rankings:
        items = Items(tuple(_("{run} {shift} [{low}, {high}]", run=s, shift=f"{d:+.4f}", low=f"{lo:+.4f}",
                              high=f"{hi:+.4f}")
                            for s, (d, lo, hi) in zip(r.systems, r.shifts)))
        out.append(_("effect of the model labels on {metric} (model − human, interval over resampled queries): "
                     "{items}", metric=r.metric, items=items.text(lang)).text(lang))
    return out


def _print(agr: Any, ra: Any, lang: str) -> None:
    from rich.console import Console
    from rich.table import Table

    from rankscope.cli.messages import print_lines
    from rankscope.labels.reading import read_bias, read_label_agreement, read_ranking_agreement
    from rankscope.report.fit import fit

    console = Console()  # the terminal's width (COLUMNS when piped, else 80): the tables fit it (report.fit)
    print_lines([*read_bias(agr, lang), *_shift_lines(ra, lang), ""], lang)
    left = agr.left_out
    print_lines([_("{pairs} documents judged by both; {human_only} by the human labels only, {model_only} by the "
                   "model only; {negative} left out (negative grade)", pairs=agr.pairs, human_only=agr.human_only,
                   model_only=agr.model_only, negative=agr.negative).text(lang),
                 *([_("by their provenance, {model_side_human_labels} people's labels of the judged file and "
                      "{human_side_model_labels} model labels of the human file were left out: each side is "
                      "compared on its own labels", **left).text(lang)] if any(left.values()) else [])], lang)
    cm = Table(title=gettext("confusion matrix", lang), title_justify="left")
    cm.add_column(gettext("human \\ model", lang))
    for g in agr.grades:
        cm.add_column(str(g), justify="right")
    for g, row in zip(agr.grades, agr.confusion.astype(int).tolist()):
        cm.add_row(str(g), *map(str, row))
    console.print(fit(cm))
    print_lines([_("exact agreement {exact:.3f}; binary agreement (grade ≥ {level}) {binary:.3f}; intervals: "
                   "{resamples} bootstrap resamples over queries, level {confidence:g}", exact=agr.exact,
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
        console.print(fit(t))
    flips = [_("flip ({kind}) {metric}: {b} vs {a}: human {human:+d} (p={human_p:.3g}), model {model:+d} "
               "(p={model_p:.3g})", kind=gettext(_FLIPS[v.kind], lang, context="flip"), metric=v.metric, b=v.b, a=v.a,
               human=v.human, human_p=v.human_p, model=v.model, model_p=v.model_p).text(lang) for v in ra.flips]
    print_lines([*flips, *read_ranking_agreement(ra, lang)], lang)
