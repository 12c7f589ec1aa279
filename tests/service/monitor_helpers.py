"""Test doubles for monitors: a retriever whose quality can be switched, a webhook receiver, waiting helpers."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server(ThreadingHTTPServer):
    request_queue_size = 128
    daemon_threads = True


class SwitchRetriever:
    """Answers ``"query N"`` with ``rN`` (the relevant document) first in mode ``good``, and without it in mode
    ``bad``; counts the calls per query text."""

    def __init__(self, delay: float = 0.0) -> None:
        self.mode = "good"
        self.delay = delay
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = body["query"]
                n = text.split()[-1]
                with owner.lock:
                    owner.calls[text] = owner.calls.get(text, 0) + 1
                if owner.delay:
                    time.sleep(owner.delay)
                hits = [{"id": f"r{n}", "score": 3.0}, {"id": f"x{n}", "score": 2.0}] if owner.mode == "good" else \
                    [{"id": f"x{n}", "score": 3.0}, {"id": f"y{n}", "score": 2.0}]
                data = json.dumps(hits[: body["k"]]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/search"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> SwitchRetriever:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


class WebhookSink:
    """Records every JSON POST; the first ``fail_first`` requests get 503."""

    def __init__(self, fail_first: int = 0) -> None:
        self.posts: list[dict[str, Any]] = []
        self.tries = 0
        self.fail_first = fail_first
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.tries += 1
                status = 503 if owner.tries <= owner.fail_first else 200
                if status == 200:
                    owner.posts.append(body)
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookSink:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def wait_for(what: str, cond: Callable[[], Any], timeout: float = 60.0, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(every)


def canary_testset(n: int) -> dict[str, Any]:
    return {"queries": [{"id": f"q{i}", "text": f"query {i}", "relevant": {f"r{i}": 1}} for i in range(n)]}
