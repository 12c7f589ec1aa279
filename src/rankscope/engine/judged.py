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
  top k to be mostly judged, yet this run's is not: the scores may underestimate the run (a new
  retriever scored against qrels pooled from older systems looks worse than it is); never for
  qrels that list relevant documents only (no grade <= 0: Cranfield, MS MARCO), which call every
  other document non-relevant (``relevant_only``);
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

CAUSES = ("chunk", "prefix", "queries", "elsewhere", "collection")
"""Why no retrieved document is judged: chunk ids against document ids, ids that differ by a prefix (each named
only when folding the chunks or stripping / adding the prefix makes some of the run's pairs judged), document ids
judged only under other queries (most of them), a few document ids judged under other queries (the queries, or two
collections whose ids coincide), or ids of another collection (none is in the qrels)."""

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
    relevant_only: bool = False  # the qrels list relevant documents only: an absent one is non-relevant by them


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
    found: str = ""  # cause "elsewhere": how many of the sampled run document ids the qrels judge, of ``total``
    total: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"cause": self.cause, "query_id": self.query_id, "run_doc": self.run_doc,
               "qrels_doc": self.qrels_doc, "prefix": self.prefix}
        if self.total:
            out.update(found=self.found, total=self.total)
        return out


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
    relevant_only: bool = False

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
                   attainable, share, counts.relevant_only)

    @property
    def mostly_unjudged(self) -> bool:
        """Less than half of the top k is judged, on average over the queries that retrieved something, although
        the qrels judge enough documents for at least half of it (``attainable``; sparse labels never warn) and
        judge non-relevant documents too (qrels that list relevant documents only, as Cranfield's, call every
        other document non-relevant: ``relevant_only``, never a warning)."""
        return (self.mean is not None and self.mean < MOSTLY_UNJUDGED and not self.relevant_only
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
            "relevant_only": self.relevant_only,
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
                   None if mm is None else IdMismatch(**mm), d.get("attainable"), share,
                   bool(d.get("relevant_only", False)))

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


CARRIED = 0.9
"""A prefix is named only when at least this share of one side's ids carries it (and stripping it makes ids match)."""


def _folds(x: str, known: set[str]) -> str | None:
    """The id of ``known`` that ``x`` extends with a separator and more (``d1`` for ``d1#3``), or None."""
    for i in range(1, len(x)):
        if x[i] in _SEPARATORS and x[:i] in known:
            return x[:i]
    return None


def _prefixes(longer: list[str], shorter: set[str]) -> list[str]:
    """Prefixes that, stripped from ids of ``longer``, leave ids of ``shorter``, the most common first."""
    found: Counter[str] = Counter()
    for x in longer:
        for i in range(1, min(len(x), 64)):
            if x[i:] in shorter:
                found[x[:i]] += 1
                break
    return [p for p, _ in found.most_common(3)]


def _carried(ids: list[str], prefix: str) -> bool:
    return bool(ids) and sum(x.startswith(prefix) for x in ids) >= CARRIED * len(ids)


def _candidates(a: np.ndarray, b: np.ndarray, folding: float) -> list[tuple[str, str, str]]:
    """What may relate ids ``a`` to ids ``b`` that never match, each checked on samples: ``("chunk", "", "a")`` when
    at least ``folding`` of ``a``'s ids (and at least one) extend ids of ``b`` with a separator; ``("prefix", p,
    side)`` when at least :data:`CARRIED` of one side's ids carry ``p`` and stripping it leaves ids of the other."""
    a_ids = [str(x) for x in _sample(np.asarray(a, dtype=object)).tolist()]
    b_all = {str(x) for x in np.asarray(b, dtype=object).tolist()}
    out: list[tuple[str, str, str]] = []
    folded = sum(_folds(x, b_all) is not None for x in a_ids)
    if folded and folded >= folding * len(a_ids):
        out.append(("chunk", "", "a"))
    b_ids = [str(x) for x in _sample(np.asarray(b, dtype=object)).tolist()]
    a_all = set(a_ids) if len(a) <= _SAMPLE else {str(x) for x in np.asarray(a, dtype=object).tolist()}
    for side, longer, shorter in (("a", a_ids, b_all), ("b", b_ids, a_all)):
        out += [("prefix", p, side) for p in _prefixes(longer[:200], shorter) if _carried(longer, p)]
    return out


