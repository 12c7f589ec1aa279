"""A tiny HTTP retriever on 127.0.0.1 for live-evaluation tests.

For the query text ``"query N"`` it answers ``[{"id": "rN", ...}, {"id": "xN", ...}]``
(the relevant document first when N is even, second when N is odd).  Texts with
``flaky`` fail with 500 on the first request, ``broken`` always fail, ``garbage``
get a malformed answer, ``slow`` wait ``slow`` seconds before answering, ``trickle``
get their answer one byte per second (for at most ``trickle_limit`` seconds).  Hostile ones:
``huge`` get a 200 MB answer (streamed, no length given), ``declared`` one whose Content-Length says
200 MB, ``zipped`` a 200 MB answer gzip-compressed to 200 KB, ``secret`` a 200 answer that is not a
list of hits and holds a secret, ``reason`` a 500 with a secret in its reason phrase.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import time
import zlib
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HUGE = 200 << 20


@functools.lru_cache(maxsize=1)
def _zipped_answer() -> bytes:
    """``[`` + 200 MB of spaces + ``]``, gzip-compressed (made once, in 1 MB steps: the test process stays small)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b" " * (1 << 20)
    return b"".join([comp.compress(b"["), *(comp.compress(block) for _ in range(HUGE >> 20)),
                     comp.compress(b"]"), comp.flush()])


def expected_hits(text: str) -> list[dict[str, Any]]:
    n = int(text.split()[-1])
    top, other = (f"r{n}", f"x{n}") if n % 2 == 0 else (f"x{n}", f"r{n}")
    return [{"id": top, "score": 2.0}, {"id": other, "score": 1.0}]


class FakeRetriever:
    def __init__(self, delay: float = 0.0, slow: float = 0.0, trickle_limit: float = 10.0) -> None:
        self.delay = delay
        self.slow = slow
        self.trickle_limit = trickle_limit
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # else Nagle + delayed ACK add 40 ms per answer

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                with contextlib.suppress(OSError):  # the client gave up (a deadline): nothing to answer
                    self._answer()

            def _answer(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = body["query"]
                with owner.lock:
                    owner.calls[text] += 1
                    n_calls = owner.calls[text]
                if owner.delay:
                    time.sleep(owner.delay)
                if "slow" in text:
                    time.sleep(owner.slow)
                if "trickle" in text:
                    self._trickle(expected_hits(text)[: body["k"]])
                elif "broken" in text or ("flaky" in text and n_calls == 1):
                    self.send_response(500)  # a body that must never be stored
                    data = b'{"error": "boom", "internal": "stack trace and secrets"}'
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                elif "garbage" in text:
                    self._send(200, {"not": "a list"})
                elif "secret" in text:
                    self._send(200, {"secret": "TOPSECRET-HIT"})
                elif "reason" in text:
                    self.send_response(500, "Internal TOPSECRET-REASON")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                elif "huge" in text or "declared" in text:
                    self._huge(declared="declared" in text)
                elif "zipped" in text:
                    data = _zipped_answer()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                else:
                    self._send(200, expected_hits(text)[: body["k"]])

            def _trickle(self, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                t0 = time.monotonic()
                try:
                    for i in range(len(data)):
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                        if time.monotonic() - t0 > owner.trickle_limit:
                            self.wfile.write(data[i + 1:])
                            break
                        time.sleep(1.0)
                except OSError:
                    pass  # the client gave up

            def _huge(self, declared: bool) -> None:
                block = b'{"id": "d", "score": 1.0}, ' * 40_000  # ~1 MB
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if declared:
                    self.send_header("Content-Length", str(HUGE))
                else:
                    self.send_header("Connection", "close")
                self.end_headers()
                try:
                    self.wfile.write(b"[")
                    for _ in range(HUGE // len(block)):
                        self.wfile.write(block)
                except OSError:
                    pass  # the client stopped reading
                self.close_connection = True

            def _send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # the default backlog of 5 drops connects: a 1 s SYN retry per burst

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that hung up (a capped or timed-out answer): nothing to report

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/search"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeRetriever:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


def live_testset(n: int, extra: list[str] | None = None) -> dict[str, Any]:
    queries = [{"id": f"q{i}", "text": f"query {i}", "relevant": {f"r{i}": 1}} for i in range(n)]
    for j, word in enumerate(extra or []):
        i = n + j
        queries.append({"id": f"q{i}", "text": f"{word} query {i}", "relevant": {f"r{i}": 1}})
    return {"queries": queries}
