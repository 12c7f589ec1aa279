"""Retrieved ids that occur nowhere in the judgments or the corpus.

Such ids silently score as non-relevant.  When most retrieved ids are unknown
the cause is nearly always an id mismatch — chunk ids where the judgments name
documents (``doc7#3`` vs ``doc7``), a prefix, a different id field — not a bad
retriever.  :func:`unknown_ids` counts them so that the result can say so.

Known ids are the corpus ids when the test set has a corpus; without a corpus
they are the ids that occur anywhere in the qrels (any query), which is a weaker
check: with sparse judgments many genuine but unjudged documents are
"unknown" too, so only a very high fraction is suspicious.

>>> from rankscope.data import Qrels, Run
>>> u = unknown_ids(Run.from_ranked_lists({"q": ["d1#0", "d1#1", "d2"]}), Qrels.from_dict({"q": {"d1": 1, "d2": 1}}))
>>> u.unknown, u.retrieved, round(u.fraction, 2)
(2, 3, 0.67)
>>> print(u.message())
67% of retrieved ids (2 of 3) are unknown (in no qrels) — are chunk ids mapped to document ids? e.g. 'd1#0', 'd1#1'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run

__all__ = ["UnknownIds", "unknown_ids"]


@dataclass(frozen=True)
class UnknownIds:
    """How many retrieved rows name an id unknown to the qrels / corpus.

    ``retrieved``: rows (query, id) in the run; ``unknown``: rows whose id is
    unknown; ``distinct``: distinct unknown ids; ``against``: ``"corpus"`` or
    ``"qrels"``; ``examples``: up to 5 unknown ids (sorted).
    """

    retrieved: int = 0
    unknown: int = 0
    distinct: int = 0
    against: str = "qrels"
    examples: tuple[str, ...] = field(default=())

    @property
    def fraction(self) -> float:
        """``unknown / retrieved`` (0 for an empty run)."""
        return self.unknown / self.retrieved if self.retrieved else 0.0

    @property
    def suspicious(self) -> bool:
        """True when the unknown ids likely mean an id mismatch.

        Against a corpus: more than 1% of rows.  Against qrels only: every row
        (a retriever whose ids match the judgments retrieves at least some
        judged documents).
        """
        if self.against == "corpus":
            return self.fraction > 0.01
        return self.retrieved > 0 and self.unknown == self.retrieved

    def message(self) -> str:
        """A one-line explanation (empty when nothing is unknown)."""
        if not self.unknown:
            return ""
        where = "not in the corpus" if self.against == "corpus" else "in no qrels"
        eg = ", ".join(repr(e) for e in self.examples[:3])
        return (
            f"{self.fraction:.0%} of retrieved ids ({self.unknown} of {self.retrieved}) are unknown ({where}) — "
            f"are chunk ids mapped to document ids? e.g. {eg}"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"retrieved": self.retrieved, "unknown": self.unknown, "fraction": self.fraction,
                "distinct": self.distinct, "against": self.against, "examples": list(self.examples),
                "suspicious": self.suspicious}


def unknown_ids(run: Run, qrels: Qrels, corpus_ids: Iterable[str] | None = None) -> UnknownIds:
    """Count the run rows whose id is in neither the corpus (if given) nor the qrels."""
    if len(run) == 0:
        return UnknownIds(against="corpus" if corpus_ids is not None else "qrels")
    known = qrels.doc_ids
    against = "qrels"
    if corpus_ids is not None:
        known = pa.concat_arrays([known.cast(pa.string()),
                                  pa.array(list(corpus_ids), type=pa.string())])
        against = "corpus"
    dict_known = pc.is_in(run.doc_ids, value_set=known).to_numpy(zero_copy_only=False)
    row_unknown = ~dict_known[run.dcode]
    bad_codes = np.flatnonzero(~dict_known)
    names = sorted(str(x) for x in run.doc_ids.take(pa.array(bad_codes)).to_pylist()) if len(bad_codes) else []
    return UnknownIds(
        retrieved=len(run),
        unknown=int(row_unknown.sum()),
        distinct=len(bad_codes),
        against=against,
        examples=tuple(names[:5]),
    )
