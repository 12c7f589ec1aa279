"""How much of a run's top k is judged: :class:`JudgedAtK`, and why nothing is when ids do not match.

Every evaluation reports, for its run, judged@k at ``k`` = :data:`~rankscope.choices.JUDGED_K`
(10), read from the judged view of the same join that scores the run
(:meth:`~rankscope.measures.kernel_input.KernelInput.judged_in_top`, the kernel of the
``judged@k`` measure):

- per query, the share of its top k documents that are judged (grade >= 0; a negative
  grade is "pooled but not judged"), ``judged / min(k, retrieved)`` as ir_measures'
  ``Judged@k``; NaN for a query that retrieved nothing (absent from the run);
- ``mean``: the average over the evaluated queries that retrieved something (a query the
  run lacks is counted by ``missing_from_run``, not here);
- ``attainable``: the share of a top k the qrels could judge at all — per query
  ``min(judged documents of the query, top k) / top k``, averaged likewise: about 1 for
  pooled qrels (TREC-style pools judge many documents per query), about 0.1 for sparse
  labels (one or two relevant ids per query, as in MS MARCO or a synthetic test set, where
  an unjudged document is non-relevant by construction);
- ``mostly_unjudged``: ``mean < 0.5 <= attainable`` — the qrels judge enough documents for a
  top k to be mostly judged, yet this run's is not: the scores underestimate the run (a new
  retriever scored against qrels pooled from older systems looks worse than it is);
- with labels that keep their origin (:class:`~rankscope.labels.provenance.Labels`), the
  same share counting model labels only (``model_mean``);
- ``matched``: the run's retrieved documents (at any rank) that have a qrels entry for their
  query.  When it is 0 although the run retrieved documents, every score is 0 because the ids
  do not match; :func:`diagnose_ids` says why it looks so (``mismatch``).

>>> from rankscope import Qrels, Run, evaluate
>>> res = evaluate(Qrels.from_dict({"q1": {"a": 1, "b": 0}}), Run.from_ranked_lists({"q1": ["a", "x", "y", "b"]}))
>>> res.judged.mean, res.judged.attainable, res.judged.mostly_unjudged
(0.5, 0.5, False)
>>> res = evaluate(Qrels.from_dict({"q1": {"d1": 1}}), Run.from_ranked_lists({"q1": ["d1#0", "d1#1"]}))
>>> res.judged.mismatch.cause, res.judged.mismatch.run_doc, res.judged.mismatch.qrels_doc
('chunk', 'd1#0', 'd1')
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.choices import JUDGED_K

if TYPE_CHECKING:
    from rankscope.data import Qrels, Run
    from rankscope.engine.prepared import Prepared

__all__ = ["JUDGED_K", "MOSTLY_UNJUDGED", "CAUSES", "IdMismatch", "JudgedAtK", "TopCounts", "diagnose_ids",
           "judged_at_k", "id_relation"]

MOSTLY_UNJUDGED = 0.5
"""A run whose judged@k is below this is flagged as mostly unjudged."""

CAUSES = ("chunk", "prefix", "queries", "collection")
"""Why no retrieved document is judged: chunk ids against document ids, ids that differ by a prefix,
document ids judged only under other queries, or ids of another collection."""

_SEPARATORS = "#_:-./|@"
_SAMPLE = 2000  # ids looked at to tell a cause (only when nothing matched)


@dataclass(frozen=True, eq=False)
class TopCounts:
    """Per-query counts of the judged view before any condensing (what :func:`~rankscope.engine.prepare.prepare`
    hands to the result): documents in the top ``k``, judged ones, model-labelled ones (None without
    provenance), and ``matched`` retrieved rows (any rank, before the depth cut) with a qrels entry."""

    k: int
    top: np.ndarray
    judged: np.ndarray
    model: np.ndarray | None
    matched: int
    judgeable: np.ndarray | None = None  # min(judged documents of the query in the qrels, top)


@dataclass(frozen=True)
class IdMismatch:
    """An example of ids that do not match: ``query_id``, the run's top document for it (``run_doc``), a
    document the qrels judge for it (``qrels_doc``), and the likely ``cause`` (one of :data:`CAUSES`);
    ``prefix`` is the prefix one side has and the other lacks (cause ``prefix`` or ``chunk``)."""

    cause: str
    query_id: str
    run_doc: str
    qrels_doc: str
    prefix: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"cause": self.cause, "query_id": self.query_id, "run_doc": self.run_doc,
                "qrels_doc": self.qrels_doc, "prefix": self.prefix}


@dataclass(frozen=True, eq=False)
class JudgedAtK:
    """judged@k of one run (see the module doc).

    ``queries``: evaluated queries that retrieved something; ``retrieved``: documents in their
    top ``k``; ``judged`` / ``model``: how many of those are judged / judged by a model (None
    without provenance); ``mean`` / ``model_mean``: the per-query shares averaged over ``queries``
    (None when there is none); ``per_query``: the share of every evaluated query, in the result's
    query order (NaN when it retrieved nothing).
    """

    k: int
    queries: int
    retrieved: int
    judged: int
    mean: float | None
    model: int | None = None
    model_mean: float | None = None
    matched: int = 0
    mismatch: IdMismatch | None = None
    attainable: float | None = None
    per_query: np.ndarray = field(default_factory=lambda: np.empty(0), repr=False)

    @classmethod
    def of(cls, counts: TopCounts) -> JudgedAtK:
        """The summary of the per-query counts of one run."""
        has = counts.top > 0
        share = np.full(len(counts.top), np.nan)
        share[has] = counts.judged[has] / counts.top[has]
        n = int(has.sum())
        model = model_mean = None
        if counts.model is not None:
            model = int(counts.model[has].sum())
            model_mean = float((counts.model[has] / counts.top[has]).mean()) if n else None
        attainable = None
        if counts.judgeable is not None and n:
            attainable = float((counts.judgeable[has] / counts.top[has]).mean())
        return cls(counts.k, n, int(counts.top[has].sum()), int(counts.judged[has].sum()),
                   float(share[has].mean()) if n else None, model, model_mean, int(counts.matched), None,
                   attainable, share)

    @property
    def mostly_unjudged(self) -> bool:
        """Less than half of the top k is judged, on average over the queries that retrieved something, although
        the qrels judge enough documents for at least half of it (``attainable``; sparse labels never warn)."""
        return (self.mean is not None and self.mean < MOSTLY_UNJUDGED
                and (self.attainable is None or self.attainable >= MOSTLY_UNJUDGED))

    @property
    def nothing_judged(self) -> bool:
        """The run retrieved documents, and none of them has a qrels entry for its query."""
        return self.queries > 0 and self.matched == 0

    def to_dict(self, query_ids: Any = None) -> dict[str, Any]:
        """JSON-ready; with ``query_ids`` (the result's), also the per-query shares (null: nothing retrieved)."""
        out: dict[str, Any] = {
            "k": self.k, "queries": self.queries, "retrieved": self.retrieved, "judged": self.judged,
            "unjudged": self.retrieved - self.judged, f"judged@{self.k}": self.mean,
            "model_labels": self.model, f"model@{self.k}": self.model_mean, "matched": self.matched,
            "attainable": self.attainable,
            "mostly_unjudged": self.mostly_unjudged, "nothing_judged": self.nothing_judged,
            "mismatch": None if self.mismatch is None else self.mismatch.to_dict(),
        }
        if query_ids is not None:
            out["per_query"] = {str(q): (None if np.isnan(v) else float(v))
                                for q, v in zip(query_ids, self.per_query.tolist())}
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any], query_ids: Any = None) -> JudgedAtK:
        """Back from :meth:`to_dict` (per-query shares in ``query_ids`` order when both are given)."""
        k = int(d["k"])
        mm = d.get("mismatch")
        per = d.get("per_query")
        share = np.empty(0)
        if per is not None and query_ids is not None:
            share = np.asarray([np.nan if per.get(str(q)) is None else per[str(q)] for q in query_ids], dtype=float)
        return cls(k, int(d["queries"]), int(d["retrieved"]), int(d["judged"]), d.get(f"judged@{k}"),
                   d.get("model_labels"), d.get(f"model@{k}"), int(d.get("matched", 0)),
                   None if mm is None else IdMismatch(**mm), d.get("attainable"), share)

    def __eq__(self, other: object) -> bool:
        """Same counts, shares and example (per-query shares compared with NaN equal to NaN)."""
        return (isinstance(other, JudgedAtK) and self.to_dict() == other.to_dict()
                and np.array_equal(self.per_query, other.per_query, equal_nan=True))

    __hash__ = None  # type: ignore[assignment]

    def with_mismatch(self, mismatch: IdMismatch | None) -> JudgedAtK:
        from dataclasses import replace

        return replace(self, mismatch=mismatch)


