"""ASGI middleware: token authentication and the request body size limit.

Both run before any route code, so an unauthenticated or oversized upload is refused
without being read whole: a declared ``Content-Length`` over the limit is refused at
once, a chunked body as soon as the running count passes it.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote

from starlette.exceptions import HTTPException

__all__ = ["TokenAuth", "BodyLimit", "PUBLIC_PATHS", "TOKEN_COOKIE"]

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


class TokenAuth:
    """Refuse every request but the public paths unless it carries the token.

    Accepted: ``Authorization: Bearer <token>``, ``X-API-Token: <token>``, or the
    ``rankscope_token`` cookie set by the dashboard's login page.  API paths get a
    401 JSON body; web pages redirect to the login page.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    def _ok(self, scope: Scope) -> bool:
        h = _headers(scope)
        given: list[bytes] = []
        auth = h.get(b"authorization", b"")
        if auth[:7].lower() == b"bearer ":
            given.append(auth[7:].strip())
        if b"x-api-token" in h:
            given.append(h[b"x-api-token"].strip())
        for part in h.get(b"cookie", b"").split(b";"):
            k, _, v = part.strip().partition(b"=")
            if k == TOKEN_COOKIE.encode():
                from urllib.parse import unquote_to_bytes

                given.append(unquote_to_bytes(v))
        return any(hmac.compare_digest(g, self.token) for g in given)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path in ("/api/v1/health", "/login") or path.startswith("/static/") or self._ok(scope):
            await self.app(scope, receive, send)
            return
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

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _headers(scope).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _json(send, 413, self._body(), [(b"connection", b"close")])
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
                await _json(send, 413, self._body(), [(b"connection", b"close")])
