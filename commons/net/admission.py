"""Caps on half-open connections: accepted by TCP, handshake not finished yet.

A connection costs a listener a task, a socket and up to ``HANDSHAKE_TIMEOUT`` seconds before the
Secret Handshake says whether the dialer knows the network key at all; without a cap, 800
connections that never finish the handshake were all accepted and held. :class:`HalfOpenLimit`
counts them globally and per remote address (``transport.handshake_as_server`` asks it):

* **Per address**, a connection over the cap is closed at once, before a byte of it is read: one
  address cannot hold more than its share, and its own older handshakes are left to finish.
* **Globally**, when the cap is full, the newcomer is let in and the *oldest* handshake under way
  is dropped (its connection closed). An honest handshake takes a few round trips, milliseconds;
  one that is still open when ``total`` newer ones have arrived is almost surely a connection that
  never meant to finish. So an attacker holding the whole cap from many addresses (each under its
  own cap) no longer keeps honest newcomers out until they time out: each newcomer pushes out the
  oldest of the attacker's, and to push the newcomer out in turn the attacker must open ``total``
  connections during its few round trips.

Connections that finished the handshake are the gossip core's to limit (``max_sessions``,
eviction, idle timeout).

What an operator sees when a cap is hit: one warning per ``WARN_SECONDS`` in the daemon log,
saying which cap and how many connections it refused or dropped since the last warning.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

log = logging.getLogger("commons.net")

WARN_SECONDS = 60.0


class HalfOpenUsageError(Exception):
    """This program misused the limit (a leave without an enter): our fault."""


class HalfOpenRefused(Exception):
    """The connection is over its address's cap: closed unread (the reason is the message)."""


@dataclass(eq=False)
class HalfOpen:
    """One handshake under way: where from, since when, and how to drop it."""

    address: str
    since: float
    drop: Callable[[], None]  # cancels the handshake (its connection is closed by the canceller)
    dropped: bool = False


@dataclass(frozen=True)
class HalfOpenCaps:
    total: int = 64  # half-open connections at once, from everyone
    per_address: int = 8  # half-open connections at once from one remote IP address

    def __post_init__(self) -> None:
        if self.total < 1 or self.per_address < 1:
            raise HalfOpenUsageError(f"half-open caps must be at least 1, not {self.total} and {self.per_address}")


class HalfOpenLimit:
    """How many handshakes are under way, in all and per address (see the module for the rules)."""

    def __init__(self, caps: HalfOpenCaps = HalfOpenCaps(), clock: Callable[[], float] = time.monotonic) -> None:
        self.caps = caps
        self._clock = clock
        self._open: dict[HalfOpen, None] = {}  # oldest first (insertion order)
        self._by_address: dict[str, int] = {}
        self.refused = 0  # since start, for status and tests: over an address's cap
        self.dropped = 0  # since start: the oldest, dropped to let a newcomer in
        self._unreported = 0
        self._warned_at = -WARN_SECONDS

    @property
    def total(self) -> int:
        return len(self._open)

    def enter(self, address: str, drop: Callable[[], None] = lambda: None) -> HalfOpen:
        """Count a new half-open connection from ``address``; ``drop`` cancels it should it become
        the oldest of a full cap. Raises :class:`HalfOpenRefused` over the address's cap."""
        if self._by_address.get(address, 0) >= self.caps.per_address:
            self.refused += 1
            why = f"handshakes under way from {address}: {self.caps.per_address}, the cap per address"
            self._warn(why)
            raise HalfOpenRefused(why)
        now = self._clock()
        if self.total >= self.caps.total:
            oldest = next(iter(self._open))
            self._forget(oldest)
            oldest.dropped = True
            self.dropped += 1
            self._warn(f"handshakes under way: {self.caps.total}, the cap for all peers; dropped the oldest "
                       f"(from {oldest.address}, {now - oldest.since:.1f} s old) to let a newcomer in")
            oldest.drop()
        entry = HalfOpen(address, now, drop)
        self._open[entry] = None
        self._by_address[address] = self._by_address.get(address, 0) + 1
        return entry

    def leave(self, entry: HalfOpen) -> None:
        """The handshake of ``entry`` finished, failed, timed out or was dropped."""
        if entry.dropped:
            return  # already forgotten when it was dropped
        if entry not in self._open:
            raise HalfOpenUsageError(f"leave() of a handshake from {entry.address!r} never entered")
        self._forget(entry)

    def addresses(self) -> int:
        return len(self._by_address)

    def _forget(self, entry: HalfOpen) -> None:
        del self._open[entry]
        count = self._by_address[entry.address]
        if count == 1:
            del self._by_address[entry.address]  # nothing is kept of an address with nothing under way
        else:
            self._by_address[entry.address] = count - 1

    def _warn(self, why: str) -> None:
        self._unreported += 1
        now = self._clock()
        if now - self._warned_at >= WARN_SECONDS:
            log.warning("inbound connections before their handshake: %s (%d refused or dropped since the last "
                        "warning; [gossip] max_half_open and max_half_open_per_address set the caps)",
                        why, self._unreported)
            self._warned_at, self._unreported = now, 0
