"""What needs judging: the pool of runs' top documents, and judged@k per run.

Top-k
    A run's top ``k`` of a query are its first ``k`` documents in trec_eval's
    order (score descending, ties by doc id descending); ``rank`` counts from 1.
Judged
    A (query, doc) is judged when the labels hold a grade ``>= 0`` for it; a
    negative grade (trec_eval's "pooled but not judged") and a failed model
    judgment count as unjudged.
judged@k
    Per query, the judged share of the top ``k`` documents the run returned,
    ``judged / min(k, retrieved)`` (as ir_measures' ``Judged@k``); averaged over
    *every* query of the run — a query absent from the labels scores 0 (ir_measures
    skips it).  ``model@k`` is the same share counting model labels only, so
    ``judged@k - model@k`` is the human share.  A run with ``judged@k < 0.5`` is
    flagged as mostly unjudged: its scores against these labels underestimate it.
Pool
    The union, over runs, of the top-``depth`` documents of each query that are
    not judged: one record per (query, doc) with the runs that retrieved it and
    the rank each gave it, ordered by query id, best rank, then doc id.

Everything is computed with Arrow/numpy over all rows at once.

>>> from rankscope.data import Qrels, Run
>>> a = Run.from_ranked_lists({"q1": ["d1", "d2", "d3"]}, name="a")
>>> b = Run.from_ranked_lists({"q1": ["d4", "d1"]}, name="b")
>>> pool = build_pool([a, b], Qrels.from_dict({"q1": {"d1": 1}}), depth=2)
>>> [(r["doc_id"], r["runs"]) for r in pool.records()]
[('d4', {'b': 1}), ('d2', {'a': 2})]
>>> [(s.run, s.judged_at_k) for s in pool.summaries]
[('a', 0.5), ('b', 0.5)]
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rankscope.data.qrels import Qrels
from rankscope.data.run import Run
from rankscope.engine.judged import MOSTLY_UNJUDGED
from rankscope.errors import EmptyInputError, InvalidParameterError, ParseError
from rankscope.i18n import _
from rankscope.labels.provenance import Labels

__all__ = ["MOSTLY_UNJUDGED", "Pool", "RunJudged", "build_pool", "judged_at_k", "read_pool", "read_pool_records",
           "top_k"]



def _check_k(k: Any, name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidParameterError(_("{name} must be an integer >= {low}, got {value!r}", name=name, low=1, value=k))
    return int(k)


def top_k(run: Run, k: int) -> pa.Table:
    """``(query_id, doc_id, rank)`` of the first ``k`` documents of every query, in trec_eval order.

    >>> top_k(Run.from_dict({"q1": {"a": 0.5, "b": 0.5, "c": 0.9}}), 2).to_pydict()
    {'query_id': ['q1', 'q1'], 'doc_id': ['c', 'b'], 'rank': [1, 2]}
    """
    from rankscope.engine.ranking import trec_order

    k = _check_k(k)
    order = trec_order(run)
    q = run.qcode[order]
    n = len(q)
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]]) if n else np.empty(0, dtype=np.int64)
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n])) + 1
    keep = rank <= k
    rows = order[keep]
    return pa.table({
        "query_id": pa.array(run.query_ids[q[keep]], type=pa.string()),
        "doc_id": pc.take(run.doc_column(), pa.array(rows)),
        "rank": pa.array(rank[keep], type=pa.int32()),
    })


def _keys(query: Any, doc: Any) -> pa.Array:
    return pc.binary_join_element_wise(query, doc, "\x00")


def _judged_keys(labels: Qrels | Labels | None) -> pa.Array:
    """Keys of the judged (query, doc) pairs (grade >= 0)."""
    if labels is None:
        return pa.array([], type=pa.string())
    qrels = labels.qrels if isinstance(labels, Labels) else labels
    t = qrels.to_arrow()
    ok = t.filter(pc.greater_equal(t["relevance"], 0))
    return _keys(ok["query_id"], ok["doc_id"])


@dataclass(frozen=True)
class RunJudged:
    """judged@k of one run (see the module docstring): ``queries`` of the run, ``retrieved`` documents in
    their top k, how many are ``judged`` (and by a ``model``; None without provenance), the means
    ``judged_at_k`` / ``model_at_k`` over the run's queries, and the per-query values."""

    run: str
    k: int
    queries: int
    retrieved: int
    judged: int
    judged_at_k: float
    model: int | None
    model_at_k: float | None
    query_ids: tuple[str, ...]
    per_query: tuple[float, ...]

    @property
    def mostly_unjudged(self) -> bool:
        """True when less than half of the run's top k is judged (on average over queries)."""
        return self.judged_at_k < MOSTLY_UNJUDGED

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"run": self.run, "k": self.k, "queries": self.queries, "retrieved": self.retrieved,
                               "judged": self.judged, "unjudged": self.retrieved - self.judged,
                               f"judged@{self.k}": self.judged_at_k, "model_labels": self.model,
                               f"model@{self.k}": self.model_at_k, "mostly_unjudged": self.mostly_unjudged}
        if per_query:
            out["per_query"] = dict(zip(self.query_ids, self.per_query))
        return out


