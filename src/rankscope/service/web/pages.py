"""Dashboard pages: server-rendered HTML over the same store the API uses.

Forms post to these routes (multipart uploads, evaluation creation, deletes); errors come
back as the same page with the problem shown, successes redirect (POST/redirect/GET).
Every state-changing form is checked by :class:`~rankscope.service.guards.SameOrigin`.
"""

from __future__ import annotations

from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Form, Request, UploadFile
from fastapi import Path as PathParam
from fastapi import Query as QueryParam
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from rankscope.errors import RankscopeError
from rankscope.i18n import _, gettext
from rankscope.service import store
from rankscope.service.api.deps import get_db, get_pool, new_counter
from rankscope.service.api.errors import FieldError, field_problem, said
from rankscope.service.api.schemas import DEFAULT_METRICS, MAX_ID
from rankscope.service.db import Database
from rankscope.service.ingest import UploadError
from rankscope.service.jobs import WorkerPool
from rankscope.service.render import lang_of, render
from rankscope.service.store import NotFound
from rankscope.service.uploads import Counter, LimitExceeded
from rankscope.service.web.views import (
    delete_view,
    drilldown,
    evaluation_view,
    evaluations_view,
    run_compare_view,
    testset_view,
)

web_router = APIRouter(include_in_schema=False)
TestSetId = Annotated[int, PathParam(ge=1, le=MAX_ID)]
RunId = Annotated[int, PathParam(ge=1, le=MAX_ID)]
JobId = Annotated[str, PathParam(min_length=1, max_length=36, pattern=r"^[0-9a-f-]+$")]
OptionalId = Annotated[int | None, QueryParam(ge=1, le=MAX_ID)]


def _form_id(value: object, field: str) -> int:
    """A positive database id from a form or query field (422 naming the field otherwise)."""
    text = str(value or "").strip()
    if not text.isdigit() or not 1 <= int(text) <= MAX_ID:
        raise FieldError(field, _("expected an id between 1 and {max}, got {value!r}", max=MAX_ID, value=text[:30]))
    return int(text)


