"""Gossip: how records spread between commons nodes (sans-I/O).

Two state machines, in the h11 / aioquic style (bytes and ``now`` in, bytes and deadlines out):

* :class:`PeerSession` (``gossip/session.py``) -- one connection: ``receive(frame, now)``, ``tick(now)``, ``outbox()``,
  ``next_deadline()``, ``closed`` / ``close_reason``. The trio driver does the Secret Handshake and
  box-stream, cuts the stream into frames with :class:`~commons.core.gossip.messages.FrameDecoder`
  and sends what ``outbox()`` returns through ``encode_frame``.
* :class:`GossipNode` -- one node: its records (in memory, or read back from the caller's store once
  stored: key -> SignedRecord, plus a reconcile
  :class:`KeySet`), its sessions and its peer table (``gossip/peers.py``, with the parameters);
  it picks peers to sync with and to dial. It holds two parts that own their state: which peer
  fetches which key it lacks (:class:`~commons.core.gossip.fetch.FetchBook`, ``gossip/fetch.py``),
  and validating, storing and relaying what arrives
  (:class:`~commons.core.gossip.intake.RecordIntake`, ``gossip/intake.py``). Wire messages and
  frames: ``gossip/messages.py``; what it reports (events, statistics): ``gossip/events.py``.

How a record spreads, and why this shape (``protocol/gossip.md`` has the details):

* **Lazy push of ids, pull of bodies.** A node that accepts a new record *announces* its 33-byte
  key to ``fanout`` connected peers; a peer lacking it asks for the body with a Want, and a node
  asks only one peer at a time for a given key (the others that announced it are kept as
  fallbacks). So a node receives each body about once -- duplicates cost 33-byte announcements,
  not 300..4096-byte bodies -- for half a round trip more per hop than eager body push. Plumtree
  and gossipsub spend body duplicates to save that half round trip; lessons are dated by the day,
  so latency is cheap here and bandwidth is not.
* **Anti-entropy.** Every ``sync_interval`` a node reconciles its key set with one random peer
  (``commons.core.reconcile.reconciler``) and fetches what it lacks the same way, so announcements that were
  lost, or a node that was away, are caught up without pushes.
* **Validate before storing or forwarding.** Every body is checked by ``records.verify``
  (canonical form, signature, network, limits), then by ``is_dead`` (death certificates) and the
  local ``admit`` policy. A refused or dead key stays in the key set as *withheld*: it is never
  fetched again and never sent. A validly signed revocation skips both hooks: it is always stored
  and relayed, even where local policy would not apply it.
* **Revocations first.** Keys sort by type tag and revocations have tag 0, so announcements,
  Wants, Records and reconciliation all carry revocations before anything else.
* **Peers that misbehave are cut off.** Malformed frames and invalid records lower a session's
  score; past ``close_score`` the session closes and the node backs off that peer exponentially.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Iterable

from blake3 import blake3

from commons.core import records as rec
from commons.core.gossip.events import Accepted, Event, GossipStatistics, Refused, SessionClosed
from commons.core.gossip.fetch import FetchBook
from commons.core.gossip.intake import Admit, RecordIntake, Verify
from commons.core.gossip.messages import GossipUsageError
from commons.core.gossip.peers import GossipParams, PeerInfo, PeerTable
from commons.core.gossip.session import CloseKind, PeerSession, SessionState
from commons.core.gossip.transfer import Served
from commons.core.reconcile import KeySet

__all__ = [
    "Accepted",
    "CloseKind",
    "GossipNode",
    "GossipParams",
    "GossipStatistics",
    "PeerInfo",
    "PeerSession",
    "Refused",
    "SessionClosed",
    "SessionState",
    "network_hash",
]

def network_hash(network: bytes) -> bytes:
    """What Hello carries to name the records' network without revealing it."""
    return blake3(b"commons/gossip/v1/network\n" + network).digest()


