"""The worker pool: threads that claim queued (or abandoned) jobs and run them."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid

from rankscope.choices import LANGS
from rankscope.errors import RankscopeError
from rankscope.service import store
from rankscope.service.db import Database, Job
from rankscope.service.settings import Settings

__all__ = ["WorkerPool", "LeaseKeeper", "run_job"]

log = logging.getLogger("rankscope.service.jobs")


class LeaseKeeper:
    """A heartbeat that renews a job's lease every third of the lease, whatever the job is doing.

    A slow retriever request or a long scoring step therefore never lets the lease run out
    while the job is alive; only a dead process stops renewing.  ``lost`` is set when the
    lease could not be renewed (the job was deleted or taken over).
    """

    def __init__(self, db: Database, job_id: str, owner: str, lease_seconds: float) -> None:
        self.db, self.job_id, self.owner, self.lease_seconds = db, job_id, owner, lease_seconds
        self.lost = threading.Event()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"rankscope-lease-{job_id[:8]}", daemon=True)

    def _beat(self) -> None:
        while not self._done.wait(self.lease_seconds / 3):
            try:
                if not store.renew_lease(self.db, self.job_id, self.owner, self.lease_seconds):
                    self.lost.set()
                    return
            except Exception:  # a database hiccup: try again at the next beat
                log.exception("renewing the lease of job %s failed", self.job_id)

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join(10)


class TimeSlice:
    """A live job's turn: over once it has run ``seconds`` while another live job waits for a worker — and has
    finished a query in this turn, or run ``patience`` seconds (the retriever timeout), so that every turn moves
    its job on (slow jobs taking turns never starve one another).

    A job whose turn is over stops asking (its in-flight requests are abandoned: asked again later) and gives
    its lease back; it is claimed again after the jobs that waited (:func:`~rankscope.service.store.claim_job`
    takes the least-claimed first), and resumes where it stopped.  Whether a job waits is asked of the database
    at most once a second.
    """

    def __init__(self, db: Database, seconds: float, patience: float) -> None:
        self.db, self.seconds, self.patience = db, seconds, patience
        self.start = time.monotonic()
        self.ended = False
        self.finished = 0
        self._asked = 0.0

    def answered(self) -> None:
        """A query of the job finished (answered or failed) in this turn."""
        self.finished += 1

    def over(self) -> bool:
        if self.ended:
            return True
        now = time.monotonic()
        ran = now - self.start
        if ran < self.seconds or (not self.finished and ran < self.patience) or now - self._asked < 1.0:
            return False
        self._asked = now
        try:
            self.ended = store.jobs_waiting(self.db, ("live",)) > 0
        except Exception:  # a database hiccup: go on, ask again later
            log.exception("asking for waiting live jobs failed")
        return self.ended


def run_job(db: Database, settings: Settings, job_id: str, owner: str,
            stopping: threading.Event | None = None) -> None:
    """Run one claimed job to its end, until its lease is lost, or until ``stopping`` is set."""
    from rankscope.service.jobs.live import fetch_all, finish_live_job
    from rankscope.service.jobs.scoring import score_job_runs

    with db.read() as s:
        job = s.get(Job, job_id)
    if job is None:
        return
    stop = stopping or threading.Event()
    turn = TimeSlice(db, settings.live_slice_seconds, settings.retriever_timeout) if job.kind == "live" else None
    with LeaseKeeper(db, job_id, owner, settings.lease_seconds) as keeper:

        def keep_going() -> bool:
            return not stop.is_set() and not keeper.lost.is_set() and (turn is None or not turn.over())

        try:
            if job.kind == "live":
                if not fetch_all(db, settings, job, keep_going, on_answer=turn.answered if turn else None):
                    if stop.is_set() or (turn is not None and turn.ended):
                        store.release_lease(db, job_id, owner)  # another worker (or this one) goes on with it
                    return
                finish_live_job(db, job)
            score_job_runs(db, job, keep_going)
            if keep_going():
                store.finish_job(db, job_id, owner, "done")
            elif stop.is_set():
                store.release_lease(db, job_id, owner)
        except RankscopeError as exc:
            store.finish_job(db, job_id, owner, "failed", str(exc), {lang: exc.text(lang) for lang in LANGS})
        except Exception as exc:  # a bug or a database failure: record it, keep the worker alive
            log.exception("job %s failed", job_id)
            store.finish_job(db, job_id, owner, "failed", f"internal error: {type(exc).__name__}: {exc}")


class WorkerPool:
    """Daemon threads polling the database for jobs, each with its own lease owner id.

    ``settings.workers`` threads score stored runs (and render the queued reports when no
    evaluation waits); ``settings.report_workers`` threads only render reports, so that a report asked
    for under a load of evaluations is rendered at once, not after the load; ``settings.live_workers`` other
    threads run live retriever jobs, so that
    a slow retriever never holds up scoring; live jobs take turns (:class:`TimeSlice`), so that
    slow ones never hold up the others (with ``workers=0`` the process runs no job at all:
    API only).
    """

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings
        self.base = f"{socket.gethostname()[:30]}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._reports_wake = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        if self.settings.workers == 0:
            return
        lanes = [("evaluate", i) for i in range(self.settings.workers)]
        lanes += [("live", i) for i in range(self.settings.live_workers)]
        for kind, i in lanes:
            owner = f"{self.base}-{kind}{i}"
            t = threading.Thread(target=self._loop, args=(owner, (kind,)), name=f"rankscope-{kind}-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        for i in range(self.settings.report_workers):  # reports have their own: evaluations never starve them
            t = threading.Thread(target=self._reports, name=f"rankscope-report-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def _reports(self) -> None:
        while not self._stop.is_set():
            if not self._render():
                self._reports_wake.wait(self.settings.poll_seconds)
                self._reports_wake.clear()

    def wake(self) -> None:
        """A job (or a report) was just queued: look now instead of at the next poll."""
        self._wake.set()
        self._reports_wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        self._reports_wake.set()
        for t in self._threads:
            t.join(timeout)
        self._threads.clear()

    def _render(self) -> bool:
        """Render one pending report (scoring threads do this when no evaluation waits)."""
        from rankscope.service.reports import render_next

        try:
            return render_next(self.db, max(300.0, 20 * self.settings.lease_seconds))
        except Exception:
            log.exception("rendering a report failed")
            return False

    def _loop(self, owner: str, kinds: tuple[str, ...]) -> None:
        while not self._stop.is_set():
            try:
                job_id = store.claim_job(self.db, owner, self.settings.lease_seconds, kinds)
            except Exception:
                log.exception("claiming a job failed")
                job_id = None
            if job_id is None:
                if "evaluate" in kinds and self._render():
                    continue
                self._wake.wait(self.settings.poll_seconds)
                self._wake.clear()
                continue
            run_job(self.db, self.settings, job_id, owner, self._stop)
