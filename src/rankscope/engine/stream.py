"""Scoring a run block by block: peak memory set by the qrels and the block size, not by the run.

A run file read in blocks of whole queries (:func:`rankscope.io.stream.run_blocks`)
is scored one block at a time with the same two functions as a run held in memory
— :func:`~rankscope.engine.prepare.prepare` on the block, then
:func:`~rankscope.engine.scoring.score` — and each block is released before the next
is read.  A query's values depend on its own rows and judgments only, so scoring
it within a block gives the same numbers as scoring it within the whole run.
:class:`StreamScorer` keeps only one float64 per (qrels query, measure) and a
"seen" flag per qrels query; at the end the qrels queries never met are scored as
empty rankings (``missing="zero"``) in one more call of the same functions, and
the never-silent counts are those of the whole run:

* ``evaluated``, ``missing_from_run``, ``no_relevant`` from the queries seen;
* ``not_in_qrels`` and ``float32_reordered`` added up over the blocks (every
  query is in exactly one block: a query met again raises :class:`QueryRepeated`).

A run not grouped by query (a query met in two blocks) is detected, never scored
from partial rankings: :func:`evaluate_source` starts again from the source's
hash partitions (:meth:`~rankscope.io.stream.BlockSource.partitions`), each of
which holds all rows of its queries.

>>> import os, tempfile
>>> from rankscope import Qrels, Evaluator
>>> p = os.path.join(tempfile.mkdtemp(), "run.trec")
>>> _ = open(p, "w").write("".join(f"q{i // 3} Q0 d{i % 3} 1 {3 - i % 3} t\\n" for i in range(300)))
>>> ev = Evaluator(Qrels.from_dict({"q1": {"d0": 1}, "q7": {"d2": 1}, "x": {"d0": 1}}), ["mrr"])
>>> streamed = ev.evaluate(p, block_rows=30)
>>> streamed.mean(), streamed.queries == ev.evaluate(p).queries
({'mrr': 0.4444444444444444}, True)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from rankscope.data import Run
from rankscope.data._columns import str_array
from rankscope.data._strings import fingerprint
from rankscope.engine.judged import JUDGED_K, JudgedAtK, TopCounts, judged_at_k
from rankscope.engine.prepare import PolicyCounts, _query_positions, prepare
from rankscope.engine.result import EvaluationResult
from rankscope.engine.scoring import score
from rankscope.errors import InvalidParameterError, NoOverlapError
from rankscope.i18n import _, ngettext
from rankscope.measures.kernel_input import count_relevant

if TYPE_CHECKING:
    from rankscope.engine.evaluator import Evaluator
    from rankscope.io.stream import BlockSource

__all__ = ["StreamScorer", "QueryRepeated", "evaluate_source", "evaluate_path", "block_rows_for", "parse_size",
           "DEFAULT_MEMORY_LIMIT"]

DEFAULT_MEMORY_LIMIT = 1 << 30
"""The memory a streamed evaluation aims at when no limit is given: 1 GiB."""

#: peak bytes per row of block size: two blocks are alive (one scored, the next read), each with its text piece,
#: Arrow columns, fingerprints and ranking arrays (measured on 10M and 100M-row TREC runs: bench/bench_scale.py)
BYTES_PER_BLOCK_ROW = 400
#: bytes the qrels index holds per judgment at its peak (strings, codes, fingerprints, join tables, ideal grades)
BYTES_PER_JUDGMENT = 130
#: the interpreter, numpy, Arrow and rankscope's modules, before any data
BASE_BYTES = 250 << 20
MIN_BLOCK_ROWS = 1 << 18
#: larger blocks are no faster: each block's fresh arrays cost page faults (measured: 10M rows in blocks of 2M rows
#: 1.6 s of system time, in blocks of 512k rows 0.3 s)
MAX_BLOCK_ROWS = 1 << 19
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?)b?\s*$", re.IGNORECASE)


class QueryRepeated(Exception):
    """A query met in two blocks: the run is not grouped by query (internal signal, never shown)."""


def parse_size(value: int | str) -> int:
    """Bytes from ``1073741824``, ``"1GiB"``, ``"512MB"``, ``"2G"``, ``"300m"`` (K, M, G, T: powers of 1024).

    >>> parse_size("1GiB"), parse_size("512 MB"), parse_size(4096)
    (1073741824, 536870912, 4096)
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        size = int(value)
    else:
        m = _SIZE.match(str(value))
        if m is None:
            raise InvalidParameterError(_("memory limit {value!r}: expected a size such as 1GiB, 512MB or 2G",
                                          value=value))
        size = int(float(m.group(1)) * 1024 ** " kmgt".index(m.group(2).lower() or " "))
    if size <= 0:
        raise InvalidParameterError(_("memory limit must be positive, got {value!r}", value=value))
    return size


