"""Dashboard pages for people judging a pool: the list and upload, a task's overview, the judging view.

The judging view works without JavaScript (grade buttons post a form; the pre-label, for an
annotator who is not blind, is a button that asks the service, which records that it showed it and
only then puts it in the page); ``static/judge.js`` adds the keyboard shortcuts.  An annotator is
known by the invitation link the task page made for them (:mod:`rankscope.service.judging.identity`).
Every POST goes through the same Host / Origin / token checks as the rest of the dashboard.
"""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Request, UploadFile
from fastapi import Path as PathParam
from fastapi import Query as QueryParam
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from rankscope.errors import RankscopeError
from rankscope.i18n import _, gettext
from rankscope.service import store
from rankscope.service.api.deps import get_db, new_counter
from rankscope.service.api.errors import FieldError
from rankscope.service.api.schemas import MAX_ID
from rankscope.service.db import Annotator, Database
from rankscope.service.judging.identity import identify, judge_cookie
from rankscope.service.render import error_page, lang_of, render
from rankscope.service.store import NotFound
from rankscope.service.uploads import Counter, LimitExceeded
from rankscope.service.web.judging_views import check_annotator, judge_view, judging_list_view, task_view
from rankscope.service.web.pages import _form_id, _problem, _see

__all__ = ["router"]

router = APIRouter(include_in_schema=False)
TaskId = Annotated[int, PathParam(ge=1, le=MAX_ID)]


def _list_page(request: Request, db: Database, error: str | None = None, status: int = 200) -> HTMLResponse:
    return render(request, "judging_list.html", "judging", status, error=error, **judging_list_view(db))


@router.get("/judging")
def judging_page(request: Request, db: Database = Depends(get_db)) -> HTMLResponse:
    return _list_page(request, db)


@router.post("/judging")
def judging_upload(request: Request, pool: UploadFile, name: str = Form(""), test_set_id: str = Form(""),
                   queries: UploadFile | None = None, corpus: UploadFile | None = None,
                   labels: UploadFile | None = None, provenance: UploadFile | None = None,
                   order: str = Form("shuffled"), db: Database = Depends(get_db),
                   counter: Counter = Depends(new_counter)) -> Response:
    from rankscope.service.api.judging import _upload, create_judging_task

    try:
        up = _upload(pool, "pool")
        if up is None:
            raise FieldError("pool", _("choose the pool file"))
        task_id = create_judging_task(
            db, counter, up, name=name or None, test_set_id=_form_id(test_set_id, "test_set_id") if test_set_id
            else None, queries=_upload(queries, "queries"), corpus=_upload(corpus, "corpus"),
            labels=_upload(labels, "labels"), provenance=_upload(provenance, "provenance"), order=order)
    except LimitExceeded as exc:
        return _list_page(request, db, _problem(exc, lang_of(request)), 413)
    except (FieldError, RankscopeError, NotFound) as exc:
        return _list_page(request, db, _problem(exc, lang_of(request)), 422)
    return _see(f"/judging/{task_id}")


@router.get("/judging/{task_id}")
def task_page(request: Request, task_id: TaskId, relevance_level: Annotated[int, QueryParam(ge=1, le=3)] = 1,
              annotator: Annotated[str, QueryParam(max_length=100)] = "",
              merge: Literal["median", "min", "max"] = "median", prelabels: bool = False,
              db: Database = Depends(get_db)) -> HTMLResponse:
    return _task_page(request, task_id, db, relevance_level, annotator, merge, prelabels)


def _task_page(request: Request, task_id: int, db: Database, relevance_level: int = 1, annotator: str = "",
               merge: str = "median", prelabels: bool = False, invited: dict[str, str] | None = None,
               error: str | None = None, status: int = 200) -> HTMLResponse:
    ctx = task_view(db, task_id, relevance_level, annotator or None, merge, prelabels, lang_of(request))
    query = {"annotator": ctx["export"]["annotator"], "merge": merge, "prelabels": str(prelabels).lower()}
    ctx["export"]["query"] = urlencode({k: v for k, v in query.items() if v})
    with db.read() as s:
        ctx["invitations"] = [{"name": a.name, "blind": a.blind} for a in store.list_annotators(s, task_id)]
    return render(request, "judging_task.html", "judging", status, invited=invited, error=error, **ctx)


@router.post("/judging/{task_id}/annotators")
async def invite_annotator(request: Request, task_id: TaskId, db: Database = Depends(get_db)) -> Response:
    """Invite an annotator; the page shows the invitation link once (the service keeps only the token's hash)."""
    if identify(request, db, task_id).annotator is not None:
        return error_page(request, 403, gettext("annotators cannot invite annotators", lang_of(request)))
    form = await request.form()
    try:
        who = check_annotator(str(form.get("annotator", "")))
        person, token = store.create_annotator(db, task_id, who, blind=str(form.get("sees_prelabels", "")) != "1")
    except (FieldError, RankscopeError) as exc:
        return _task_page(request, task_id, db, error=_problem(exc, lang_of(request)), status=422)
    link = f"{str(request.base_url).rstrip('/')}/judging/{task_id}/join?{urlencode({'token': token})}"
    return _task_page(request, task_id, db, invited={"name": person.name, "link": link})


