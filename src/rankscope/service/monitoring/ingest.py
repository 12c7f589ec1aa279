"""Event ingest: requests hand their checked events to one writer thread that commits them in groups.

A request is answered only after its events are committed (nothing acknowledged is lost, even if the
process is killed right after), yet a burst of many small requests costs one short transaction per
group, not one per request: the writer takes everything queued (up to :data:`GROUP_ROWS` events),
inserts it in one transaction (a repeated event key is skipped) and wakes the requests it held.
Transactions stay short, so ingest never holds the database's write lock long enough to stall the
workers that score evaluations; a database error fails the requests of that group (the client
retries: a retry is stored once), never the writer.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from rankscope.monitor.events import Rejection, RetrievalEvent
from rankscope.service.db import Database
from rankscope.service.store import monitoring as mstore

__all__ = ["EventWriter", "Batch", "event_row", "GROUP_ROWS"]

log = logging.getLogger("rankscope.service.monitoring")

#: the most events one transaction of the writer holds
GROUP_ROWS = 5000


def event_row(monitor_id: int, ev: RetrievalEvent, received: float) -> dict[str, Any]:
    return {"monitor_id": monitor_id, "key": ev.key, "time": ev.time, "received_at": received,
            "retriever": ev.retriever, "query": ev.query, "latency_ms": ev.latency_ms, "source": ev.source,
            "aggregated": False,
            "results": [[h.id, h.score, h.text] for h in ev.results]}


@dataclass
class Batch:
    """One request's events and rejections for one monitor, and the future its request waits on."""

    monitor_id: int
    rows: list[dict[str, Any]]
    rejected: list[Rejection]
    done: Future[int]


class EventWriter:
    """The writer thread (see the module docstring); :meth:`submit` returns a future of the rows written."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._queue: queue.Queue[Batch | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.groups = 0

    def start(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="rankscope-event-writer", daemon=True)
                self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout)
            self._thread = None

    def submit(self, monitor_id: int, events: list[RetrievalEvent], rejected: list[Rejection]) -> Future[int]:
        self.start()
        now = time.time()
        fut: Future[int] = Future()
        self._queue.put(Batch(monitor_id, [event_row(monitor_id, ev, now) for ev in events], rejected, fut))
        return fut

    def _take(self, first: Batch) -> tuple[list[Batch], bool]:
        group, n, stop = [first], len(first.rows), False
        while n < GROUP_ROWS:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if item is None:
                stop = True
                break
            group.append(item)
            n += len(item.rows)
        return group, stop

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            group, stop = self._take(first)
            try:
                self._write(group)
            except Exception:  # one batch may be at fault (its monitor was deleted): write each alone
                for b in group:
                    try:
                        self._write([b])
                    except Exception as exc:  # this request fails (its client retries); the others are stored
                        log.exception("writing %d events of monitor %s failed", len(b.rows), b.monitor_id)
                        b.done.set_exception(exc)
                    else:
                        b.done.set_result(len(b.rows))
            else:
                for b in group:
                    b.done.set_result(len(b.rows))
            self.groups += 1
            if stop:
                return

    def _write(self, group: list[Batch]) -> None:
        rows = [r for b in group for r in b.rows]
        counts: dict[int, dict[str, tuple[int, str]]] = {}
        for b in group:
            by_reason = Counter(r.reason for r in b.rejected)
            last = {r.reason: f"{r.where}: {r.message}" for r in b.rejected}
            mine = counts.setdefault(b.monitor_id, {})
            for reason, n in by_reason.items():
                prev = mine.get(reason, (0, ""))
                mine[reason] = (prev[0] + n, last[reason])
        with self.db.write() as s:
            if rows:
                mstore.insert_events(s, self.db, rows)
            for monitor_id, c in counts.items():
                if c:
                    mstore.count_rejects(s, self.db, monitor_id, c)
