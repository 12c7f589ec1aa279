"""Which queries a verdict rests on: counts of what each run lacks, turned into warnings for every output.

A comparison or a gate is computed on the queries of the qrels (``missing="zero"``:
a query a run did not answer scores 0) or on the queries every run answered
(``missing="ignore"``).  Either way three things change what is measured and are
counted per run (:class:`~rankscope.engine.prepare.PolicyCounts`):

- queries of the qrels the run has no ranking for (``missing_from_run``);
- queries the run ranks that the qrels do not judge (``not_in_qrels``; never evaluated);
- evaluated queries with no document judged relevant at the relevance level
  (``no_relevant``): every run scores 0 on them, so they are not failures of a system.

:func:`coverage_warnings` turns the counts into :class:`DataWarning` values; their
text comes from ``messages/<lang>.json`` (``warning.*`` keys), so the terminal, JSON,
Markdown, HTML, LaTeX, the gate and the service all say the same thing.

>>> w = DataWarning("missing_zero", 20, 50, "bm25")
>>> w.text()
'bm25 has no ranking for 20 of the 50 qrels queries: they are scored 0 (missing=zero), which can change the conclusion.'
>>> print(DataWarning("no_relevant", 3, 50, level=2).text("zh"))
50个查询中有3个在相关性阈值2下没有任何相关文档：大多数指标下所有运行在这些查询上的得分都是0，它们不是某个系统的失败。
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rankscope.interpret.i18n import message

__all__ = ["DataWarning", "coverage_warnings", "counts_dict"]


@dataclass(frozen=True)
class DataWarning:
    """A count of queries that changes what is measured: ``count`` of ``total``, for ``system`` (or all)."""

    kind: str
    count: int
    total: int
    system: str | None = None
    level: int | None = None

    def text(self, lang: str = "en") -> str:
        """The warning as one sentence in ``lang``."""
        return message(f"warning.{self.kind}", lang, system=self.system or "", count=self.count, total=self.total,
                       level=self.level)

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        """JSON-ready: the fields and the sentence (``message``)."""
        return {"kind": self.kind, "system": self.system, "count": self.count, "total": self.total,
                "relevance_level": self.level, "message": self.text(lang)}


def counts_dict(counts: Any) -> dict[str, int]:
    """The query counts of a :class:`~rankscope.engine.prepare.PolicyCounts` as a dict."""
    return {"evaluated": int(counts.evaluated), "missing_from_run": int(counts.missing_from_run),
            "not_in_qrels": int(counts.not_in_qrels), "no_relevant": int(getattr(counts, "no_relevant", 0))}


def coverage_warnings(
    counts: Mapping[str, Any],
    *,
    missing: str,
    relevance_level: int,
    compared: int,
    no_relevant: int | None = None,
) -> list[DataWarning]:
    """Warnings for the per-system ``counts`` (PolicyCounts) of a verdict computed on ``compared`` queries.

    ``no_relevant`` is the number of compared queries without a relevant judgment (when
    known); otherwise the largest per-system count is used.
    """
    out: list[DataWarning] = []
    for system, c in counts.items():
        n_qrels = c.evaluated + (c.missing_from_run if missing == "ignore" else 0)
        if c.missing_from_run:
            kind = "missing_zero" if missing == "zero" else "missing_ignore"
            out.append(DataWarning(kind, int(c.missing_from_run), int(n_qrels), system))
    for system, c in counts.items():
        if c.not_in_qrels:
            out.append(DataWarning("not_in_qrels", int(c.not_in_qrels), int(c.not_in_qrels), system))
    if missing == "ignore" and any(c.missing_from_run for c in counts.values()) and len(counts) > 1:
        first = next(iter(counts.values()))
        out.append(DataWarning("intersection", compared, int(first.evaluated + first.missing_from_run)))
    nr = no_relevant if no_relevant is not None else max((getattr(c, "no_relevant", 0) for c in counts.values()),
                                                         default=0)
    if nr:
        out.append(DataWarning("no_relevant", int(nr), compared, level=relevance_level))
    return out
