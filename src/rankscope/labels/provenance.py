"""Labels with their origin: who or what gave each grade, and combining human and model labels.

:class:`Labels` is a columnar table, one row per (query, document):

=============  ==========================================================
``query_id``   the query
``doc_id``     the document
``grade``      the integer grade; null for a judgment that failed
``source``     ``"human"`` or ``"model"``
``model``      the model's name (null for a human label)
``prompt``     the prompt id, e.g. ``graded-1/en`` (null for a human label)
``error``      why a model judgment failed (null otherwise)
``annotator``  who gave a human label, when known (the dashboard's judging view
               records it; several names, comma-separated, for a grade merged
               from several annotators); null otherwise
``reply``      the model's raw reply (the last one, for a failure too)
``time``       when the answer was made, ISO 8601 UTC (``2025-01-31T12:00:00Z``);
               for a label served from the cache, when the cached answer was made
``endpoint``   the endpoint's base URL (without any user name or password)
``prompt_hash`` SHA-256 of the prompt's texts and request parameters
               (:attr:`~rankscope.labels.prompts.Prompt.hash`)
``tokens_in``  input and output tokens the answer cost, as the endpoint reported
``tokens_out`` them (retries included)
``cached``     true when this run took the answer from the cache, false when it
               was asked now
``blind``      for a human label: true when the person graded without seeing a
               pre-label, false when a pre-label was shown (the dashboard's
               judging view records what it showed; a grade merged from several
               annotators is blind only when every grade in it is); null when
               unknown or for a model label
=============  ==========================================================

Every column but the first three may be null; files written before a column
existed read with nulls there, and the columns are carried unchanged through
:func:`combine` and :meth:`Labels.write`.

On disk (:meth:`Labels.write` / :func:`read_labels`) the grades go to an ordinary
TREC qrels file (``query 0 doc grade``: failures are left out, so every tool
reads it) and the provenance to a JSON Lines sidecar beside it,
``<qrels>.provenance.jsonl``, one record a row including the failures.  A qrels
file without a sidecar is read as human labels.

:func:`combine` merges human and model labels: where both judged a document,
the human grade is kept (and the number of such overrides, and how many of
them disagreed, is counted).

>>> human = Labels.from_qrels(Qrels.from_dict({"q1": {"d1": 2}}))
>>> model = Labels.from_records([Label("q1", "d1", 0, "model", "m", "graded-1/en"),
...                              Label("q1", "d2", 1, "model", "m", "graded-1/en")])
>>> both = combine(human, model)
>>> both.labels.qrels.to_dict(), both.overridden, both.disagreements
({'q1': {'d1': 2, 'd2': 1}}, 1, 1)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data.qrels import Qrels
from rankscope.errors import ParseError, RankscopeError
from rankscope.i18n import _

__all__ = ["SOURCES", "Combined", "Label", "Labels", "combine", "read_labels", "sidecar_path"]

SOURCES = ("human", "model")
SCHEMA = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()), ("grade", pa.int64()),
                    ("source", pa.string()), ("model", pa.string()), ("prompt", pa.string()),
                    ("error", pa.string()), ("annotator", pa.string()), ("reply", pa.string()),
                    ("time", pa.string()), ("endpoint", pa.string()), ("prompt_hash", pa.string()),
                    ("tokens_in", pa.int64()), ("tokens_out", pa.int64()), ("cached", pa.bool_()),
                    ("blind", pa.bool_())])
_STRINGS = ("model", "prompt", "error", "annotator", "reply", "time", "endpoint", "prompt_hash")
_INTS = ("tokens_in", "tokens_out")
_BOOLS = ("cached", "blind")
KEYS = ["query_id", "doc_id"]


@dataclass(frozen=True)
class Label:
    """One label (a row of :class:`Labels`)."""

    query_id: str
    doc_id: str
    grade: int | None
    source: str = "human"
    model: str | None = None
    prompt: str | None = None
    error: str | None = None
    annotator: str | None = None
    reply: str | None = None
    time: str | None = None
    endpoint: str | None = None
    prompt_hash: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    cached: bool | None = None
    blind: bool | None = None


def sidecar_path(qrels_path: str | Path) -> Path:
    """The provenance file of a qrels file: ``judged.qrels`` -> ``judged.qrels.provenance.jsonl``.

    >>> sidecar_path("out/judged.qrels").as_posix()
    'out/judged.qrels.provenance.jsonl'
    """
    p = Path(qrels_path)
    return p.with_name(p.name + ".provenance.jsonl")


class Labels:
    """A table of labels with provenance (see the module docstring); rows are unique per (query, doc)."""

    def __init__(self, table: pa.Table) -> None:
        for name in SCHEMA.names:  # a table of an earlier layout: the newer columns are null
            if name not in table.column_names:
                table = table.append_column(name, pa.nulls(table.num_rows, SCHEMA.field(name).type))
        self.table = table.select(SCHEMA.names).cast(SCHEMA)
        keys = pc.binary_join_element_wise(self.table["query_id"], self.table["doc_id"], "\x00")
        if pc.count_distinct(keys).as_py() != len(keys):
            counts = pc.value_counts(keys)
            dup = counts.filter(pc.greater(counts.field("counts"), 1))[0]["values"].as_py().split("\x00")
            raise RankscopeError(_("labels: (query {query!r}, doc {doc!r}) is labelled twice", query=dup[0],
                                   doc=dup[1]))
        bad = pc.invert(pc.is_in(self.table["source"], value_set=pa.array(SOURCES)))
        if pc.any(bad).as_py():
            src = self.table["source"].filter(bad)[0].as_py()
            raise RankscopeError(_("labels: source must be 'human' or 'model', got {value!r}", value=src))

    def __len__(self) -> int:
        return self.table.num_rows

    def __repr__(self) -> str:
        return f"Labels({len(self)} rows: {self.counts()})"

    @classmethod
    def from_records(cls, labels: Iterable[Label]) -> Labels:
        """Build from :class:`Label` records."""
        rows = [asdict(lab) for lab in labels]
        return cls(pa.Table.from_pylist(rows, schema=SCHEMA))

    @classmethod
    def from_qrels(cls, qrels: Qrels, source: str = "human", model: str | None = None,
                   prompt: str | None = None) -> Labels:
        """Every judgment of ``qrels`` as a label of ``source``."""
        t = qrels.to_arrow()
        n = t.num_rows
        return cls(pa.table({
            "query_id": t["query_id"], "doc_id": t["doc_id"], "grade": t["relevance"],
            "source": pa.array([source] * n, pa.string()), "model": pa.array([model] * n, pa.string()),
            "prompt": pa.array([prompt] * n, pa.string()),
        }))

    # -- views -------------------------------------------------------------------------------------
    @property
    def qrels(self) -> Qrels:
        """The successful labels as :class:`~rankscope.data.Qrels`."""
        ok = self.table.filter(pc.is_valid(self.table["grade"]))
        return Qrels(ok["query_id"], ok["doc_id"], ok["grade"].to_numpy())

    def model_mask(self) -> np.ndarray:
        """True for each judgment of :attr:`qrels` (same order) that a model gave."""
        ok = self.table.filter(pc.is_valid(self.table["grade"]))
        return pc.equal(ok["source"], "model").to_numpy(zero_copy_only=False).astype(bool)

    def of_source(self, source: str) -> Labels:
        """The labels (and failures) of one source, ``"human"`` or ``"model"``."""
        return Labels(self.table.filter(pc.equal(self.table["source"], source)))

    def failures(self) -> list[Label]:
        """The model judgments that failed (no grade), with their error."""
        bad = self.table.filter(pc.is_null(self.table["grade"]))
        return [Label(**row) for row in bad.to_pylist()]

    def counts(self) -> dict[str, int]:
        """``{"human": n, "model": n, "failed": n}``."""
        ok = pc.is_valid(self.table["grade"])
        src = self.table["source"]
        return {
            "human": int(pc.sum(pc.and_(ok, pc.equal(src, "human"))).as_py() or 0),
            "model": int(pc.sum(pc.and_(ok, pc.equal(src, "model"))).as_py() or 0),
            "failed": int(pc.sum(pc.invert(ok)).as_py() or 0),
        }

    def models(self) -> list[str]:
        """The distinct ``model / prompt`` pairs that produced labels, sorted."""
        t = self.table.filter(pc.equal(self.table["source"], "model"))
        pairs = {f"{m} / {p}" for m, p in zip(t["model"].to_pylist(), t["prompt"].to_pylist())}
        return sorted(pairs)

    def is_model(self) -> pa.Table:
        """``(query_id, doc_id, model)``: one row per successful label, ``model`` true for a model label."""
        ok = self.table.filter(pc.is_valid(self.table["grade"]))
        return pa.table({"query_id": ok["query_id"], "doc_id": ok["doc_id"],
                         "model": pc.equal(ok["source"], "model")})

    # -- files -------------------------------------------------------------------------------------
    def write(self, qrels_path: str | Path) -> Path:
        """Write the TREC qrels file (successful labels) and its provenance sidecar; returns the sidecar path."""
        from rankscope.io import write_trec_qrels

        t = self.table.sort_by([("query_id", "ascending"), ("doc_id", "ascending")])
        write_trec_qrels(Labels(t).qrels, qrels_path)
        side = sidecar_path(qrels_path)
        with open(side, "w", encoding="utf-8") as fh:
            for row in t.to_pylist():
                fh.write(json.dumps({k: v for k, v in row.items() if v is not None or k == "grade"},
                                    ensure_ascii=False) + "\n")
        return side


def _read_sidecar(path: Path) -> pa.Table:
    rows: list[dict[str, Any]] = []
    with open(path, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ParseError(_("invalid JSON: {reason}", reason=exc.msg), source=str(path), line=line_no) from None
            if not isinstance(rec, dict) or not isinstance(rec.get("query_id"), str) \
                    or not isinstance(rec.get("doc_id"), str):
                raise ParseError(_("expected an object with string 'query_id' and 'doc_id'"),
                                 source=str(path),
                                 line=line_no)
            grade = rec.get("grade")
            if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int)):
                raise ParseError(_("grade must be an integer or null, got {value!r}", value=grade),
                                 source=str(path),
                                 line=line_no)
            if rec.get("source", "human") not in SOURCES:
                raise ParseError(_("source must be 'human' or 'model', got {value!r}", value=rec.get("source")),
                                 source=str(path),
                                 line=line_no)
            for key in _STRINGS:
                if rec.get(key) is not None and not isinstance(rec[key], str):
                    raise ParseError(_("{name} must be a string or null, got {value!r}", name=key, value=rec[key]),
                                     source=str(path),
                                     line=line_no)
            for key in _INTS:
                v = rec.get(key)
                if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                    raise ParseError(_("{name} must be an integer >= 0 or null, got {value!r}", name=key, value=v),
                                     source=str(path),
                                     line=line_no)
            for key in _BOOLS:
                if rec.get(key) is not None and not isinstance(rec[key], bool):
                    raise ParseError(_("{name} must be true, false or null, got {value!r}", name=key, value=rec[key]),
                                     source=str(path),
                                     line=line_no)
            rows.append({k: rec.get(k, "human" if k == "source" else None) for k in SCHEMA.names})
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def read_labels(qrels_path: str | Path, *, source: str = "human", sidecar: str | Path | None = None) -> Labels:
    """Read a qrels file (any format :func:`rankscope.io.read_qrels` reads) and its provenance sidecar.

    The sidecar is ``sidecar`` when given (it must exist), else :func:`sidecar_path` of the
    qrels when that file exists.  Without a sidecar every judgment is a label of ``source``.
    With one, the sidecar must describe exactly the qrels' judgments (same grades) plus any
    failures; a mismatch raises :class:`~rankscope.errors.ParseError` (the two files were
    edited separately).
    """
    from rankscope.io import read_qrels

    qrels = read_qrels(qrels_path)
    side = sidecar_path(qrels_path) if sidecar is None else Path(sidecar)
    if sidecar is not None and not side.exists():
        raise ParseError(_("no such provenance file"), source=str(side))
    if not side.exists():
        return Labels.from_qrels(qrels, source=source)
    prov = _read_sidecar(side)
    graded = prov.filter(pc.is_valid(prov["grade"]))
    q = qrels.to_arrow()
    joined = q.join(graded.select([*KEYS, "grade"]), keys=KEYS, join_type="full outer", use_threads=False)
    rel, grade = joined["relevance"], joined["grade"]
    mismatch = pc.or_kleene(pc.is_null(rel), pc.is_null(grade))
    mismatch = pc.or_(pc.fill_null(mismatch, True), pc.fill_null(pc.not_equal(rel, grade), True))
    if pc.any(mismatch).as_py():
        row = joined.filter(mismatch).to_pylist()[0]
        what = (_("is in the qrels but not in the provenance file") if row["grade"] is None else
                _("is in the provenance file but not in the qrels") if row["relevance"] is None else
                _("has grade {qrels} in the qrels and {provenance} in the provenance file", qrels=row["relevance"],
                  provenance=row["grade"]))
        raise ParseError(_("(query {query!r}, doc {doc!r}) {what}; the two files must be written together "
                           "(rankscope judge / pool --combined-out)", query=row["query_id"], doc=row["doc_id"],
                           what=what),
                         source=str(side))
    return Labels(prov)


@dataclass(frozen=True)
class Combined:
    """The outcome of :func:`combine`: the merged labels, how many model labels a human label replaced
    (``overridden``) and how many of those had a different grade (``disagreements``)."""

    labels: Labels
    overridden: int
    disagreements: int


def _anti(table: pa.Table, other: pa.Table) -> pa.Table:
    """The rows of ``table`` whose (query, doc) is not in ``other``."""
    if other.num_rows == 0 or table.num_rows == 0:
        return table
    mark = other.select(KEYS).append_column("_hit", pa.array(np.ones(other.num_rows, dtype=bool)))
    joined = table.join(mark, keys=KEYS, join_type="left outer", use_threads=False)
    return joined.filter(pc.is_null(joined["_hit"])).select(SCHEMA.names)


def combine(human: Labels | Qrels, model: Labels | Qrels) -> Combined:
    """Human and model labels together; where both judged a (query, doc), the human label wins.

    A bare :class:`Qrels` counts as human (first argument) or model (second) labels.
    A failed judgment is kept (as a failure) only where neither set has a grade.
    """
    h = human if isinstance(human, Labels) else Labels.from_qrels(human, "human")
    m = model if isinstance(model, Labels) else Labels.from_qrels(model, "model")
    h_ok = h.table.filter(pc.is_valid(h.table["grade"]))
    m_all_ok = m.table.filter(pc.is_valid(m.table["grade"]))
    m_ok = _anti(m_all_ok, h_ok)
    graded = pa.concat_tables([h_ok, m_ok])
    failed_m = m.table.filter(pc.is_null(m.table["grade"]))
    failed_h = _anti(h.table.filter(pc.is_null(h.table["grade"])), failed_m)
    failed = _anti(pa.concat_tables([failed_m, failed_h]), graded)

    hg = h_ok.select([*KEYS, "grade"]).rename_columns([*KEYS, "human_grade"])
    both = m_all_ok.join(hg, keys=KEYS, join_type="inner", use_threads=False)
    overridden = both.num_rows
    disagreements = int(pc.sum(pc.not_equal(both["grade"], both["human_grade"])).as_py() or 0)
    return Combined(Labels(pa.concat_tables([graded, failed])), overridden, disagreements)
