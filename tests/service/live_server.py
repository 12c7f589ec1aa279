"""Run the app with uvicorn in a background thread on 127.0.0.1 (for browser and schema tests)."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx
import uvicorn

from rankscope.service.app import create_app
from rankscope.service.settings import Settings

from .postgres import free_port


class LiveServer:
    def __init__(self, db_url: str, **settings: Any) -> None:
        self.port = free_port()
        opts: dict[str, Any] = {"workers": 1, "poll_seconds": 0.05, "port": self.port,
                                "allow_retrievers": ("127.0.0.1:*",)}
        opts.update(settings)
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(create_app(Settings(db_url=db_url, **opts)), host="127.0.0.1", port=self.port,
                                log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/api/v1/health", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("the test server did not start")

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(10)
