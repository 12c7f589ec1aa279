"""ASGI middleware: Host check, same-origin check, token authentication, request body size limit.

All run before any route code, in this order:

* :class:`HostCheck` refuses a ``Host`` header that is not a name of this service (400), so a
  DNS-rebinding page (``http://attacker.example`` resolving to 127.0.0.1) cannot read or drive a
  service that listens on loopback without a token;
* :class:`SameOrigin` refuses state-changing requests (POST, PUT, PATCH, DELETE) sent by a page
  of another origin (403): the browser's ``Origin`` (or ``Sec-Fetch-Site``) must say the request
  comes from the dashboard itself; a request signed in only by the dashboard's cookie must
  carry it.  API clients (curl, scripts) send neither header and are not affected;
* :class:`TokenAuth` (with ``--token``);
* :class:`BodyLimit`: an oversized upload is refused without being read whole: a declared
  ``Content-Length`` over the limit at once, a chunked body as soon as the running count passes it
  (JSON for the API; a dashboard form gets the error page, in the page's language);
* :class:`SecurityHeaders` (outermost, on every answer, refusals included): a Content-Security-Policy
  with ``frame-ancestors 'none'`` and ``X-Frame-Options: DENY``, so that no page of another site can
  frame a dashboard page and have it clicked (clickjacking); scripts only from the service's own files.

The Host and Origin refusals answer JSON on every path: they answer requests that a page of another
site made a browser send, not a mistake of someone using the dashboard.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote

from starlette.exceptions import HTTPException

from rankscope.i18n import _

__all__ = ["FailureThrottle", "TokenAuth", "BodyLimit", "HostCheck", "SameOrigin", "SecurityHeaders", "PUBLIC_PATHS",
           "TOKEN_COOKIE",
           "host_allowed", "CSP", "FRAMED_CSP"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PUBLIC_PATHS = ("/api/v1/health", "/login", "/static/*")
TOKEN_COOKIE = "rankscope_token"


async def _json(send: Send, status: int, body: dict[str, Any],
                headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


def _headers(scope: Scope) -> dict[bytes, bytes]:
    return {k.lower(): v for k, v in scope.get("headers", [])}


UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _split_host(value: str) -> tuple[str, str]:
    """``(host, port)`` of a Host header value (``[::1]:80`` -> ``('::1', '80')``)."""
    value = value.strip().lower()
    if value.startswith("["):
        inside, __, rest = value[1:].partition("]")
        return inside, rest[1:] if rest.startswith(":") else ""
    if value.count(":") == 1:
        host, port = value.split(":")
        return host, port
    return value, ""


def _ip(host: str) -> Any:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def host_allowed(host_header: str, bind: str, extra: tuple[str, ...] = ()) -> bool:
    """Whether a request's ``Host`` names this service.

    Always: ``localhost`` and the loopback addresses; the bound address; the ``extra`` names
    (``--allow-host``).  On a wildcard bind (``0.0.0.0``, ``::``) any IP literal too, but no other
    DNS name (that is what a rebinding attack uses).

    >>> host_allowed("127.0.0.1:8000", "127.0.0.1"), host_allowed("evil.example:8000", "127.0.0.1")
    (True, False)
    >>> host_allowed("10.1.2.3:8000", "0.0.0.0"), host_allowed("rs.corp", "0.0.0.0", ("rs.corp",))
    (True, True)
    """
    host, __ = _split_host(host_header)
    host = host.rstrip(".")
    if not host:
        return False
    names = {"localhost", bind.strip("[]").lower(), *(h.strip("[]").lower() for h in extra)}
    if host in names:
        return True
    addr = _ip(host)
    if addr is None:
        return False
    if addr.is_loopback:
        return True
    b = _ip(bind.strip("[]"))
    return b is not None and b.is_unspecified


async def _refuse(send: Send, status: int, field: str, problem: str) -> None:
    await _json(send, status, {"detail": f"{field}: {problem}", "errors": [{"field": field, "problem": problem}]})


class HostCheck:
    """400 unless the ``Host`` header names this service (see :func:`host_allowed`)."""

    def __init__(self, app: ASGIApp, bind: str, extra: tuple[str, ...] = ()) -> None:
        self.app = app
        self.bind = bind
        self.extra = extra

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            host = _headers(scope).get(b"host", b"").decode("latin-1")
            if not host_allowed(host, self.bind, self.extra):
                await _refuse(send, 400, "Host", f"{host[:100]!r} is not a name of this service; start it with "
                                                 "--allow-host NAME to reach it under another name")
                return
        await self.app(scope, receive, send)


class SameOrigin:
    """403 for a state-changing request that a page of another origin made the browser send."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    def _problem(self, scope: Scope) -> str | None:
        h = _headers(scope)
        origin = h.get(b"origin")
        host = h.get(b"host", b"").decode("latin-1").lower()
        scheme = str(scope.get("scheme", "http"))
        if origin is not None:
            text = origin.decode("latin-1").strip().lower()
            want = f"{scheme}://{host}"
            default = ":443" if scheme == "https" else ":80"
            if text != want and text + default != want and text != want + default:
                return f"a page of {text[:100]!r} may not change data here (only this service's own pages may)"
            return None
        site = h.get(b"sec-fetch-site", b"").decode("latin-1").lower()
        if site in ("cross-site", "same-site"):
            return "a page of another site may not change data here (only this service's own pages may)"
        by_header = h.get(b"authorization", b"")[:7].lower() == b"bearer " or b"x-api-token" in h \
            or b"x-annotator-token" in h
        cookie = h.get(b"cookie", b"")
        if not by_header and (TOKEN_COOKIE.encode() + b"=" in cookie or b"rankscope_judge_" in cookie):
            return "a request signed in with the dashboard's cookie must come from the dashboard (no Origin header)"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method", "GET") in UNSAFE_METHODS:
            problem = self._problem(scope)
            if problem is not None:
                await _refuse(send, 403, "Origin", problem)
                return
        await self.app(scope, receive, send)


