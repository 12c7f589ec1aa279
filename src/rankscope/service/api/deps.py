"""Shared request dependencies: the database handle, the upload limits, name checks."""

from __future__ import annotations

from fastapi import Request

from rankscope.i18n import _
from rankscope.service.api.errors import FieldError
from rankscope.service.db import Database
from rankscope.service.jobs import WorkerPool
from rankscope.service.uploads import Counter

__all__ = ["get_db", "get_pool", "new_counter", "check_name", "NAME_PATTERN"]


def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def get_pool(request: Request) -> WorkerPool:
    pool: WorkerPool = request.app.state.pool
    return pool


def new_counter(request: Request) -> Counter:
    """The decompressed-bytes and rows budget of one upload request (``--max-data-mb``, ``--max-rows``)."""
    settings = request.app.state.settings
    return Counter(max_bytes=settings.max_data_bytes, max_rows=settings.max_rows)


#: a name sent in a form holds no control character (said in the schema, so that a client knows before sending)
NAME_PATTERN = r"^[^\x00-\x1f]*$"


def check_name(value: str | None, field: str, default: str) -> str:
    name = (value or "").strip() or default
    if len(name) > 200:
        raise FieldError(field, _("at most 200 characters, got {n}", n=len(name)))
    if any(ord(c) < 32 for c in name):
        raise FieldError(field, _("must not contain control characters"))
    return name