def block_rows_for(memory_limit: int | str | None, judgments: int) -> int:
    """Rows a block may hold so that the evaluation stays near ``memory_limit``.

    The process's base (:data:`BASE_BYTES`) and what the qrels index holds
    (:data:`BYTES_PER_JUDGMENT` a judgment) are taken off the limit, the rest is
    divided by the peak bytes of a block row (:data:`BYTES_PER_BLOCK_ROW`); between
    :data:`MIN_BLOCK_ROWS` (below that, the per-block cost grows and the memory saved
    is small: a limit smaller than the qrels need is not met, it gives the smallest blocks)
    and :data:`MAX_BLOCK_ROWS` (larger blocks are slower).

    >>> block_rows_for("1GiB", 0), block_rows_for("400MiB", 0), block_rows_for("1MiB", 10**6)
    (524288, 393216, 262144)
    """
    limit = parse_size(DEFAULT_MEMORY_LIMIT if memory_limit is None else memory_limit)
    rows = (limit - BASE_BYTES - judgments * BYTES_PER_JUDGMENT) // BYTES_PER_BLOCK_ROW
    return int(min(MAX_BLOCK_ROWS, max(MIN_BLOCK_ROWS, rows)))


class StreamScorer:
    """Blocks of whole queries scored one after another (see module doc); :meth:`result` at the end."""

    _GLOBAL = ("evaluated", "missing_from_run", "no_relevant")  # counts taken from the whole run, not added up

    def __init__(self, evaluator: Evaluator) -> None:
        if evaluator.spans is not None:
            raise InvalidParameterError(_("span judgments are scored with the whole run in memory, not in blocks"))
        self.ev = evaluator
        self.index = evaluator.index
        n = len(self.index.query_ids)
        self.measures = evaluator.measures + evaluator.diagnostics
        self.values = np.zeros((n, len(self.measures)), dtype=np.float64)
        self.seen = np.zeros(n, dtype=bool)
        self.foreign = np.empty(0, dtype=np.uint64)  # fingerprints of run queries not in the qrels, sorted
        self.foreign_example: str | None = None
        self.summed = {f.name: 0 for f in fields(PolicyCounts) if f.name not in self._GLOBAL}
        self.rows = 0
        self.run_queries = 0
        self.block_policies = replace(evaluator.policies, missing="ignore")
        # judged@k: per-query counts of every block (TopCounts), over the qrels queries
        # documents in a query's top k (at most k): int32, one per qrels query, kept to the end
        self.top = {"top": np.zeros(n, dtype=np.int32), "judged": np.zeros(n, dtype=np.int32)}
        self.matched = 0
        self.relevant_only = bool(getattr(self.index, "relevant_only", False))  # the qrels list relevant docs only
        self.k = JUDGED_K
        self.diagnosis: tuple[Any, Run, np.ndarray] | None = None  # a block to explain a run that matched nothing

    def add(self, run: Run) -> None:
        """Score the block ``run`` (whole queries, none met before); raises :class:`QueryRepeated` otherwise."""
        if len(run) == 0:
            return
        starts = run.block_starts
        present = np.sort(run.qcode[starts]) if starts is not None else np.flatnonzero(
            np.bincount(run.qcode, minlength=len(run.query_ids)))
        pos = _query_positions(run.query_ids[present], self.index)
        known = pos[pos >= 0]
        if self.seen[known].any():
            raise QueryRepeated(str(self.index.query_ids[known[self.seen[known]][0]]))
        self._check_foreign(run.query_ids[present[pos < 0]])
        self.rows += len(run)
        self.run_queries += len(present)
        if len(known) == 0:
            self.summed["not_in_qrels"] += len(present)
            return
        prepared, counts = prepare(self.index, run, self.block_policies)
        matrix = score(prepared.data, self.measures)
        rows = np.sort(known)  # prepare lists the evaluated queries in qrels order
        self.values[rows] = matrix
        self.seen[known] = True
        self._add_top(rows, prepared, run)
        for name in self.summed:
            self.summed[name] += getattr(counts, name)

    def _add_top(self, rows: np.ndarray, prepared: Any, run: Run) -> None:
        """Keep the block's judged@k counts; while nothing matched, keep one block to explain why."""
        tc = prepared.top_counts
        self.k = tc.k
        for name in ("top", "judged", "model", "judgeable"):
            values = getattr(tc, name)
            if values is not None:
                self.top.setdefault(name, np.zeros(len(self.seen), dtype=np.int32))[rows] = values
        self.matched += tc.matched
        if self.matched:
            self.diagnosis = None
        elif self.diagnosis is None:
            self.diagnosis = (prepared, run, tc.top)

    def judged(self, evaluated: np.ndarray | slice) -> JudgedAtK:
        """judged@k over the ``evaluated`` qrels queries (a mask, or ``slice(None)``: all of them; a query the run
        never ranked retrieved nothing)."""
        t = self.top
        counts = TopCounts(self.k, t["top"][evaluated], t["judged"][evaluated],
                           t["model"][evaluated] if "model" in t else None, self.matched,
                           t["judgeable"][evaluated] if "judgeable" in t else None,
                           self.relevant_only)
        return judged_at_k(counts, self.ev.qrels, self.diagnosis)

    def _check_foreign(self, ids: np.ndarray) -> None:
        """Remember run queries not in the qrels; one met before means the run is not grouped."""
        if len(ids) == 0:
            return
        if self.foreign_example is None:
            self.foreign_example = str(ids[0])
        fp = np.sort(fingerprint(str_array(ids.tolist())))
        if len(self.foreign):
            at = np.minimum(np.searchsorted(self.foreign, fp), len(self.foreign) - 1)
            if bool((self.foreign[at] == fp).any()):  # (or a fingerprint collision: partitioning is correct anyway)
                raise QueryRepeated(str(ids[0]))
        self.foreign = np.union1d(self.foreign, fp)

    def state(self) -> dict[str, Any]:
        """What was scored so far, compactly (the seen queries' rows only): :meth:`merge` adds it to another scorer.

        Workers of a cluster (:mod:`rankscope.ray`) each score some queries and send this back.
        """
        seen = np.flatnonzero(self.seen)
        return {"seen": seen, "values": self.values[seen], "foreign": self.foreign,
                "top": {name: v[seen] for name, v in self.top.items()}, "matched": self.matched, "k": self.k,
                "foreign_example": self.foreign_example, "summed": dict(self.summed), "rows": self.rows,
                "run_queries": self.run_queries}

    def merge(self, state: dict[str, Any]) -> None:
        """Add another scorer's :meth:`state` (its queries must not have been scored here)."""
        seen = state["seen"]
        if self.seen[seen].any():
            raise QueryRepeated(str(self.index.query_ids[seen[self.seen[seen]][0]]))
        self.values[seen] = state["values"]
        self.seen[seen] = True
        for name, values in state["top"].items():
            self.top.setdefault(name, np.zeros(len(self.seen), dtype=np.int32))[seen] = values
        self.matched += state["matched"]
        self.k = state["k"]
        foreign = state["foreign"]
        if len(foreign) and len(np.intersect1d(self.foreign, foreign)):
            raise QueryRepeated("a query not in the qrels")
        self.foreign = np.union1d(self.foreign, foreign)
        self.foreign_example = self.foreign_example or state["foreign_example"]
        for name, value in state["summed"].items():
            self.summed[name] += value
        self.rows += state["rows"]
        self.run_queries += state["run_queries"]

    def result(self, run_name: str) -> EvaluationResult:
        """The :class:`EvaluationResult` of every block added: the same as scoring the whole run at once."""
        ev, index = self.ev, self.index
        n = len(index.query_ids)
        if self.rows and not self.seen.any():
            qrels_example = index.query_ids[0] if n else None
            n_run, n_qrels = ngettext("{n} query", "{n} queries", self.run_queries), ngettext("{n} query",
                                                                                          "{n} queries", n)
            raise NoOverlapError(_("run {run!r} and the qrels have no query in common (run: {n_run} such as "
                                   "{run_example!r}; qrels: {n_qrels} such as {qrels_example!r})", run=run_name,
                                   n_run=n_run, run_example=self.foreign_example, n_qrels=n_qrels,
                                   qrels_example=qrels_example))
        if ev.policies.missing == "zero":
            evaluated = np.ones(n, dtype=bool)
            if not self.seen.all():  # the queries the run never ranked score as empty rankings
                empty = Run(pa.array([], pa.string()), pa.array([], pa.string()), np.empty(0), run_name)
                prepared, __ = prepare(index, empty, ev.policies)
                missing = ~self.seen
                self.values[missing] = score(prepared.data, self.measures)[missing]
        else:
            evaluated = self.seen
        relevant = count_relevant(index.ideal_grade, index.ideal_query, ev.policies.relevance_level, n)
        counts = PolicyCounts(
            evaluated=int(evaluated.sum()),
            missing_from_run=int((~self.seen).sum()),
            no_relevant=int((relevant[evaluated] == 0).sum()),
            **self.summed,
        )
        # every qrels query evaluated (the usual case): views, not copies of the per-query arrays
        rows: np.ndarray | slice = slice(None) if counts.evaluated == n else evaluated
        return ev.result(run_name, index.query_ids[rows], self.values[rows], counts, self.judged(rows))


