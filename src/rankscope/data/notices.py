"""What a reader decided about an input that changes what is measured: :class:`InputNotice`.

A notice is kept with the data it describes (``Run.notices``), then with every
result computed from it (``EvaluationResult.notices``), and shown in every output:
the terminal summary line, JSON, reports, the gate.  Its sentence is said from the
values (:data:`SENTENCES`), so that it reads the same everywhere and in every language.

>>> n = InputNotice("rank_column", "run.tsv", (("column", 3), ("best", 1)))
>>> n.text()
'run.tsv: column 3 read as rank, 1 = best'
>>> InputNotice.from_dict(n.to_dict()) == n
True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rankscope.i18n import N_, _

__all__ = ["InputNotice", "SENTENCES"]

#: the sentence of each kind of notice (English, said through the catalog)
SENTENCES: dict[str, str] = {
    "rank_column": N_("{source}: column {column} read as rank, {best} = best"),
}


@dataclass(frozen=True)
class InputNotice:
    """A reader's decision about ``source``: ``kind`` (``rank_column``: a 3-column file's third column read as a
    rank) and the values its sentence names."""

    kind: str
    source: str
    values: tuple[tuple[str, Any], ...] = ()

    def text(self, lang: str = "en") -> str:
        """The notice as one sentence in ``lang``."""
        return _(SENTENCES[self.kind], source=self.source, **dict(self.values)).text(lang)

    def to_dict(self, lang: str = "en") -> dict[str, Any]:
        """JSON-ready: kind, source, the values and the sentence (``message``)."""
        return {"kind": self.kind, "source": self.source, **dict(self.values), "message": self.text(lang)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InputNotice:
        """The notice :meth:`to_dict` wrote (its ``message`` is written again from the values)."""
        values = tuple((k, v) for k, v in data.items() if k not in ("kind", "source", "message"))
        return cls(str(data["kind"]), str(data["source"]), values)
