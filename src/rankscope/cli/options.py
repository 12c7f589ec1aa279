"""Option types shared by the evaluation commands (``evaluate``, ``compare``, ``check``, ``power``, ``testset``).

One definition per option, so that every command spells it, documents it and
parses it the same way; a command uses one as ``depth: Depth = None``.  The
choices (tests, corrections, languages, policies) are the enums declared once
in :mod:`rankscope.choices`, which the library and the service use too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from rankscope.choices import Correction, Lang, MaxDropTest, Missing, PairedTest, ScorePrecision, Unjudged

__all__ = ["PairedTest", "Missing", "Correction", "Lang", "QrelsFile", "RelevanceLevel", "MissingPolicy", "Depth",
           "ScorePrecisionOption", "Permutations", "MaxPermutations", "Plugins", "MaxDropTest", "Unjudged",
           "UnjudgedOption", "ProvenanceFile", "RunColumns", "run_reader_options", "ReportFiles", "ScenarioOption",
           "LangOption", "MemoryLimit", "BlockRows", "Engine", "Address", "PerQueryDir"]


QrelsFile = Annotated[
    Path, typer.Option("--qrels", metavar="FILE", help="qrels file (TREC, JSON, CSV/TSV, Parquet, BEIR)")
]
RelevanceLevel = Annotated[
    int, typer.Option("--relevance-level", "-l", metavar="N", help="minimum grade that counts as relevant")
]
MissingPolicy = Annotated[Missing, typer.Option("--missing", help="queries absent from a run: zero or ignore")]
ScorePrecisionOption = Annotated[
    ScorePrecision,
    typer.Option("--score-precision", help="rank by scores rounded to float32 (trec_eval's rule) or by full float64"),
]
Depth = Annotated[
    Optional[int], typer.Option("--depth", "-M", metavar="N", show_default="no cut", help="cut rankings at N documents")
]
UnjudgedOption = Annotated[
    Unjudged,
    typer.Option("--unjudged", help="unjudged documents: keep (non-relevant, ranks kept) or condense (removed before "
                 "ranking: Sakai's condensed lists, trec_eval -J; see docs/conventions.md)"),
]
ProvenanceFile = Annotated[
    Optional[Path],
    typer.Option("--provenance", metavar="FILE", show_default="QRELS.provenance.jsonl when it exists",
                 help="provenance sidecar of the qrels (human or model label per judgment): each run's share of "
                 "model labels in its top 10 is reported"),
]
Permutations = Annotated[
    int, typer.Option("--permutations", metavar="N", help="permutations of the randomization and Tukey HSD tests")
]
MaxPermutations = Annotated[
    Optional[int],
    typer.Option("--max-permutations", metavar="N", show_default="16 x --permutations",
                 help="redraw up to this many while a verdict is within Monte-Carlo error of alpha"),
]
Plugins = Annotated[
    Optional[list[str]],
    typer.Option("--plugin", metavar="MODULE", show_default="none",
                 help="import this module first (it may register custom metrics), repeatable"),
]
MemoryLimit = Annotated[
    Optional[str],
    typer.Option("--memory-limit", metavar="SIZE", show_default="1GiB",
                 help="score run files (TREC, Parquet, Arrow) in blocks of whole queries sized to stay near this much "
                 "memory: 1GiB, 512MB, 4G"),
]
BlockRows = Annotated[
    Optional[int],
    typer.Option("--block-rows", min=1, metavar="N", show_default="from --memory-limit",
                 help="rows per block of a streamed run file (instead of --memory-limit)"),
]
Engine = Annotated[
    str,
    typer.Option("--engine", metavar="local|ray",
                 help="local (this machine) or ray (a Ray cluster: pip install 'rankscope\\[ray]')"),
]
Address = Annotated[
    Optional[str],
    typer.Option("--address", metavar="ADDRESS", show_default="a new local Ray",
                 help="Ray cluster to use with --engine ray: auto, ray://host:10001"),
]
PerQueryDir = Annotated[
    Optional[Path],
    typer.Option("--per-query-dir", metavar="DIR", show_default="none",
                 help="write one per-query TSV per run into this folder"),
]
RunColumns = Annotated[
    Optional[str],
    typer.Option("--columns", metavar="NAMES",
                 show_default="sniffed: a third column holding 1..n down each query is a rank, a decreasing one a "
                              "score",
                 help="the columns of a header-less run file, e.g. qid,docid,rank or qid,docid,score"),
]


def run_reader_options(columns: str | None) -> dict[str, str]:
    """The ``read_run`` options a command passes for ``--columns`` (none when it is not given)."""
    return {} if columns is None else {"columns": columns}
ReportFiles = Annotated[
    Optional[list[Path]],
    typer.Option("--report", metavar="FILE", show_default="none",
                 help="write a report, repeatable; the format follows the extension: .html, .md, .json or .tex"),
]
ScenarioOption = Annotated[
    Optional[str],
    typer.Option("--scenario", metavar="NAME", show_default="none",
                 help="check the means against a scenario's benchmark figures: faq, document_qa, academic_search, "
                      "enterprise_kb, production_monitoring"),
]
LangOption = Annotated[
    Optional[Lang],
    typer.Option("--lang", show_default="RANKSCOPE_LANG, else zh under a zh_* locale, else en",
                 help="language of the messages, verdict, advice and reports (errors too)"),
]
