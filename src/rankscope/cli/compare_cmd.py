"""``rankscope compare``: paired significance tests between runs, with an optional report file."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from rankscope.cli.app import app, fail, load_plugins, user_errors
from rankscope.cli.inputs import swapped_inputs
from rankscope.cli.messages import float32_notices, print_lines
from rankscope.cli.options import (
    Correction,
    Depth,
    LangOption,
    MaxPermutations,
    Missing,
    MissingPolicy,
    PairedTest,
    Permutations,
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
from rankscope.engine.result import EvaluationResult
from rankscope.errors import Items, Message
from rankscope.i18n import N_, _

if TYPE_CHECKING:
    from rankscope.comparison import Comparison


class Output(str, Enum):
    table = "table"
    json = "json"


class Interval(str, Enum):
    """How the intervals of ``compare`` are made."""

    bootstrap = "bootstrap"
    betting = "betting"


def run_stem(path: Path) -> str:
    """The name a run file is known by: its file name without ``.gz`` and its extension (``bm25.trec.gz`` -> bm25);
    a run of a TREC archive (``input.aplrob03a.gz``) by the name after the archive's ``input.`` prefix, its run
    tag, as the file's own rows name it.

    >>> run_stem(Path("bm25.trec.gz")), run_stem(Path("trec12/input.aplrob03a.gz")), run_stem(Path("input.txt"))
    ('bm25', 'aplrob03a', 'input')
    """
    name = path.name.removesuffix(".gz")
    if name.startswith("input.") and len(name) > len("input.") and name not in _PLAIN_INPUTS:
        return name[len("input."):]
    stem = Path(name).stem
    return stem or name


#: files named input.<extension> that are no TREC archive run
_PLAIN_INPUTS = frozenset(f"input.{ext}" for ext in ("txt", "trec", "run", "tsv", "csv", "json", "jsonl", "parquet"))


def read_named_runs(paths: list[Path], columns: str | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """Read run files (or saved evaluations) named by their file stem (the TREC tag is often wrong), and each tag.

    Stems that repeat fall back to file names, then to the paths given.  The runs keep
    their own name (the TREC tag), so :func:`rankscope.compare` shows it where it differs.
    """
    from rankscope.io import read_run
    from rankscope.saved import is_saved, load

    runs = [load(p) if is_saved(p) else read_run(p, **run_reader_options(columns)) for p in paths]
    names = run_names(paths)
    own = [str(getattr(run, "name", None) or getattr(run, "run_name", "")) for run in runs]  # a TREC tag, a saved name
    return dict(zip(names, runs)), run_tags(names, own)


def run_names(paths: Sequence[Path]) -> list[str]:
    """The names run files are known by in every line a command prints: their file stems; the file names when
    stems repeat, the paths given when those do too.

    >>> run_names([Path("a/bm25.trec"), Path("b/dense.run.gz")]), run_names([Path("a/x.run"), Path("a/x.trec")])
    (['bm25', 'dense'], ['x.run', 'x.trec'])
    """
    for naming in (run_stem, lambda p: p.name, str):
        names = [naming(p) for p in paths]
        if len(set(names)) == len(names):
            return names
    fail(_("the same run file is given twice"))


def run_tags(names: Sequence[str], own: Sequence[str]) -> dict[str, str]:
    """Each run's own name (a TREC tag, a saved evaluation's name) where it differs from the name it is known by."""
    return {name: tag for name, tag in zip(names, own) if tag not in (name, "run", "")}


#: how a given name designates a run
_RUN_IS = {"name": N_("the name of {path} (run {name!r})"), "tag": N_("the TREC tag of {path} (run {name!r})"),
           "file": N_("the file of {path} (run {name!r})")}


@dataclass(frozen=True)
class _Both:
    """Phrases listed as one: ``a and b`` in English, ``a、b`` in Chinese (each said in the reader's language)."""

    items: tuple[Message, ...]

    def text(self, lang: str = "en") -> str:
        return ("、" if lang == "zh" else " and ").join(item.text(lang) for item in self.items)

    def __str__(self) -> str:
        return self.text("en")


def resolve_run_name(option: str, given: str, names: list[str], tags: dict[str, str], paths: list[Path]) -> str:
    """The run ``given`` designates: a run name (file stem), a TREC tag or one of the paths; ambiguity is an error."""
    hits = []
    for name, path in zip(names, paths):
        how = ("name" if given == name else "tag" if tags.get(name) == given
               else "file" if given in (str(path), path.name) or Path(given) == path else None)
        if how is not None:
            hits.append((name, path, how))
    if len(hits) == 1:
        return hits[0][0]
    if hits:
        found = _Both(tuple(_(_RUN_IS[how], path=path, name=name) for name, path, how in hits))
        fail(_("{option} {given!r} is ambiguous: it is {found}; give the file path or the run name", option=option,
               given=given, found=found))
    listed = Items(tuple(_("{name} (tag {tag})", name=name, tag=tags[name]) if name in tags
                         else name for name in names))
    fail(_("{option} {given!r} is neither a run name, a TREC tag nor one of the run files (runs: {runs})",
           option=option, given=given, runs=listed))


@app.command("compare")
@user_errors
def compare_command(
    runs: Annotated[
        list[Path],
        typer.Argument(metavar="RUN...", show_default=False,
                       help="two or more run files (TREC, JSON, CSV/TSV, Parquet) or saved evaluations "
                            "(evaluate --save FILE)"),
    ],
    qrels: Annotated[
        Optional[Path],
        typer.Option("--qrels", metavar="FILE", show_default="none: every RUN is a saved evaluation",
                     help="qrels file (TREC, JSON, CSV/TSV, Parquet, BEIR)"),
    ] = None,
    metric: Annotated[
        Optional[list[str]],
        typer.Option("-m", "--metric", metavar="METRIC", show_default="ndcg@10 map mrr recall@100 P@10 hit_rate@10",
                     help="metric, repeatable or comma-separated"),
    ] = None,
    test: Annotated[
        PairedTest,
        typer.Option("--test", help="paired t, wilcoxon, randomization (sign flips), or tukey-hsd (Sakai's randomized "
                     "Tukey HSD over all systems at once, with compact-letter groups)"),
    ] = PairedTest.t,
    correction: Annotated[
        Optional[Correction],
        typer.Option("--correction", show_default="holm; none with --test tukey-hsd",
                     help="multiple-comparison correction over all pairs x metrics (tukey-hsd is already "
                     "simultaneous over the pairs of each metric)"),
    ] = None,
    alpha: Annotated[float, typer.Option("--alpha", metavar="ALPHA", help="significance level")] = 0.05,
    baseline: Annotated[
        Optional[str],
        typer.Option("--baseline", metavar="RUN", show_default="none: every pair is compared",
                     help="compare every run with this one (file stem, TREC tag or file path)"),
    ] = None,
    permutations: Permutations = 10_000,
    max_permutations: MaxPermutations = None,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", metavar="N", help="bootstrap resamples for the intervals")
    ] = 1000,
    ci: Annotated[
        Interval,
        typer.Option("--ci", help="the intervals of the means and differences: bootstrap (percentile) or betting "
                     "(valid at any number of queries for a metric with a fixed range); both unadjusted, at level "
                     "1 - ALPHA"),
    ] = Interval.bootstrap,
    seed: Annotated[int, typer.Option("--seed", metavar="N", help="random seed (same seed, same p-values)")] = 0,
    report: ReportFiles = None,
    scenario: ScenarioOption = None,
    save: Annotated[
        Optional[Path], typer.Option("--save", metavar="FILE", show_default="none",
                                     help="also save the comparison (JSON, rankscope.load)")
    ] = None,
    lang: LangOption = None,
    fmt: Annotated[Output, typer.Option("--format", "-f", help="terminal output")] = Output.table,
    relevance_level: RelevanceLevel = 1,
    missing: MissingPolicy = Missing.zero,
    depth: Depth = None,
    score_precision: ScorePrecisionOption = ScorePrecision.float32,
    unjudged: UnjudgedOption = Unjudged.keep,
    provenance: ProvenanceFile = None,
    columns: RunColumns = None,
    plugin: Plugins = None,
) -> None:
    """Compare RUNS pairwise on the same queries: means with CIs, paired tests, effect sizes.

    A RUN may be a saved evaluation (rankscope evaluate --save FILE): last month's result is
    compared with today's run without re-running it (the runs are then scored with its metrics
    and policies).

    Examples:

      rankscope compare bm25.trec dense.trec hybrid.trec --qrels qrels.txt -m ndcg@10,recall@5

      rankscope compare bm25.trec dense.trec --qrels qrels.txt --baseline bm25 --test randomization --report cmp.html

      rankscope compare bm25-2026-04.json bm25.trec --qrels qrels.txt
    """
    assert lang is not None  # settled by user_errors
    from rankscope.extras import need_for_reports

    need_for_reports(report)  # a missing extra is said before any work, not after the results
    load_plugins(plugin)
    from rankscope.api import compare
    from rankscope.cli.judgments import read_judgments

    if len(runs) < 2:
        fail(_("compare needs at least 2 run files"))
    if scenario is not None:
        from rankscope.interpret.presets import get_scenario

        get_scenario(scenario)

    with swapped_inputs(qrels, runs, min_runs=2):
        judgments, q, source_note = (None, None, None) if qrels is None else read_judgments(qrels, provenance)
        named, tags = read_named_runs(runs, columns)
    if q is None and not all(isinstance(r, EvaluationResult) for r in named.values()):
        fail(_("--qrels is needed to score the run files (only saved evaluations compare without it)"))
    base = None if baseline is None else resolve_run_name("--baseline", baseline, list(named), tags, runs)
    if source_note:
        print_lines([source_note], lang.value, err=fmt is Output.json)
    comparison = compare(
        judgments, named, metric or None, test=test.value, alpha=alpha,
        correction=None if correction is None else correction.value, baseline=base, permutations=permutations,
        max_permutations=max_permutations, bootstrap=bootstrap, rng=seed, relevance_level=relevance_level,
        missing=missing.value, depth=depth, score_precision=score_precision.value, unjudged=unjudged.value,
        ci=ci.value,
    )
    if fmt is Output.json:
        typer.echo(json.dumps(comparison.to_dict(), ensure_ascii=False, indent=2))
    else:
        _print(comparison, lang.value, q, named, scenario)
    print_lines(float32_notices(comparison.results.values(), lang.value), lang.value, err=fmt is Output.json)
    for path in report or []:
        from rankscope.report import write_report

        written = write_report(comparison, path, lang=lang.value, qrels=q, runs=named, scenario=scenario)
        print_lines([_("report written to {path}", path=written).text(lang.value)], lang.value, err=True)
    if save is not None:
        from rankscope.saved import save as save_to

        save_to(comparison, save)
        print_lines([_("comparison saved to {path}", path=save).text(lang.value)], lang.value, err=True)


def _print(comparison: Comparison, lang: str, qrels: Any, runs: dict[str, Any], scenario: str | None) -> None:
    from rankscope.report.terminal import print_comparison

    print_comparison(comparison, lang=lang, qrels=qrels, runs=runs, scenario=scenario)