@router.get("/judging/{task_id}/join")
def join(request: Request, task_id: TaskId, token: Annotated[str, QueryParam(max_length=200)] = "",
         db: Database = Depends(get_db)) -> Response:
    """An invitation link: keep the token in this task's cookie and go to the judging page (without the token in
    the address)."""
    with db.read() as s:
        store.get_task(s, task_id)
        who = store.find_annotator(s, task_id, token) if token else None
    if who is None:
        return error_page(request, 401, _("not an invitation token of judging task {task} (ask the task's "
                                          "administrator for a new invitation link)",
                                          task=task_id).text(lang_of(request)))
    resp = _see(f"/judging/{task_id}/judge")
    resp.set_cookie(judge_cookie(task_id), token, max_age=365 * 86400, path=f"/judging/{task_id}", httponly=True,
                    samesite="lax")
    return resp


def _annotator(request: Request, db: Database, task_id: int) -> tuple[Annotator | None, Response | None]:
    """The annotator of this browser's invitation for the task, or the page that says how to get one."""
    try:
        who = identify(request, db, task_id).annotator
    except FieldError as exc:
        return None, error_page(request, exc.status, exc.text(lang_of(request)))
    if who is None:
        return None, error_page(request, 401, _("open the invitation link that the administrator of judging task "
                                                "{task} made for you: it tells the service who you are",
                                                task=task_id).text(lang_of(request)))
    return who, None


@router.get("/judging/{task_id}/judge")
def judge_page(request: Request, task_id: TaskId, item: Annotated[int | None, QueryParam(ge=1, le=MAX_ID)] = None,
               db: Database = Depends(get_db)) -> Response:
    who, refused = _annotator(request, db, task_id)
    if who is None:
        assert refused is not None
        return refused
    ctx = judge_view(db, task_id, who.name, item, blind=who.blind)
    return render(request, "judge.html", "judging", **ctx)


@router.post("/judging/{task_id}/judge")
async def judge_submit(request: Request, task_id: TaskId, db: Database = Depends(get_db)) -> Response:
    who, refused = _annotator(request, db, task_id)
    if who is None:
        assert refused is not None
        return refused
    form = await request.form()
    item_id = _form_id(form.get("item_id"), "item_id")
    choice = str(form.get("grade", "")).strip()
    if choice not in ("0", "1", "2", "3", "skip"):
        raise FieldError("grade", _("expected 0, 1, 2, 3 or skip, got {value!r}", value=choice[:20]))
    note = str(form.get("note", "")).replace("\x00", "").strip()[:5000]
    store.save_judgment(db, task_id, item_id, who.name, None if choice == "skip" else int(choice), note)
    with db.read() as s:
        current = store.get_item(s, task_id, item_id, "item_id")
        nxt, __ = store.next_item(s, task_id, who.name, current.position)
    return _see(f"/judging/{task_id}/judge" + (f"?item={nxt.id}" if nxt is not None else ""))


@router.post("/judging/{task_id}/judge/reveal")
async def reveal_prelabel(request: Request, task_id: TaskId, db: Database = Depends(get_db)) -> Response:
    """Show the annotator the item's pre-label: recorded first, so that their judgment of it is not blind."""
    who, refused = _annotator(request, db, task_id)
    if who is None:
        assert refused is not None
        return refused
    form = await request.form()
    item_id = _form_id(form.get("item_id"), "item_id")
    if who.blind:
        return error_page(request, 403, _("{annotator!r} judges blind: the pre-labels are not shown to them",
                                          annotator=who.name).text(lang_of(request)))
    with db.read() as s:
        item = store.get_item(s, task_id, item_id, "item_id")
    store.record_views(db, task_id, [item.id] if item.prelabel_source is not None else [], who.name, "page")
    return _see(f"/judging/{task_id}/judge?item={item_id}")


@router.get("/judging/{task_id}/delete")
def task_delete_page(request: Request, task_id: TaskId, db: Database = Depends(get_db)) -> HTMLResponse:
    with db.read() as s:
        task = store.get_task(s, task_id)
        judged = sum(c["judged"] + c["skipped"] for c in store.annotator_counts(s, task_id).values())
    return render(request, "delete.html", "judging", kind="judging", key=task_id, name=task.name,
                  dependents={"judgments": judged}, back=f"/judging/{task_id}")


@router.post("/judging/{task_id}/delete")
def task_delete(task_id: TaskId, db: Database = Depends(get_db)) -> RedirectResponse:
    store.delete_task(db, task_id)
    return _see("/judging")
