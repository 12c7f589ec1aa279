"""``/api/v1/judging``: people judging a pool — tasks, items, judgments, progress, agreement, export."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Request, Response, UploadFile
from fastapi import Path as PathParam
from fastapi import Query as QueryParam
from fastapi.responses import PlainTextResponse
from sqlalchemy.orm import Session

from rankscope.errors import Items, Message
from rankscope.i18n import _
from rankscope.service import store
from rankscope.service.api.deps import NAME_PATTERN, check_name, get_db, new_counter
from rankscope.service.api.errors import FieldError
from rankscope.service.api.schemas import (
    MAX_ID,
    AgreementOut,
    AnnotatorIn,
    AnnotatorInvite,
    AnnotatorOut,
    ErrorBody,
    ExportOut,
    JudgingItemOut,
    JudgingTaskOut,
    JudgmentIn,
    JudgmentOut,
    NextItemOut,
    QueryProgressOut,
)
from rankscope.service.db import Database, JudgingItem, JudgingTask, Judgment
from rankscope.service.ingest import MAX_DOC_CHARS as STORED_DOC_CHARS
from rankscope.service.ingest import Uploaded
from rankscope.service.judging.identity import Identity, identify, require_annotator
from rankscope.service.judging.ingest import (
    build_task,
    read_pool_upload,
    read_prelabels_upload,
    read_texts_upload,
)
from rankscope.service.judging.results import agreement, export_labels
from rankscope.service.uploads import Counter, upload_dir

router = APIRouter(prefix="/judging", tags=["judging"])
TaskId = Annotated[int, PathParam(ge=1, le=MAX_ID)]
AnnotatorQuery = Annotated[str | None, QueryParam(min_length=1, max_length=100)]
Merge = Literal["median", "min", "max"]
NOTHING: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorBody, "description": "no item has a grade yet (nothing to export)"}}


def _upload(f: UploadFile | None, field: str) -> Uploaded | None:
    return Uploaded(f.file, Path(f.filename).name, field) if f is not None and f.filename else None


def create_judging_task(db: Database, counter: Counter, pool: Uploaded, *, name: str | None, test_set_id: int | None,
                        queries: Uploaded | None, corpus: Uploaded | None, labels: Uploaded | None,
                        provenance: Uploaded | None, order: str) -> int:
    """Read the uploads, check that every pool query and document has a text, store the task (API and dashboard)."""
    if test_set_id is not None and (queries or corpus):
        raise FieldError("test_set_id", _("give either a test set of the service or queries/corpus files, not both"))
    if test_set_id is None and queries is None:
        raise FieldError("test_set_id", _("the pool needs texts: give test_set_id (a test set of the service) or a "
                                          "queries file (and a corpus file unless it holds both)"))
    if provenance is not None and labels is None:
        raise FieldError("provenance", _("a provenance file goes with a labels file (the qrels it describes)"))
    label = check_name(name, "name", Path(pool.filename).name.split(".")[0] or "pool")
    with upload_dir() as tmp:
        records = read_pool_upload(tmp, counter, pool)
        qids = {r["query_id"] for r in records}
        dids = {r["doc_id"] for r in records}
        if test_set_id is not None:
            with db.read() as s:
                ts = store.get_testset(s, test_set_id, "test_set_id")
                q_texts, d_texts = store.testset_texts(s, test_set_id, qids, dids)
            fields = ("test_set_id", "test_set_id")
            source: str | Message = _("test set {id} {name!r}", id=ts.id, name=ts.name)
        else:
            assert queries is not None
            if corpus is not None:
                q_texts = read_texts_upload(tmp, counter, queries, ("queries",))["queries"]
                d_texts = read_texts_upload(tmp, counter, corpus, ("corpus",))["corpus"]
            else:  # one file holds both (a test set with a corpus)
                both = read_texts_upload(tmp, counter, queries, ("queries", "corpus"))
                q_texts, d_texts = both["queries"], both["corpus"]
            fields = ("queries", "corpus" if corpus is not None else "queries")
            source = queries.filename if corpus is None else _("{first} and {second}", first=queries.filename,
                                                               second=corpus.filename)
        pre = read_prelabels_upload(tmp, counter, labels, provenance) if labels is not None else None
    parsed = build_task(records, q_texts, d_texts, texts_field=fields, texts_source=source, prelabels=pre,
                        order=order)
    parsed.info["pool_file"] = pool.filename
    if labels is not None:
        parsed.info["labels_file"] = labels.filename
    if test_set_id is not None:  # test sets keep document texts up to STORED_DOC_CHARS characters
        parsed.info["stored_doc_chars"] = STORED_DOC_CHARS
        parsed.info["docs_maybe_cut_on_upload"] = sum(1 for _d, t, *_r in parsed.docs if len(t) >= STORED_DOC_CHARS)
    return store.create_task(db, label, parsed.queries, parsed.docs, parsed.items, parsed.info)


def task_out(s: Session, task: JudgingTask) -> dict[str, Any]:
    counts = store.annotator_counts(s, task.id)
    annotators = [{"annotator": who, **c, "remaining": task.n_items - c["judged"] - c["skipped"]}
                  for who, c in counts.items()]
    return {"id": task.id, "name": task.name, "created_at": task.created_at, "n_items": task.n_items,
            "n_queries": task.n_queries, "n_prelabels": task.n_prelabels, "info": task.info,
            "annotators": annotators}


def judgment_out(item: JudgingItem, j: Judgment) -> dict[str, Any]:
    return {"item_id": item.id, "query_id": item.query_id, "doc_id": item.doc_id, "annotator": j.annotator,
            "grade": j.grade, "skipped": j.grade is None, "note": j.note, "prelabel_shown": bool(j.prelabel_shown),
            "updated_at": j.updated_at}


def prelabel_out(item: JudgingItem) -> dict[str, Any] | None:
    if item.prelabel_source is None:
        return None
    return {"grade": item.prelabel, "source": item.prelabel_source, "model": item.prelabel_model,
            "prompt": item.prelabel_prompt, "error": item.prelabel_error}


def items_out(s: Session, task_id: int, items: list[JudgingItem], annotator: str | None,
              prelabels: bool) -> list[dict[str, Any]]:
    """The API view of items: texts, the pre-label (only when asked: the caller records that it was shown) and the
    annotator's judgment."""
    queries, docs = store.item_texts(s, task_id, (i.query_id for i in items), (i.doc_id for i in items))
    out = []
    for it in items:
        text, length = docs.get(it.doc_id, ("", 0))
        mine = store.get_judgment(s, it.id, annotator) if annotator else None
        out.append({"id": it.id, "position": it.position, "query_id": it.query_id,
                    "query_text": queries.get(it.query_id, ""), "doc_id": it.doc_id, "doc_text": text,
                    "doc_length": length, "doc_cut": length > len(text), "best_rank": it.best_rank, "runs": it.runs,
                    "prelabel": prelabel_out(it) if prelabels else None,
                    "judgment": judgment_out(it, mine) if mine else None})
    return out


