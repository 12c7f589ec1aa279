"""``rankscope tune``: choose a fusion method and its parameters by cross-validation over queries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from rankscope.cli.app import app, fail, user_errors
from rankscope.cli.messages import print_lines
from rankscope.cli.options import Depth, LangOption, PairedTest, QrelsFile, RelevanceLevel
from rankscope.i18n import _


def parse_grid(given: list[str] | None) -> dict[str, list[Any]]:
    """``--grid KEY=V1,V2,...`` (repeatable): numbers, normalisation names, or weights written ``0.3/0.7``."""
    out: dict[str, list[Any]] = {}
    for text in given or []:
        key, sep, values = text.partition("=")
        key = key.strip()
        items = [v.strip() for v in values.split(",") if v.strip()]
        if not sep or not key or not items:
            fail(_("--grid takes KEY=V1,V2,... e.g. k=10,60 or weights=0.3/0.7,0.5/0.5; got {given!r}", given=text))
        try:
            if key == "norm":
                out[key] = [None if v.lower() == "none" else v for v in items]
            elif key == "weights":
                out[key] = [[float(w) for w in v.split("/")] for v in items]
            else:
                out[key] = [float(v) for v in items]
        except ValueError:
            fail(_("--grid takes KEY=V1,V2,... e.g. k=10,60 or weights=0.3/0.7,0.5/0.5; got {given!r}", given=text))
    return out


@app.command("tune")
@user_errors
def tune_command(
    runs: Annotated[list[Path], typer.Argument(help="run files to fuse (two or more)")],
    qrels: QrelsFile,
    method: Annotated[Optional[list[str]], typer.Option("--method", metavar="NAME", show_default="every method",
                                                        help="a fusion method to search, repeatable")] = None,
    grid: Annotated[Optional[list[str]], typer.Option("--grid", metavar="KEY=V1,V2", show_default="each method's",
                                                      help="values to try, e.g. k=10,60 or norm=minmax,zscore; "
                                                           "weights as 0.3/0.7, repeatable")] = None,
    metric: Annotated[str, typer.Option("-m", "--metric", help="the metric to maximise")] = "ndcg@10",
    folds: Annotated[int, typer.Option("--folds", metavar="N", help="cross-validation folds over queries")] = 5,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="seed of the split and the bootstrap")] = 0,
    nested: Annotated[bool, typer.Option("--nested", help="also estimate the whole procedure by nested "
                                                          "cross-validation")] = False,
    search: Annotated[str, typer.Option("--search", metavar="grid|optuna",
                                        help="try every setting, or let optuna draw --trials of them")] = "grid",
    trials: Annotated[int, typer.Option("--trials", metavar="N", help="settings optuna tries per selection")] = 100,
    weight_step: Annotated[float, typer.Option("--weight-step", metavar="X",
                                               help="step of the weight grid (weights sum to 1)")] = 0.1,
    alpha: Annotated[float, typer.Option("--alpha", help="significance level; intervals at 1 - alpha")] = 0.05,
    test: Annotated[PairedTest, typer.Option("--test", help="paired test of the out-of-fold differences")] = (
        PairedTest.t),
    depth: Depth = None,
    relevance_level: RelevanceLevel = 1,
    json_out: Annotated[Optional[Path], typer.Option("--json", metavar="FILE", show_default="none",
                                                     help="write every figure as JSON")] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", metavar="FILE", show_default="none",
                                                   help="write the recommended fused run (TREC)")] = None,
    lang: LangOption = None,
) -> None:
    """Choose a fusion of RUNS by cross-validation over the queries of QRELS, and say whether it beats RRF.

    Each fold's setting is chosen on the other folds and scored on its own queries: the out-of-fold
    mean is the honest estimate, shown beside the in-sample one; it is compared query by query with
    each run and with RRF (k = 60). The recommendation is RRF unless the tuned setting is
    significantly better out of fold.

    Examples:

      rankscope tune bm25.trec e5.trec --qrels qrels.txt

      rankscope tune bm25.trec e5.trec --qrels qrels.txt --method wsum --nested

      rankscope tune bm25.trec e5.trec --qrels qrels.txt --grid k=10,60,100
    """
    from rankscope.cli.compare_cmd import run_names
    from rankscope.io import read_qrels, read_run, write_run
    from rankscope.retrieval.fusion import fuse
    from rankscope.retrieval.tune import tune

    assert lang is not None  # settled by user_errors
    lg = lang.value
    if len(runs) < 2:
        fail(_("give two or more run files to fuse, got {n}", n=len(runs)))
    named = dict(zip(run_names(runs), (read_run(p) for p in runs)))
    result = tune(read_qrels(qrels), named, method, parse_grid(grid), search=search, trials=trials, metric=metric,
                  folds=folds, seed=seed, nested=nested, alpha=alpha, test=test.value, depth=depth,
                  weight_step=weight_step, relevance_level=relevance_level)
    print_lines(result.text(lg).split("\n"), lg)
    if json_out is not None:
        json_out.write_text(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    if output is not None:
        best = result.recommended
        write_run(fuse(named, best.method, depth=depth, **best.fuse_kwargs(), name=best.label()), output)
