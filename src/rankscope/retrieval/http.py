"""A retriever behind an HTTP endpoint: :class:`HttpRetriever`.

Each query is POSTed as ``{"query": text, "k": k}``; the answer must be a JSON list of
hits (``[{"id": doc_id, "score": number}, ...]`` or anything else :func:`to_hits`
accepts).  Use it with :func:`~rankscope.retrieval.runner.evaluate_retriever` like any
retriever — the runner does the concurrency, retries and resume; this class only asks
and checks:

* every request has a *total* deadline (``timeout``: connecting, sending and reading the
  whole answer together), so a server trickling one byte a second cannot hold a worker
  longer than that; ``deadline`` (a :func:`time.monotonic` value) ends every request
  — and refuses new ones — when a job's overall budget runs out;
* a non-200 answer raises :class:`HttpRetrieverError` with the status line only (the body
  of a failed call is never kept: it may hold anything the server chose to put there);
* redirects are not followed; ``guard(url)`` (if given) runs before each request and may
  refuse it (the evaluation service checks the resolved address there);
* errors that a retry cannot fix (a malformed answer, 4xx other than 408/425/429, the
  guard's refusal, the budget) carry ``retryable = False`` and the runner records them at once.

The requests of all threads share one event loop (in a helper thread) and one
connection pool of ``max_connections``.

>>> r = HttpRetriever("http://127.0.0.1:9/search", timeout=1.0)
>>> r.name, r.timeout
('http://127.0.0.1:9/search', 1.0)
>>> r.close()
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from rankscope.errors import InvalidParameterError, RankscopeError
from rankscope.i18n import _
from rankscope.retrieval.protocol import Hit, to_hits

__all__ = ["HttpRetriever", "HttpRetrieverError", "RETRY_STATUS"]

RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
#: what an answer that is not a list of hits is called in its error ("bad answer: ...")
_BAD_ANSWER = _("bad answer")


class HttpRetrieverError(Exception):
    """A failed call: the status line, or the transport error; ``retryable`` says whether to ask again."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        self.retryable = retryable
        super().__init__(message)


class BadAnswer(RankscopeError):
    """The retriever answered 200, but not with a list of hits (a retry gives the same)."""

    retryable = False


class HttpRetriever:
    """``search(query, k)`` by POSTing ``{"query", "k"}`` to ``url`` (see module doc)."""

    def __init__(self, url: str, *, timeout: float = 30.0, max_connections: int = 8,
                 headers: dict[str, str] | None = None, deadline: float | None = None,
                 guard: Callable[[str], None] | None = None, name: str | None = None) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise InvalidParameterError(_("timeout must be a positive number of seconds, got {value!r}", value=timeout))
        self.url = url
        self.name = name or url
        self.timeout = float(timeout)
        self.deadline = deadline
        self.guard = guard
        self.headers = dict(headers or {})
        self.max_connections = max_connections
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: Any = None
        self._lock = threading.Lock()

    # one event loop in a helper thread, shared by every calling thread
    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="rankscope-http", daemon=True)
                self._thread.start()
                self._loop = loop
            return self._loop

    def _run(self, coro: Coroutine[Any, Any, list[Hit]]) -> list[Hit]:
        return asyncio.run_coroutine_threadsafe(coro, self._start()).result()

    async def _http(self) -> Any:
        if self._client is None:
            import httpx

            limits = httpx.Limits(max_connections=self.max_connections,
                                  max_keepalive_connections=self.max_connections)
            self._client = httpx.AsyncClient(timeout=self.timeout, limits=limits, trust_env=False,
                                             follow_redirects=False, headers=self.headers)
        return self._client

    def _budget(self) -> float:
        """Seconds this request may take: the timeout, or less when the job's deadline is nearer."""
        if self.deadline is None:
            return self.timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise HttpRetrieverError("not asked: the job's time budget ran out", retryable=False)
        return min(self.timeout, left)

    async def asearch(self, query: str, k: int) -> list[Hit]:
        """Ask for the top ``k`` hits of ``query`` (the coroutine behind :meth:`search`)."""
        import httpx

        budget = self._budget()
        if self.guard is not None:
            try:
                self.guard(self.url)
            except RankscopeError as exc:
                raise HttpRetrieverError(f"refused: {exc}", retryable=False) from None
        client = await self._http()
        t0 = time.monotonic()
        try:
            resp = await asyncio.wait_for(client.post(self.url, json={"query": query, "k": k}), budget)
        except (TimeoutError, asyncio.TimeoutError):
            if budget < self.timeout:
                raise HttpRetrieverError("no complete answer before the job's time budget ran out",
                                         retryable=False) from None
            raise HttpRetrieverError(f"no complete answer within {budget:.3g} s") from None
        except httpx.HTTPError as exc:  # connection refused/reset, protocol errors
            raise HttpRetrieverError(f"{type(exc).__name__}: {str(exc)[:200]}") from None
        if resp.status_code != 200:
            line = f"HTTP {resp.status_code} {resp.reason_phrase}".strip()
            raise HttpRetrieverError(line, retryable=resp.status_code in RETRY_STATUS)
        try:
            payload = resp.json()
        except ValueError:
            seconds = time.monotonic() - t0
            raise BadAnswer(_("bad answer: not JSON ({seconds:.3g} s)", seconds=seconds)) from None
        try:
            return to_hits(payload, k, where=_BAD_ANSWER)
        except RankscopeError as exc:
            raise BadAnswer(_("{said}", said=exc)) from None

    def search(self, query: str, k: int) -> list[Hit]:
        """Ask for the top ``k`` hits of ``query`` (blocking; safe to call from many threads)."""
        return self._run(self.asearch(query, k))

    def close(self) -> None:
        """Close the connections and stop the helper thread."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        client, self._client = self._client, None
        if client is not None:
            asyncio.run_coroutine_threadsafe(client.aclose(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        loop.close()

    def __enter__(self) -> HttpRetriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
