"""The versioned HTTP API (mounted under ``/api/v1``)."""

from __future__ import annotations

from fastapi import APIRouter

from rankscope.service.api import analysis, evaluations, judging, monitors, runs, testsets

__all__ = ["api_router"]

api_router = APIRouter()


@api_router.get("/health", tags=["health"], summary="Liveness (never needs a token)")
def health() -> dict[str, str]:
    import rankscope

    return {"status": "ok", "version": getattr(rankscope, "__version__", "unknown")}


api_router.include_router(testsets.router)
api_router.include_router(runs.router)
api_router.include_router(evaluations.router)
api_router.include_router(analysis.router)
api_router.include_router(judging.router)
api_router.include_router(monitors.router)
