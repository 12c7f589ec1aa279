"""Dashboard pages for people judging a pool: the list and upload, a task's overview, the judging view.

The judging view works without JavaScript (grade buttons post a form, the pre-label is a
``<details>`` element); ``static/judge.js`` adds the keyboard shortcuts.  Every POST goes through
the same Host / Origin / token checks as the rest of the dashboard.
"""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import quote, unquote, urlencode

from fastapi import APIRouter, Depends, Form, Request, UploadFile
from fastapi import Path as PathParam
from fastapi import Query as QueryParam
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from rankscope.errors import RankscopeError
from rankscope.i18n import _
from rankscope.service import store
from rankscope.service.api.deps import get_db, new_counter
from rankscope.service.api.errors import FieldError
from rankscope.service.api.schemas import MAX_ID
from rankscope.service.db import Database
from rankscope.service.store import NotFound
from rankscope.service.uploads import Counter, LimitExceeded
from rankscope.service.web.judging_views import check_annotator, judge_view, judging_list_view, task_view
from rankscope.service.web.pages import _form_id, _problem, _see, lang_of, render

__all__ = ["router", "ANNOTATOR_COOKIE"]

router = APIRouter(include_in_schema=False)
TaskId = Annotated[int, PathParam(ge=1, le=MAX_ID)]
ANNOTATOR_COOKIE = "rankscope_annotator"


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
    ctx = task_view(db, task_id, relevance_level, annotator or None, merge, prelabels, lang_of(request))
    query = {"annotator": ctx["export"]["annotator"], "merge": merge, "prelabels": str(prelabels).lower()}
    ctx["export"]["query"] = urlencode({k: v for k, v in query.items() if v})
    return render(request, "judging_task.html", "judging", me=_me(request), **ctx)


@router.get("/judging/{task_id}/judge")
def judge_page(request: Request, task_id: TaskId, annotator: Annotated[str, QueryParam(max_length=200)] = "",
               item: Annotated[int | None, QueryParam(ge=1, le=MAX_ID)] = None,
               db: Database = Depends(get_db)) -> Response:
    who = check_annotator(annotator or _me(request))
    ctx = judge_view(db, task_id, who, item)
    resp = render(request, "judge.html", "judging", **ctx)
    resp.set_cookie(ANNOTATOR_COOKIE, quote(who), max_age=365 * 86400, samesite="lax")
    return resp


def _me(request: Request) -> str:
    """The annotator name this browser judged under last (kept in a cookie)."""
    return unquote(request.cookies.get(ANNOTATOR_COOKIE, ""))


@router.post("/judging/{task_id}/judge")
async def judge_submit(request: Request, task_id: TaskId, db: Database = Depends(get_db)) -> Response:
    form = await request.form()
    who = check_annotator(str(form.get("annotator", "")))
    item_id = _form_id(form.get("item_id"), "item_id")
    choice = str(form.get("grade", "")).strip()
    if choice not in ("0", "1", "2", "3", "skip"):
        raise FieldError("grade", _("expected 0, 1, 2, 3 or skip, got {value!r}", value=choice[:20]))
    note = str(form.get("note", "")).replace("\x00", "").strip()[:5000]
    shown = str(form.get("prelabel_shown", "")) == "1"
    store.save_judgment(db, task_id, item_id, who, None if choice == "skip" else int(choice), note, shown)
    with db.read() as s:
        current = store.get_item(s, task_id, item_id, "item_id")
        nxt, __ = store.next_item(s, task_id, who, current.position)
    target = {"annotator": who, **({"item": str(nxt.id)} if nxt is not None else {})}
    return _see(f"/judging/{task_id}/judge?{urlencode(target)}")


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
