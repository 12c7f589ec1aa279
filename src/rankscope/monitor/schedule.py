"""When a canary runs: every N seconds, or a cron expression (``croniter``), in UTC.

:meth:`Schedule.due` answers the scheduler's one question after any pause (a restart, a crash, a
round that ran long): which scheduled times passed since the last one handled.  The newest is run;
the others are *missed* and said (never run late in a burst, never dropped silently).

>>> s = Schedule(cron="*/15 * * * *")
>>> s.next_after(0.0), s.next_after(900.0)
(900.0, 1800.0)
>>> due = s.due(last=900.0, now=3700.0)
>>> due.run, due.missed
(3600.0, [1800.0, 2700.0])
>>> Schedule(every_seconds=60).due(last=None, now=125.0).run   # a new schedule runs at once
125.0
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from rankscope.errors import InvalidParameterError
from rankscope.i18n import _

__all__ = ["Schedule", "Due", "MAX_MISSED_LISTED"]

#: at most this many missed times are listed one by one (the rest are counted)
MAX_MISSED_LISTED = 100


@dataclass(frozen=True)
class Due:
    """``run``: the scheduled time to run now (None: nothing is due); ``missed``: earlier scheduled times that passed
    without a round (at most :data:`MAX_MISSED_LISTED` listed) and ``n_missed`` how many there were."""

    run: float | None
    missed: list[float] = field(default_factory=list)
    n_missed: int = 0


@dataclass(frozen=True)
class Schedule:
    """``every_seconds`` (at least 1) or a five-field ``cron`` expression (UTC); exactly one of them."""

    cron: str | None = None
    every_seconds: float | None = None

    def __post_init__(self) -> None:
        if (self.cron is None) == (self.every_seconds is None):
            raise InvalidParameterError(_("a schedule needs either every_seconds or cron (one of them)"))
        if self.cron is not None:
            from croniter import croniter

            if not isinstance(self.cron, str) or len(self.cron.split()) != 5 or not croniter.is_valid(self.cron):
                raise InvalidParameterError(_("not a cron expression of five fields (minute hour day month "
                                              "weekday): {value!r}", value=self.cron))
        elif isinstance(self.every_seconds, bool) or not isinstance(self.every_seconds, (int, float)) \
                or not 1 <= self.every_seconds <= 366 * 86400:
            raise InvalidParameterError(_("every_seconds must be a number of seconds between 1 and one year, got "
                                          "{value!r}", value=self.every_seconds))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Schedule:
        return cls(cron=data.get("cron"), every_seconds=data.get("every_seconds"))

    def to_dict(self) -> dict[str, Any]:
        return {"cron": self.cron} if self.cron is not None else {"every_seconds": self.every_seconds}

    def describe(self) -> str:
        return f"cron {self.cron} (UTC)" if self.cron is not None else f"every {self.every_seconds:g} s"

    def next_after(self, t: float) -> float:
        """The first scheduled time strictly after ``t`` (epoch seconds)."""
        if self.every_seconds is not None:
            step = float(self.every_seconds)
            return (t // step + 1) * step
        from croniter import croniter

        start = dt.datetime.fromtimestamp(t, dt.timezone.utc)
        nxt = croniter(self.cron, start).get_next(dt.datetime)
        return float(nxt.timestamp())

    def due(self, last: float | None, now: float) -> Due:
        """What is due at ``now`` when the last scheduled time handled was ``last`` (None: never ran: run now)."""
        if last is None:
            return Due(now)
        times: list[float] = []
        t = self.next_after(last)
        n = 0
        while t <= now:
            n += 1
            times.append(t)
            if len(times) > MAX_MISSED_LISTED + 1:
                times.pop(0)
            if self.every_seconds is not None and n > 10 * MAX_MISSED_LISTED:  # jump: count the rest
                step = float(self.every_seconds)
                k = int((now - t) // step)
                n += k
                t += k * step
                times = [t - step * i for i in range(min(MAX_MISSED_LISTED + 1, n))][::-1]
            t = self.next_after(t)
        if not n:
            return Due(None)
        return Due(times[-1], times[:-1][-MAX_MISSED_LISTED:], n - 1)