def id_relation(a: np.ndarray, b: np.ndarray) -> tuple[str, str] | None:
    """How two sets of ids that never match relate, judged on samples and said only when checked: ``("chunk", "")``
    when (at least :data:`CARRIED` of) the ids of ``a`` are ids of ``b`` followed by a separator and more (``d1#3``
    for ``d1``), ``("prefix", p)`` when (at least :data:`CARRIED` of) one side's ids carry a prefix ``p`` whose
    removal leaves ids of the other side, else None.

    >>> id_relation(np.array(["d1#0", "d2#1"], dtype=object), np.array(["d1", "d2"], dtype=object))
    ('chunk', '')
    >>> id_relation(np.array(["msmarco_1", "msmarco_2"], dtype=object), np.array(["1", "2"], dtype=object))
    ('prefix', 'msmarco_')
    >>> id_relation(np.array(["7", "8"], dtype=object), np.array(["doc:7"], dtype=object))
    ('prefix', 'doc:')
    >>> id_relation(np.array(["x"], dtype=object), np.array(["y"], dtype=object)) is None
    True

    A prefix only some ids share is no relation (the Robust04 topics 601-700 against topics 1-225):

    >>> id_relation(np.array([str(q) for q in range(301, 451)] + [str(q) for q in range(601, 701)], dtype=object),
    ...             np.array([str(q) for q in range(1, 226)], dtype=object)) is None
    True
    """
    found = _candidates(a, b, CARRIED)
    return (found[0][0], found[0][1]) if found else None


def _judged_pairs(qrels: Qrels, queries: set[str]) -> set[tuple[str, str]]:
    """The (query, document) pairs the qrels judge for ``queries``."""
    qs = qrels.query_column()
    rows = np.flatnonzero(np.isin(qs, np.asarray(sorted(queries), dtype=object)))
    docs = qrels.doc_column().take(rows).to_pylist()
    return set(zip((str(q) for q in qs[rows].tolist()), (str(d) for d in docs)))


def _proven(cause: str, prefix: str, side: str, pairs: list[tuple[str, str]], judged: set[tuple[str, str]],
            qrels_docs: set[str]) -> bool:
    """Whether the fix the cause names (fold the chunks, strip or add the prefix) makes a run pair judged."""
    for q, d in pairs:
        if cause == "chunk":
            fixed = _folds(d, qrels_docs)
        elif side == "a":
            fixed = d[len(prefix):] if d.startswith(prefix) else None
        else:
            fixed = prefix + d
        if fixed is not None and (q, fixed) in judged:
            return True
    return False


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
    rows = _sample(np.arange(len(run), dtype=np.int64))
    pairs = list(zip((str(q) for q in run.query_column()[rows].tolist()),
                     (str(d) for d in run.doc_column().take(rows).to_pylist())))
    run_ids = np.asarray(sorted({d for _, d in pairs}), dtype=object)
    qrels_ids = np.asarray(qrels.doc_ids.to_pylist(), dtype=object)
    qrels_docs = {str(d) for d in qrels_ids.tolist()}
    judged = _judged_pairs(qrels, {q for q, _ in pairs})
    for cause, prefix, side in _candidates(run_ids, qrels_ids, 0.0):  # named only when the fix makes pairs judged
        if _proven(cause, prefix, side, pairs, judged, qrels_docs):
            return IdMismatch(cause, qid, run_doc, qrels_doc, prefix)
    found = sum(d in qrels_docs for d in run_ids.tolist())
    if not found:
        return IdMismatch("collection", qid, run_doc, qrels_doc)
    if 2 * found >= len(run_ids):  # most of the documents are judged, for other queries
        return IdMismatch("queries", qid, run_doc, qrels_doc)
    # a few ids in common: queries that do not line up, or ids of two collections that coincide
    return IdMismatch("elsewhere", qid, run_doc, qrels_doc, found=str(found), total=str(len(run_ids)))