def evaluate_source(evaluator: Evaluator, source: BlockSource) -> EvaluationResult:
    """Score every block of ``source``; a run not grouped by query is scored again from its hash partitions.

    A source that fits in one block is scored by :meth:`Evaluator.evaluate` itself.
    """
    blocks = iter(source)
    first = next(blocks)
    if source.exhausted:
        return evaluator.evaluate(first)
    scorer = StreamScorer(evaluator)
    try:
        _score_all(scorer, first, blocks)
    except QueryRepeated:
        blocks.close()  # type: ignore[attr-defined]
        scorer = StreamScorer(evaluator)
        parts = iter(source.partitions())
        _score_all(scorer, next(parts), parts)
    return scorer.result(source.name or "run")


def _score_all(scorer: StreamScorer, first: Run, rest: Iterator[Run]) -> None:
    """Score ``first`` and every block of ``rest``; the next block is read on a thread while one is scored.

    Reading (Arrow's parser, file reads, fingerprints) and scoring (numpy) release the
    GIL for most of their time, so on two cores the two overlap; two blocks are alive
    at a time (:func:`block_rows_for` counts them).
    """
    from concurrent.futures import ThreadPoolExecutor

    end = object()
    with ThreadPoolExecutor(1, thread_name_prefix="rankscope-read") as pool:
        block: Any = first
        while block is not end:
            ahead = pool.submit(next, rest, end)
            try:
                scorer.add(block)
            except BaseException:
                ahead.cancel()
                with contextlib.suppress(BaseException):
                    ahead.result()
                raise
            del block
            block = ahead.result()


def evaluate_path(
    evaluator: Evaluator, path: str | Path, name: str | None = None, *, memory_limit: int | str | None = None,
    block_rows: int | None = None,
) -> EvaluationResult | None:
    """Score the run file at ``path`` in blocks, or return None when its format has no block reader."""
    from rankscope.io.formats import detect_format
    from rankscope.io.stream import run_blocks, streamable

    fmt = detect_format(path)
    if not streamable(path, fmt):
        return None
    if block_rows is not None and (not isinstance(block_rows, int) or block_rows < 1):
        raise InvalidParameterError(_("block_rows must be a positive int, got {value!r}", value=block_rows))
    rows = block_rows or block_rows_for(memory_limit, len(evaluator.qrels))
    source = run_blocks(path, fmt, block_rows=rows, name=name, duplicates=evaluator.policies.duplicates)
    return evaluate_source(evaluator, source)
