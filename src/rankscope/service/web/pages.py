"""Dashboard pages."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

web_router = APIRouter(include_in_schema=False)


@web_router.get("/", response_class=HTMLResponse)
def index() -> str:
    return "<!doctype html><title>rankscope</title><h1>rankscope</h1>"
