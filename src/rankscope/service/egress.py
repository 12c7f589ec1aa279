"""Where live evaluations may send requests: retriever URLs checked against an allow-list.

The service POSTs queries to a retriever URL that an authorised user gives.  So that
this cannot be turned against other services on the same machine or network
(server-side request forgery), a URL is accepted only when

* it parses as ``http://`` or ``https://`` with a host, a valid port and no user info;
* its host and port are on the allow-list (``rankscope serve --allow-retriever HOST:PORT``,
  repeatable; none by default, so live evaluations are off until an operator names the
  retrievers).  An entry without a port allows only the web's ports, 80 and 443: an entry naming
  a host cannot be used to probe its other ports (which ports are closed, which answer).
  ``HOST:*`` allows every port of the host, for an operator who means it;
* it is not the service's own address (checked again on every call, after DNS
  resolution, so a name that later resolves to the service is refused too).

Names are resolved only when a user wrote one: the host of a retriever URL (just before each call,
then by the HTTP client).  The service never looks up its own machine's name, nor any other name of
its own choosing; an IP literal (``127.0.0.1``, ``[::1]``) is never sent to a resolver.

Redirects are never followed (a redirect could leave the allow-list).

>>> p = EgressPolicy.from_entries(["127.0.0.1:9200", "search.internal"], own=[("127.0.0.1", 8000)])
>>> p.check("http://search.internal/query"), p.check("http://127.0.0.1:9200/s")
('http://search.internal/query', 'http://127.0.0.1:9200/s')
>>> p.check("http://127.0.0.1:9300/s")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankscope.service.egress.NotAllowedError: host 127.0.0.1:9300 is not on the retriever allow-list (...); start ...
>>> p.check("http://search.internal:6379/")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rankscope.service.egress.NotAllowedError: host search.internal:6379 is not on the retriever allow-list (...
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from rankscope.errors import InvalidParameterError, Items, Message
from rankscope.i18n import _

__all__ = ["EgressPolicy", "ForbiddenURLError", "NotAllowedError", "parse_entry"]

_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost")


def _norm_host(host: str) -> str:
    return host.strip().strip("[]").lower().rstrip(".")


ANY_PORT = 0
WEB_PORTS = (80, 443)


def parse_entry(entry: str) -> tuple[str, int | None]:
    """``HOST``, ``HOST:PORT`` or ``HOST:*`` (``[::1]:8080`` for IPv6) as ``(host, port)``: ``None`` for no port
    (the web's ports only), :data:`ANY_PORT` for ``*``.

    >>> parse_entry("search.internal"), parse_entry("127.0.0.1:9200"), parse_entry("[::1]:80"), parse_entry("h:*")
    (('search.internal', None), ('127.0.0.1', 9200), ('::1', 80), ('h', 0))
    """
    text = entry.strip()
    host, port = text, None
    if text.startswith("["):
        inside, __, rest = text[1:].partition("]")
        host = inside
        if rest.startswith(":"):
            port = rest[1:]
        elif rest:
            raise InvalidParameterError(_("--allow-retriever {entry!r}: expected HOST or HOST:PORT", entry=entry))
    elif text.count(":") == 1:
        host, port = text.split(":")
    host = _norm_host(host)
    if not host or any(c.isspace() or c in "/@?#" for c in host):
        raise InvalidParameterError(_("--allow-retriever {entry!r}: expected HOST or HOST:PORT", entry=entry))
    if port is None:
        return host, None
    if port == "*":
        return host, ANY_PORT
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        raise InvalidParameterError(_("--allow-retriever {entry!r}: the port must be 1-65535", entry=entry))
    return host, int(port)


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


class ForbiddenURLError(InvalidParameterError):
    """A valid URL this service may not call (its own address, or a host not on the allow-list: HTTP 403);
    ``address`` is the host and port as the message says them."""

    def __init__(self, message: Message | str, address: str) -> None:
        self.address = address
        super().__init__(message)


class NotAllowedError(ForbiddenURLError):
    """A host that is not on the allow-list."""


@dataclass(frozen=True)
class EgressPolicy:
    """The retriever allow-list and the service's own addresses (``(host, port)``)."""

    allow: tuple[tuple[str, int | None], ...] = ()
    own: tuple[tuple[str, int], ...] = ()

    @classmethod
    def from_entries(cls, entries: Iterable[str], own: Iterable[tuple[str, int]] = ()) -> EgressPolicy:
        return cls(tuple(parse_entry(e) for e in entries), tuple((_norm_host(h), p) for h, p in own))

    def describe(self) -> Items | Message:
        """The allow-list as a reader sees it (``empty`` when it has no entry); ``str()`` is the English."""
        if not self.allow:
            return _("empty")
        return Items(tuple(h if p is None else f"{h}:{'*' if p == ANY_PORT else p}" for h, p in self.allow))

    def _own(self, host: str, port: int) -> bool:
        for h, p in self.own:
            if p != port:
                continue
            if host == h or (_is_loopback(host) and (_is_loopback(h) or _is_wildcard(h))):
                return True
            if _is_wildcard(h) and _is_local_ip(host):
                return True
        return False

    def check(self, url: str) -> str:
        """The URL, normalised, or :class:`InvalidParameterError` saying why it is refused."""
        import httpx

        try:
            u = httpx.URL(url)
        except (httpx.InvalidURL, ValueError, TypeError) as exc:
            raise InvalidParameterError(_("not a valid URL ({reason})", reason=exc)) from None
        if u.scheme not in ("http", "https"):
            raise InvalidParameterError(_("the scheme must be http or https, got {scheme!r}", scheme=u.scheme))
        host = _norm_host(u.host)
        if not host or any(c.isspace() for c in host):
            raise InvalidParameterError(_("the URL has no host"))
        if u.userinfo:
            raise InvalidParameterError(_("user names or passwords in the URL are not accepted"))
        port = u.port or (443 if u.scheme == "https" else 80)
        if not 1 <= port <= 65535:
            raise InvalidParameterError(_("the port must be 1-65535, got {port}", port=port))
        shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if self._own(host, port):
            raise ForbiddenURLError(_("{address} is this service's own address", address=shown), shown)
        if not any(h == host and (p in (ANY_PORT, port) or (p is None and port in WEB_PORTS))
                   for h, p in self.allow):
            allowed = self.describe()
            raise NotAllowedError(_("host {address} is not on the retriever allow-list ({allowed}); start "
                                    "the service with --allow-retriever {address}", address=shown, allowed=allowed),
                                  shown)
        return str(u)

    def check_resolved(self, url: str) -> None:
        """Refuse a call whose host resolves to the service itself (run just before each request)."""
        import httpx

        u = httpx.URL(url)
        port = u.port or (443 if u.scheme == "https" else 80)
        if not self.own:
            return
        try:
            infos = socket.getaddrinfo(u.host, port, proto=socket.IPPROTO_TCP)
        except OSError:
            return  # the request itself reports the failure to resolve
        for info in infos:
            addr = str(info[4][0])
            if self._own(_norm_host(addr), port):
                raise InvalidParameterError(_("{host} resolves to {address}, this service's own address", host=u.host,
                                              address=addr))


def _is_local_ip(host: str) -> bool:
    """Whether ``host`` is an IP address of this machine: a socket can be bound to it.  No name is resolved (the
    machine's own name is not looked up: that would ask the resolver, and the network, about it).

    >>> _is_local_ip("127.0.0.1"), _is_local_ip("192.0.2.1"), _is_local_ip("not-an-ip")
    (True, False, False)
    """
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return False
    family = socket.AF_INET6 if addr.version == 6 else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as sock:
            sock.bind((str(addr), 0))
    except OSError:
        return False
    return True
