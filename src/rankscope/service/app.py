"""The app factory: :func:`create_app` builds the FastAPI application from :class:`Settings`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI

from rankscope.service.settings import Settings

__all__ = ["create_app"]

API_PREFIX = "/api/v1"


def create_app(settings: Settings | None = None) -> FastAPI:
    """Open the database, migrate it to the newest schema, and assemble API, dashboard and workers.

    Background workers start with the application (its lifespan) and stop with it.
    """
    from fastapi.staticfiles import StaticFiles

    import rankscope
    from rankscope.service.api import api_router
    from rankscope.service.api.errors import install_error_handlers
    from rankscope.service.db import Database
    from rankscope.service.guards import BodyLimit, HostCheck, SameOrigin, TokenAuth
    from rankscope.service.jobs import WorkerPool
    from rankscope.service.migrations import upgrade
    from rankscope.service.web import web_router

    settings = settings or Settings()
    # load the metric registry now: its lazy first load is not thread-safe, and requests run in threads
    from rankscope.measures import all_specs

    all_specs()
    db = Database(settings.db_url)
    if settings.migrate:
        upgrade(db)
    pool = WorkerPool(db, settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        pool.start()
        try:
            yield
        finally:
            pool.stop()

    app = FastAPI(
        title="rankscope evaluation service",
        version=getattr(rankscope, "__version__", "0"),
        description="Stored, per-query, resumable evaluations of retrieval for RAG.",
        lifespan=lifespan,
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.db = db
    app.state.pool = pool
    install_error_handlers(app)
    app.include_router(api_router, prefix=API_PREFIX)
    app.include_router(web_router)
    app.mount("/static", StaticFiles(directory=Path(__file__).parent / "web" / "static"), name="static")
    app.add_middleware(BodyLimit, max_bytes=settings.max_upload_bytes)
    if settings.token:
        app.add_middleware(TokenAuth, token=settings.token)  # refuse before reading a body
    app.add_middleware(SameOrigin)
    app.add_middleware(HostCheck, bind=settings.host, extra=settings.allowed_hosts)  # outermost
    return app