def _known(s: Session, task_id: int, annotator: str | None) -> None:
    """422 naming ``annotator`` when nobody of that name judged in the task (with the names that did)."""
    if annotator is None:
        return
    names = list(store.annotator_counts(s, task_id))
    if annotator not in names:
        import difflib

        close = Items(tuple(difflib.get_close_matches(annotator, names, n=3)))
        if close.items:
            raise FieldError("annotator", _("no judgment by {annotator!r} in judging task {task}; did you mean: "
                                            "{close}?", annotator=annotator, task=task_id, close=close),
                                          status=404)
        known = Items(tuple(names)) if names else _("none yet")
        raise FieldError("annotator", _("no judgment by {annotator!r} in judging task {task}; annotators: {names}",
                                        annotator=annotator, task=task_id, names=known),
                                      status=404)


def export_for(db: Database, task_id: int, annotator: str | None, merge: str,
               prelabels: bool) -> tuple[str, str, dict[str, Any]]:
    """``(qrels text, provenance sidecar text, summary)`` of the task's labels (see
    :mod:`rankscope.service.judging.results`); 409 when there is nothing to export."""
    with db.read() as s:
        task = store.get_task(s, task_id)
        _known(s, task_id, annotator)
        rows = store.task_judgments(s, task_id, annotator)
        pre = [{**(it.prelabel_receipt or {}), "query_id": it.query_id, "doc_id": it.doc_id, "grade": it.prelabel,
                "source": it.prelabel_source, "model": it.prelabel_model, "prompt": it.prelabel_prompt,
                "error": it.prelabel_error}
               for it in store.task_items(s, task_id) if it.prelabel_source is not None] if prelabels else []
        n_items = task.n_items
    graded = [(it.query_id, it.doc_id, j.annotator, j.grade, bool(j.prelabel_shown)) for it, j in rows
              if j.grade is not None]
    graded_items = {(row[0], row[1]) for row in graded}
    skipped = len({(it.query_id, it.doc_id) for it, j in rows if j.grade is None} - graded_items)
    labels, summary = export_labels(graded, pre, n_items=n_items, merge=merge, skipped=skipped,
                                    with_prelabels=prelabels)
    if len(labels.qrels) == 0:
        raise FieldError("path", _("judging task {task}: no item has a grade yet, nothing to export", task=task_id),
                                 status=409)
    with tempfile.TemporaryDirectory(prefix="rankscope-export-") as tmp:
        side = labels.write(Path(tmp) / "judged.qrels")
        return ((Path(tmp) / "judged.qrels").read_text(encoding="utf-8"), side.read_text(encoding="utf-8"),
                summary)


