"""``/api/v1/runs``: upload (attached to a test set), list, get, delete runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, File, Form, Response, UploadFile
from fastapi import Path as PathParam
from fastapi import Query as QueryParam

from rankscope.errors import RankscopeError
from rankscope.service import store
from rankscope.service.api.deps import NAME_PATTERN, check_name, get_db, new_counter
from rankscope.service.api.errors import FieldError
from rankscope.service.api.schemas import MAX_ID, RunOut
from rankscope.service.db import Database, RunRecord
from rankscope.service.ingest import Uploaded, read_run_upload
from rankscope.service.uploads import Counter, upload_dir

router = APIRouter(prefix="/runs", tags=["runs"])
RunId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


@router.post("", status_code=201, response_model=RunOut, summary="Upload a run for a test set")
def upload_run(
    test_set_id: Annotated[int, Form(ge=1, le=MAX_ID)],
    file: Annotated[UploadFile, File(description="TREC run, JSON {query: {doc: score}} or ranked lists "
                                     "(gzip allowed)")],
    format: Annotated[Literal["trec", "json", "ranked"], Form()] = "trec",
    name: Annotated[str | None, Form(max_length=200, pattern=NAME_PATTERN)] = None,
    db: Database = Depends(get_db),
    counter: Counter = Depends(new_counter),
) -> RunRecord:
    filename = Path(file.filename or "file").name
    label = check_name(name, "name", filename.split(".")[0] or "run")
    with db.read() as s:
        store.get_testset(s, test_set_id, "test_set_id")
    with upload_dir() as tmp:
        run = read_run_upload(tmp, counter, Uploaded(file.file, filename), format, label)
    with db.write() as s:
        store.get_testset(s, test_set_id, "test_set_id")
        try:
            return store.create_run(s, test_set_id, run, format)
        except RankscopeError as exc:
            raise FieldError("file", exc) from None


@router.get("", response_model=list[RunOut], summary="List runs (optionally of one test set)")
def list_runs(test_set_id: Annotated[int | None, QueryParam(ge=1, le=MAX_ID)] = None,
              db: Database = Depends(get_db)) -> list[RunRecord]:
    with db.read() as s:
        return store.list_runs(s, test_set_id)


@router.get("/{run_id}", response_model=RunOut, summary="Get a run")
def read_run(run_id: RunId, db: Database = Depends(get_db)) -> RunRecord:
    with db.read() as s:
        return store.get_run(s, run_id)


@router.delete("/{run_id}", status_code=204, summary="Delete a run and its scores")
def remove_run(run_id: RunId, db: Database = Depends(get_db)) -> Response:
    store.delete_run(db, run_id)
    return Response(status_code=204)
