"""A small OpenAI-compatible chat server on 127.0.0.1 for the tests (stdlib http.server, one thread).

Replies are deterministic and steered by markers in the last user message:

* ``grade=N`` — reply ``{"grade": N}`` (default: ``len(passage) % 4``);
* ``[[malformed]]`` — always an unreadable reply; ``[[malformed-once]]`` — unreadable the
  first time, readable after the retry message;
* ``[[429]]`` — the first request of this text gets 429 with ``Retry-After``;
  ``[[429-long]]`` — always 429 asking to wait 9999 s;
* ``[[500]]`` — the first two requests get 500; ``[[500-always]]`` — always 500;
* ``[[timeout]]`` — the first request waits ``slow_seconds`` before answering;
* ``[[400]]`` — 400 (prompt too long); ``[[think]]`` — a ``<think>`` block then JSON;
  ``[[prose]]`` — reasoning then ``score: N``.

Question generation (the ``synth`` prompt): ``{"question": "Which passage mentions <first words>?",
"answer": <first word>}``; ``[[copy]]`` — the passage itself as the question; ``[[dup]]`` — the same
question for every such passage; ``[[pointing]]`` — a question that points at the passage ("According to the
passage, ..."); ``[[genfail-always]]`` — never readable.

Embeddings (``POST /v1/embeddings``): each input's vector is a bag of its words (lower-case Latin words and
single Chinese characters, each hashed into one of ``dimensions`` buckets, default 64; a constant last bucket
keeps empty texts valid), so texts that share words are close; ``encoding_format: "base64"`` is answered in
base64, the ``index`` of each item is given and the items are sent in reverse order (a client must sort
them).  Model ``missing-model`` gets 404; an input with ``[[500]]`` makes the first two requests of a batch
holding it fail with 500.  ``embedded`` counts the inputs embedded.

``responder`` replaces the default for other prompts (question generation).
Every request is recorded (headers and body) and the peak number of requests in
flight is kept.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import struct
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeLLM:
    def __init__(self, *, retry_after: str = "1", slow_seconds: float = 1.5, api_key: str | None = None,
                 delay: float = 0.0) -> None:
        self.retry_after = retry_after
        self.slow_seconds = slow_seconds
        self.api_key = api_key
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.seen: Counter[str] = Counter()
        self.in_flight = 0
        self.peak = 0
        self.lock = threading.Lock()
        self.responder: Callable[[list[dict[str, str]]], str] | None = None
        self.embedded = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                fake._handle(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)

    @property
    def calls(self) -> int:
        return len(self.requests)

    # -- the server side -------------------------------------------------------------------------
    def _send(self, h: BaseHTTPRequestHandler, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self._done(h)  # before the client can read the answer and send its next request
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            h.wfile.write(data)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        body = json.loads(h.rfile.read(int(h.headers["Content-Length"])))
        with self.lock:
            self.requests.append({"path": h.path, "headers": dict(h.headers), "body": body})
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        h.in_flight = True  # type: ignore[attr-defined]
        try:
            self._answer(h, body)
        finally:
            self._done(h)

    def _done(self, h: BaseHTTPRequestHandler) -> None:
        """The request ``h`` no longer counts as in flight (once, when its answer starts)."""
        if getattr(h, "in_flight", False):
            h.in_flight = False  # type: ignore[attr-defined]
            with self.lock:
                self.in_flight -= 1

    def _answer(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if h.path == "/v1/embeddings":
            return self._embeddings(h, body)
        if h.path != "/v1/chat/completions":
            return self._send(h, 404, {"error": {"message": f"no route {h.path}"}})
        if self.api_key is not None and h.headers.get("Authorization") != f"Bearer {self.api_key}":
            return self._send(h, 401, {"error": {"message": "Incorrect API key provided"}})
        if self.delay:
            time.sleep(self.delay)
        messages = body["messages"]
        first_user = next(m["content"] for m in messages if m["role"] == "user")
        retried = len(messages) > 2
        with self.lock:
            self.seen[first_user] += 1
            n = self.seen[first_user]
        if "[[429-long]]" in first_user:
            return self._send(h, 429, {"error": {"message": "slow down"}}, {"Retry-After": "9999"})
        if "[[429]]" in first_user and n == 1:
            return self._send(h, 429, {"error": {"message": "slow down"}}, {"Retry-After": self.retry_after})
        if ("[[500]]" in first_user and n <= 2) or "[[500-always]]" in first_user:
            return self._send(h, 500, {"error": {"message": "internal error"}})
        if "[[400]]" in first_user:
            return self._send(h, 400, {"error": {"message": "maximum context length exceeded"}})
        if "[[timeout]]" in first_user and n == 1:
            time.sleep(self.slow_seconds)
        if self.responder is not None:
            text = self.responder(messages)
        elif "test questions" in messages[0]["content"] or "测试问题" in messages[0]["content"]:
            text = self._question_reply(first_user, retried)
        else:
            text = self._grade_reply(first_user, retried)
        usage = {"prompt_tokens": sum(len(m["content"]) // 4 for m in messages), "completion_tokens": 5}
        return self._send(h, 200, {"id": "x", "object": "chat.completion", "model": body["model"],
                                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                                "finish_reason": "stop"}], "usage": usage})

    @staticmethod
    def _question_reply(user: str, retried: bool) -> str:
        passage = user.split("Passage: ", 1)[-1].split("文字：", 1)[-1].split("\n\n", 1)[0]
        if "[[genfail-always]]" in passage:
            return "Here is a question about the passage."
        words = passage.split()
        if "[[copy]]" in passage:
            question = passage.replace("[[copy]]", "").strip() + "?"
        elif "[[pointing]]" in passage:
            question = f"According to the passage, what is {words[1]}?"
        elif "[[dup]]" in passage:
            question = "What is the shared duplicate topic of these documents?"
        else:
            question = f"Which passage mentions {' and '.join(words[:3])}?"
        return json.dumps({"question": question, "answer": words[0] if words else "?"}, ensure_ascii=False)

    @staticmethod
    def _grade_reply(user: str, retried: bool) -> str:
        passage = user.split("Passage: ", 1)[-1].split("文字：", 1)[-1]
        m = re.search(r"grade=(\d+)", passage)
        grade = int(m.group(1)) if m else len(passage) % 4
        if "[[malformed]]" in user or ("[[malformed-once]]" in user and not retried):
            return "This passage looks fairly relevant to me."
        if "[[think]]" in user:
            return f"<think>The user wants X. grade 3? no.</think>\n{{\"grade\": {grade}}}"
        if "[[prose]]" in user:
            return f"The intent is clear. The passage matches.\nscore: {grade}"
        return json.dumps({"grade": grade})

    # -- embeddings ------------------------------------------------------------------------------
    @staticmethod
    def vector(text: str, dimensions: int = 64) -> list[float]:
        """The bag-of-words vector the server returns for ``text`` (not normalised)."""
        v = [0.0] * dimensions
        for word in re.findall(r"[a-z0-9]+|[\u4e00-\u9fff]", text.lower()):
            v[zlib.crc32(word.encode()) % (dimensions - 1)] += 1.0
        v[-1] = 0.01
        return v

    def _embeddings(self, h: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        if self.api_key is not None and h.headers.get("Authorization") != f"Bearer {self.api_key}":
            return self._send(h, 401, {"error": {"message": "Incorrect API key provided"}})
        if body.get("model") == "missing-model":
            return self._send(h, 404, {"error": {"message": "model 'missing-model' not found"}})
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        marked = next((t for t in inputs if "[[500]]" in t), None)
        if marked is not None:
            with self.lock:
                self.seen[marked] += 1
                n = self.seen[marked]
            if n <= 2:
                return self._send(h, 500, {"error": {"message": "internal error"}})
        dims = int(body.get("dimensions") or 64)
        items = []
        for i, text in enumerate(inputs):
            vec = self.vector(text, dims)
            encoded: Any = (base64.b64encode(struct.pack(f"<{dims}f", *vec)).decode()
                            if body.get("encoding_format") == "base64" else vec)
            items.append({"object": "embedding", "index": i, "embedding": encoded})
        with self.lock:
            self.embedded += len(inputs)
        tokens = sum(len(t.split()) for t in inputs)
        return self._send(h, 200, {"object": "list", "data": items[::-1], "model": body["model"],
                                   "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})
