"""Audit a test set before trusting its numbers: :func:`audit_testset`.

Reported:

* **duplicate queries**: groups of queries whose texts are equal after
  normalisation (NFKC, case folding, punctuation and whitespace removed);
* **near-duplicate queries**: pairs whose character-trigram sets have a
  Jaccard similarity of at least ``near_threshold`` (default 0.8), excluding
  exact duplicates.  Candidates by prefix filtering and sparse matrix products
  (scipy), exact Jaccard vectorised; no Python loop over pairs;
* **empty queries** (blank after stripping);
* **queries without a relevant id**: no judgment with ``grade >= relevance_level``
  (they score 0 on every metric, or are skipped, depending on the policy);
  queries that carry reference answers are listed separately since answer
  containment can still judge them;
* **relevant ids missing from the corpus** (only when a corpus is present);
* **grade distribution** (judgments per grade) and relevant ids per query;
* **load issues**: what reading the file found (:attr:`TestSet.issues
  <rankscope.data.testset.TestSet.issues>`: unknown keys; with the lenient reading of
  ``rankscope testset check``, also null or empty ids, which a normal load refuses).

>>> from rankscope.data.testset import TestSet
>>> ts = TestSet.from_annotations(["What is BM25?", "what is bm25", "", "x"], [["d1"], ["d1"], [], {"d2": 0}])
>>> a = audit_testset(ts)
>>> a.duplicates, a.empty, a.no_relevant
([['q1', 'q2']], ['q3'], ['q3', 'q4'])
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rankscope.data.testset import TestSet
from rankscope.i18n import _

__all__ = ["TestSetAudit", "audit_testset", "query_key"]

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def query_key(text: str) -> str:
    """The normalised form used to detect duplicates: NFKC, case fold, no punctuation or whitespace.

    >>> query_key("  What is ＢＭ２５？ ")
    'whatisbm25'
    """
    return _NON_WORD.sub("", unicodedata.normalize("NFKC", text).casefold())


@dataclass
class TestSetAudit:
    """The findings of :func:`audit_testset` (every list in test-set order)."""

    __test__ = False

    name: str
    queries: int
    judged_queries: int
    judgments: int
    corpus_size: int | None
    duplicates: list[list[str]] = field(default_factory=list)
    near_duplicates: list[tuple[str, str, float]] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    no_relevant: list[str] = field(default_factory=list)
    no_relevant_with_answers: list[str] = field(default_factory=list)
    missing_from_corpus: list[tuple[str, str]] = field(default_factory=list)
    grades: dict[int, int] = field(default_factory=dict)
    relevant_per_query: dict[str, float] = field(default_factory=dict)
    with_answers: int = 0
    near_threshold: float = 0.8
    load_issues: list[Any] = field(default_factory=list)

    @property
    def problems(self) -> int:
        """How many findings need attention (duplicate groups, near pairs, empty, no-relevant, missing ids,
        load issues)."""
        return (len(self.duplicates) + len(self.near_duplicates) + len(self.empty)
                + len(self.no_relevant) + len(self.missing_from_corpus) + len(self.load_issues))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "name": self.name, "queries": self.queries, "judged_queries": self.judged_queries,
            "judgments": self.judgments, "corpus_size": self.corpus_size, "with_answers": self.with_answers,
            "duplicates": self.duplicates,
            "near_duplicates": [{"a": a, "b": b, "similarity": round(s, 4)} for a, b, s in self.near_duplicates],
            "near_threshold": self.near_threshold,
            "empty": self.empty, "no_relevant": self.no_relevant,
            "no_relevant_with_answers": self.no_relevant_with_answers,
            "missing_from_corpus": [{"query": q, "doc": d} for q, d in self.missing_from_corpus],
            "grades": {str(g): n for g, n in sorted(self.grades.items())},
            "relevant_per_query": self.relevant_per_query,
            "load_issues": [i.to_dict() for i in self.load_issues],
            "problems": self.problems,
        }


def _trigram_sets(keys: list[str]) -> list[set[str]]:
    out = []
    for key in keys:
        padded = f"^{key}$"
        out.append({padded[i:i + 3] for i in range(max(len(padded) - 2, 1))})
    return out


def _trigram_codes(keys: list[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Distinct character trigrams of ``^key$`` for every key, vectorised: ``(row, gram id, number of grams)``.

    Rows are sorted by key index; the same sets as :func:`_trigram_sets` for non-empty keys.
    """
    if not keys:  # an empty test set (e.g. every query dropped by the lenient reading)
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0
    padded = [f"^{k}$" for k in keys]
    lengths = np.fromiter((len(p) for p in padded), dtype=np.int64, count=len(padded))
    chars = np.frombuffer("".join(padded).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    starts = np.r_[0, np.cumsum(lengths)[:-1]]
    n_tri = np.maximum(lengths - 2, 0)
    row = np.repeat(np.arange(len(keys)), n_tri)
    pos = np.repeat(starts, n_tri) + (np.arange(int(n_tri.sum())) - np.repeat(np.cumsum(n_tri) - n_tri, n_tri))
    code = (chars[pos] << 42) | (chars[pos + 1] << 21) | chars[pos + 2]
    uniq, gram = np.unique(code, return_inverse=True)
    pair = np.sort(row * max(len(uniq), 1) + gram.ravel())  # sort + neighbour test: faster than np.unique
    pair = pair[np.r_[True, pair[1:] != pair[:-1]]] if len(pair) else pair
    return pair // max(len(uniq), 1), pair % max(len(uniq), 1), len(uniq)


def near_duplicate_pairs(keys: list[str], threshold: float, block: int = 4096) -> list[tuple[int, int, float]]:
    """Index pairs ``(i, j, jaccard)``, ``i < j``, of character-trigram Jaccard >= ``threshold``.

    Prefix filtering (Bayardo et al., "Scaling up all pairs similarity search", 2007): with the
    trigrams of every query sorted rarest first, two sets with Jaccard >= t share a trigram among
    the first ``|A| - ceil(t |A|) + 1`` of each.  Candidates come from a sparse product of those
    prefixes only (rare trigrams: a sparse result even when every query contains "what"), then
    the exact Jaccard of each candidate is computed from the full trigram matrix, vectorised.

    >>> near_duplicate_pairs(["whatisbm25", "whatisbm25s", "somethingelse"], 0.7)
    [(0, 1, 0.75)]
    """
    from scipy import sparse

    n = len(keys)
    rows, cols, n_grams = _trigram_codes(keys)
    if n < 2 or n_grams == 0:
        return []
    lengths = np.bincount(rows, minlength=n)
    df = np.bincount(cols, minlength=n_grams)
    # order each row's grams rarest first (global order: df, then gram code), keep the prefix
    order = np.lexsort((cols, df[cols], rows))
    cols_sorted = cols[order]
    starts = np.r_[0, np.cumsum(lengths)[:-1]]
    pos = np.arange(len(cols)) - np.repeat(starts, lengths)
    prefix_len = lengths - np.ceil(threshold * lengths - 1e-9).astype(np.int64) + 1
    in_prefix = pos < np.repeat(prefix_len, lengths)
    ones = np.ones(int(in_prefix.sum()), dtype=np.float32)
    pre = sparse.csr_matrix((ones, (rows[order][in_prefix], cols_sorted[in_prefix])), shape=(n, n_grams))
    full = sparse.csr_matrix((np.ones(len(cols), dtype=np.float32), (rows, cols)), shape=(n, n_grams))
    pre_t = pre.T.tocsc()
    out: list[tuple[int, int, float]] = []
    for begin in range(0, n, block):
        cand = (pre[begin:begin + block] @ pre_t).tocoo()
        i = cand.row.astype(np.int64) + begin
        j = cand.col.astype(np.int64)
        keep = (j > i) & (np.minimum(lengths[i], lengths[j]) >= threshold * np.maximum(lengths[i], lengths[j]))
        i, j = i[keep], j[keep]
        if not len(i):
            continue
        inter = np.asarray(full[i].multiply(full[j]).sum(axis=1)).ravel()
        jac = inter / (lengths[i] + lengths[j] - inter)
        ok = jac >= threshold
        out.extend(zip(i[ok].tolist(), j[ok].tolist(), jac[ok].astype(float).tolist()))
    out.sort()
    return out


def audit_testset(ts: TestSet, *, near_threshold: float = 0.8, relevance_level: int = 1) -> TestSetAudit:
    """Check ``ts`` for the problems listed in the module documentation."""
    from rankscope.errors import InvalidParameterError

    if not 0 < near_threshold <= 1:
        raise InvalidParameterError(_("near_threshold must be within (0, 1], got {value!r}", value=near_threshold))
    ids = ts.query_ids
    keys = [query_key(q.text) for q in ts.queries]
    groups: dict[str, list[str]] = {}
    for qid, key in zip(ids, keys):
        if key:
            groups.setdefault(key, []).append(qid)
    duplicates = [g for g in groups.values() if len(g) > 1]
    empty = [q.id for q in ts.queries if not q.text.strip()]

    near = []
    for i, j, s in near_duplicate_pairs(keys, near_threshold):
        if keys[i] and keys[j] and keys[i] != keys[j]:
            near.append((ids[i], ids[j], s))

    qrels = ts.qrels
    relevant_mask = qrels.grades >= relevance_level
    rel_counts = np.bincount(qrels.qcode[relevant_mask], minlength=len(qrels.query_ids))
    per_query = dict(zip(qrels.query_ids.tolist(), rel_counts.tolist()))
    no_rel = [q.id for q in ts.queries if per_query.get(q.id, 0) == 0]
    by_id = {q.id: q for q in ts.queries}
    no_rel_answers = [qid for qid in no_rel if by_id[qid].answers]

    missing: list[tuple[str, str]] = []
    if ts.corpus is not None and len(qrels):
        import pyarrow as pa
        import pyarrow.compute as pc

        in_corpus = pc.is_in(qrels.doc_ids, value_set=pa.array(list(ts.corpus), type=pa.string()))
        bad_dict = ~in_corpus.to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(bad_dict[qrels.dcode] & relevant_mask)
        docs = qrels.doc_column()
        qcol = qrels.query_column()
        missing = sorted((str(qcol[r]), str(docs[int(r)].as_py())) for r in rows)

    values, counts = np.unique(qrels.grades, return_counts=True)
    counts_all = np.array([per_query.get(q, 0) for q in ids], dtype=np.float64)
    rel_stats = ({"min": float(counts_all.min()), "mean": float(counts_all.mean()),
                  "median": float(np.median(counts_all)), "max": float(counts_all.max())} if len(ids) else {})
    return TestSetAudit(
        name=ts.name, queries=len(ts), judged_queries=len(ts.judged_query_ids), judgments=len(qrels),
        corpus_size=len(ts.corpus) if ts.corpus is not None else None,
        duplicates=duplicates, near_duplicates=near, empty=empty, no_relevant=no_rel,
        no_relevant_with_answers=no_rel_answers, missing_from_corpus=missing,
        grades={int(g): int(c) for g, c in zip(values.tolist(), counts.tolist())},
        relevant_per_query=rel_stats, with_answers=sum(1 for q in ts.queries if q.answers),
        near_threshold=near_threshold, load_issues=list(ts.issues),
    )
