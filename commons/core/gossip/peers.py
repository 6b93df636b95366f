"""Gossip parameters and the peer table: whom a node knows, dials, and backs off.

Kept apart from ``gossip/node.py`` so that the protocol state machine reads on its own. Per-node state
is lean on purpose (a 10,000-node simulation holds 10,000 of these tables): one small slotted
object per known peer, at most ``max_known_peers`` of them.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class GossipParams:
    """Every tunable of the gossip protocol, with its default (see protocol/gossip.md)."""

    fanout: int = 8  # peers a newly accepted record's key is announced to
    sync_interval: float = 60.0  # seconds between anti-entropy rounds (one random peer each)
    sync_jitter: float = 0.25  # +/- fraction of sync_interval, so rounds do not align
    max_peers: int = 8  # sessions a node dials up to
    max_sessions: int = 16  # sessions it holds at most (inbound beyond this get Peers, then Bye "busy")
    max_frame_bytes: int = 65536  # largest frame sent or accepted
    reconcile_frame_bytes: int = 65000  # largest reconcile message this node sends (gossip.md: <= 65,000)
    reconcile_v4: bool = True  # offer and speak reconcile version 4 (False: version 3 alone, as before it)
    records_per_second: float = 200.0  # per peer: records we ask for / accept unsolicited / serve
    records_burst: int = 400  # token bucket depth for the three rates above
    max_outstanding: int = 64  # keys asked from one peer and not yet answered
    max_queued_wants: int = 8192  # keys waiting to be asked from one peer. Keys beyond it are not kept
    # at all; once the queue drains, the node reconciles with that peer again, which names them anew.
    # So a deeper queue would not fetch faster, only let each announcing peer (new keys cost
    # nothing) hold more of the node's memory
    max_unstored: int = 16384  # records taken from peers that the caller has not stored yet (with
    # read_stored) beyond which the driver stops reading from peers until the store catches up: a
    # node far behind, pushed faster than it stores, would otherwise hold the difference decoded
    want_timeout: float = 10.0  # an unanswered Want key is asked from another peer after this
    reconcile_timeout: float = 30.0  # a reconciliation without an answer for this long is dropped
    hello_timeout: float = 10.0  # a session without the peer's Hello for this long is closed
    idle_timeout: float = 300.0  # an open session from which nothing at all arrives for this long is
    # closed (a peer that vanished without a FIN; one holding a slot in silence); 0: never
    keepalive_interval: float = 60.0  # an open session that sent nothing for this long sends an empty
    # Announce, so that an honest quiet peer never meets the other side's idle_timeout; 0: never
    evict_idle: float = 5.0  # with every slot taken, a new inbound peer takes the slot of an inbound
    # session whose peer sent nothing useful for this long (one that never contributed goes first)
    pex_size: int = 16  # peers in one Peers message (at most 32)
    pex_interval: float = 600.0  # seconds between Peers messages on one session (one at open)
    max_known_peers: int = 100  # peer table size; exchange-learned peers beyond it are dropped
    close_score: float = -100.0  # a session whose score falls to this closes as misbehaved
    penalty_malformed: float = 50.0  # a malformed frame or reconcile message
    penalty_invalid: float = 50.0  # an invalid record (bad signature, not canonical, other network...)
    penalty_minor: float = 5.0  # beyond a rate limit; a record dated in the future
    backoff_base: float = 5.0  # seconds before redialing a peer after its first failure
    backoff_cap: float = 3600.0  # the longest backoff
    dial_timeout: float = 10.0  # a dial not reported back within this is assumed failed
    sync_on_open: bool = True  # the dialing side reconciles as soon as a session opens: a node back from
    # being away catches up at once, not an anti-entropy round later
    rotate_interval: float = 600.0  # a node whose sessions are full drops one it dialed this often, so
    # that it keeps meeting other peers: halves that found only each other (a healed partition) mix
    # again, and no clique of first acquaintances lasts for ever; 0 turns rotation off


@dataclass(frozen=True)
class PeerInfo:
    """What a node knows of one peer (a snapshot)."""

    transport_key: bytes
    address: str | None
    source: str  # "bootstrap", "exchange", "hello", "inbound", "discovery"...
    strikes: int  # failures and misbehaviour since the last good sync
    backoff_until: float
    last_sync: float | None
    connected: bool


_HEARSAY = frozenset({"exchange", "hello"})  # sources a peer controls, capped by max_known_peers


class _Peer:
    __slots__ = ("address", "source", "strikes", "backoff_until", "last_sync", "connected", "dialing_until")

    def __init__(self, address: str | None, source: str) -> None:
        self.address, self.source = address, source
        self.strikes = 0
        self.backoff_until = self.dialing_until = 0.0
        self.last_sync: float | None = None
        self.connected = False


class PeerTable:
    def __init__(self, params: GossipParams, self_key: bytes) -> None:
        self._params = params
        self._self = self_key
        self._peers: dict[bytes, _Peer] = {}
        # The last sync with any peer: an inbound one's entry is dropped when it leaves, its sync stays true.
        self.latest_sync: float | None = None

    def __len__(self) -> int:
        return len(self._peers)

    def add(self, key: bytes, address: str | None, source: str) -> None:
        if key == self._self:
            return
        peer = self._peers.get(key)
        if peer is None:
            # What a peer says of itself or of others is bounded: new keys cost an attacker nothing.
            if source in _HEARSAY and len(self._peers) >= self._params.max_known_peers:
                return
            self._peers[key] = _Peer(address, source)
        elif address is not None and (peer.address is None or source != "exchange"):
            peer.address = address  # what a peer says of itself, or a bootstrap entry, beats hearsay

    def remove(self, key: bytes) -> None:
        self._peers.pop(key, None)

    def learn(self, entries: Iterable[tuple[str, bytes]]) -> None:
        for address, key in entries:
            self.add(key, address, "exchange")

    def connected(self, key: bytes, connected: bool) -> None:
        peer = self._peers.get(key)
        if peer is None:
            peer = self._peers[key] = _Peer(None, "inbound")
        peer.connected = connected
        peer.dialing_until = 0.0

    def strike(self, key: bytes, now: float) -> None:
        peer = self._peers.get(key)
        if peer is None:
            return
        peer.strikes += 1
        p = self._params
        peer.backoff_until = now + min(p.backoff_cap, p.backoff_base * 2 ** (peer.strikes - 1))
        peer.dialing_until = 0.0

    def closed(self, key: bytes, misbehaved: bool, now: float) -> None:
        peer = self._peers.get(key)
        if peer is None:
            return
        if peer.address is None and not peer.connected and (
            (not misbehaved and not peer.strikes) or len(self._peers) > self._params.max_known_peers
        ):
            # An inbound peer we cannot dial and hold nothing against: nothing about it is worth
            # keeping after it leaves, and a flood of fresh keys must not pile up here (strikes are
            # kept while the table has room, so that status can show who misbehaved).
            del self._peers[key]
            return
        if misbehaved:
            self.strike(key, now)
        else:  # a clean end: do not redial at once (the peer may have been busy)
            peer.backoff_until = max(peer.backoff_until, now + self._params.backoff_base)

    def synced(self, key: bytes, now: float) -> None:
        self.latest_sync = now if self.latest_sync is None else max(self.latest_sync, now)
        peer = self._peers.get(key)
        if peer is not None:
            peer.last_sync = now
            peer.strikes = 0

    def to_dial(self, room: int, now: float, rng: random.Random) -> list[PeerInfo]:
        candidates = [
            key
            for key, p in self._peers.items()
            if not p.connected and p.address is not None and p.backoff_until <= now and p.dialing_until <= now
        ]
        if len(candidates) > room:
            candidates = rng.sample(candidates, room)
        for key in candidates:
            self._peers[key].dialing_until = now + self._params.dial_timeout
        return [self.info(key) for key in candidates]

    def sample(self, count: int, exclude: bytes, rng: random.Random) -> list[tuple[str, bytes]]:
        """Peers worth passing on: with an address and no open strikes."""
        good = [
            (p.address, key)
            for key, p in self._peers.items()
            if key != exclude and p.address is not None and p.strikes == 0
        ]
        return rng.sample(good, count) if len(good) > count else good

    def info(self, key: bytes) -> PeerInfo | None:
        p = self._peers.get(key)
        if p is None:
            return None
        return PeerInfo(key, p.address, p.source, p.strikes, p.backoff_until, p.last_sync, p.connected)

    def all(self) -> list[PeerInfo]:
        return [self.info(key) for key in self._peers]
