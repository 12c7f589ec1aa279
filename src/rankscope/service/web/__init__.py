"""The web dashboard (server-rendered Jinja2 pages, local CSS, English and Chinese)."""

from __future__ import annotations

from rankscope.service.web.judging import router as _judging
from rankscope.service.web.monitors import router as _monitors
from rankscope.service.web.pages import web_router

web_router.include_router(_judging)
web_router.include_router(_monitors)

__all__ = ["web_router"]