def _judged_of(name: str, run: Run, k: int, labels: Qrels | Labels | None) -> RunJudged:
    """judged@k of every query of ``run``, counted by the engine's join (queries the labels lack score 0)."""
    from rankscope.engine.policies import Policies
    from rankscope.engine.prepare import QrelsIndex, prepare
    from rankscope.errors import NoOverlapError

    ids = run.query_ids[np.flatnonzero(np.bincount(run.qcode, minlength=len(run.query_ids)))]
    top = np.minimum(np.bincount(run.qcode, minlength=len(run.query_ids))[np.searchsorted(run.query_ids, ids)], k)
    judged = np.zeros(len(ids), dtype=np.int64)
    model = np.zeros(len(ids), dtype=np.int64) if isinstance(labels, Labels) else None
    qrels = labels.qrels if isinstance(labels, Labels) else labels
    if qrels is not None and len(qrels):
        index = QrelsIndex(qrels, model=labels.model_mask() if isinstance(labels, Labels) else None)
        try:
            prepared, __ = prepare(index, run, Policies(missing="ignore"), judged_k=k)
        except NoOverlapError:  # no query of the run is labelled: nothing is judged
            prepared = None
        if prepared is not None and prepared.top_counts is not None:
            at = np.searchsorted(ids, prepared.query_ids)
            judged[at] = prepared.top_counts.judged
            if model is not None and prepared.top_counts.model is not None:
                model[at] = prepared.top_counts.model
    n = len(ids)
    per_q = judged / np.maximum(top, 1)
    return RunJudged(name, k, n, int(top.sum()), int(judged.sum()), float(per_q.mean()) if n else 0.0,
                     None if model is None else int(model.sum()),
                     None if model is None else (float((model / np.maximum(top, 1)).mean()) if n else 0.0),
                     tuple(str(x) for x in ids), tuple(per_q.tolist()))


def judged_at_k(run: Run, labels: Qrels | Labels | None, k: int = 10, name: str | None = None) -> RunJudged:
    """judged@k (and, with :class:`Labels`, model@k) of ``run`` against ``labels``.

    The counts come from the evaluation engine's join (the ``judged@k`` measure's
    :meth:`~rankscope.measures.kernel_input.KernelInput.judged_in_top`), so ``rankscope pool``
    and ``rankscope evaluate`` report the same judged@k on the queries both look at.

    >>> run = Run.from_ranked_lists({"q1": ["d1", "d2"], "q2": ["d3"]})
    >>> r = judged_at_k(run, Qrels.from_dict({"q1": {"d1": 0}}), k=10)
    >>> r.judged_at_k, r.per_query
    (0.25, (0.5, 0.0))
    """
    return _judged_of(name or run.name, run, _check_k(k), labels)


def _named(runs: Mapping[str, Run] | Sequence[Run]) -> list[tuple[str, Run]]:
    items = list(runs.items()) if isinstance(runs, Mapping) else [(r.name, r) for r in runs]
    names = [n for n, __ in items]
    if len(set(names)) != len(names):
        raise InvalidParameterError(_("runs need distinct names, got {names}", names=names))
    if not items:
        raise EmptyInputError(_("pool: give at least one run"))
    return items


