"""Option types shared by the evaluation commands (``evaluate``, ``compare``, ``check``, ``power``, ``testset``).

One definition per option, so that every command spells it, documents it and
parses it the same way; a command uses one as ``depth: Depth = None``.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer


class PairedTest(str, Enum):
    """Paired significance tests of :func:`rankscope.compare` and :func:`rankscope.gate.check`."""

    t = "t"
    wilcoxon = "wilcoxon"
    randomization = "randomization"
    tukey_hsd = "tukey-hsd"


class MaxDropTest(str, Enum):
    """Tests of ``rankscope check --max-drop`` (:data:`rankscope.stats.noninferiority.NON_INFERIORITY_TESTS`).

    ``wilcoxon`` is accepted here only to be refused with the reason (it does not test the mean).
    """

    t = "t"
    randomization = "randomization"
    bootstrap = "bootstrap"
    wilcoxon = "wilcoxon"


class Missing(str, Enum):
    """What a query in the qrels but absent from a run counts as."""

    zero = "zero"
    ignore = "ignore"


QrelsFile = Annotated[Path, typer.Option("--qrels", help="qrels file (TREC, JSON, CSV/TSV, Parquet, BEIR)")]
RelevanceLevel = Annotated[int, typer.Option("--relevance-level", "-l", help="minimum relevant grade")]
MissingPolicy = Annotated[Missing, typer.Option("--missing", help="queries absent from a run: zero or ignore")]
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
