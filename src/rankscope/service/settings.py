"""Configuration of the evaluation service (:class:`Settings`)."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _
from rankscope.service.egress import EgressPolicy

__all__ = ["Settings", "default_db_url", "is_loopback", "check_token", "token_guesses_log10", "MIN_TOKEN_CHARS",
           "MIN_TOKEN_GUESSES_LOG10", "read_token_file"]

MiB = 1024 * 1024


def default_db_url() -> str:
    """The embedded default: a SQLite file under the user's data directory.

    ``RANKSCOPE_DB`` overrides it (any SQLAlchemy URL).
    """
    env = os.environ.get("RANKSCOPE_DB")
    if env:
        return env
    from platformdirs import user_data_dir

    path = Path(user_data_dir("rankscope")) / "rankscope.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def is_loopback(host: str) -> bool:
    """True when ``host`` only accepts connections from this machine.

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("::1"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


MIN_TOKEN_CHARS = 16
MIN_TOKEN_GUESSES_LOG10 = 12
"""A token must take at least 10^12 guesses by zxcvbn's estimate (about 40 bits): words, repeats, sequences and
keyboard patterns count for what they are worth, not for their length."""


def token_guesses_log10(token: str) -> float:
    """log10 of the guesses zxcvbn (Dropbox's password strength estimator) says ``token`` needs.

    >>> token_guesses_log10("passwordpassword") < 3 < 20 < token_guesses_log10("correct-horse-battery-staple")
    True
    """
    from zxcvbn import zxcvbn

    return float(zxcvbn(token[:100])["guesses_log10"])


def check_token(token: str) -> str:
    """Refuse a weak token: fewer than :data:`MIN_TOKEN_CHARS` characters, spaces or control characters, or fewer
    than 10^:data:`MIN_TOKEN_GUESSES_LOG10` guesses by :func:`token_guesses_log10`.

    >>> check_token("correct-horse-battery-staple")
    'correct-horse-battery-staple'
    >>> check_token("aaaaaaaaaaaaaaaa")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rankscope.errors.InvalidParameterError: the token is too weak: it is guessed in about 10^2 tries (at least 10^12 ...
    """
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() or ord(c) < 32 for c in token):
        raise InvalidParameterError(_("the token is too weak: use at least {n} characters without spaces (e.g. "
                                      '`python -c "import secrets; print(secrets.token_urlsafe(24))"`)',
                                      n=MIN_TOKEN_CHARS))
    guesses = token_guesses_log10(token)
    if guesses < MIN_TOKEN_GUESSES_LOG10:
        raise InvalidParameterError(_("the token is too weak: it is guessed in about 10^{guesses} tries (at least "
                                      "10^{need} needed: words, repeats and sequences count little) (e.g. `python "
                                      '-c "import secrets; print(secrets.token_urlsafe(24))"`)', guesses=int(guesses),
                                      need=MIN_TOKEN_GUESSES_LOG10))
    return token