class GossipNode:
    """One node's gossip: its records, key set, sessions and peer table, and its two parts."""

    def __init__(
        self,
        network: bytes,
        transport_key: bytes,
        rng: random.Random,
        *,
        params: GossipParams | None = None,
        listen: str | None = None,
        admit: Admit | None = None,
        is_dead: Callable[[rec.SignedRecord], bool] | None = None,
        verify: Verify = rec.verify,
        now: float = 0.0,
        free_rider: bool = False,
        read_stored: Callable[[bytes], Served | None] | None = None,
        salts: Callable[[], int] | None = None,
    ) -> None:
        """``free_rider``: the node takes records but never announces one and answers every Want
        with "missing" -- a peer that does not pull its weight, for the simulator to put in a
        network (a peer that claims keys it will not serve then costs a round trip, not a round:
        protocol/gossip.md, Lost wants). A daemon never is one.

        ``read_stored``: where the body and signature of a record the caller said is stored
        (:meth:`stored`) are read back from when a peer asks for it. Without it every record stays
        in memory decoded (~1 KB each: 1 GB at 10^6, issue #18); with it only what is not stored
        yet does.

        ``salts``: a fresh 64-bit salt for each reconcile version 4 session (by default from
        ``os.urandom``: a salt nobody can foresee, so no record can be made to collide in one; an
        in-memory network passes a seeded generator of its own, so that a run repeats)."""
        self.salts = salts or (lambda: int.from_bytes(os.urandom(8), "big"))
        self.params = params or GossipParams()
        self.network = network
        self.network_hash = network_hash(network)
        self.transport_key = transport_key
        self.listen = listen
        self.rng = rng
        self.free_rider = free_rider
        # key -> record served, while it is in memory. Once the caller stored it (``stored``, with
        # ``read_stored``) it goes: the key set says it is held, the store has it (an entry per
        # record held was ~100 bytes of every one, issue #18).
        self._store: dict[bytes, rec.SignedRecord] = {}
        self._read_stored = read_stored
        self.keyset = KeySet()
        self._sessions: dict[bytes, PeerSession] = {}
        self._dirty: dict[PeerSession, None] = {}
        self._peers = PeerTable(self.params, self_key=transport_key)
        self._events: list[Event] = []
        self._fetches = FetchBook(self.keyset, self._sessions, self.params, rng)
        self._intake = RecordIntake(self, self._fetches, network, self.keyset, self._sessions, self.params, rng,
                                    verify=verify, admit=admit, is_dead=is_dead, free_rider=free_rider)
        self._bytes_in = self._bytes_out = self._frames_in = self._frames_out = self._syncs_completed = 0
        self._next_sync = now + self.params.sync_interval * rng.random()
        self._next_rotation = now + self.params.rotate_interval

    # -- records -----------------------------------------------------------------------------------

    def load(self, records: Iterable[rec.SignedRecord], withheld: Iterable[bytes] = ()) -> None:
        """Take the records the driver kept from earlier runs (already validated); nothing is announced."""
        records = list(records)
        self._store.update((r.key, r) for r in records)
        self.keyset.update((r.key, r.record.created) for r in records)  # placed at their day
        self.keyset.update(withheld, withheld=True)

    def load_stored(self, entries: Iterable[tuple[bytes, int]], withheld: Iterable[bytes] = ()) -> None:
        """Like :meth:`load`, for records already in the caller's store (``read_stored``): only
        their (key, created day) pairs, so that starting on 10^6 records holds no record decoded."""
        if self._read_stored is None:
            raise GossipUsageError("load_stored needs read_stored: the records must be read back from somewhere")
        self.keyset.update(entries)
        self.keyset.update(withheld, withheld=True)

    def add_local(self, *signed: rec.SignedRecord) -> int:
        """Records this node made: store them and announce them (together) to ``fanout`` peers.

        Returns how many were new. Records that are added in one call travel together. A record
        this node had withdrawn (or refused) is served again from now on."""
        fresh = [r for r in dict.fromkeys(signed) if not self._serves(r.key)]
        for record in fresh:
            self.hold(record)
        self._intake.announce([(r.key, ()) for r in fresh])
        return len(fresh)

    def hold(self, signed: rec.SignedRecord) -> None:
        """Keep a record (made here, or accepted from a peer) and serve it from now on."""
        self._store[signed.key] = signed
        self.keyset.add(signed.key, time=signed.record.created)

    def withdraw(self, keys: Iterable[bytes]) -> int:
        """Stop serving these records (the owner opted out of publishing): from now on their keys
        are withheld, so they are neither sent to peers nor fetched back from peers that hold
        them. What peers already received stays with them. Returns how many were withdrawn."""
        withdrawn = 0
        for key in keys:
            if self._serves(key):
                self._store.pop(key, None)
                self.keyset.set_withheld(key, True)
                withdrawn += 1
        return withdrawn

    def stored(self, keys: Iterable[bytes]) -> None:
        """These records are in the caller's store now: let them go from memory (with
        ``read_stored``; without it, nothing changes)."""
        if self._read_stored is not None:
            held = self._store
            for key in keys:
                held.pop(key, None)

    @property
    def unstored(self) -> int:
        """Records held in memory that the caller has yet to store (``stored``); 0 without
        ``read_stored``, where every record stays in memory by design."""
        return len(self._store) if self._read_stored is not None else 0

    @property
    def backlogged(self) -> bool:
        """Whether more records wait for the caller's store than ``max_unstored``: the driver
        stops reading from peers until they are stored (TCP then holds back the senders)."""
        return self._read_stored is not None and len(self._store) > self.params.max_unstored

    def _serves(self, key: bytes) -> bool:
        """Whether this node holds the record of ``key`` and serves it (in memory or stored)."""
        if key in self._store:
            return True
        keyset = self.keyset
        return self._read_stored is not None and key in keyset and not keyset.is_withheld(key)

    def get(self, key: bytes) -> rec.SignedRecord | None:
        signed = self._store.get(key)
        if signed is None and self._serves(key):
            wire = self._read_stored(key)
            if wire is not None:
                signed = rec.SignedRecord(rec.decode_body(wire.body), wire.body, key[1:], wire.signature)
        return signed

    def keys(self) -> list[bytes]:
        """Every key this node holds, withheld ones included, ascending."""
        return list(self.keyset)

    def record_keys(self) -> set[bytes]:
        """Keys of the records this node holds and serves."""
        if self._read_stored is None:
            return set(self._store)
        return {key for key in self.keyset if not self.keyset.is_withheld(key)}

    # -- sessions and peers ------------------------------------------------------------------------

    def add_peer(self, transport_key: bytes, address: str | None, source: str = "bootstrap") -> None:
        self._peers.add(transport_key, address, source)

    def remove_peer(self, transport_key: bytes, now: float) -> None:
        """Forget a peer and close its session. Peer exchange or discovery may bring it back."""
        session = self._sessions.get(transport_key)
        if session is not None and not session.closed:
            session.close("removed by the owner", now)
        self._peers.remove(transport_key)

    def open_session(self, peer_key: bytes, initiator: bool, now: float) -> PeerSession:
        """A connection is up (handshake done): the returned session's outbox already holds Hello.

        Two nodes that dial each other at once end up with two sessions; both keep the one whose
        initiator has the lower transport key, and the other is closed with Bye("duplicate").
        """
        if peer_key == self.transport_key:
            raise GossipUsageError("a node cannot open a session with itself")
        session = PeerSession(self, peer_key, initiator, now)
        existing = self._sessions.get(peer_key)
        if existing is not None:
            def dialer(s: PeerSession) -> bytes:
                return self.transport_key if s.initiator else s.peer_key
            if dialer(existing) <= dialer(session):
                session.end("duplicate connection", now, CloseKind.DUPLICATE)
                return session
            existing.end("duplicate connection", now, CloseKind.DUPLICATE)
        self._sessions[peer_key] = session
        self._peers.connected(peer_key, True)
        if not initiator and len(self._sessions) > self.params.max_sessions:
            victim = self._evictable(session, now)
            if victim is not None:
                victim.end(f"evicted: every slot is taken and this session was idle for {now - victim.active_at:.0f} s"
                            f" (score {victim.score:g})", now, CloseKind.EVICTED)
            else:
                session.send_peers()  # tell it where else to go before turning it away
                session.end("busy", now, CloseKind.BUSY)
        return session

    def _evictable(self, newcomer: PeerSession, now: float) -> PeerSession | None:
        """The inbound session whose slot a newcomer may take when every slot is full, if any.

        Silent sessions must not hold a node's slots (16 sessions that only said Hello once kept
        every honest peer out). Candidates are inbound sessions that sent nothing useful for
        ``evict_idle`` seconds, or whose score is below zero; of those, one whose peer never
        contributed (no accepted record, no finished reconciliation) goes first, then the lowest
        score, then the longest idle. Sessions this node dialed are its own choice and stay.
        """
        idle_before = now - self.params.evict_idle
        candidates = [s for s in self._sessions.values()
                      if s is not newcomer and not s.initiator and not s.closed
                      and (s.active_at <= idle_before or s.score < 0)]
        if not candidates:
            return None
        return min(candidates, key=lambda s: (s.contributed, s.score, s.active_at))

    def dial_failed(self, peer_key: bytes, now: float) -> None:
        """The driver could not connect or finish the handshake: back off that peer."""
        self._peers.strike(peer_key, now)

    def peers_to_dial(self, now: float) -> list[PeerInfo]:
        """Peers to dial now (not connected, not backed off), up to ``max_peers`` sessions."""
        room = self.params.max_peers - len(self._sessions)
        return self._peers.to_dial(room, now, self.rng) if room > 0 else []

    def sessions(self) -> list[PeerSession]:
        return list(self._sessions.values())

    def peer(self, transport_key: bytes) -> PeerInfo | None:
        return self._peers.info(transport_key)

    def known_peers(self) -> list[PeerInfo]:
        return self._peers.all()

    def last_sync(self) -> float | None:
        """When this node last finished a sync with a peer, inbound or outbound (None: never)."""
        return self._peers.latest_sync

    # -- time --------------------------------------------------------------------------------------

    def tick(self, now: float) -> None:
        """Run the timers of the node and of every session; start an anti-entropy round when due."""
        if now >= self._next_sync:
            p = self.params
            self._next_sync = now + p.sync_interval * (1 + p.sync_jitter * (2 * self.rng.random() - 1))
            # Not with a peer in a catch-up with this node, fetching from it or from us: the last
            # reconciliation named what differs, and one more would name it all again while it
            # arrives (every sync_interval, each over all still missing: quadratic, issue #18).
            ready = [s for s in self._sessions.values()
                     if s.state is SessionState.OPEN and not s.syncing and s.pending_wants <= p.max_outstanding
                     and s.take_served() <= p.max_outstanding]
            if ready:
                self.rng.choice(ready).start_sync(now)
        if self.params.rotate_interval and now >= self._next_rotation:
            self._next_rotation = now + self.params.rotate_interval
            self._rotate(now)
        for session in list(self._sessions.values()):
            session.tick(now)

    def _rotate(self, now: float) -> None:
        """With every session slot taken, close one this node dialed, to meet someone else."""
        dialed = [s for s in self._sessions.values() if s.initiator and s.state is SessionState.OPEN]
        if len(self._sessions) >= self.params.max_peers and dialed and len(self._peers) > len(self._sessions):
            self.rng.choice(dialed).close("rotation: making room to meet other peers", now)

    def next_deadline(self) -> float | None:
        deadline = self._next_sync
        if self.params.rotate_interval:
            deadline = min(deadline, self._next_rotation)
        for session in self._sessions.values():
            d = session.next_deadline()
            if d is not None and d < deadline:
                deadline = d
        return deadline

    def drain_outboxes(self) -> list[tuple[PeerSession, list[bytes]]]:
        """(session, frames) for every session with something to send (closed ones included, for their Bye)."""
        dirty, self._dirty = self._dirty, {}
        return [(s, s.outbox()) for s in dirty]

    def events(self) -> list[Event]:
        """Drain what happened since the last call: Accepted, Refused, SessionClosed."""
        events, self._events = self._events, []
        return events

    def statistics(self) -> GossipStatistics:
        withheld = self.keyset.withheld_count()
        fetches, intake = self._fetches, self._intake
        return GossipStatistics(
            records_held=len(self.keyset) - withheld, withheld=withheld, sessions=len(self._sessions),
            known_peers=len(self._peers), wanted=fetches.wanted,
            bytes_in=self._bytes_in, bytes_out=self._bytes_out, frames_in=self._frames_in, frames_out=self._frames_out,
            bodies_received=intake.bodies_received, duplicate_bodies=intake.duplicate_bodies,
            invalid_received=intake.invalid_received, refused=intake.refused,
            announced_keys_received=fetches.announced_keys_received,
            duplicate_announced_keys=fetches.duplicate_announced_keys, syncs_completed=self._syncs_completed)

    def report(self, event: Event) -> None:
        """An event for the driver (``events``), in the order things happened."""
        self._events.append(event)

    # -- the node's side of the seam (session.SessionHost): what its sessions call ---------------

    def count_in(self, nbytes: int) -> None:
        self._bytes_in += nbytes
        self._frames_in += 1

    def count_out(self, nbytes: int, frames: int) -> None:
        self._bytes_out += nbytes
        self._frames_out += frames

    def wake(self, session: PeerSession) -> None:
        """``session`` has frames to send: ``drain_outboxes`` will return it."""
        self._dirty[session] = None

    def serve(self, key: bytes) -> Served | None:
        """The record to send a peer that asked for ``key``; None: answer it as missing."""
        if self.free_rider:
            return None
        signed = self._store.get(key)
        if signed is None and self._serves(key):
            return self._read_stored(key)  # served as it was stored: no decoding
        return signed

    def learn(self, keys: Iterable[bytes], session: PeerSession, count: bool = True) -> None:
        self._fetches.learn(keys, session, count)

    def claim(self, key: bytes, session: PeerSession) -> bool:
        return self._fetches.claim(key, session)

    def release(self, key: bytes, session: PeerSession, now: float) -> bool:
        return self._fetches.release(key, session, now)

    def push_welcome(self, session: PeerSession) -> bool:
        return self._fetches.push_welcome(session)

    def push_awaited(self) -> bool:
        return self._fetches.push_awaited()

    def pushed_elsewhere(self, item: bytes) -> bool:
        return self._fetches.pushed_elsewhere(item)

    def pushes_settled(self, now: float) -> None:
        self._fetches.pushes_settled(now)

    def take_records(self, bodies: list[tuple[bytes, bytes]], session: PeerSession, now: float,
                     keys: list[bytes | None] | None = None) -> None:
        self._intake.take(bodies, session, now, keys)

    def learn_peers(self, entries: Iterable[tuple[str, bytes]]) -> None:
        self._peers.learn(entries)

    def peers_to_share(self, count: int, exclude: bytes) -> list[tuple[str, bytes]]:
        return self._peers.sample(count, exclude=exclude, rng=self.rng)

    def session_opened(self, session: PeerSession, now: float) -> None:
        if session.listen is not None:
            self._peers.add(session.peer_key, session.listen, "hello")
        session.send_peers()
        if session.initiator and self.params.sync_on_open:
            session.start_sync(now)

    def session_closed(self, session: PeerSession, now: float) -> None:
        self._fetches.session_closed(session, now)  # its keys go to other peers
        if self._sessions.get(session.peer_key) is session:
            del self._sessions[session.peer_key]
            self._peers.connected(session.peer_key, False)
        self._peers.closed(session.peer_key, session.misbehaved, now)
        self._events.append(SessionClosed(session.peer_key, session.close_reason or "", session.misbehaved, session.close_kind))

    def session_synced(self, session: PeerSession, now: float) -> None:
        self._syncs_completed += 1
        self._peers.synced(session.peer_key, now)
