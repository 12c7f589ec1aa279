"""Alert webhooks: a JSON POST per alert episode (``status: firing``) and per recovery (``status: resolved``).

The URL must be on the webhook allow-list (``rankscope serve --allow-webhook HOST[:PORT]``; none by default),
checked when the monitor is saved and again before every try (after DNS resolution, never the service
itself); redirects are not followed.  A delivery that fails (a transport error or a status other than 2xx)
is tried again after ``webhook_backoff`` seconds, doubling up to an hour, :data:`MAX_ATTEMPTS` times in all,
then marked failed (shown on the monitor's page).  Deliveries are rows: a restart resumes them, and the unique
``(alert, kind)`` keeps an episode from being announced twice.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from rankscope.errors import RankscopeError
from rankscope.i18n import _
from rankscope.service.db import Database, Monitor
from rankscope.service.egress import NotAllowedError
from rankscope.service.settings import Settings
from rankscope.service.store import monitoring as mstore

__all__ = ["deliver_due", "check_webhook", "MAX_ATTEMPTS"]

log = logging.getLogger("rankscope.service.monitoring")
MAX_ATTEMPTS = 8


def check_webhook(settings: Settings, url: str) -> str:
    """The URL, normalised, if alerts may be sent there; :class:`InvalidParameterError` saying why not."""
    try:
        return settings.webhook_egress.check(url)
    except NotAllowedError as exc:
        address = exc.address
        allowed = settings.webhook_egress.describe()
        raise NotAllowedError(_("host {address} is not on the webhook allow-list ({allowed}); start the service "
                                "with --allow-webhook {address}", address=address, allowed=allowed), address) from None


def _post(settings: Settings, url: str, payload: dict[str, Any]) -> str | None:
    """Send once; None when the receiver answered 2xx, else what went wrong (never the answer's body)."""
    import httpx

    try:
        check_webhook(settings, url)
        settings.webhook_egress.check_resolved(url)
        resp = httpx.post(url, json=payload, timeout=10.0, follow_redirects=False,
                          headers={"User-Agent": "rankscope-monitor"})
    except RankscopeError as exc:
        return str(exc)
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"[:300]
    if 200 <= resp.status_code < 300:
        return None
    return f"HTTP {resp.status_code}"


def deliver_due(db: Database, settings: Settings, now: float | None = None) -> int:
    """Try every delivery that is due; returns how many were sent."""
    now = time.time() if now is None else now
    with db.read() as s:
        due = [(d.id, d.monitor_id, d.payload, d.attempts) for d in mstore.due_deliveries(s, now)]
    sent = 0
    for delivery_id, monitor_id, payload, attempts in due:
        if not mstore.claim_delivery(db, delivery_id, now, hold=60.0):
            continue
        with db.read() as s:
            m = s.get(Monitor, monitor_id)
            url = m.webhook_url if m is not None else None
        if not url:
            mstore.delivery_done(db, delivery_id, ok=False, error="the monitor has no webhook any more", next_at=None)
            continue
        error = _post(settings, url, payload)
        if error is None:
            sent += 1
            mstore.delivery_done(db, delivery_id, ok=True, error=None, next_at=None)
            continue
        tries = attempts + 1
        wait = min(3600.0, settings.webhook_backoff * 2 ** (tries - 1))
        log.warning("webhook of monitor %s failed (try %d): %s", monitor_id, tries, error)
        mstore.delivery_done(db, delivery_id, ok=False, error=error,
                             next_at=None if tries >= MAX_ATTEMPTS else time.time() + wait)
    return sent
