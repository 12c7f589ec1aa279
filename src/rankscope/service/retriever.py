"""The retriever client of live evaluations: :class:`ServiceRetriever`, an :class:`HttpRetriever` that reads at most
``max_answer_bytes`` of an answer and stores only fixed descriptions of what went wrong.

* **Answer size.**  The answer is read as a stream and counted (its ``Content-Length`` is checked first; a
  gzip or deflate answer is inflated in bounded steps and its inflated bytes counted): past the limit the
  connection is dropped and the query fails with ``answer larger than N bytes`` — never retried, and
  counted as that query's failure like any other.  64 concurrent 200 MB answers cannot take the memory.
* **Fixed descriptions.**  A failed query's stored error says what happened in the service's words only: a
  status line with the standard reason phrase of the code (never the phrase the peer sent), the kind of
  transport failure (never the text of a protocol error, which may quote the peer's bytes), "not JSON",
  "not a list of hits" (never the value that was not).  Whatever a peer puts in an answer is not kept.
"""

from __future__ import annotations

import asyncio
import http
import json
import threading
import time
import zlib
from typing import Any

from rankscope.errors import RankscopeError
from rankscope.i18n import _
from rankscope.retrieval.http import RETRY_STATUS, BadAnswer, HttpRetriever, HttpRetrieverError
from rankscope.retrieval.protocol import Hit, to_hits

__all__ = ["ServiceRetriever", "status_line", "DEFAULT_MAX_ANSWER"]

DEFAULT_MAX_ANSWER = 16 << 20


def status_line(code: int) -> str:
    """``HTTP 500 Internal Server Error``: the standard phrase of the code, never the peer's.

    >>> status_line(503), status_line(599)
    ('HTTP 503 Service Unavailable', 'HTTP 599')
    """
    try:
        return f"HTTP {code} {http.HTTPStatus(code).phrase}"
    except ValueError:
        return f"HTTP {code}"


_TRANSPORT = {"ConnectError": "could not connect", "ConnectTimeout": "could not connect in time",
              "ReadError": "the connection failed while reading the answer",
              "WriteError": "the connection failed while sending the query",
              "RemoteProtocolError": "not a valid HTTP answer", "LocalProtocolError": "not a valid HTTP exchange",
              "ReadTimeout": "no complete answer in time", "PoolTimeout": "no free connection in time",
              "DecodingError": "an answer whose compression could not be read"}


class TooLarge(Exception):
    pass


class ServiceRetriever(HttpRetriever):
    """:class:`HttpRetriever` with an answer size cap and fixed error descriptions (module docstring)."""

    def __init__(self, url: str, *, max_answer_bytes: int = DEFAULT_MAX_ANSWER, **options: Any) -> None:
        headers = {"Accept-Encoding": "identity", **(options.pop("headers", None) or {})}
        super().__init__(url, headers=headers, **options)
        self.max_answer_bytes = max_answer_bytes
        self.aborted = False
        self._inflight: set[tuple[asyncio.Task[Any], asyncio.AbstractEventLoop]] = set()
        self._guard_lock = threading.Lock()

    def abort(self) -> None:
        """Abandon the requests in flight and ask nothing more (the job stops or gives its turn back): each
        ends at once as a failure that is not stored (the query is asked again when the job resumes)."""
        with self._guard_lock:
            self.aborted = True
            inflight = list(self._inflight)
        for task, loop in inflight:
            loop.call_soon_threadsafe(task.cancel)

    def _too_large(self) -> HttpRetrieverError:
        return HttpRetrieverError(f"answer larger than {self.max_answer_bytes} bytes (the limit of one answer; "
                                  "raise it with `rankscope serve --max-answer-mb`)", retryable=False)

    async def _read(self, query: str, k: int) -> tuple[int, bytes]:
        """``(status, body)``; the body only of a 200 answer, read up to the limit."""
        client = await self._http()
        async with client.stream("POST", self.url, json={"query": query, "k": k}) as resp:
            if resp.status_code != 200:
                return resp.status_code, b""
            declared = resp.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_answer_bytes:
                raise TooLarge
            coding = resp.headers.get("content-encoding", "identity").strip().lower()
            if coding not in ("identity", "", "gzip", "deflate", "x-gzip"):
                raise HttpRetrieverError(f"an answer compressed as {coding[:20]!r}, which the service does not read",
                                         retryable=False)
            inflate = zlib.decompressobj(47) if coding != "identity" and coding else None  # gzip or zlib header
            body = bytearray()
            async for chunk in resp.aiter_raw():
                pieces = [chunk]
                if inflate is not None:
                    pieces, data = [], chunk
                    while data:
                        pieces.append(inflate.decompress(data, 1 << 16))
                        data = inflate.unconsumed_tail
                        if len(body) + sum(map(len, pieces)) > self.max_answer_bytes:
                            raise TooLarge
                for piece in pieces:
                    body += piece
                if len(body) > self.max_answer_bytes:
                    raise TooLarge
            return 200, bytes(body)

    async def asearch(self, query: str, k: int) -> list[Hit]:
        """Ask for the top ``k`` hits of ``query``; every failure is a fixed description (module docstring)."""
        task = asyncio.current_task()
        with self._guard_lock:
            if self.aborted:
                raise HttpRetrieverError("not asked: the job stopped", retryable=False)
            if task is not None:
                self._inflight.add((task, asyncio.get_running_loop()))
        try:
            return await self._asearch(query, k)
        except asyncio.CancelledError:
            if self.aborted:
                raise HttpRetrieverError("abandoned: the job stopped", retryable=False) from None
            raise
        finally:
            with self._guard_lock:
                self._inflight.discard((task, asyncio.get_running_loop()))  # type: ignore[arg-type]

    async def _asearch(self, query: str, k: int) -> list[Hit]:
        import httpx

        budget = self._budget()
        if self.guard is not None:
            try:
                self.guard(self.url)
            except RankscopeError as exc:
                raise HttpRetrieverError(f"refused: {exc}", retryable=False) from None
        t0 = time.monotonic()
        try:
            status, body = await asyncio.wait_for(self._read(query, k), budget)
        except (TimeoutError, asyncio.TimeoutError):
            if budget < self.timeout:
                raise HttpRetrieverError("no complete answer before the job's time budget ran out",
                                         retryable=False) from None
            raise HttpRetrieverError(f"no complete answer within {budget:.3g} s") from None
        except TooLarge:
            raise self._too_large() from None
        except zlib.error:
            raise HttpRetrieverError(_TRANSPORT["DecodingError"], retryable=False) from None
        except httpx.HTTPError as exc:
            name = type(exc).__name__
            raise HttpRetrieverError(_TRANSPORT.get(name, name)) from None
        if status != 200:
            raise HttpRetrieverError(status_line(status), retryable=status in RETRY_STATUS)
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            seconds = time.monotonic() - t0
            raise BadAnswer(_("bad answer: not JSON ({seconds:.3g} s)", seconds=seconds)) from None
        try:
            return to_hits(payload, k)
        except RankscopeError:
            raise BadAnswer(_("bad answer: not a list of hits with an id and a score each")) from None