@dataclass(frozen=True)
class Pool:
    """The documents to judge: ``table`` (``query_id, doc_id, best_rank, runs, ranks``), the ``depth``, the run
    names and judged@depth of each run before judging."""

    table: pa.Table
    depth: int
    runs: tuple[str, ...]
    summaries: tuple[RunJudged, ...]

    def __len__(self) -> int:
        return self.table.num_rows

    @property
    def queries(self) -> int:
        """Number of queries with at least one document to judge."""
        return int(pc.count_distinct(self.table["query_id"]).as_py()) if len(self) else 0

    def pairs(self) -> list[tuple[str, str]]:
        """``(query_id, doc_id)`` of every record, in pool order."""
        return list(zip(self.table["query_id"].to_pylist(), self.table["doc_id"].to_pylist()))

    def records(self) -> Iterator[dict[str, Any]]:
        """One dict per record: ``query_id``, ``doc_id``, ``best_rank``, ``runs`` (``{run: rank}``, best first)."""
        cols = self.table.to_pydict()
        for q, d, best, names, ranks in zip(cols["query_id"], cols["doc_id"], cols["best_rank"], cols["runs"],
                                            cols["ranks"]):
            by_run = sorted(zip(ranks, names), key=lambda x: (x[0], self.runs.index(x[1])))
            yield {"query_id": q, "doc_id": d, "best_rank": best, "runs": {n: r for r, n in by_run}}

    def write_jsonl(self, path: str | Path) -> None:
        """Write one JSON record a line (UTF-8)."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in self.records())

    def to_dict(self, per_query: bool = False) -> dict[str, Any]:
        return {"depth": self.depth, "runs": list(self.runs), "pool_size": len(self), "queries": self.queries,
                "judged_before": [s.to_dict(per_query) for s in self.summaries]}


def build_pool(runs: Mapping[str, Run] | Sequence[Run], labels: Qrels | Labels | None = None,
               depth: int = 10) -> Pool:
    """The pool of the runs' top-``depth`` documents that ``labels`` do not judge (see the module docstring)."""
    depth = _check_k(depth, "depth")
    items = _named(runs)
    judged = _judged_keys(labels)
    tops, summaries = [], []
    for name, run in items:
        top = top_k(run, depth)
        summaries.append(_judged_of(name, run, depth, labels))
        tops.append(top.append_column("run", pa.array([name] * top.num_rows, type=pa.string())))
    every = pa.concat_tables(tops)
    todo = every.filter(pc.invert(pc.is_in(_keys(every["query_id"], every["doc_id"]), value_set=judged)))
    grouped = todo.group_by(["query_id", "doc_id"], use_threads=False).aggregate(
        [("rank", "min"), ("run", "list"), ("rank", "list")])
    table = pa.table({"query_id": grouped["query_id"], "doc_id": grouped["doc_id"],
                      "best_rank": grouped["rank_min"], "runs": grouped["run_list"], "ranks": grouped["rank_list"]})
    table = table.sort_by([("query_id", "ascending"), ("best_rank", "ascending"), ("doc_id", "ascending")])
    return Pool(table, depth, tuple(n for n, __ in items), tuple(summaries))


def read_pool(path: str | Path) -> list[tuple[str, str]]:
    """The ``(query_id, doc_id)`` pairs of a pool file (JSON Lines with at least ``query_id`` and ``doc_id``).

    Ids may be strings or integers; a repeated pair is kept once.
    """
    return [(r["query_id"], r["doc_id"]) for r in read_pool_records(path)]


def read_pool_records(path: str | Path) -> list[dict[str, Any]]:
    """The records of a pool file, in file order, a repeated ``(query_id, doc_id)`` kept once (the first).

    Each record has string ``query_id`` and ``doc_id``, ``best_rank`` (an integer >= 1, or None when the
    file does not say) and ``runs`` (``{run: rank}``, empty when the file does not say); other keys are
    dropped.  A malformed line raises :class:`~rankscope.errors.ParseError` with file and line.
    """
    p = Path(path)
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    try:
        with open(p, encoding="utf-8", newline="\n") as fh:
            for line_no, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                rec = _pool_record(line, p, line_no)
                pair = (rec["query_id"], rec["doc_id"])
                if pair not in seen:
                    seen.add(pair)
                    out.append(rec)
    except UnicodeDecodeError as exc:
        raise ParseError(_("not UTF-8 text ({reason})", reason=exc.reason), source=str(p)) from None
    if not out:
        raise EmptyInputError(_("{path}: the pool is empty", path=str(p)))
    return out


def _pool_record(line: str, p: Path, line_no: int) -> dict[str, Any]:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ParseError(_("invalid JSON: {reason}", reason=exc.msg), source=str(p), line=line_no) from None
    if not isinstance(rec, dict):
        raise ParseError(_("expected an object with 'query_id' and 'doc_id'"), source=str(p), line=line_no)
    out: dict[str, Any] = {}
    for key in ("query_id", "doc_id"):
        v = rec.get(key)
        if isinstance(v, bool) or not isinstance(v, (str, int)) or str(v) == "":
            raise ParseError(_("{name} must be a non-empty string, got {value!r}", name=key, value=v),
                             source=str(p),
                             line=line_no)
        out[key] = str(v)

    def rank(v: Any, what: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ParseError(_("{name} must be an integer >= {low}, got {value!r}", name=what, low=1, value=v),
                             source=str(p),
                             line=line_no)
        return v

    best = rec.get("best_rank")
    out["best_rank"] = None if best is None else rank(best, "best_rank")
    runs = rec.get("runs") or {}
    if not isinstance(runs, dict):
        raise ParseError(_("runs must be an object {shape}, got {value!r}", shape="{run: rank}", value=runs),
                         source=str(p),
                         line=line_no)
    out["runs"] = {str(k): rank(v, f"runs[{k!r}]") for k, v in runs.items()}
    return out
