"""rankscope on a Ray cluster: runs too large for one machine, live retrievers and LLM judges on many workers.

``pip install 'rankscope[ray]'``.  Nothing here has a metric of its own: every
worker scores with :func:`~rankscope.engine.prepare.prepare` and
:func:`~rankscope.engine.scoring.score` (through
:class:`~rankscope.engine.stream.StreamScorer`), the live evaluation is
:func:`rankscope.retrieval.runner.evaluate_retriever` and the judging
:func:`rankscope.labels.batch.judge_pairs` with its per-item
:func:`~rankscope.labels.judge.judge_one`; Ray only carries the work.

:func:`evaluate`
    The run — Parquet / Arrow / TREC files, or a ``ray.data.Dataset`` — is read
    on the workers in pieces; each piece is split by a hash of the query id into
    ``partitions`` parts (a shuffle: every row of a query lands in one part,
    whatever the order of the input), each part is scored by one task against
    the qrels (indexed once per worker process), and the driver adds the parts'
    compact per-query values up into the same
    :class:`~rankscope.engine.EvaluationResult` as :func:`rankscope.evaluate`
    gives — identical numbers and never-silent counts.  Tasks lost with a
    worker are run again by Ray (their inputs rebuilt from lineage); a query is
    scored in exactly one part, and a part that came back twice is refused.
:func:`evaluate_retriever`
    A pool of actors, each building the retriever once (``factory()``) and
    answering at most ``concurrency`` calls at a time; the runner calls them as an
    ``async`` retriever (``actors * concurrency`` in flight), with its retries,
    resume cache, ``on_result`` / ``resume`` hooks and warnings.  An actor that
    dies is restarted and its calls sent again; the runner records one outcome
    per query (a call cut short by a dying actor may have reached the retriever
    twice: results exactly once, calls at least once).
:func:`judge_pairs`
    The batch judge with its cache (answers written as they arrive: an
    interrupted batch resumes from them), its per-item function run on a pool of
    actors.

``address``: ``None`` (an already started Ray, else a local one), ``"auto"`` (the
cluster this machine belongs to) or ``"ray://host:10001"``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from rankscope.engine.evaluator import Evaluator
from rankscope.engine.policies import Policies
from rankscope.engine.result import EvaluationResult
from rankscope.errors import InvalidParameterError, Message
from rankscope.i18n import _, ngettext

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rankscope.engine.policies import PolicyValues

__all__ = ["evaluate", "evaluate_retriever", "judge_pairs", "connect", "ActorPool"]


def _ray() -> Any:
    try:
        import ray
    except ImportError:  # pragma: no cover - depends on the installation
        raise InvalidParameterError(_("the Ray engine needs Ray: pip install 'rankscope[ray]'")) from None
    return ray


def connect(address: str | None = None) -> Any:
    """The ``ray`` module, connected: to ``address`` (``"auto"``, ``"ray://..."``), an already started Ray, or a new
    local one."""
    ray = _ray()
    if not ray.is_initialized():
        # None: a new local Ray (a stale address left in /tmp/ray by an earlier cluster must not be joined)
        ray.init(address=address or "local", logging_level="ERROR", log_to_driver=False,
                 **({"include_dashboard": False} if address is None else {}))
    return ray


# -- evaluate: read, shuffle by query, score ---------------------------------------------------------------
_EVALUATORS: dict[str, Evaluator] = {}
_EVALUATORS_LOCK = threading.Lock()


def _worker_evaluator(token: str, spec: dict[str, Any]) -> Evaluator:
    """The evaluator of job ``token`` in this worker process (the qrels indexed once per process)."""
    with _EVALUATORS_LOCK:
        ev = _EVALUATORS.get(token)
        if ev is None:
            from rankscope.data import Qrels

            table = spec["qrels"]
            qrels = Qrels(table.column(0), table.column(1), table.column(2).to_numpy())
            ev = Evaluator(qrels, list(spec["measures"]), policies=spec["policies"])
            if len(_EVALUATORS) > 4:
                _EVALUATORS.clear()
            _EVALUATORS[token] = ev
        return ev


def _read_piece(source: Any) -> Any:
    """One piece of the run as an Arrow table: ``(path, format, row_groups)`` read here, or a table as it is."""
    import pyarrow as pa

    if isinstance(source, pa.Table):
        return source
    path, fmt, groups = source
    if fmt == "parquet":
        import pyarrow.parquet as pq

        with pq.ParquetFile(path) as pf:
            return pf.read_row_groups(groups)
    from rankscope.io import read_run

    return read_run(path, format=fmt, duplicates="keep_best" if groups == "keep_best" else "error").to_arrow()


def _split(source: Any, parts: int) -> list[Any]:
    """The rows of one piece in ``parts`` tables by a hash of the query id (rows keep their order)."""
    import pyarrow as pa

    from rankscope.io.stream import _partition_of
    from rankscope.io.tables import QUERY, find_column

    table = _read_piece(source)
    query = table.column(find_column(list(table.column_names), QUERY, "query id", "run"))
    if pa.types.is_dictionary(query.type):
        query = query.cast(query.type.value_type)
    part = _partition_of(query, parts) if table.num_rows else np.zeros(0, dtype=np.int64)
    order = np.argsort(part, kind="stable")
    counts = np.bincount(part, minlength=parts)
    table = table.take(pa.array(order))
    bounds = np.concatenate(([0], np.cumsum(counts)))
    return [table.slice(int(bounds[p]), int(counts[p])) for p in range(parts)]


def _score_part(token: str, spec: dict[str, Any], *tables: Any) -> dict[str, Any]:
    """Score one part (every row of its queries) with the ordinary engine; its compact state."""
    import pyarrow as pa

    from rankscope.engine.stream import StreamScorer
    from rankscope.io.tables import run_from_table

    ev = _worker_evaluator(token, spec)
    scorer = StreamScorer(ev)
    tables = tuple(t for t in tables if t.num_rows)
    if tables:
        table = pa.concat_tables(tables, promote_options="permissive")
        scorer.add(run_from_table(table, spec["source"], name=spec["name"], duplicates=ev.policies.duplicates))
    return scorer.state()


def _pieces(run: Any, duplicates: str) -> tuple[list[Any], str, str | Message]:
    """What the workers read, a name for the run and a source for error messages (a path, or a phrase said in the
    reader's language: "ray dataset", "3 files")."""
    if type(run).__name__ in ("Dataset", "MaterializedDataset") and type(run).__module__.startswith("ray.data"):
        return list(run.to_arrow_refs()), "ray", _("ray dataset")
    paths = [run] if isinstance(run, (str, Path)) else list(run)
    if not paths:
        raise InvalidParameterError(_("no run given: a ray.data.Dataset or one or more Parquet / Arrow / TREC paths"))
    from rankscope.io.formats import detect_format

    pieces: list[Any] = []
    for path in paths:
        fmt = detect_format(path)
        if fmt == "parquet":
            import pyarrow.parquet as pq

            groups = pq.ParquetFile(path).num_row_groups
            pieces += [(str(path), fmt, [g]) for g in range(groups)]
        else:  # one file, one piece (TREC, Arrow, JSON ... read whole on a worker)
            pieces.append((str(path), fmt, duplicates))
    return pieces, _run_name(paths[0]), str(paths[0]) if len(paths) == 1 else ngettext("{n} file",
                                                                                       "{n} files", len(paths))


def _run_name(path: str | Path) -> str:
    """The name the local engine gives the run in ``path``: the TREC tag of its first line, or the file's stem."""
    from rankscope.io.formats import detect_format
    from rankscope.io.jsonfmt import _stem
    from rankscope.io.stream import STREAM_FORMATS, run_blocks

    fmt = detect_format(path)
    if fmt not in STREAM_FORMATS:
        return _stem(path)
    blocks = run_blocks(path, fmt, block_rows=1)
    first = iter(blocks)
    next(first, None)  # one small piece: the tag is known once it is read
    first.close()  # type: ignore[attr-defined]
    return blocks.name or _stem(path)


def evaluate(
    qrels: Any,
    run: Any,
    metrics: Iterable[str] | str | None = None,
    *,
    name: str | None = None,
    address: str | None = None,
    partitions: int | None = None,
    policies: Policies | None = None,
    **values: Unpack[PolicyValues],
) -> EvaluationResult:
    """Score ``run`` against ``qrels`` on a Ray cluster: the same result as :func:`rankscope.evaluate`.

    ``run`` is a ``ray.data.Dataset`` (columns named as in :mod:`rankscope.io.tables`:
    ``query_id``, ``doc_id``, ``score`` ...) or the path(s) of run files (Parquet files
    are read row group by row group on the workers).  ``partitions`` is the number of
    parts the rows are shuffled into by query (default: twice the cluster's CPUs, at
    least one part per ~2M rows).  The evaluation policies are those of :func:`rankscope.evaluate`
    (``relevance_level=``, ``missing=``, ``depth=``, ``score_precision=``, ``duplicates=``,
    ``unjudged=`` ...), or one :class:`~rankscope.engine.policies.Policies` value as ``policies``.
    """
    if policies is not None and values:
        raise TypeError("evaluate() takes policies or policy keywords, not both")
    chosen = policies if policies is not None else Policies.of("evaluate", **values)
    ray = connect(address)
    ev = Evaluator(qrels, metrics, policies=chosen)
    from rankscope.engine.stream import QueryRepeated, StreamScorer

    pieces, stem, source = _pieces(run, chosen.duplicates)
    n_parts = partitions or max(2, 2 * int(ray.cluster_resources().get("CPU", 1)))
    if partitions is not None and (not isinstance(partitions, int) or partitions < 1):
        raise InvalidParameterError(_("partitions must be a positive int, got {value!r}", value=partitions))
    q = ev.qrels
    spec = {"qrels": q.to_arrow(), "measures": [str(m) for m in ev.labels], "policies": ev.policies,
            "source": str(source), "name": name or stem}
    spec_ref, token = ray.put(spec), uuid.uuid4().hex
    split = ray.remote(_split).options(num_returns=n_parts, max_retries=3) if n_parts > 1 else None
    score_part = ray.remote(_score_part).options(max_retries=3)
    if split is None:
        parts = [[ray.remote(_read_piece).remote(p)] for p in pieces]
    else:
        parts = [split.remote(p, n_parts) for p in pieces]
    states = [score_part.remote(token, spec_ref, *[piece_parts[p] for piece_parts in parts]) for p in range(n_parts)]
    scorer = StreamScorer(ev)
    try:
        for state in ray.get(states):
            scorer.merge(state)
    except QueryRepeated as exc:  # pragma: no cover - a part delivered twice: refuse rather than count twice
        raise RuntimeError(f"query {exc} came back from two parts of the cluster job") from None
    if scorer.rows == 0:
        from rankscope.errors import EmptyInputError

        raise EmptyInputError(_("{source}: no entries (empty run)", source=source))
    return scorer.result(name or stem)


# -- actors: live retrievers and judges ----------------------------------------------------------------------
class ActorPool:
    """``size`` actors of ``cls`` (each built with ``args``), at most ``concurrency`` calls each at a time.

    A call goes to the actor with the fewest calls in flight.  Actors are restarted
    when they die and the calls they held are sent again (``max_restarts=-1``,
    ``max_task_retries=-1``).
    """

    def __init__(self, cls: type, args: Sequence[Any], *, size: int, concurrency: int,
                 num_cpus: float = 1.0, address: str | None = None) -> None:
        for value, what in ((size, "actors"), (concurrency, "concurrency")):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidParameterError(_("{name} must be an integer >= {minimum}, got {value!r}",
                                                     name=what, minimum=1, value=value))
        ray = connect(address)
        remote = ray.remote(cls).options(max_concurrency=concurrency, max_restarts=-1, max_task_retries=-1,
                                         num_cpus=num_cpus)
        self.actors = [remote.remote(*args) for __ in range(size)]
        self.in_flight = [0] * size
        self.concurrency = concurrency
        self._lock = threading.Lock()

    @property
    def capacity(self) -> int:
        """Calls the pool runs at once."""
        return len(self.actors) * self.concurrency

    def _acquire(self) -> int:
        with self._lock:
            i = min(range(len(self.actors)), key=self.in_flight.__getitem__)
            self.in_flight[i] += 1
            return i

    def _release(self, i: int) -> None:
        with self._lock:
            self.in_flight[i] -= 1

    def call(self, method: str, *args: Any) -> Any:
        """``actor.method(*args)`` on the least busy actor, waited for (from a thread)."""
        i = self._acquire()
        try:
            return _ray().get(getattr(self.actors[i], method).remote(*args))
        finally:
            self._release(i)

    async def acall(self, method: str, *args: Any) -> Any:
        """``actor.method(*args)`` on the least busy actor, awaited (from an event loop)."""
        i = self._acquire()
        try:
            return await getattr(self.actors[i], method).remote(*args)
        finally:
            self._release(i)

    def shutdown(self) -> None:
        ray = _ray()
        for actor in self.actors:
            ray.kill(actor)


class _RetrieverActor:
    """Builds the retriever once; answers ``search`` with normalised hits."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        from rankscope.retrieval.protocol import as_retriever, retriever_identity

        raw = factory()
        self.retriever = as_retriever(raw)
        self.name = str(getattr(self.retriever, "name", None) or type(raw).__name__)
        self.identity = retriever_identity(self.retriever)

    def describe(self) -> tuple[str, str]:
        return self.name, self.identity

    def search(self, query: str, k: int) -> list[Any]:
        from rankscope.retrieval.execute import run_on_shared_loop

        r = self.retriever
        if getattr(r, "is_async", False):
            return list(run_on_shared_loop(r.asearch_raw(query, k)))
        return list(r.search_raw(query, k) if hasattr(r, "search_raw") else r.search(query, k))


class _RayRetriever:
    """The actor pool seen by the runner as one ``async`` retriever."""

    def __init__(self, pool: ActorPool) -> None:
        self.pool = pool
        self.name, self._identity = _ray().get(pool.actors[0].describe.remote())

    def fingerprint(self) -> str:
        return self._identity  # the same resume cache as the retriever run locally

    async def search(self, query: str, k: int) -> list[Any]:
        return await self.pool.acall("search", query, k)  # type: ignore[no-any-return]


def evaluate_retriever(
    factory: Callable[[], Any],
    testset: Any,
    metrics: Iterable[str] | str | None = None,
    *,
    actors: int = 2,
    concurrency: int = 4,
    num_cpus: float = 1.0,
    address: str | None = None,
    **options: Any,
) -> Any:
    """:func:`rankscope.retrieval.runner.evaluate_retriever` with the calls spread over Ray actors.

    ``factory()`` builds the retriever on each actor (a model or an index loads once per
    actor instead of being pickled from the driver); ``actors`` actors answer at most
    ``concurrency`` calls each.  Every other option (``k``, ``retries``, ``cache``,
    ``on_result``, ``resume``, ``relevance`` ...) is the runner's.
    """
    from rankscope.retrieval.runner import evaluate_retriever as run_locally

    if "workers" in options:
        raise InvalidParameterError(_("workers= is set by actors * concurrency on Ray"))
    pool = ActorPool(_RetrieverActor, (factory,), size=actors, concurrency=concurrency, num_cpus=num_cpus,
                     address=address)
    try:
        return run_locally(_RayRetriever(pool), testset, metrics, workers=pool.capacity, batch_size=1, **options)
    finally:
        pool.shutdown()


class _JudgeActor:
    """Calls the per-item judge function (default :func:`~rankscope.labels.judge.judge_one`)."""

    def __init__(self, judge: Callable[..., Any] | None) -> None:
        from rankscope.labels.judge import judge_one

        self.judge = judge or judge_one

    def judge_item(self, query: str, doc: str, settings: Any) -> Any:
        return self.judge(query, doc, settings)


def judge_pairs(
    pairs: Iterable[tuple[str, str]],
    queries: Mapping[str, str],
    corpus: Mapping[str, str],
    settings: Any,
    *,
    actors: int = 2,
    concurrency: int = 8,
    judge: Callable[..., Any] | None = None,
    address: str | None = None,
    **options: Any,
) -> Any:
    """:func:`rankscope.labels.batch.judge_pairs` with each item judged on a pool of Ray actors.

    The cache, its resume, the cost plan and the report are the batch driver's (on this
    machine); ``judge`` is the per-item function (default ``judge_one``), run on the
    actors with their own HTTP clients.
    """
    from rankscope.labels import batch

    pool = ActorPool(_JudgeActor, (judge,), size=actors, concurrency=concurrency, num_cpus=0.25, address=address)

    def remote_judge(query: str, doc: str, settings: Any, *, client: Any = None) -> Any:
        return pool.call("judge_item", query, doc, settings)

    try:
        return batch.judge_pairs(pairs, queries, corpus, settings, concurrency=pool.capacity, judge=remote_judge,
                                 client=_NoClient(), **options)  # type: ignore[arg-type]
    finally:
        pool.shutdown()


class _NoClient:
    """Stands for the driver's HTTP client: the actors hold their own."""
