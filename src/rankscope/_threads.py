"""Run independent numpy / Arrow pieces of work on a few threads.

numpy's element-wise loops, sorts and gathers and Arrow's kernels release the
GIL, so pieces of a row-wise pass over disjoint row ranges run in parallel on
several cores.  Each piece writes only its own rows, so the result is the same
as a sequential loop, whatever the number of threads.

The threads belong to one pool per process, created on first use and kept
(starting and joining threads on every call cost more than the work of a small
input).  A piece that itself calls :func:`thread_map` runs its pieces in its own
thread (a pool waiting on itself could wait forever), and so does a call with
one piece.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["thread_map", "worker_count", "shared_pool"]

T = TypeVar("T")
R = TypeVar("R")

_MAX_WORKERS = 8

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_size = 0
_inside = threading.local()  # set in the pool's threads


def worker_count() -> int:
    """Threads used for large row-wise passes: the CPUs this process may use, at most 8.

    ``RANKSCOPE_THREADS`` overrides it (``1`` runs everything in the calling thread).
    """
    env = os.environ.get("RANKSCOPE_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return min(int(env), _MAX_WORKERS)
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, _MAX_WORKERS))


def _mark_worker() -> None:
    _inside.worker = True


def _forget_pool() -> None:
    """In a forked child: the parent's threads do not exist here, so its pool must not be used."""
    global _pool, _pool_size, _lock
    _pool, _pool_size, _lock = None, 0, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def shared_pool(workers: int) -> ThreadPoolExecutor:
    """The process's pool of at least ``workers`` threads (created on first use, replaced by a larger one when
    more threads are asked for; threads start only when work arrives)."""
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size < workers:
            old = _pool
            _pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rankscope", initializer=_mark_worker)
            _pool_size = workers
            if old is not None:
                old.shutdown(wait=False)
        return _pool


def thread_map(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(x) for x in items]``, computed on up to :func:`worker_count` threads, results in order.

    >>> thread_map(lambda x: x * x, [1, 2, 3])
    [1, 4, 9]
    """
    workers = min(worker_count(), len(items))
    if workers <= 1 or getattr(_inside, "worker", False):
        return [fn(x) for x in items]
    return list(shared_pool(workers).map(fn, items))