# -- why nothing matched ---------------------------------------------------------------------------
def _sample(values: np.ndarray, n: int = _SAMPLE) -> np.ndarray:
    if len(values) <= n:
        return values
    return values[np.linspace(0, len(values) - 1, n).astype(np.int64)]


def _extended(longer: np.ndarray, shorter_sorted: np.ndarray) -> np.ndarray:
    """Per id of ``longer``: the length of the id of ``shorter_sorted`` it starts with, followed by a
    separator and more (``d1#3`` starts with ``d1``), or 0."""
    if not len(longer) or not len(shorter_sorted):
        return np.zeros(len(longer), dtype=np.int64)
    pos = np.searchsorted(shorter_sorted, longer, side="right") - 1
    cand = shorter_sorted[np.maximum(pos, 0)].tolist()
    return np.asarray([len(s) if p >= 0 and len(s) < len(x) and x.startswith(s) and x[len(s)] in _SEPARATORS
                       else 0 for p, s, x in zip(pos.tolist(), cand, longer.tolist())], dtype=np.int64)


def _prefix_of(longer: np.ndarray, shorter: set[str]) -> str:
    """The most common prefix that, stripped from ids of ``longer``, leaves ids of ``shorter`` ('' if none)."""
    found: Counter[str] = Counter()
    for x in _sample(longer, 200).tolist():
        for i in range(1, min(len(x), 64)):
            if x[i:] in shorter:
                found[x[:i]] += 1
                break
    return found.most_common(1)[0][0] if found else ""


