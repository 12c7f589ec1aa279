"""Background jobs: a pool of worker threads that claim evaluations from the database.

A job is claimed with a lease (``lease_until``) that its worker renews as it
stores per-query results; when a process dies, the lease runs out and any worker
(of this or another process, e.g. after a restart) takes the job over and goes on
from the results already stored.  Unique constraints make every stored result
exactly-once.
"""

from rankscope.service.jobs.worker import WorkerPool

__all__ = ["WorkerPool"]
