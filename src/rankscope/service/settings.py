"""Configuration of the evaluation service (:class:`Settings`)."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from rankscope.errors import InvalidParameterError

__all__ = ["Settings", "default_db_url", "is_loopback"]

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


@dataclass
class Settings:
    """Everything the app factory needs.

    ``db_url``: SQLAlchemy URL (``sqlite:///file`` or ``postgresql+psycopg://...``);
    ``token``: when set, every endpoint except health needs it (``Authorization: Bearer``);
    ``workers``: background job threads (0 = do not run jobs in this process);
    ``max_upload_bytes``: larger request bodies are refused with 413 before being read whole;
    ``lease_seconds``: a running job whose worker stops renewing its lease this long is
    taken over by another worker (this is how a job survives a crash);
    ``retriever_timeout``: seconds per retriever request in live evaluations.
    """

    db_url: str = field(default_factory=default_db_url)
    token: str | None = None
    workers: int = 2
    max_upload_bytes: int = 64 * MiB
    lease_seconds: float = 15.0
    poll_seconds: float = 0.2
    retriever_timeout: float = 30.0
    migrate: bool = True

    def __post_init__(self) -> None:
        if self.workers < 0:
            raise InvalidParameterError(f"workers must be >= 0, got {self.workers}")
        if self.max_upload_bytes < 1:
            raise InvalidParameterError(f"max_upload_bytes must be positive, got {self.max_upload_bytes}")
        if self.lease_seconds <= 0:
            raise InvalidParameterError(f"lease_seconds must be positive, got {self.lease_seconds}")
        if self.token == "":
            self.token = None
