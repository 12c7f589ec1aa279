"""The rankscope evaluation service: HTTP API, stored per-query results, a web dashboard.

Nothing in rankscope imports this package; it needs the ``rankscope[server]`` extra
(FastAPI, SQLAlchemy, Alembic, httpx, Jinja2).  Build the ASGI app with
:func:`rankscope.service.app.create_app` and run it with ``rankscope serve``.
"""

from __future__ import annotations

__all__ = ["create_app", "Settings"]

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from rankscope.service.app import create_app

        return create_app
    if name == "Settings":
        from rankscope.service.settings import Settings

        return Settings
    raise AttributeError(name)
