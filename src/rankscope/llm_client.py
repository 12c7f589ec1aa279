"""A small client of the OpenAI-compatible chat API (``POST {base_url}/chat/completions``) on httpx.

OpenAI, DeepSeek, Qwen (DashScope), vLLM, Ollama, llama.cpp and many gateways
speak this API.  One :class:`ChatClient` is shared by the worker threads of a
batch (httpx clients are thread-safe; ``max_connections`` bounds the requests
in flight).

Failures
    * 429 (rate limited): wait what ``Retry-After`` says (seconds or an HTTP
      date) — every thread of the client waits, not only the one that was told —
      then retry; without the header, back off exponentially.  A wait longer than
      ``max_wait`` fails the call instead of sleeping for it.
    * 408, 409, 5xx, timeouts, a 200 whose body is not a chat completion: retry
      with exponential backoff (``backoff * 2**attempt`` seconds, at most
      ``max_wait``), ``retries`` times; then :class:`ChatError`.
    * other 4xx (a prompt too long for the model...): :class:`ChatError` at once.
    * 401 / 403 / 404, or no connection to the endpoint at all: a setting is
      wrong for every call, so :class:`EndpointError` (a user error) stops the batch.

The API key is read from the environment variable the caller names
(:func:`api_key_from_env`); it is sent in the ``Authorization`` header only,
never put in a message, a repr, a log or a file.

>>> Endpoint("localhost:8000/v1")
Traceback (most recent call last):
...
rankscope.llm_client.EndpointError: base_url must start with http:// or https://, got 'localhost:8000/v1'
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

from rankscope.errors import InvalidParameterError, RankscopeError
from rankscope.i18n import _

__all__ = ["ChatClient", "ChatError", "ChatReply", "Endpoint", "EndpointError", "api_key_from_env",
           "parse_retry_after", "public_url", "request_body"]

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
_FATAL_STATUS = frozenset({401, 403, 404})


class EndpointError(RankscopeError):
    """The endpoint cannot serve any call as configured (bad URL, key, model): stop and say why."""


class ChatError(Exception):
    """One call failed for good (after the retries that apply); ``kind`` says how."""

    def __init__(self, kind: str, message: str, attempts: int = 1) -> None:
        super().__init__(message)
        self.kind = kind
        self.attempts = attempts


def api_key_from_env(var: str | None) -> str | None:
    """The API key in environment variable ``var`` (None when ``var`` is None: a local endpoint).

    >>> api_key_from_env(None) is None
    True
    """
    if var is None:
        return None
    key = os.environ.get(var, "").strip()
    if not key:
        raise EndpointError(_("the environment variable {var} (named by --api-key-env) is not set or empty", var=var))
    return key


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delay seconds or an HTTP date; None when absent/unreadable.

    >>> parse_retry_after("3"), parse_retry_after("1.5"), parse_retry_after(None), parse_retry_after("soon")
    (3.0, 1.5, None, None)
    >>> parse_retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0)
    6.0
    """
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