def id_relation(a: np.ndarray, b: np.ndarray) -> tuple[str, str] | None:
    """How two sets of ids that never match relate, judged on samples: ``("chunk", "")`` when ids of ``a``
    are ids of ``b`` followed by a separator and more (``d1#3`` for ``d1``), ``("prefix", p)`` when one
    side's ids carry a prefix ``p`` the other lacks, else None.

    >>> id_relation(np.array(["d1#0", "d2#1"], dtype=object), np.array(["d1", "d2"], dtype=object))
    ('chunk', '')
    >>> id_relation(np.array(["msmarco_1", "msmarco_2"], dtype=object), np.array(["1", "2"], dtype=object))
    ('prefix', 'msmarco_')
    >>> id_relation(np.array(["7", "8"], dtype=object), np.array(["doc:7"], dtype=object))
    ('prefix', 'doc:')
    >>> id_relation(np.array(["x"], dtype=object), np.array(["y"], dtype=object)) is None
    True
    """
    a = _sample(np.asarray(a, dtype=object))
    b = _sample(np.asarray(b, dtype=object))
    if _extended(a, np.sort(b)).any():
        return "chunk", ""
    for longer, shorter in ((a, b), (b, a)):
        prefix = _prefix_of(longer, set(shorter.tolist()))
        if prefix:
            return "prefix", prefix
    return None


def judged_at_k(counts: TopCounts, qrels: Qrels, block: tuple[Prepared, Run, np.ndarray] | None) -> JudgedAtK:
    """judged@k of ``counts``; when nothing is judged, explained (:func:`diagnose_ids`) from ``block``
    (a prepared run, the run and its per-query top counts), when one is given."""
    judged = JudgedAtK.of(counts)
    if judged.nothing_judged and block is not None:  # every score is 0 because no id matches: say why
        prepared, run, top = block
        judged = judged.with_mismatch(diagnose_ids(prepared, qrels, run, top))
    return judged


def diagnose_ids(prepared: Prepared, qrels: Qrels, run: Run, top: np.ndarray) -> IdMismatch:
    """Why no document of ``run`` has a qrels entry for its query: one example from each side and the
    likely cause (called only then; looks at samples of the ids)."""
    qi = int(np.flatnonzero(top > 0)[0])  # the first evaluated query that retrieved something
    qid = str(prepared.query_ids[qi])
    assert prepared.ranking is not None
    first = int(prepared.ranking.ranked_rows()[int(np.concatenate(([0], np.cumsum(prepared.ranking.num_ret)))[qi])])
    run_doc = str(run.doc_column().take([first])[0].as_py())
    qpos = int(np.searchsorted(qrels.query_ids, qid))
    rows = np.flatnonzero(qrels.qcode == qpos)
    best = rows[np.argmax(qrels.grades[rows])] if len(rows) else 0
    qrels_doc = str(qrels.doc_column().take([int(best)])[0].as_py())
    run_ids = np.asarray(run.doc_ids.to_pylist() if len(run.doc_ids) <= 4 * _SAMPLE
                         else _sample(np.asarray(run.doc_ids.to_pylist(), dtype=object)), dtype=object)
    qrels_ids = np.asarray(qrels.doc_ids.to_pylist(), dtype=object)
    rel = id_relation(run_ids, qrels_ids)
    if rel is not None:
        return IdMismatch(rel[0], qid, run_doc, qrels_doc, rel[1])
    anywhere = bool((run.doc_lookup(qrels.doc_ids) >= 0).any())
    return IdMismatch("queries" if anywhere else "collection", qid, run_doc, qrels_doc)
