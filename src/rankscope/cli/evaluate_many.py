"""``rankscope evaluate`` with several runs (``--run runs/*.gz``) or on a Ray cluster (``--engine ray``).

The qrels are indexed once (one :class:`~rankscope.engine.Evaluator`); the runs are
scored in parallel on threads (each run file streamed in blocks, the memory limit
shared between the runs in flight: the engine's numpy and Arrow passes release the
GIL) and reported in one table, one row per run, with every never-silent count;
``--per-query-dir`` writes one per-query file per run.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rankscope.choices import JUDGED_K
from rankscope.errors import InvalidParameterError, Items
from rankscope.i18n import N_, _, gettext, ngettext

if TYPE_CHECKING:
    from rankscope.engine import EvaluationResult, Evaluator

__all__ = ["expand_runs", "evaluate_runs", "named", "print_runs", "with_tag", "write_per_query"]

#: the query counts of each run and their column heads (English, said through the catalog)
COUNT_HEADS = {"evaluated": N_("evaluated"), "missing_from_run": N_("missing"), "not_in_qrels": N_("not in qrels"),
               "float32_reordered": N_("float32 reordered"), "no_relevant": N_("no relevant")}
COUNTS = tuple(COUNT_HEADS)


def expand_runs(runs: Sequence[Path | str]) -> list[Path]:
    """The run files: each argument a path or a glob pattern (``'runs/*.gz'``, for shells that do not expand it).

    >>> expand_runs(["no-such-file.trec"])
    [PosixPath('no-such-file.trec')]
    """
    out: list[Path] = []
    for r in runs:
        text = str(r)
        hits = sorted(glob.glob(text)) if any(c in text for c in "*?[") else []
        out += [Path(h) for h in hits] if hits else [Path(text)]
    seen: set[Path] = set()
    return [p for p in out if not (p in seen or seen.add(p))]  # type: ignore[func-returns-value]


def evaluate_runs(
    evaluator: Evaluator, runs: Sequence[Path], *, memory_limit: str | None = None, block_rows: int | None = None,
    workers: int | None = None, engine: str = "local", address: str | None = None,
) -> list[EvaluationResult]:
    """Every run scored against one evaluator, in the order given."""
    if engine == "ray":
        from rankscope import ray as rray

        return [rray.evaluate(evaluator.qrels, run, list(evaluator.labels), address=address,
                              policies=evaluator.policies) for run in runs]
    if engine != "local":
        raise InvalidParameterError(_("--engine must be local or ray, got {engine!r}", engine=engine))
    from rankscope._threads import worker_count
    from rankscope.engine.stream import DEFAULT_MEMORY_LIMIT, parse_size

    n = max(1, min(workers or worker_count(), len(runs)))
    share = parse_size(memory_limit if memory_limit is not None else DEFAULT_MEMORY_LIMIT) // n

    def one(run: Path) -> EvaluationResult:
        return evaluator.evaluate(run, memory_limit=share, block_rows=block_rows)

    if n == 1:
        return [one(r) for r in runs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(n, thread_name_prefix="rankscope-run") as pool:
        return list(pool.map(one, runs))


def named(results: Sequence[EvaluationResult], runs: Sequence[Path]) -> tuple[list[EvaluationResult], dict[str, str]]:
    """The results named as the command line knows their run files (:func:`~rankscope.cli.compare_cmd.run_names`:
    file stems, as compare and check name them), so that the table, the JSON and every warning say one name for
    one run; and each run's TREC tag where it differs, shown beside the name."""
    from dataclasses import replace

    from rankscope.cli.compare_cmd import run_names, run_tags

    names = run_names(runs)
    tags = run_tags(names, [r.run_name for r in results])
    return [replace(r, run_name=name) for r, name in zip(results, names)], tags


