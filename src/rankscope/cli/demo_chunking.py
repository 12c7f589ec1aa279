"""The demo's chunking comparison: which chunk size suits CMRC 2018 (Chinese), judged on answer spans.

The bundled CMRC 2018 set carries the answers' character spans (built from the
SQuAD-style offsets, ``spans.tsv.gz``), so three chunkings of its 848 passages —
fixed windows of 128, 256 and 512 characters — are scored on the same labels:
BM25 is built on each chunking's chunks, every sampled question is run, and
:func:`rankscope.compare_chunkings` reports span recall / precision / IoU, nDCG and
MRR on the derived chunk qrels, the context sent to the model at k = 5 and
precision Ω, with paired t-tests against 256 characters (Holm correction over
all pairs × metrics).  The table is printed and ``chunking.html`` (with the
recall-versus-context plot) and the numbers go to the demo's output folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rankscope.i18n import _, gettext

CHUNKINGS = ("fixed:128", "fixed:256", "fixed:512")
BASELINE = "fixed:256"
K = 5
DATASET = "cmrc2018"
COLUMNS = [("span_recall@5", "span R@5"), ("span_precision@5", "span P@5"), ("span_iou@5", "IoU@5"),
           ("ndcg@5", "nDCG@5"), ("mrr@5", "MRR@5"), ("context_size@5", "context@5"),
           ("span_precision_omega", "P Ω")]


def sample_queries(ids: list[str], n: int | None) -> list[str]:
    """``n`` ids evenly spread over ``ids`` (all of them when ``n`` is None or large enough).

    >>> sample_queries([str(i) for i in range(10)], 4)
    ['0', '3', '6', '9']
    """
    if n is None or n >= len(ids):
        return list(ids)
    import numpy as np

    pick = np.unique(np.linspace(0, len(ids) - 1, n).round().astype(int))
    return [ids[i] for i in pick.tolist()]


def run_chunking_demo(out: Path, *, max_queries: int | None, quick: bool = False, progress: bool = False,
                      lang: str = "zh") -> dict[str, Any]:
    """Run the comparison, print it, write ``chunking.html``; returns the summary kept in ``results.json``."""
    from rankscope.chunking.compare import compare_chunkings
    from rankscope.datasets import load_dataset

    ts = load_dataset(DATASET)
    assert ts.spans is not None
    judged = set(ts.spans.queries)
    ids = [q.id for q in ts.queries if q.id in judged]
    picked = sample_queries(ids, 40 if quick else max_queries)
    if quick:  # the passages of the picked questions and a few others, so the pipeline runs in seconds
        from rankscope.data.testset import TestSet

        spans = ts.spans.subset(picked)
        docs = set(spans.doc_ids) | set(list(ts.corpus or {})[:40])
        ts = TestSet([ts[q] for q in picked], None, {d: t for d, t in (ts.corpus or {}).items() if d in docs},
                     ts.name, spans=spans)
    cc = compare_chunkings(ts, list(CHUNKINGS), "bm25", k=K, baseline=BASELINE, queries=picked, progress=progress)
    print_demo_table(cc, lang)
    report = cc.write_report(out / "chunking.html", "zh")  # the collection's language
    return {"dataset": DATASET, "retriever": "bm25", "k": K, "baseline": BASELINE, "rule": cc.rule,
            "queries": cc.build["queries"], "spans": cc.build["spans"], "report": report.name,
            "table": cc.table(), "significant": cc.significant()}


def print_demo_table(cc: Any, lang: str = "en") -> None:
    """One row per chunking with the means, ▲/▼ where significantly better/worse than the baseline."""
    from rich.console import Console
    from rich.table import Table

    from rankscope.interpret.i18n import setting_text
    from rankscope.report.fit import fit
    from rankscope.report.wrap import print_prose

    table = Table(title=_("Chunking on {dataset} (zh): BM25 per chunking, {queries} questions, {spans} answer spans",
                          dataset=DATASET, queries=cc.build["queries"], spans=cc.build["spans"]).text(lang),
                          title_justify="left")
    heads = [gettext("chunking", lang), gettext("chunks", lang), gettext("cut spans", lang), *(h for __, h in COLUMNS)]
    for i, head in enumerate(heads):
        table.add_column(head, justify="left" if i == 0 else "right")
    marks: dict[tuple[str, str], str] = {}
    for p in cc.comparison.pairs:
        if p.significant:
            hib = cc.comparison.measures[cc.comparison.labels.index(p.metric)].spec.higher_is_better
            marks[(p.b, p.metric)] = "▲" if (p.diff > 0) == hib else "▼"
    for row in cc.table():
        cells = [row["chunking"] + (gettext(" (base)", lang) if row["chunking"] == BASELINE else ""),
                 str(row["chunks"]),
                 str(row["spans_not_in_one_chunk"])]
        for label, __ in COLUMNS:
            value = row[label]
            text = f"{value:.0f}" if label.startswith("context") else f"{value:.3f}"
            cells.append(text + marks.get((row["chunking"], label), ""))
        table.add_row(*cells)
    console = Console()
    console.print(fit(table))
    legend = _("cut spans: answer spans no single chunk holds; chunk qrels for nDCG/MRR by rule {rule}; context@5: "
               "characters in the top 5 chunks; ▲/▼: significantly better/worse than {baseline} ({test}, Holm over "
               "all pairs × metrics, α = 0.05).", rule=cc.rule, baseline=BASELINE,
               test=setting_text("test", cc.comparison.test, lang)).text(lang)
    print_prose(console, legend)