def _see(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def _problem(exc: Exception, lang: str) -> str:
    """A user's mistake as the page shows it, in the page's language: ``field: problem`` when it names a field."""
    if isinstance(exc, (FieldError, UploadError, LimitExceeded)):
        return field_problem(exc.field, said(exc, lang), lang)
    return said(exc, lang)


@web_router.get("/")
def home() -> RedirectResponse:
    return _see("/testsets")


def _testsets_page(request: Request, db: Database, error: str | None = None, status: int = 200) -> HTMLResponse:
    with db.read() as s:
        testsets = [(ts, store.testset_dependents(s, ts.id)) for ts in store.list_testsets(s)]
    return render(request, "testsets.html", "testsets", status, testsets=testsets, error=error)


@web_router.get("/testsets")
def testsets_page(request: Request, db: Database = Depends(get_db)) -> HTMLResponse:
    return _testsets_page(request, db)


@web_router.post("/testsets")
def testsets_upload(request: Request, file: UploadFile, format: str = Form("json"), name: str = Form(""),
                    queries: UploadFile | None = None, db: Database = Depends(get_db),
                    counter: Counter = Depends(new_counter)) -> Response:
    from rankscope.service.api.testsets import upload_testset

    try:
        ts = upload_testset(file=file, format=format, name=name or None, description="",  # type: ignore[arg-type]
                            queries=queries if queries is not None and queries.filename else None, split="test",
                            db=db, counter=counter)
    except LimitExceeded as exc:
        return _testsets_page(request, db, _problem(exc, lang_of(request)), 413)
    except (FieldError, RankscopeError, NotFound) as exc:
        return _testsets_page(request, db, _problem(exc, lang_of(request)), 422)
    return _see(f"/testsets/{ts.id}")


def _testset_page(request: Request, db: Database, test_set_id: int, error: str | None = None,
                  status: int = 200) -> HTMLResponse:
    ctx = testset_view(db, test_set_id)
    from rankscope.choices import Unjudged
    from rankscope.service.ingest import MAX_DOC_CHARS

    return render(request, "testset.html", "testsets", status, error=error, default_metrics=" ".join(DEFAULT_METRICS),
                  unjudged_choices=[u.value for u in Unjudged], max_doc_chars=MAX_DOC_CHARS, **ctx)


@web_router.get("/testsets/{test_set_id}")
def testset_page(request: Request, test_set_id: TestSetId, db: Database = Depends(get_db)) -> HTMLResponse:
    return _testset_page(request, db, test_set_id)


@web_router.post("/runs")
def runs_upload(request: Request, file: UploadFile, test_set_id: Annotated[int, Form(ge=1, le=MAX_ID)],
                format: str = Form("trec"), name: str = Form(""), db: Database = Depends(get_db),
                counter: Counter = Depends(new_counter)) -> Response:
    from rankscope.service.api.runs import upload_run

    try:
        upload_run(test_set_id=test_set_id, file=file, format=format, name=name or None,  # type: ignore[arg-type]
                   db=db, counter=counter)
    except LimitExceeded as exc:
        return _testset_page(request, db, test_set_id, _problem(exc, lang_of(request)), 413)
    except (FieldError, RankscopeError) as exc:
        return _testset_page(request, db, test_set_id, _problem(exc, lang_of(request)), 422)
    return _see(f"/testsets/{test_set_id}")


@web_router.get("/runs")
def runs_page(request: Request, db: Database = Depends(get_db)) -> HTMLResponse:
    with db.read() as s:
        runs = store.runs_with_testsets(s)
    return render(request, "runs.html", "runs", runs=runs)


def default_name(names: list[str], metrics: list[str]) -> str:
    """The name of an evaluation started from the dashboard without one: its runs and first metric.

    >>> default_name(["bm25", "dense"], ["ndcg@10", "mrr"])
    'bm25 vs dense · ndcg@10'
    """
    runs = " vs ".join(names[:4]) + (f" +{len(names) - 4}" if len(names) > 4 else "")
    return f"{runs} · {metrics[0]}"[:200] if metrics else runs[:200]


@web_router.post("/evaluations")
async def evaluations_create(request: Request, db: Database = Depends(get_db),
                             pool: WorkerPool = Depends(get_pool)) -> Response:
    from rankscope.engine.policies import Policies
    from rankscope.service.api.deps import check_name

    form = await request.form()
    test_set_id = _form_id(form.get("test_set_id"), "test_set_id")
    text = str(form.get("metrics", "")).replace(",", " ")
    try:
        run_ids = [_form_id(v, "run_ids") for v in form.getlist("run_ids")]
        if not run_ids:
            raise FieldError("run_ids", _("tick at least one run"))
        metrics = store.validate_metrics(text.split())
        with db.read() as s:
            names = [store.get_run(s, rid, "run_ids").name for rid in run_ids]
        name = check_name(str(form.get("name", "")), "name", default_name(names, metrics))
        unjudged = Policies.of("evaluation", unjudged=str(form.get("unjudged") or "keep")).unjudged
        job_id = store.create_job(db, "evaluate", test_set_id, {"metrics": metrics, "relevance_level": 1,
                                                                "missing": "zero", "depth": None,
                                                                "unjudged": unjudged}, name,
                                  run_ids=run_ids)
    except (FieldError, RankscopeError, NotFound) as exc:
        return _testset_page(request, db, test_set_id, _problem(exc, lang_of(request)), 422)
    pool.wake()
    return _see(f"/evaluations/{job_id}")


@web_router.get("/evaluations")
def evaluations_page(request: Request, db: Database = Depends(get_db)) -> HTMLResponse:
    return render(request, "evaluations.html", "evaluations", jobs=evaluations_view(db))


@web_router.get("/evaluations/{job_id}")
def evaluation_page(request: Request, job_id: JobId, baseline: OptionalId = None,
                    db: Database = Depends(get_db)) -> HTMLResponse:
    ctx = evaluation_view(db, job_id, baseline, lang_of(request))
    return render(request, "evaluation.html", "evaluations", **ctx)


@web_router.get("/evaluations/{job_id}/query")
def query_page(request: Request, job_id: JobId, id: Annotated[str, QueryParam(min_length=1, max_length=512)],
               db: Database = Depends(get_db)) -> HTMLResponse:
    """A query's drill-down; the links put the query id in the query string, where no id (``..``, ``a/../b``)
    can change the path the browser asks for."""
    return render(request, "query.html", "evaluations", **drilldown(db, job_id, id))


@web_router.get("/evaluations/{job_id}/queries/{query_id:path}")
def query_page_by_path(request: Request, job_id: JobId, query_id: str,
                       db: Database = Depends(get_db)) -> HTMLResponse:
    """The drill-down under its earlier address (links made before it moved to :func:`query_page`)."""
    return render(request, "query.html", "evaluations", **drilldown(db, job_id, query_id))


@web_router.get("/compare")
def compare_page(request: Request, test_set_id: OptionalId = None, baseline: OptionalId = None,
                 metrics: str = "ndcg@10 mrr recall@100", db: Database = Depends(get_db)) -> HTMLResponse:
    chosen = [_form_id(v, "run_ids") for v in request.query_params.getlist("run_ids")]
    try:
        ctx = run_compare_view(db, test_set_id, chosen, baseline, metrics, lang_of(request))
    except (FieldError, RankscopeError, NotFound) as exc:
        ctx = run_compare_view(db, test_set_id, [], baseline, metrics, lang_of(request))
        ctx["error"] = _problem(exc, lang_of(request))
    return render(request, "compare.html", "compare", **ctx)


# --- deletes: a confirmation page that lists what goes with the object, then a POST --------------

@web_router.get("/testsets/{test_set_id}/delete")
def testset_delete_page(request: Request, test_set_id: TestSetId, db: Database = Depends(get_db)) -> HTMLResponse:
    return render(request, "delete.html", "testsets", **delete_view(db, "testset", test_set_id))


@web_router.post("/testsets/{test_set_id}/delete")
def testset_delete(test_set_id: TestSetId, db: Database = Depends(get_db)) -> Response:
    store.delete_testset(db, test_set_id)
    return _see("/testsets")


@web_router.get("/runs/{run_id}/delete")
def run_delete_page(request: Request, run_id: RunId, db: Database = Depends(get_db)) -> HTMLResponse:
    return render(request, "delete.html", "runs", **delete_view(db, "run", run_id))


@web_router.post("/runs/{run_id}/delete")
def run_delete(run_id: RunId, db: Database = Depends(get_db)) -> Response:
    with db.read() as s:
        back = f"/testsets/{store.get_run(s, run_id).test_set_id}"
    store.delete_run(db, run_id)
    return _see(back)


@web_router.get("/evaluations/{job_id}/delete")
def evaluation_delete_page(request: Request, job_id: JobId, db: Database = Depends(get_db)) -> HTMLResponse:
    return render(request, "delete.html", "evaluations", **delete_view(db, "evaluation", job_id))


@web_router.post("/evaluations/{job_id}/delete")
def evaluation_delete(job_id: JobId, db: Database = Depends(get_db)) -> Response:
    store.delete_job(db, job_id)
    return _see("/evaluations")


@web_router.get("/login")
def login_page(request: Request, next: str = "/") -> HTMLResponse:
    return render(request, "login.html", next=next if next.startswith("/") else "/")


@web_router.post("/login")
def login(request: Request, token: str = Form(...), next: str = Form("/")) -> Response:
    import hmac

    from rankscope.service.guards import client_of

    throttle = request.app.state.throttle
    client = client_of(request.scope)
    wait = throttle.wait(client)
    if wait > 0:  # too many wrong tokens from this address: not even checked
        page = render(request, "login.html", status=429, next=next,
                      error=_("Too many wrong tokens from this address: try again in {seconds} s.",
                              seconds=max(1, int(wait + 0.999))).text(lang_of(request)))
        page.headers["retry-after"] = str(max(1, int(wait + 0.999)))
        return page
    expected = request.app.state.settings.token or ""
    if not expected or not hmac.compare_digest(token.encode(), expected.encode()):
        throttle.fail(client)
        return render(request, "login.html", status=401, next=next, error=gettext("wrong token", lang_of(request)))
    target = next if next.startswith("/") and not next.startswith("//") else "/"
    resp = _see(target)
    resp.set_cookie("rankscope_token", quote(token), httponly=True, samesite="strict")
    return resp