def write_per_query(results: Sequence[EvaluationResult], folder: Path) -> list[Path]:
    """One TSV per run in ``folder``: ``query_id`` and one column per metric (``<run name>.tsv``)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for res in results:
        path = folder / f"{res.run_name.replace('/', '_')}.tsv"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\t".join(["query_id", *res.labels]) + "\n")
            for qid, row in zip(res.per_query.query_ids.tolist(), res.per_query.values.tolist()):
                fh.write("\t".join([str(qid), *(f"{v:.6g}" for v in row)]) + "\n")
        written.append(path)
    return written


def print_runs(results: Sequence[EvaluationResult], tags: dict[str, str], fmt: str, echo: Any, lang: str = "en"
               ) -> None:
    """One table of every run: the means of each metric and the never-silent counts (its prose in ``lang``); a run's
    TREC tag beside its name where they differ."""
    names = [r.run_name for r in results]
    if fmt == "json":
        from rankscope.report.json_report import json_ready

        echo(json.dumps(json_ready([with_tag(r.to_dict(per_query=False), tags) for r in results]),
                        ensure_ascii=False, indent=2, allow_nan=False))
        return
    labels = list(results[0].labels)
    if fmt == "csv":
        import csv
        import sys

        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["run", *labels, *COUNTS, f"judged@{JUDGED_K}", "tag"])
        for name, r in zip(names, results):
            w.writerow([name, *(f"{v:.6g}" for v in r.mean().values()), *(getattr(r.queries, c) for c in COUNTS),
                        _judged(r, "{:.6g}"), tags.get(name, "")])
        return
    from rich.console import Console
    from rich.table import Table

    from rankscope.choices import term
    from rankscope.cli.messages import print_lines

    n = len(results)
    table = Table(title=ngettext("{n} run", "{n} runs", n).text(lang), title_justify="left")
    table.add_column(_("run").text(lang), no_wrap=True)
    # a count that is 0 for every run is said once under the table, so that the table fits a terminal
    shown = [c for c in COUNTS if c == "evaluated" or any(getattr(r.queries, c) for r in results)]
    zero = [gettext(COUNT_HEADS[c], lang) for c in COUNTS if c not in shown]
    for label in labels:
        table.add_column(label, justify="right", no_wrap=True)
    for c in shown:
        table.add_column(gettext(COUNT_HEADS[c], lang), justify="right")
    table.add_column(f"judged@{JUDGED_K}", justify="right", no_wrap=True)
    for name, r in zip(names, results):
        cell = f"{name}\n{_('(TREC tag {tag})', tag=tags[name]).text(lang)}" if name in tags else name  # the tag below
        table.add_row(cell, *(f"{v:.4f}" for v in r.mean().values()), *(str(getattr(r.queries, c)) for c in shown),
                      _judged(r, "{:.3f}"))
    from rankscope.report.fit import fit

    Console().print(fit(table))
    lines = [_("{counts}: 0 for every run", counts=Items(tuple(zero))).text(lang)] if zero else []
    print_lines([*lines, _("policies: missing={missing}; 'missing' = qrels queries absent from the run, 'not in "
                           "qrels' = run queries without judgments",
                           missing=term(results[0].policies.missing, lang, "missing")).text(lang)],
                lang)


def with_tag(data: dict[str, Any], tags: dict[str, str]) -> dict[str, Any]:
    """A result's JSON with its run's TREC tag (``"tag"``) where that differs from its name."""
    tag = tags.get(data["run"])
    return {**data, "tag": tag} if tag else data


def _judged(result: EvaluationResult, fmt: str) -> str:
    """judged@k of ``result`` formatted, or ``–`` when the run retrieved nothing."""
    mean = result.judged.mean if result.judged is not None else None
    return "–" if mean is None else fmt.format(mean)


def evaluate_command_many(
    qrels: Path | None, runs: Sequence[Path | str], metric: list[str] | None, relevance_level: int, missing: str,
    depth: int | None, score_precision: str, fmt: str, memory_limit: str | None, block_rows: int | None,
    engine: str, address: str | None, per_query_dir: Path | None, unjudged: str = "keep",
    provenance: Path | None = None, lang: str = "en",
) -> None:
    """What ``rankscope evaluate`` does with several runs, ``--per-query-dir`` or ``--engine ray``."""
    import typer

    from rankscope.engine import Evaluator
    from rankscope.engine.policies import Policies

    if qrels is None:
        raise InvalidParameterError(_("give --qrels"))
    paths = expand_runs(runs)
    for p in paths:
        if str(p).startswith("-"):
            raise InvalidParameterError(_("unknown option {option}", option=str(p)))
    from rankscope.cli.judgments import read_judgments, result_lines
    from rankscope.cli.messages import float32_notices, print_lines

    judgments, __, source_note = read_judgments(qrels, provenance, metrics=metric)
    if source_note:
        print_lines([source_note], lang, err=True)
    policies = Policies.of("evaluate", relevance_level=relevance_level, missing=missing, depth=depth,
                           score_precision=score_precision, unjudged=unjudged)
    ev = Evaluator(judgments, metric or None, policies=policies)  # type: ignore[arg-type]
    results, tags = named(evaluate_runs(ev, paths, memory_limit=memory_limit, block_rows=block_rows, engine=engine,
                                        address=address), paths)
    print_runs(results, tags, fmt, typer.echo, lang)
    lines = []
    if per_query_dir is not None:
        written = write_per_query(results, per_query_dir)
        lines.append(ngettext("per-query values of {n} run written to {folder}",
                              "per-query values of {n} runs written to {folder}", len(written),
                              folder=per_query_dir).text(lang))
    lines += float32_notices(results, lang)
    for r in results:  # ids that never match, mostly unjudged, model labels, condensed lists
        lines += result_lines(r, lang)[1]
    print_lines(lines, lang, err=True)  # one line each in English, wrapped in Chinese
