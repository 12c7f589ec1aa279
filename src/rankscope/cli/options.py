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

from rankscope.choices import Correction, Lang, MaxDropTest, Missing, PairedTest, ScorePrecision

__all__ = ["PairedTest", "Missing", "Correction", "Lang", "QrelsFile", "RelevanceLevel", "MissingPolicy", "Depth",
           "ScorePrecisionOption", "Permutations", "MaxPermutations", "Plugins", "MaxDropTest", "MemoryLimit",
           "BlockRows", "Engine", "Address", "PerQueryDir"]


QrelsFile = Annotated[Path, typer.Option("--qrels", help="qrels file (TREC, JSON, CSV/TSV, Parquet, BEIR)")]
RelevanceLevel = Annotated[int, typer.Option("--relevance-level", "-l", help="minimum relevant grade")]
MissingPolicy = Annotated[Missing, typer.Option("--missing", help="queries absent from a run: zero or ignore")]
ScorePrecisionOption = Annotated[
    ScorePrecision,
    typer.Option("--score-precision", help="rank by scores rounded to float32 (trec_eval's rule) or by full float64"),
]
Depth = Annotated[Optional[int], typer.Option("--depth", "-M", help="cut rankings at N documents")]
Permutations = Annotated[int, typer.Option("--permutations", help="randomization test permutations")]
MaxPermutations = Annotated[
    Optional[int],
    typer.Option("--max-permutations", help="redraw up to this many while a verdict is within Monte-Carlo error of "
                 "alpha (default: 16 x --permutations)"),
]
Plugins = Annotated[
    Optional[list[str]], typer.Option("--plugin", help="import this module first (it may register custom metrics)")
]
MemoryLimit = Annotated[
    Optional[str],
    typer.Option("--memory-limit", help="score run files (TREC, Parquet, Arrow) in blocks of whole queries sized to "
                 "stay near this much memory: 1GiB (default), 512MB, 4G"),
]
BlockRows = Annotated[
    Optional[int], typer.Option("--block-rows", min=1, help="rows per block of a streamed run file (instead of "
                                "--memory-limit)"),
]
Engine = Annotated[
    str, typer.Option("--engine", help="local (this machine) or ray (a Ray cluster: pip install 'rankscope[ray]')"),
]
Address = Annotated[
    Optional[str], typer.Option("--address", help="Ray cluster to use with --engine ray: auto, ray://host:10001"),
]
PerQueryDir = Annotated[
    Optional[Path], typer.Option("--per-query-dir", help="write one per-query TSV per run into this folder"),
]
