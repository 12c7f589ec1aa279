"""Run independent numpy / Arrow pieces of work on a few threads.

numpy's element-wise loops, sorts and gathers and Arrow's kernels release the
GIL, so pieces of a row-wise pass over disjoint row ranges run in parallel on
several cores.  Each piece writes only its own rows, so the result is the same
as a sequential loop, whatever the number of threads.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["thread_map", "worker_count"]

T = TypeVar("T")
R = TypeVar("R")

_MAX_WORKERS = 8


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


def thread_map(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(x) for x in items]``, computed on up to :func:`worker_count` threads, results in order.

    >>> thread_map(lambda x: x * x, [1, 2, 3])
    [1, 4, 9]
    """
    workers = min(worker_count(), len(items))
    if workers <= 1:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rankscope") as pool:
        return list(pool.map(fn, items))
