"""rankscope._threads: one pool per process, never one per call; a piece that maps again runs inline."""

from __future__ import annotations

import threading

import pytest

from rankscope import _threads


def test_calls_share_one_pool_and_start_no_thread_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKSCOPE_THREADS", "2")
    assert _threads.thread_map(lambda x: x + 1, [1, 2, 3]) == [2, 3, 4]
    pool = _threads.shared_pool(2)
    before = threading.active_count()
    for _ in range(20):
        assert _threads.thread_map(lambda x: x * 2, [1, 2, 3, 4]) == [2, 4, 6, 8]
    assert _threads.shared_pool(2) is pool
    assert threading.active_count() == before


def test_a_piece_that_maps_again_runs_its_pieces_in_its_own_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RANKSCOPE_THREADS", "2")

    def outer(x: int) -> list[str]:  # two pieces, each mapping again: a pool waiting on itself would hang
        return _threads.thread_map(lambda _: threading.current_thread().name, [x, x])

    names = _threads.thread_map(outer, [1, 2])
    assert all(len(set(inner)) == 1 for inner in names)  # the inner pieces stayed in the worker's thread


def test_one_piece_or_one_thread_runs_in_the_calling_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    here = threading.current_thread().name
    assert _threads.thread_map(lambda _: threading.current_thread().name, [0]) == [here]
    monkeypatch.setenv("RANKSCOPE_THREADS", "1")
    assert _threads.thread_map(lambda _: threading.current_thread().name, [0, 1]) == [here, here]