# --- routes -------------------------------------------------------------------------------------------

@router.post("", status_code=201, response_model=JudgingTaskOut, summary="Upload a pool to judge, with its texts")
def upload_task(
    pool: Annotated[UploadFile, File(description="the pool `rankscope pool` wrote: JSON Lines with query_id and "
                                                 "doc_id (gzip allowed)")],
    name: Annotated[str | None, Form(max_length=200, pattern=NAME_PATTERN)] = None,
    test_set_id: Annotated[int | None, Form(ge=1, le=MAX_ID, description="take the texts from this test set")] = None,
    queries: Annotated[UploadFile | None, File(description="query texts: BEIR queries.jsonl, a test set, or "
                                                           "id<TAB>text lines")] = None,
    corpus: Annotated[UploadFile | None, File(description="document texts: BEIR corpus.jsonl, a test set with a "
                                                          "corpus, or id<TAB>text lines (default: the queries file)")]
    = None,
    labels: Annotated[UploadFile | None, File(description="pre-labels: a qrels file (rankscope judge)")] = None,
    provenance: Annotated[UploadFile | None, File(description="the labels' provenance sidecar")] = None,
    order: Annotated[Literal["shuffled", "pool"], Form()] = "shuffled",
    db: Database = Depends(get_db),
    counter: Counter = Depends(new_counter),
) -> dict[str, Any]:
    up = _upload(pool, "pool")
    if up is None:
        raise FieldError("pool", _("upload the pool file"))
    task_id = create_judging_task(db, counter, up, name=name, test_set_id=test_set_id,
                                  queries=_upload(queries, "queries"), corpus=_upload(corpus, "corpus"),
                                  labels=_upload(labels, "labels"), provenance=_upload(provenance, "provenance"),
                                  order=order)
    with db.read() as s:
        return task_out(s, store.get_task(s, task_id))