@dataclass(frozen=True)
class Endpoint:
    """Where and how to call: ``base_url`` (up to, not including, ``/chat/completions``), the name of the
    environment variable holding the API key (None: send no key), the timeout of one call in seconds,
    the retries of a failed call, the first backoff and the longest wait (seconds)."""

    base_url: str
    api_key_env: str | None = None
    timeout: float = 60.0
    retries: int = 4
    backoff: float = 1.0
    max_wait: float = 300.0

    def __post_init__(self) -> None:
        if not isinstance(self.base_url, str) or not self.base_url.startswith(("http://", "https://")):
            raise EndpointError(_("base_url must start with http:// or https://, got {value!r}", value=self.base_url))
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        if self.base_url.endswith("/chat/completions"):
            object.__setattr__(self, "base_url", self.base_url[: -len("/chat/completions")])
        for name in ("timeout", "backoff", "max_wait"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or (name == "timeout" and v == 0):
                raise InvalidParameterError(_("{name} must be a positive number of seconds, got {value!r}", name=name,
                                              value=v))
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise InvalidParameterError(_("{name} must be an integer >= {low}, got {value!r}", name="retries", low=0,
                                          value=self.retries))

    @property
    def url(self) -> str:
        """The chat completions URL."""
        return f"{self.base_url}/chat/completions"


def request_body(model: str, messages: list[dict[str, str]], *, temperature: float = 0.0,
                 max_tokens: int | None = None, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON body of one chat completion request: model, messages, temperature, no streaming, then ``params``
    (a prompt's own settings such as ``frequency_penalty``) and ``max_tokens`` when given (it wins over a
    ``max_tokens`` in ``params``).

    >>> request_body("m", [], max_tokens=5, params={"top_p": 1, "max_tokens": 100})
    {'model': 'm', 'messages': [], 'temperature': 0.0, 'stream': False, 'top_p': 1, 'max_tokens': 5}
    """
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature, "stream": False}
    body.update(params or {})
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return body


def public_url(url: str) -> str:
    """``url`` without user name and password (what provenance records of an endpoint).

    >>> public_url("https://user:secret@llm.example/v1")
    'https://llm.example/v1'
    """
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)) if parts.username else url


@dataclass(frozen=True)
class ChatReply:
    """The text of the first choice, the tokens used (0 when the endpoint does not say) and the HTTP attempts."""

    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    attempts: int = 1


@dataclass
class _Gate:
    """A time before which no thread of the client sends (set by a 429's ``Retry-After``)."""

    resume_at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hold(self, seconds: float) -> None:
        with self.lock:
            self.resume_at = max(self.resume_at, time.monotonic() + seconds)

    def wait(self) -> None:
        delay = self.resume_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)


class ChatClient:
    """Calls ``POST {base_url}/chat/completions`` with retries; see the module docstring.

    ``transport`` is an optional httpx transport (tests); ``max_connections`` bounds
    concurrent requests.  Use as a context manager or call :meth:`close`.
    """

    def __init__(self, endpoint: Endpoint, *, max_connections: int = 8, transport: Any = None) -> None:
        import httpx

        self.endpoint = endpoint
        self._key = api_key_from_env(endpoint.api_key_env)
        headers = {"Content-Type": "application/json"}
        if self._key is not None:
            headers["Authorization"] = f"Bearer {self._key}"
        limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
        self._http = httpx.Client(headers=headers, timeout=endpoint.timeout, limits=limits, transport=transport)
        self._gate = _Gate()

    def __repr__(self) -> str:
        key = f"${self.endpoint.api_key_env}" if self.endpoint.api_key_env else "no key"
        return f"ChatClient({self.endpoint.base_url!r}, {key})"

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    #: what a 200 whose body cannot be read is said to be not
    _not_a_reply = "not a chat completion"

    def chat(self, model: str, messages: list[dict[str, str]], *, temperature: float = 0.0,
             max_tokens: int | None = None, params: Mapping[str, Any] | None = None) -> ChatReply:
        """One chat completion (with the retries of the module docstring); raises :class:`ChatError` or
        :class:`EndpointError`.  The body is :func:`request_body`."""
        body = request_body(model, messages, temperature=temperature, max_tokens=max_tokens, params=params)
        reply: ChatReply = self.post(self.endpoint.url, body, self._reply, model)
        return reply

    def post(self, url: str, body: dict[str, Any], read: Any, model: str) -> Any:
        """POST ``body`` to ``url`` with the retries of the module docstring; ``read(json, attempt)`` makes the reply
        of a 200 (raising ValueError, KeyError, IndexError or TypeError for a body that is not one: retried).  Shared by
        the chat and the embeddings clients."""
        import httpx

        ep = self.endpoint
        error = ChatError("none", "no attempt")
        for attempt in range(1, ep.retries + 2):
            self._gate.wait()
            wait = min(ep.backoff * 2 ** (attempt - 1), ep.max_wait)
            try:
                resp = self._http.post(url, json=body)
            except httpx.TimeoutException as exc:
                error = ChatError("timeout", f"no reply within {ep.timeout:g} s ({type(exc).__name__})", attempt)
            except httpx.TransportError as exc:
                error = ChatError("connection", self._scrub(f"{type(exc).__name__}: {exc}"), attempt)
            else:
                if resp.status_code == 200:
                    try:
                        return read(resp.json(), attempt)
                    except (ValueError, KeyError, IndexError, TypeError) as exc:
                        error = ChatError("bad_response", f"{self._not_a_reply}: {exc}"[:300], attempt)
                else:
                    detail = self._detail(resp)
                    if resp.status_code in _FATAL_STATUS:
                        raise self._fatal(resp.status_code, detail, model)
                    error = ChatError(f"http_{resp.status_code}", f"HTTP {resp.status_code}"
                                      + (f": {detail}" if detail else ""), attempt)
                    if resp.status_code not in _RETRY_STATUS:
                        raise error
                    if resp.status_code == 429:
                        asked = parse_retry_after(resp.headers.get("Retry-After"))
                        if asked is not None and asked > ep.max_wait:
                            raise ChatError("rate_limited", f"HTTP 429: the endpoint asks to wait {asked:g} s, "
                                            f"more than max_wait={ep.max_wait:g} s", attempt)
                        if asked is not None:
                            wait = asked
                        self._gate.hold(wait)
                        wait = 0.0  # the gate does the waiting, for every thread
            if attempt <= ep.retries:
                time.sleep(wait)
        if error.kind == "connection":
            raise EndpointError(_("cannot reach {url}: {error} (check --base-url and that the server is up)", url=url,
                                  error=str(error)))
        raise error

    def _detail(self, resp: Any) -> str:
        """The endpoint's own reason for an error status (its ``error.message``, else the body), key scrubbed, at most
        200 characters; empty when it gives none."""
        try:
            data = resp.json()
            msg = data.get("error", {}).get("message") if isinstance(data.get("error"), dict) else data.get("error")
        except (ValueError, AttributeError):
            msg = None
        msg = msg or resp.text
        return self._scrub(" ".join(str(msg).split()))[:200] if msg else ""

    def _fatal(self, status: int, detail: str, model: str) -> EndpointError:
        """The error that stops a batch: a refused key (401, 403) or a wrong URL or model (404)."""
        ep = self.endpoint
        if status in (401, 403):
            if ep.api_key_env:
                return EndpointError(_("{url} refused the request (HTTP {status}): check the key in ${var}",
                                       url=ep.url, status=status, var=ep.api_key_env))
            return EndpointError(_("{url} refused the request (HTTP {status}): check --api-key-env (no key was "
                                   "sent)", url=ep.url, status=status))
        if detail:
            return EndpointError(_("HTTP 404 from {url}: {detail}: check --base-url (it ends before "
                                   "/chat/completions, e.g. https://api.openai.com/v1) and --model {model!r}",
                                   url=ep.url, detail=detail, model=model))
        return EndpointError(_("HTTP 404 from {url}: check --base-url (it ends before /chat/completions, e.g. "
                               "https://api.openai.com/v1) and --model {model!r}", url=ep.url, model=model))

    @staticmethod
    def _reply(data: Any, attempt: int) -> ChatReply:
        msg = data["choices"][0]["message"]
        text = msg.get("content")
        if not isinstance(text, str):
            raise TypeError("the reply has no text content")
        usage = data.get("usage") or {}
        return ChatReply(text, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0),
                         attempt)
