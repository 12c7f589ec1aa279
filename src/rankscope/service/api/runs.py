"""``/api/v1/runs``: upload (attached to a test set), list, get, delete runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, File, Form, Response, UploadFile
from fastapi import Path as PathParam
from fastapi import Query as QueryParam
from sqlalchemy import select

from rankscope.errors import RankscopeError
from rankscope.service.api.deps import check_name, get_db, saved_upload
from rankscope.service.api.errors import FieldError
from rankscope.service.api.schemas import MAX_ID, RunOut
from rankscope.service.db import Database, RunRecord
from rankscope.service.ingest import parse_run
from rankscope.service.store import create_run, delete_run, get_run, get_testset

router = APIRouter(prefix="/runs", tags=["runs"])
RunId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


@router.post("", status_code=201, response_model=RunOut, summary="Upload a run for a test set")
def upload_run(
    test_set_id: Annotated[int, Form(ge=1, le=MAX_ID)],
    file: Annotated[UploadFile, File(description="TREC run, JSON {query: {doc: score}} or ranked lists")],
    format: Annotated[Literal["trec", "json", "ranked"], Form()] = "trec",
    name: Annotated[str | None, Form(max_length=200)] = None,
    db: Database = Depends(get_db),
) -> RunRecord:
    label = check_name(name, "name", Path(file.filename or "run").name.split(".")[0] or "run")
    with db.read() as s:
        get_testset(s, test_set_id, "test_set_id")
    with saved_upload(file, "file") as path:
        try:
            run = parse_run(path, format, label, filename=file.filename or "file")
        except RankscopeError as exc:
            raise FieldError("file", exc) from None
    with db.write() as s:
        get_testset(s, test_set_id, "test_set_id")
        try:
            rec = create_run(s, test_set_id, run, format)
        except RankscopeError as exc:
            raise FieldError("file", exc) from None
        return rec


@router.get("", response_model=list[RunOut], summary="List runs (optionally of one test set)")
def list_runs(test_set_id: Annotated[int | None, QueryParam(ge=1, le=MAX_ID)] = None,
              db: Database = Depends(get_db)) -> list[RunRecord]:
    with db.read() as s:
        q = select(RunRecord).order_by(RunRecord.id)
        if test_set_id is not None:
            q = q.where(RunRecord.test_set_id == test_set_id)
        return list(s.scalars(q))


@router.get("/{run_id}", response_model=RunOut, summary="Get a run")
def read_run(run_id: RunId, db: Database = Depends(get_db)) -> RunRecord:
    with db.read() as s:
        return get_run(s, run_id)


@router.delete("/{run_id}", status_code=204, summary="Delete a run and its scores")
def remove_run(run_id: RunId, db: Database = Depends(get_db)) -> Response:
    delete_run(db, run_id)
    return Response(status_code=204)
