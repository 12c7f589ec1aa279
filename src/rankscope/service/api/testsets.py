"""``/api/v1/testsets``: upload, list, get, delete test sets."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, File, Form, Response, UploadFile
from fastapi import Path as PathParam
from fastapi import Query as QueryParam

from rankscope.errors import RankscopeError
from rankscope.i18n import _
from rankscope.service import store
from rankscope.service.api.deps import NAME_PATTERN, check_name, get_db, new_counter
from rankscope.service.api.errors import FieldError
from rankscope.service.api.schemas import MAX_ID, TestSetOut
from rankscope.service.db import Database, TestSet
from rankscope.service.ingest import Uploaded, read_testset_upload
from rankscope.service.uploads import Counter, upload_dir

router = APIRouter(prefix="/testsets", tags=["test sets"])
TestSetId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


@router.post("", status_code=201, response_model=TestSetOut, summary="Upload a test set")
def upload_testset(
    file: Annotated[UploadFile, File(description="JSON / JSONL test set, BEIR zip, or TREC qrels (gzip allowed)")],
    format: Annotated[Literal["json", "jsonl", "beir", "trec"], Form()] = "json",
    name: Annotated[str | None, Form(max_length=200, pattern=NAME_PATTERN)] = None,
    description: Annotated[str, Form(max_length=2000)] = "",
    queries: Annotated[UploadFile | None, File(description="TREC only: qid<TAB>text lines or JSONL")] = None,
    split: Annotated[str, Form(pattern=r"^[A-Za-z0-9_.-]{1,40}$")] = "test",
    db: Database = Depends(get_db),
    counter: Counter = Depends(new_counter),
) -> TestSet:
    filename = Path(file.filename or "file").name
    label = check_name(name, "name", Path(filename).stem)
    if "\x00" in description:
        raise FieldError("description", _("must not contain NUL characters"))
    extra = Uploaded(queries.file, Path(queries.filename).name, "queries") if queries and queries.filename else None
    with upload_dir() as tmp:
        parsed = read_testset_upload(tmp, counter, Uploaded(file.file, filename), format, queries=extra, split=split)
    try:
        test_set_id = store.create_testset(db, label, parsed.qrels, parsed.queries, parsed.documents, format,
                                           description, parsed.documents_cut)
    except RankscopeError as exc:
        raise FieldError("file", exc) from None
    with db.read() as s:
        return store.get_testset(s, test_set_id)


@router.get("", response_model=list[TestSetOut], summary="List test sets")
def list_testsets(db: Database = Depends(get_db)) -> list[TestSet]:
    with db.read() as s:
        return store.list_testsets(s)


@router.get("/{test_set_id}", response_model=TestSetOut, summary="Get a test set")
def read_testset(test_set_id: TestSetId, db: Database = Depends(get_db)) -> TestSet:
    with db.read() as s:
        return store.get_testset(s, test_set_id)


@router.get("/{test_set_id}/queries", summary="Queries of a test set (id and text)")
def list_queries(test_set_id: TestSetId, offset: Annotated[int, QueryParam(ge=0, le=MAX_ID)] = 0,
                 limit: Annotated[int, QueryParam(ge=1, le=10_000)] = 1000,
                 db: Database = Depends(get_db)) -> list[dict[str, str | None]]:
    with db.read() as s:
        store.get_testset(s, test_set_id)
        rows = store.testset_queries(s, test_set_id, offset, limit)
    return [{"query_id": q, "text": t} for q, t in rows]


@router.delete("/{test_set_id}", status_code=204, summary="Delete a test set with its runs and evaluations")
def remove_testset(test_set_id: TestSetId, db: Database = Depends(get_db)) -> Response:
    store.delete_testset(db, test_set_id)
    return Response(status_code=204)