def read_token_file(path: str | Path) -> str:
    """The token in a file (its first line, without the line end): a token given so is not in the process's
    command line (``/proc/PID/cmdline``), which every local user can read."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidParameterError(_("--token-file {path!r}: cannot read it ({reason})", path=str(p),
                                      reason=exc)) from None
    lines = text.splitlines()
    return lines[0].strip() if lines else ""


@dataclass
class Settings:
    """Everything the app factory needs.

    ``db_url``: SQLAlchemy URL (``sqlite:///file`` or ``postgresql+psycopg://...``);
    ``token``: when set, every endpoint except health needs it (``Authorization: Bearer``);
    ``workers``: background job threads (0 = do not run jobs in this process);
    ``report_workers``: threads that only render reports (besides the ``workers``, which render them when no
    evaluation waits), so that reports never wait for a load of evaluations to end;
    ``max_upload_bytes``: larger request bodies are refused with 413 before being read whole;
    ``max_data_bytes``: the most bytes one upload may hold once decompressed (gzip, zip members),
    counted while it is decompressed; ``max_rows``: the most rows (lines, or records of a JSON
    document) one upload may hold, counted while it is read;
    ``lease_seconds``: a running job whose worker stops renewing its lease this long is
    taken over by another worker (this is how a job survives a crash);
    ``retriever_timeout``: total seconds one retriever request may take in live evaluations
    (connecting, sending and reading together: a server trickling bytes cannot extend it);
    ``token_attempts``: wrong tokens (API or login page) one client address may send a minute before it must
    wait (429); ``max_answer_bytes``: the most bytes one retriever answer may hold (read as a stream; a larger one
    is that query's failure); ``live_budget_seconds``: the default time budget of a whole live job (queries not asked
    by then are stored as failed); ``live_workers``: threads that run live jobs, apart from the
    ``workers`` that score, so that slow retrievers never hold up scoring; ``live_slice_seconds``: a live
    job's turn — once it has run this long while another live job waits, it gives its worker back
    (abandoning its requests in flight, asked again later) and waits for its next turn;
    ``host`` / ``port``: where the service listens (its own address is never called, and the
    ``Host`` header of a request must name it); ``allowed_hosts``: more names the service may
    be reached under (``--allow-host``); ``allow_retrievers``: ``HOST[:PORT]`` entries live
    evaluations may call (``--allow-retriever``; none by default).

    Monitors (``docs/monitoring.md``): ``monitor_workers`` threads run their schedules, aggregate their events,
    judge and send webhooks (0: not in this process); ``monitor_poll_seconds`` how often they look;
    ``allow_webhooks``: ``HOST[:PORT]`` entries alert webhooks may be sent to (``--allow-webhook``; none by
    default); ``webhook_backoff``: the first wait (seconds) before a failed delivery is tried again (doubling);
    ``event_retention_days``: raw events older than this are deleted once aggregated (the windows stay);
    ``judge_url`` / ``judge_model`` / ``judge_key_env``: the OpenAI-compatible endpoint that judges sampled
    traffic (none: traffic is not judged), ``judge_cache``: the judge's answer cache (SQLite file).
    """

    db_url: str = field(default_factory=default_db_url)
    token: str | None = None
    workers: int = 2
    max_upload_bytes: int = 64 * MiB
    max_data_bytes: int = 256 * MiB
    max_rows: int = 20_000_000
    lease_seconds: float = 15.0
    poll_seconds: float = 0.2
    retriever_timeout: float = 30.0
    max_answer_bytes: int = 16 * MiB
    token_attempts: int = 10
    live_budget_seconds: float = 6 * 3600.0
    live_workers: int = 4
    report_workers: int = 1
    live_slice_seconds: float = 5.0
    host: str = "127.0.0.1"
    port: int | None = None
    allowed_hosts: tuple[str, ...] = ()
    allow_retrievers: tuple[str, ...] = ()
    migrate: bool = True
    monitor_workers: int = 1
    monitor_poll_seconds: float = 1.0
    allow_webhooks: tuple[str, ...] = ()
    webhook_backoff: float = 2.0
    event_retention_days: float = 30.0
    judge_url: str | None = None
    judge_model: str | None = None
    judge_key_env: str | None = None
    judge_cache: str | None = None

    def __post_init__(self) -> None:
        if self.workers < 0:
            raise InvalidParameterError(_("{name} must be >= 0, got {value}", name="workers", value=self.workers))
        if self.max_upload_bytes < 1:
            raise InvalidParameterError(_("{name} must be positive, got {value}", name="max_upload_bytes",
                                          value=self.max_upload_bytes))
        if self.max_answer_bytes < 1:
            raise InvalidParameterError(_("{name} must be positive, got {value}", name="max_answer_bytes",
                                          value=self.max_answer_bytes))
        if self.max_data_bytes < 1 or self.max_rows < 1:
            raise InvalidParameterError(_("{first} and {second} must be positive", first="max_data_bytes",
                                          second="max_rows"))
        if self.lease_seconds <= 0:
            raise InvalidParameterError(_("{name} must be positive, got {value}", name="lease_seconds",
                                          value=self.lease_seconds))
        if self.report_workers < 0:
            raise InvalidParameterError(_("{name} must be >= 0, got {value}", name="report_workers",
                                          value=self.report_workers))
        if self.live_workers < 0:
            raise InvalidParameterError(_("{name} must be >= 0, got {value}", name="live_workers",
                                          value=self.live_workers))
        if self.live_slice_seconds <= 0:
            raise InvalidParameterError(_("{name} must be positive, got {value}", name="live_slice_seconds",
                                          value=self.live_slice_seconds))
        if self.retriever_timeout <= 0 or self.live_budget_seconds <= 0:
            raise InvalidParameterError(_("{first} and {second} must be positive", first="retriever_timeout",
                                          second="live_budget_seconds"))
        if self.token == "":
            self.token = None
        if self.token is not None:
            check_token(self.token)
        self.allowed_hosts = tuple(self.allowed_hosts)
        self.allow_retrievers = tuple(self.allow_retrievers)
        self.egress = EgressPolicy.from_entries(
            self.allow_retrievers, own=[(self.host, self.port)] if self.port is not None else [])
        self.allow_webhooks = tuple(self.allow_webhooks)
        self.webhook_egress = EgressPolicy.from_entries(
            self.allow_webhooks, own=[(self.host, self.port)] if self.port is not None else [])
        if self.event_retention_days <= 0 or self.monitor_poll_seconds <= 0 or self.webhook_backoff <= 0:
            raise InvalidParameterError(_("event_retention_days, monitor_poll_seconds and webhook_backoff must be "
                                          "positive"))