class FailureThrottle:
    """Failed token checks per client address: after ``attempts`` failures within ``window`` seconds, the client
    waits until the oldest of them is ``window`` seconds old (HTTP 429 with ``Retry-After``) — guessing a token
    goes at ``attempts`` tries a ``window``, not thousands a second.  At most ``clients`` addresses are
    remembered (the least recently failing are forgotten first), so the table cannot grow without end.

    >>> t = FailureThrottle(attempts=2, window=60.0)
    >>> t.wait("10.0.0.1", now=0.0), t.fail("10.0.0.1", now=0.0), t.fail("10.0.0.1", now=1.0)
    (0.0, None, None)
    >>> t.wait("10.0.0.1", now=2.0), t.wait("10.0.0.2", now=2.0), t.wait("10.0.0.1", now=61.0)
    (58.0, 0.0, 0.0)
    """

    def __init__(self, attempts: int = 10, window: float = 60.0, clients: int = 10_000) -> None:
        self.attempts, self.window, self.clients = attempts, window, clients
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def wait(self, client: str, now: float | None = None) -> float:
        """Seconds ``client`` must wait before its next try (0: it may try now)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            times = self._failures.get(client)
            if times is None:
                return 0.0
            while times and times[0] <= now - self.window:
                times.popleft()
            if len(times) < self.attempts:
                return 0.0
            return times[0] + self.window - now

    def fail(self, client: str, now: float | None = None) -> None:
        """Count a failed try of ``client``."""
        now = time.monotonic() if now is None else now
        with self._lock:
            times = self._failures.pop(client, None) or deque(maxlen=self.attempts)
            times.append(now)
            self._failures[client] = times
            while len(self._failures) > self.clients:
                self._failures.popitem(last=False)


def client_of(scope: Scope) -> str:
    """The client's address (the one the connection comes from)."""
    client = scope.get("client")
    return str(client[0]) if client else "?"


async def too_many(send: Send, wait: float) -> None:
    """429: too many failed token checks from this address; ``Retry-After`` says when to try again."""
    seconds = max(1, int(wait + 0.999))
    await _json(send, 429, {"detail": f"too many wrong tokens from this address; try again in {seconds} s",
                            "errors": [{"field": "Authorization", "problem": "too many wrong tokens from this "
                                        f"address; try again in {seconds} s"}]},
                [(b"retry-after", str(seconds).encode())])


