"""The one clock: real in use, explicit in tests, demos and experiments.

Every part of commons that needs the time asks a :class:`Clock`. ``--at ISO-TIME`` on the command
line, ``COMMONS_AT`` in the environment or ``[clock] at`` in a home's config fix it, so a scripted
month runs in seconds and "after receipt" means the same thing in every part.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the Unix epoch."""
        ...


class SystemClock:
    def now(self) -> float:
        return time.time()


@dataclass(frozen=True)
class FixedClock:
    at: float

    def now(self) -> float:
        return self.at


@dataclass(frozen=True)
class ShiftedClock:
    """Starts at ``at`` when made and then runs at real speed (a daemon started "in" a scripted day)."""

    at: float
    started: float = field(default_factory=time.monotonic)

    def now(self) -> float:
        return self.at + (time.monotonic() - self.started)


def parse_time(text: str) -> float:
    """An ISO 8601 date or date-time as unix seconds; no zone means UTC."""
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO time (e.g. 2026-11-29 or 2026-11-29T03:00:00Z)") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.timestamp()


def format_time(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def format_day(day: int) -> str:
    return datetime.fromtimestamp(day * 86400, timezone.utc).date().isoformat()
