"""Caps on half-open connections: accepted by TCP, handshake not finished yet.

A connection costs a listener a task, a socket and up to ``HANDSHAKE_TIMEOUT`` seconds before the
Secret Handshake says whether the dialer knows the network key at all; without a cap, 800
connections that never finish the handshake were all accepted and held. :class:`HalfOpenLimit`
counts them globally and per remote address; a connection over either cap is closed at once,
before a byte of it is read (``transport.handshake_as_server`` asks it). Connections that finished
the handshake are the gossip core's to limit (``max_sessions``, eviction, idle timeout).

What an operator sees when a cap is hit: one warning per ``WARN_SECONDS`` in the daemon log,
saying which cap and how many connections it refused since the last warning.
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


@dataclass(frozen=True)
class HalfOpenCaps:
    total: int = 64  # half-open connections at once, from everyone
    per_address: int = 8  # half-open connections at once from one remote IP address

    def __post_init__(self) -> None:
        if self.total < 1 or self.per_address < 1:
            raise HalfOpenUsageError(f"half-open caps must be at least 1, not {self.total} and {self.per_address}")


class HalfOpenLimit:
    """How many handshakes are under way, in all and per address; ``enter`` refuses beyond the caps."""

    def __init__(self, caps: HalfOpenCaps = HalfOpenCaps(), clock: Callable[[], float] = time.monotonic) -> None:
        self.caps = caps
        self._clock = clock
        self._by_address: dict[str, int] = {}
        self.total = 0
        self.refused = 0  # since start, for status and tests
        self._unreported = 0
        self._warned_at = -WARN_SECONDS

    def enter(self, address: str) -> str | None:
        """Count a new half-open connection from ``address``; None, or why it is refused."""
        if self.total >= self.caps.total:
            return self._refuse(f"handshakes under way: {self.total}, the cap for all peers")
        if self._by_address.get(address, 0) >= self.caps.per_address:
            return self._refuse(f"handshakes under way from {address}: {self.caps.per_address}, the cap per address")
        self.total += 1
        self._by_address[address] = self._by_address.get(address, 0) + 1
        return None

    def leave(self, address: str) -> None:
        """The handshake from ``address`` finished, failed or timed out."""
        count = self._by_address.get(address, 0)
        if count < 1:
            raise HalfOpenUsageError(f"leave({address!r}) without a matching enter")
        self.total -= 1
        if count == 1:
            del self._by_address[address]  # nothing is kept of an address with nothing under way
        else:
            self._by_address[address] = count - 1

    def addresses(self) -> int:
        return len(self._by_address)

    def _refuse(self, why: str) -> str:
        self.refused += 1
        self._unreported += 1
        now = self._clock()
        if now - self._warned_at >= WARN_SECONDS:
            log.warning("refusing inbound connections before their handshake: %s (%d refused since the last "
                        "warning; [gossip] max_half_open and max_half_open_per_address set the caps)",
                        why, self._unreported)
            self._warned_at, self._unreported = now, 0
        return why
