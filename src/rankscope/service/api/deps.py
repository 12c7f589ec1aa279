"""Shared request dependencies: the database handle, upload spooling, name checks."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi import Request, UploadFile

from rankscope.service.api.errors import FieldError
from rankscope.service.db import Database
from rankscope.service.jobs import WorkerPool

__all__ = ["get_db", "get_pool", "saved_upload", "check_name"]


def get_db(request: Request) -> Database:
    db: Database = request.app.state.db
    return db


def get_pool(request: Request) -> WorkerPool:
    pool: WorkerPool = request.app.state.pool
    return pool


@contextmanager
def saved_upload(upload: UploadFile, field: str) -> Iterator[Path]:
    """Copy an uploaded file to a temporary path (keeping its suffix, e.g. ``.gz``)."""
    name = Path(upload.filename or "upload").name
    suffix = "".join(Path(name).suffixes[-2:])[:20]
    with tempfile.TemporaryDirectory(prefix="rankscope-upload-") as tmp:
        path = Path(tmp) / f"upload{suffix}"
        with open(path, "wb") as fh:
            shutil.copyfileobj(upload.file, fh, 1 << 20)
        if path.stat().st_size == 0:
            raise FieldError(field, "the uploaded file is empty")
        yield path


def check_name(value: str | None, field: str, default: str) -> str:
    name = (value or "").strip() or default
    if len(name) > 200:
        raise FieldError(field, f"at most 200 characters, got {len(name)}")
    if any(ord(c) < 32 for c in name):
        raise FieldError(field, "must not contain control characters")
    return name