class TokenAuth:
    """Refuse every request but the public paths unless it carries the token.

    Accepted: ``Authorization: Bearer <token>``, ``X-API-Token: <token>``, or the
    ``rankscope_token`` cookie set by the dashboard's login page.  API paths get a
    401 JSON body; web pages redirect to the login page.  A wrong token counts against the
    client's address (:class:`FailureThrottle`, shared with the login page): past the limit,
    429 before any check.
    """

    def __init__(self, app: ASGIApp, token: str, throttle: FailureThrottle | None = None) -> None:
        self.app = app
        self.token = token.encode()
        self.throttle = throttle or FailureThrottle()

    def _given(self, scope: Scope) -> list[bytes]:
        h = _headers(scope)
        given: list[bytes] = []
        auth = h.get(b"authorization", b"")
        if auth[:7].lower() == b"bearer ":
            given.append(auth[7:].strip())
        if b"x-api-token" in h:
            given.append(h[b"x-api-token"].strip())
        return given

    def _ok(self, scope: Scope) -> bool:
        h = _headers(scope)
        given: list[bytes] = []
        auth = h.get(b"authorization", b"")
        if auth[:7].lower() == b"bearer ":
            given.append(auth[7:].strip())
        if b"x-api-token" in h:
            given.append(h[b"x-api-token"].strip())
        for part in h.get(b"cookie", b"").split(b";"):
            k, __, v = part.strip().partition(b"=")
            if k == TOKEN_COOKIE.encode():
                from urllib.parse import unquote_to_bytes

                given.append(unquote_to_bytes(v))
        return any(hmac.compare_digest(g, self.token) for g in given)

    def _annotator_route(self, scope: Scope, path: str) -> bool:
        """A judging route of one task, asked with an annotator's token for that task (the route checks the token:
        :mod:`rankscope.service.judging.identity`), or the task's invitation link."""
        from rankscope.service.judging.identity import ANNOTATOR_ROUTES, annotator_token

        m = ANNOTATOR_ROUTES.match(path)
        if m is None:
            return False
        if path.endswith("/join"):
            return True
        task = m.group(1) or m.group(2)
        h = _headers(scope)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in h.items()}
        cookies: dict[str, str] = {}
        for part in h.get(b"cookie", b"").decode("latin-1").split(";"):
            k, __, v = part.strip().partition("=")
            cookies[k] = v
        return annotator_token(headers, cookies, task) is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path in ("/api/v1/health", "/login") or path.startswith("/static/"):
            await self.app(scope, receive, send)
            return
        client = client_of(scope)
        wait = self.throttle.wait(client)
        if wait > 0:
            await too_many(send, wait)
            return
        if self._ok(scope) or self._annotator_route(scope, path):
            await self.app(scope, receive, send)
            return
        if self._given(scope):  # a wrong token (not merely none): a guess
            self.throttle.fail(client)
        if path.startswith("/api/"):
            await _json(send, 401, {"detail": "missing or wrong token", "errors": [
                {"field": "Authorization", "problem": "send 'Authorization: Bearer <token>' (or X-API-Token)"}]},
                [(b"www-authenticate", b"Bearer")])
            return
        target = "/login?next=" + quote(path, safe="/")
        await send({"type": "http.response.start", "status": 303,
                    "headers": [(b"location", target.encode()), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})


class BodyTooLarge(HTTPException):
    pass


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` with 413."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _body(self) -> dict[str, Any]:
        return {"detail": f"request body over the limit of {self.max_bytes} bytes",
                "errors": [{"field": "body", "problem": f"larger than {self.max_bytes} bytes "
                            "(raise it with `rankscope serve --max-upload-mb`)"}]}

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        """413: JSON for the API, the error page for a dashboard form (in the page's language)."""
        if str(scope.get("path", "")).startswith("/api/"):
            await _json(send, 413, self._body(), [(b"connection", b"close")])
            return
        from starlette.requests import Request

        from rankscope.service.problems import field_problem
        from rankscope.service.render import error_page, lang_of

        request = Request(scope)
        lang = lang_of(request)
        page = error_page(request, 413, field_problem("body", _("larger than {limit} bytes (raise it with "
                                                                "`rankscope serve --max-upload-mb`)",
                                                                limit=self.max_bytes).text(lang), lang))
        page.headers["connection"] = "close"
        await page(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _headers(scope).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        seen = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_bytes:
                    raise BodyTooLarge(413, self._body()["detail"])
            return msg

        async def tracking_send(msg: Message) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await self._refuse(scope, receive, send)


CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""The policy of every answer: scripts only from the service's files (no inline script or handler), inline
styles allowed (bar widths), images from the service or ``data:`` URLs, forms posted only to the service,
and no framing by any page."""
FRAMED_CSP = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; "
              "frame-ancestors 'self'")
"""The policy of an HTML report shown in the dashboard's own frame: framed by the service's pages only; no
script at all, its own inline styles and ``data:`` plots."""


class SecurityHeaders:
    """Add the CSP (:data:`CSP`), ``X-Frame-Options: DENY``, ``X-Content-Type-Options: nosniff`` and
    ``Referrer-Policy: same-origin`` to every answer; a route that set its own CSP (a framed report, the API
    docs' page) keeps it, with the matching ``X-Frame-Options``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                headers = list(msg.get("headers", []))
                names = {k.lower() for k, __ in headers}
                own = next((v for k, v in headers if k.lower() == b"content-security-policy"), None)
                if own is None:
                    headers.append((b"content-security-policy", CSP.encode()))
                if b"x-frame-options" not in names:
                    framed_by_self = own is not None and b"frame-ancestors 'self'" in own
                    headers.append((b"x-frame-options", b"SAMEORIGIN" if framed_by_self else b"DENY"))
                if b"x-content-type-options" not in names:
                    headers.append((b"x-content-type-options", b"nosniff"))
                if b"referrer-policy" not in names:
                    headers.append((b"referrer-policy", b"same-origin"))
                msg["headers"] = headers
            await send(msg)

        await self.app(scope, receive, with_headers)