@router.get("", response_model=list[JudgingTaskOut], summary="List judging tasks")
def list_tasks(db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    with db.read() as s:
        return [task_out(s, t) for t in store.list_tasks(s)]


@router.get("/{task_id}", response_model=JudgingTaskOut, summary="A judging task and each annotator's progress")
def read_task(task_id: TaskId, db: Database = Depends(get_db)) -> dict[str, Any]:
    with db.read() as s:
        return task_out(s, store.get_task(s, task_id))


@router.delete("/{task_id}", status_code=204, summary="Delete a judging task with its judgments")
def remove_task(task_id: TaskId, db: Database = Depends(get_db)) -> Response:
    store.delete_task(db, task_id)
    return Response(status_code=204)


def _who(request: Request, db: Database, task_id: int, annotator: str | None) -> tuple[Identity, str | None]:
    """The caller and whose judgments it may see: an annotator only their own (``annotator`` another name:
    403), the administrator anyone's."""
    me = identify(request, db, task_id)
    if me.annotator is None:
        return me, annotator
    if annotator is not None and annotator != me.name:
        raise FieldError("annotator", _("an annotator sees only their own judgments ({annotator!r})",
                                        annotator=me.name),
                                      status=403)
    return me, me.name


def _show_prelabels(db: Database, task_id: int, me: Identity, items: list[JudgingItem], via: str) -> None:
    """Record that the pre-labels of ``items`` are shown to the caller (403 for a blind annotator)."""
    if me.blind:
        raise FieldError("prelabels", _("{annotator!r} judges blind: the pre-labels are not shown to them",
                                        annotator=me.name),
                                      status=403)
    store.record_views(db, task_id, [i.id for i in items if i.prelabel_source is not None], me.name, via)


@router.post("/{task_id}/annotators", status_code=201, response_model=AnnotatorInvite,
             summary="Invite an annotator: a token (shown once, stored hashed) and the dashboard's invitation link",
             responses={409: {"model": ErrorBody, "description": "an annotator of that name is already invited"}})
def invite(task_id: TaskId, body: AnnotatorIn, request: Request, db: Database = Depends(get_db)) -> dict[str, Any]:
    if identify(request, db, task_id).annotator is not None:
        raise FieldError("path", _("annotators cannot invite annotators"), status=403)
    try:
        who, token = store.create_annotator(db, task_id, body.name, body.blind)
    except store.AnnotatorExists as exc:
        raise FieldError("name", exc, status=409) from None
    return {"name": who.name, "blind": who.blind, "created_at": who.created_at, "token": token,
            "link": f"/judging/{task_id}/join?token={token}"}


@router.get("/{task_id}/annotators", response_model=list[AnnotatorOut], summary="The annotators invited to a task")
def annotators(task_id: TaskId, db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    with db.read() as s:
        store.get_task(s, task_id)
        return [{"name": a.name, "blind": a.blind, "created_at": a.created_at}
                for a in store.list_annotators(s, task_id)]


@router.get("/{task_id}/items", response_model=list[JudgingItemOut], summary="Items to judge, with their texts")
def list_items(task_id: TaskId, request: Request, offset: Annotated[int, QueryParam(ge=0, le=MAX_ID)] = 0,
               limit: Annotated[int, QueryParam(ge=1, le=1000)] = 100, annotator: AnnotatorQuery = None,
               prelabels: Annotated[bool, QueryParam(description="also the pre-labels: the service records that "
                                                                 "they were shown to the caller (an annotator's "
                                                                 "later judgments of them are not blind)")] = False,
               db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    me, annotator = _who(request, db, task_id, annotator)
    with db.read() as s:
        store.get_task(s, task_id)
        items = store.task_items(s, task_id, offset, limit)
    if prelabels:
        _show_prelabels(db, task_id, me, items, "api")
    with db.read() as s:
        return items_out(s, task_id, items, annotator, prelabels)


@router.get("/{task_id}/next", response_model=NextItemOut,
            summary="The next item an annotator has neither judged nor skipped")
def next_item(task_id: TaskId, request: Request,
              annotator: Annotated[str | None, QueryParam(min_length=1, max_length=100,
                                                          description="whose next item (the administrator; an "
                                                                      "annotator's token names them)")] = None,
              after: Annotated[int, QueryParam(ge=-1, le=MAX_ID)] = -1, prelabels: bool = False,
              db: Database = Depends(get_db)) -> dict[str, Any]:
    me, annotator = _who(request, db, task_id, annotator)
    if annotator is None:
        raise FieldError("annotator", _("name the annotator (or send their token)"), status=401)
    with db.read() as s:
        store.get_task(s, task_id)
        item, remaining = store.next_item(s, task_id, annotator, after)
    if item is not None and prelabels:
        _show_prelabels(db, task_id, me, [item], "api")
    with db.read() as s:
        return {"item": items_out(s, task_id, [item], annotator, prelabels)[0] if item else None,
                "remaining": remaining}


@router.post("/{task_id}/judgments", response_model=JudgmentOut,
             summary="Judge an item (a grade 0-3, or skip) as the annotator of the token; judging it again replaces "
                     "the judgment",
             responses={403: {"model": ErrorBody, "description": "the annotator named is not the token's"}})
def judge(task_id: TaskId, body: JudgmentIn, request: Request, db: Database = Depends(get_db)) -> dict[str, Any]:
    if body.skip and body.grade is not None:
        raise FieldError("grade", _("give a grade or skip, not both"))
    if not body.skip and body.grade is None:
        raise FieldError("grade", _("give a grade from 0 to 3, or skip: true"))
    who = require_annotator(identify(request, db, task_id), task_id)
    if body.annotator is not None and body.annotator != who.name:
        raise FieldError("annotator", _("the token is {annotator!r}'s: nobody judges under another name",
                                        annotator=who.name),
                                      status=403)
    if "\x00" in body.note:
        raise FieldError("note", _("must not contain NUL characters"))
    j = store.save_judgment(db, task_id, body.item_id, who.name, body.grade, body.note.strip())
    with db.read() as s:
        return judgment_out(store.get_item(s, task_id, body.item_id, "item_id"), j)


@router.get("/{task_id}/judgments", response_model=list[JudgmentOut],
            summary="Every judgment of the task (of one annotator), with notes; an annotator's token: only theirs")
def list_judgments(task_id: TaskId, request: Request, annotator: AnnotatorQuery = None,
                   db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    me, annotator = _who(request, db, task_id, annotator)
    with db.read() as s:
        store.get_task(s, task_id)
        if me.annotator is None:
            _known(s, task_id, annotator)
        return [judgment_out(it, j) for it, j in store.task_judgments(s, task_id, annotator)]


@router.get("/{task_id}/progress", response_model=list[QueryProgressOut],
            summary="Progress per query and annotator")
def progress(task_id: TaskId, db: Database = Depends(get_db)) -> list[dict[str, Any]]:
    with db.read() as s:
        store.get_task(s, task_id)
        return [{"query_id": q, "query_text": t, "items": n, "annotators": by}
                for q, t, n, by in store.query_counts(s, task_id)]


def agreement_of(db: Database, task_id: int, relevance_level: int) -> dict[str, Any]:
    with db.read() as s:
        store.get_task(s, task_id)
        rows = store.task_judgments(s, task_id)
        pre = [(it.query_id, it.doc_id, it.prelabel) for it in store.task_items(s, task_id)
               if it.prelabel is not None]
    graded = [(it.query_id, it.doc_id, j.annotator, j.grade, bool(j.prelabel_shown)) for it, j in rows
              if j.grade is not None]
    return agreement(graded, pre, relevance_level)


@router.get("/{task_id}/agreement", response_model=AgreementOut,
            summary="Agreement between annotators (Cohen's κ) and with the pre-labels")
def read_agreement(task_id: TaskId, relevance_level: Annotated[int, QueryParam(ge=1, le=3)] = 1,
                   db: Database = Depends(get_db)) -> dict[str, Any]:
    return agreement_of(db, task_id, relevance_level)


@router.get("/{task_id}/qrels", response_class=PlainTextResponse, summary="The judgments as a TREC qrels file",
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}}}, **NOTHING})
def export_qrels(task_id: TaskId, annotator: AnnotatorQuery = None, merge: Merge = "median",
                 prelabels: bool = False, db: Database = Depends(get_db)) -> Response:
    qrels, *_rest = export_for(db, task_id, annotator, merge, prelabels)
    return PlainTextResponse(qrels, headers={
        "Content-Disposition": f'attachment; filename="judging-{task_id}.qrels"'})


@router.get("/{task_id}/provenance", summary="The provenance sidecar of the exported qrels (JSON Lines)",
            response_class=Response,
            responses={200: {"content": {"application/x-ndjson": {"schema": {"type": "string"}}}}, **NOTHING})
def export_provenance(task_id: TaskId, annotator: AnnotatorQuery = None, merge: Merge = "median",
                      prelabels: bool = False, db: Database = Depends(get_db)) -> Response:
    _qrels, side, _prelabels = export_for(db, task_id, annotator, merge, prelabels)
    return Response(side, media_type="application/x-ndjson", headers={
        "Content-Disposition": f'attachment; filename="judging-{task_id}.qrels.provenance.jsonl"'})


@router.get("/{task_id}/export", response_model=ExportOut,
            summary="The exported qrels, its provenance sidecar and what they hold", responses=NOTHING)
def export_all(task_id: TaskId, annotator: AnnotatorQuery = None, merge: Merge = "median",
               prelabels: bool = False, db: Database = Depends(get_db)) -> dict[str, Any]:
    qrels, side, summary = export_for(db, task_id, annotator, merge, prelabels)
    return {"summary": summary, "qrels": qrels, "provenance": side}


__all__ = ["router", "create_judging_task", "task_out", "items_out", "export_for", "agreement_of"]
