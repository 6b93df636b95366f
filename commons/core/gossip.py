"""Gossip: how records spread between commons nodes (sans-I/O).

Two state machines, in the h11 / aioquic style (bytes and ``now`` in, bytes and deadlines out):

* :class:`PeerSession` -- one connection: ``receive(frame, now)``, ``tick(now)``, ``outbox()``,
  ``next_deadline()``, ``closed`` / ``close_reason``. The trio driver does the Secret Handshake and
  box-stream, cuts the stream into frames with :class:`~commons.core.gossip_messages.FrameDecoder`
  and sends what ``outbox()`` returns through ``encode_frame``.
* :class:`GossipNode` -- one node: its records (in memory: key -> SignedRecord, plus a reconcile
  :class:`KeySet`), its sessions and its peer table; it picks peers to sync with and to dial.

How a record spreads, and why this shape (``protocol/gossip.md`` has the details):

* **Lazy push of ids, pull of bodies.** A node that accepts a new record *announces* its 33-byte
  key to ``fanout`` connected peers; a peer lacking it asks for the body with a Want, and a node
  asks only one peer at a time for a given key (the others that announced it are kept as
  fallbacks). So a node receives each body about once -- duplicates cost 33-byte announcements,
  not 300..4096-byte bodies -- for half a round trip more per hop than eager body push. Plumtree
  and gossipsub spend body duplicates to save that half round trip; lessons are dated by the day,
  so latency is cheap here and bandwidth is not.
* **Anti-entropy.** Every ``sync_interval`` a node reconciles its key set with one random peer
  (``commons.core.reconcile``) and fetches what it lacks the same way, so announcements that were
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

import enum
import heapq
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from blake3 import blake3

from commons.core import records as rec
from commons.core.gossip_messages import (
    GOSSIP_VERSION,
    MAX_PEER_ENTRIES,
    MAX_WANT_KEYS,
    Announce,
    Bye,
    GossipProtocolError,
    GossipUsageError,
    Hello,
    Peers,
    Reconcile,
    ReconcilePhase,
    Records,
    Want,
    decode,
    encode,
)
from commons.core.gossip_peers import GossipParams, PeerInfo, PeerTable
from commons.core.reconcile import KeySet, Reconciler, ReconcileProtocolError, ReconcileStep

__all__ = ["GossipNode", "GossipParams", "PeerSession", "SessionState", "Accepted", "Refused", "SessionClosed",
           "GossipStatistics", "PeerInfo", "network_hash"]

Admit = Callable[[rec.SignedRecord], "str | None"]
Verify = Callable[..., rec.SignedRecord]


def network_hash(network: bytes) -> bytes:
    """What Hello carries to name the records' network without revealing it."""
    return blake3(b"commons/gossip/v1/network\n" + network).digest()


class SessionState(enum.Enum):
    HELLO = "hello"  # our Hello is queued; the peer's has not arrived (nothing else is accepted)
    OPEN = "open"  # Hellos exchanged: announcements, Wants, Records, Reconcile, Peers flow
    CLOSED = "closed"  # Bye sent or received, or the connection is gone; send the outbox, then hang up


@dataclass(frozen=True)
class Accepted:
    """Records accepted from a peer (valid, admitted): the driver persists them."""

    records: tuple[rec.SignedRecord, ...]
    from_peer: bytes


@dataclass(frozen=True)
class Refused:
    """A valid record refused by local policy or a death certificate: remembered as withheld."""

    key: bytes
    reason: str
    from_peer: bytes


@dataclass(frozen=True)
class SessionClosed:
    peer_key: bytes
    reason: str
    misbehaved: bool


Event = Accepted | Refused | SessionClosed


@dataclass(frozen=True)
class GossipStatistics:
    records_held: int
    withheld: int
    sessions: int
    known_peers: int
    bytes_in: int
    bytes_out: int
    frames_in: int
    frames_out: int
    bodies_received: int
    duplicate_bodies: int
    invalid_received: int
    refused: int
    announced_keys_received: int
    duplicate_announced_keys: int
    syncs_completed: int


_COUNTERS = ("bytes_in", "bytes_out", "frames_in", "frames_out", "bodies_received", "duplicate_bodies",
             "invalid_received", "refused", "announced_keys_received", "duplicate_announced_keys", "syncs_completed")
_C = {name: i for i, name in enumerate(_COUNTERS)}
# Problems a relaying peer could not have caused on purpose get the minor penalty.
_MINOR_PROBLEMS = {rec.Problem.FUTURE}


class PeerSession:
    """The gossip protocol over one connection, in either role (``initiator``: we dialed)."""

    __slots__ = ("node", "peer_key", "initiator", "state", "close_reason", "misbehaved", "score", "listen",
                 "context", "_out", "_announce", "_queue", "_queued", "_outstanding", "_tokens", "_serve_tokens",
                 "_tokens_at", "_sync", "_sync_deadline", "_answer", "_answer_deadline", "_hello_deadline", "_pex_at")

    def __init__(self, node: GossipNode, peer_key: bytes, initiator: bool, now: float) -> None:
        p = node.params
        self.node, self.peer_key, self.initiator = node, peer_key, initiator
        self.state = SessionState.HELLO
        self.close_reason: str | None = None
        self.misbehaved = False
        self.score = 0.0
        self.listen: str | None = None  # the peer's listen address, from its Hello
        self.context: object = None  # free for the driver (memnet keeps the other end here)
        self._out: list[bytes] = []
        self._announce: list[bytes] = []
        self._queue: list[bytes] = []  # heap of keys to Want from this peer (revocations first)
        self._queued: set[bytes] = set()
        self._outstanding: dict[bytes, float] = {}  # key -> when we give up waiting for it
        self._tokens = self._serve_tokens = float(p.records_burst)
        self._tokens_at = now
        self._sync: Reconciler | None = None  # the reconciliation we initiated
        self._sync_deadline = 0.0
        self._answer: Reconciler | None = None  # the one the peer initiated
        self._answer_deadline = 0.0
        self._hello_deadline = now + p.hello_timeout
        self._pex_at = now + p.pex_interval
        self._send(Hello(GOSSIP_VERSION, node.network_hash, node.listen))

    # -- the driver's surface ----------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self.state is SessionState.CLOSED

    def receive(self, frame: bytes, now: float) -> None:
        """Take one whole frame (a message, without its length header) from the peer."""
        if self.closed:
            return
        node = self.node
        node._count[0] += len(frame)
        node._count[2] += 1
        try:
            message = decode(frame, node.params.max_frame_bytes)
        except GossipProtocolError as error:
            if error.problem == "oversize":
                self._misbehaved(f"frame over the limit: {error}", now)
            else:
                self.penalise(node.params.penalty_malformed, str(error), now)
            return
        if self.state is SessionState.HELLO and not isinstance(message, Hello | Bye):
            self._misbehaved(f"{type(message).__name__} before Hello", now)
            return
        if isinstance(message, Hello):
            self._on_hello(message, now)
        elif isinstance(message, Announce):
            node._learn(message.keys, self)
        elif isinstance(message, Want):
            self._serve(message.keys, now)
        elif isinstance(message, Records):
            self._on_records(message, now)
        elif isinstance(message, Reconcile):
            self._on_reconcile(message, now)
        elif isinstance(message, Peers):
            node._peers.learn(message.entries)
        else:
            self._end(f"peer said bye: {message.reason}", now, send_bye=False)
        self._pump(now)

    def tick(self, now: float) -> None:
        """Act on timers: Hello and Want timeouts, stalled reconciliations, peer exchange, refills."""
        if self.closed:
            return
        if self.state is SessionState.HELLO:
            if now >= self._hello_deadline:
                self._end("no Hello in time", now)
            return
        late = [k for k, deadline in self._outstanding.items() if deadline <= now]
        for key in late:  # the peer did not answer: ask another peer that announced it
            del self._outstanding[key]
            self.node._release(key, self, now)
        if self._sync is not None and now >= self._sync_deadline:
            self._sync = None
        if self._answer is not None and now >= self._answer_deadline:
            self._answer = None
        if now >= self._pex_at:
            self._pex_at = now + self.node.params.pex_interval
            self._send_peers()
        self._pump(now)

    def outbox(self) -> list[bytes]:
        """Frames to send, in order (each a message; the driver prefixes it with encode_frame)."""
        if self._announce:
            keys = sorted(set(self._announce))
            self._announce = []
            step = 512
            for i in range(0, len(keys), step):
                self._send(Announce(tuple(keys[i : i + step])))
        out, self._out = self._out, []
        node = self.node
        node._count[1] += sum(map(len, out))
        node._count[3] += len(out)
        return out

    def next_deadline(self) -> float | None:
        if self.closed:
            return None
        if self.state is SessionState.HELLO:
            return self._hello_deadline
        times = [self._pex_at]
        if self._outstanding:
            times.append(min(self._outstanding.values()))
        if self._sync is not None:
            times.append(self._sync_deadline)
        if self._answer is not None:
            times.append(self._answer_deadline)
        if self._queue and self._tokens < 1:
            times.append(self._tokens_at + (1 - self._tokens) / self.node.params.records_per_second)
        return min(times)

    def close(self, reason: str, now: float) -> None:
        """Our side ends the session (a Bye is queued): the driver sends the outbox, then hangs up."""
        self._end(reason, now)

    def connection_lost(self, now: float) -> None:
        """The transport broke (or ended) under the session: no Bye can be sent."""
        self._end("connection lost", now, send_bye=False)

    def penalise(self, amount: float, reason: str, now: float) -> None:
        """Lower the peer's score; past the threshold the session closes as misbehaved."""
        self.score -= amount
        if self.score <= self.node.params.close_score:
            self._misbehaved(reason, now)

    def start_sync(self, now: float) -> bool:
        """Start a reconciliation with this peer (the node calls this every sync_interval)."""
        if self.state is not SessionState.OPEN or self._sync is not None:
            return False
        self._sync = Reconciler(self.node.keyset, frame_size_limit=self.node.params.reconcile_frame_bytes)
        self._sync_deadline = now + self.node.params.reconcile_timeout
        self._send(Reconcile(ReconcilePhase.START, self._sync.initiate()))
        return True

    @property
    def syncing(self) -> bool:
        return self._sync is not None

    # -- inside ------------------------------------------------------------------------------------

    def _send(self, message: object) -> None:
        if not self._out and not self._announce:
            self.node._dirty[self] = None
        self._out.append(encode(message))

    def _enqueue_announce(self, key: bytes) -> None:
        if not self._out and not self._announce:
            self.node._dirty[self] = None
        self._announce.append(key)

    def _end(self, reason: str, now: float, send_bye: bool = True) -> None:
        if self.closed:
            return
        if send_bye:
            self._send(Bye(reason[:280]))
        self.state = SessionState.CLOSED
        self.close_reason = reason
        self._sync = self._answer = None
        self.node._closed(self, now)

    def _misbehaved(self, reason: str, now: float) -> None:
        self.misbehaved = True
        self._end(f"misbehaved: {reason}", now)

    def _on_hello(self, hello: Hello, now: float) -> None:
        if self.state is not SessionState.HELLO:
            self._misbehaved("second Hello", now)
        elif hello.version != GOSSIP_VERSION:
            self._end(f"gossip version {hello.version} is not spoken here (this node speaks {GOSSIP_VERSION})", now)
        elif hello.network_hash != self.node.network_hash:
            self._end("wrong network", now)
        else:
            self.state = SessionState.OPEN
            self.listen = hello.listen
            self.node._opened(self, now)

    def _refill(self, now: float) -> None:
        p = self.node.params
        elapsed = max(0.0, now - self._tokens_at)
        self._tokens = min(p.records_burst, self._tokens + elapsed * p.records_per_second)
        self._serve_tokens = min(p.records_burst, self._serve_tokens + elapsed * p.records_per_second)
        self._tokens_at = now

    def _queue_want(self, key: bytes) -> None:
        if key not in self._queued and len(self._queued) < self.node.params.max_queued_wants:
            self._queued.add(key)
            heapq.heappush(self._queue, key)

    def _pump(self, now: float) -> None:
        """Turn queued keys into Wants while the peer has room for requests and we have tokens."""
        if self.state is not SessionState.OPEN or not self._queue:
            return
        self._refill(now)
        node, p = self.node, self.node.params
        batch: list[bytes] = []
        deadline = now + p.want_timeout
        while self._queue and len(self._outstanding) < p.max_outstanding and self._tokens >= 1:
            key = heapq.heappop(self._queue)
            self._queued.discard(key)
            pending = node._pending.get(key)
            if pending is None or pending[0] is not None:
                continue  # held by now, or being fetched from another peer (we stay a fallback)
            pending[0] = self
            self._outstanding[key] = deadline
            self._tokens -= 1
            batch.append(key)
        for i in range(0, len(batch), MAX_WANT_KEYS):
            self._send(Want(tuple(batch[i : i + MAX_WANT_KEYS])))

    def _serve(self, keys: tuple[bytes, ...], now: float) -> None:
        """Answer a Want: every key either in Records or named as missing, revocations first."""
        self._refill(now)
        node, limit = self.node, self.node.params.max_frame_bytes - 64
        found, missing = [], []
        for key in sorted(set(keys)):
            signed = node._store.get(key)
            if signed is None or self._serve_tokens < 1:
                missing.append(key)
            else:
                self._serve_tokens -= 1
                found.append((signed.body, signed.signature))
        if len(keys) > node.params.max_outstanding or self._serve_tokens < 0.5 and missing and found:
            self.penalise(node.params.penalty_minor, "asked for more than the request limits allow", now)
        batch: list[tuple[bytes, bytes]] = []
        size = 34 * len(missing)
        for body, sig in found:
            if batch and size + len(body) + len(sig) + 8 > limit:
                self._send(Records(tuple(batch)))
                batch, size = [], 34 * len(missing)
            batch.append((body, sig))
            size += len(body) + len(sig) + 8
        if batch or missing:
            self._send(Records(tuple(batch), tuple(missing)))

    def _on_records(self, message: Records, now: float) -> None:
        node = self.node
        self._refill(now)
        taken: list[tuple[bytes, bytes]] = []
        for body, sig in message.records:
            rtype = rec.peek_type(body)
            key = rec.reconcile_key(rtype, rec.record_id(body)) if rtype is not None else None
            if key is not None and self._outstanding.pop(key, None) is not None:
                taken.append((body, sig))  # asked for: paid for when we asked
            elif self._tokens >= 1:  # unsolicited (or answered after we gave up): rate-limited
                self._tokens -= 1
                taken.append((body, sig))
            else:
                self.penalise(node.params.penalty_minor, "records beyond the rate limit", now)
                if self.closed:
                    return
        node._take_records(taken, self, now)
        for key in message.missing:
            if self._outstanding.pop(key, None) is not None:
                node._release(key, self, now)

    def _on_reconcile(self, message: Reconcile, now: float) -> None:
        p = self.node.params
        if message.phase is ReconcilePhase.START:
            self._answer = Reconciler(self.node.keyset, frame_size_limit=p.reconcile_frame_bytes)
            self._answer_deadline = now + p.reconcile_timeout
        mine = message.phase is ReconcilePhase.RESPONDER
        reconciler = self._sync if mine else self._answer
        if reconciler is None:  # we gave up on that reconciliation (timeout): not worth a penalty
            return
        try:
            step: ReconcileStep = reconciler.reconcile(message.data)
        except ReconcileProtocolError as error:
            if mine:
                self._sync = None
            else:
                self._answer = None
            self.penalise(p.penalty_malformed, f"reconcile: {error}", now)
            return
        if step.reply is not None:
            self._send(Reconcile(ReconcilePhase.INITIATOR if mine else ReconcilePhase.RESPONDER, step.reply))
        if step.need:
            self.node._learn(step.need, self, count=False)
        if step.done:
            if mine:
                self._sync = None
                self.node._synced(self, now)
            else:
                self._answer = None

    def _send_peers(self) -> None:
        entries = self.node._peers.sample(self.node.params.pex_size, exclude=self.peer_key, rng=self.node.rng)
        if entries:
            self._send(Peers(tuple(entries[:MAX_PEER_ENTRIES])))


class GossipNode:
    """One node's gossip: its records, key set, sessions and peer table."""

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
    ) -> None:
        self.params = params or GossipParams()
        self.network = network
        self.network_hash = network_hash(network)
        self.transport_key = transport_key
        self.listen = listen
        self.rng = rng
        self._admit = admit
        self._is_dead = is_dead
        self._verify = verify
        self._store: dict[bytes, rec.SignedRecord] = {}
        self.keyset = KeySet()
        self._pending: dict[bytes, list] = {}  # key -> [session fetching it or None, [sessions that have it]]
        self._sessions: dict[bytes, PeerSession] = {}
        self._dirty: dict[PeerSession, None] = {}
        self._peers = PeerTable(self.params, self_key=transport_key)
        self._events: list[Event] = []
        self._count = [0] * len(_COUNTERS)
        self._next_sync = now + self.params.sync_interval * rng.random()

    # -- records -----------------------------------------------------------------------------------

    def load(self, records: Iterable[rec.SignedRecord], withheld: Iterable[bytes] = ()) -> None:
        """Take the records the driver kept from earlier runs (already validated); nothing is announced."""
        records = list(records)
        self._store.update((r.key, r) for r in records)
        self.keyset.update(r.key for r in records)
        self.keyset.update(withheld, withheld=True)

    def add_local(self, *signed: rec.SignedRecord) -> int:
        """Records this node made: store them and announce them (together) to ``fanout`` peers.

        Returns how many were new. Records that are added in one call travel together."""
        fresh = [r for r in dict.fromkeys(signed) if r.key not in self.keyset]
        for record in fresh:
            self._store[record.key] = record
            self.keyset.add(record.key)
        self._announce([(r.key, ()) for r in fresh])
        return len(fresh)

    def get(self, key: bytes) -> rec.SignedRecord | None:
        return self._store.get(key)

    def keys(self) -> list[bytes]:
        """Every key this node holds, withheld ones included, ascending."""
        return list(self.keyset)

    def record_keys(self) -> set[bytes]:
        """Keys of the records this node holds and serves."""
        return set(self._store)

    # -- sessions and peers ------------------------------------------------------------------------

    def add_peer(self, transport_key: bytes, address: str | None, source: str = "bootstrap") -> None:
        self._peers.add(transport_key, address, source)

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
                session._end("duplicate connection", now)
                return session
            existing._end("duplicate connection", now)
        self._sessions[peer_key] = session
        self._peers.connected(peer_key, True)
        if not initiator and len(self._sessions) > self.params.max_sessions:
            session._send_peers()  # tell it where else to go before turning it away
            session._end("busy", now)
        return session

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

    # -- time --------------------------------------------------------------------------------------

    def tick(self, now: float) -> None:
        """Run the timers of the node and of every session; start an anti-entropy round when due."""
        if now >= self._next_sync:
            p = self.params
            self._next_sync = now + p.sync_interval * (1 + p.sync_jitter * (2 * self.rng.random() - 1))
            ready = [s for s in self._sessions.values() if s.state is SessionState.OPEN and not s.syncing]
            if ready:
                self.rng.choice(ready).start_sync(now)
        for session in list(self._sessions.values()):
            session.tick(now)

    def next_deadline(self) -> float | None:
        deadline = self._next_sync
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
        withheld = len(self.keyset) - len(self._store)
        return GossipStatistics(len(self._store), withheld, len(self._sessions), len(self._peers), *self._count)

    # -- called by sessions ------------------------------------------------------------------------

    def _opened(self, session: PeerSession, now: float) -> None:
        if session.listen is not None:
            self._peers.add(session.peer_key, session.listen, "hello")
        session._send_peers()

    def _closed(self, session: PeerSession, now: float) -> None:
        for key in list(session._outstanding):
            self._release(key, session, now)
        session._outstanding.clear()
        if self._sessions.get(session.peer_key) is session:
            del self._sessions[session.peer_key]
            self._peers.connected(session.peer_key, False)
        self._peers.closed(session.peer_key, session.misbehaved, now)
        self._events.append(SessionClosed(session.peer_key, session.close_reason or "", session.misbehaved))

    def _synced(self, session: PeerSession, now: float) -> None:
        self._count[_C["syncs_completed"]] += 1
        self._peers.synced(session.peer_key, now)

    def _learn(self, keys: Iterable[bytes], session: PeerSession, count: bool = True) -> None:
        """The peer holds these keys (announced, or learned by reconciliation): fetch those we lack."""
        held, pending = self.keyset, self._pending
        for key in keys:
            if count:
                self._count[_C["announced_keys_received"]] += 1
            if key in held:
                if count:
                    self._count[_C["duplicate_announced_keys"]] += 1
                continue
            entry = pending.get(key)
            if entry is None:
                pending[key] = [None, [session]]
            elif session not in entry[1]:
                entry[1].append(session)
            else:
                continue
            session._queue_want(key)

    def _release(self, key: bytes, session: PeerSession, now: float) -> None:
        """``session`` will not deliver ``key``: hand it to another peer that announced it."""
        entry = self._pending.get(key)
        if entry is None:
            return
        if entry[0] is session:
            entry[0] = None
        if session in entry[1]:
            entry[1].remove(session)
        sources = [s for s in entry[1] if not s.closed]
        entry[1] = sources
        if not sources:
            del self._pending[key]
        elif entry[0] is None:
            sources[0]._queue_want(key)
            sources[0]._pump(now)

    def _take_records(self, bodies: list[tuple[bytes, bytes]], session: PeerSession, now: float) -> None:
        """Validate, then store and relay, or remember a refusal; penalise invalid ones."""
        p, c = self.params, self._count
        accepted: list[rec.SignedRecord] = []
        relay: list[tuple[bytes, tuple[PeerSession, ...]]] = []
        today = rec.day_of(now)
        for body, sig in bodies:
            c[_C["bodies_received"]] += 1
            rtype = rec.peek_type(body)
            key = rec.reconcile_key(rtype, rec.record_id(body)) if rtype is not None else None
            if key is not None and key in self.keyset:
                c[_C["duplicate_bodies"]] += 1
                continue
            try:
                signed = self._verify(body, sig, network=self.network, today=today)
            except rec.InvalidRecord as error:
                c[_C["invalid_received"]] += 1
                if key is not None:
                    self._release(key, session, now)
                minor = error.problem in _MINOR_PROBLEMS
                session.penalise(p.penalty_minor if minor else p.penalty_invalid, f"invalid record: {error}", now)
                if session.closed:
                    break
                continue
            key = signed.key
            sources = self._pending.pop(key, (None, ()))[1]
            reason = None
            if signed.type is not rec.RecordType.REVOCATION:  # revocations are always kept and relayed
                if self._is_dead is not None and self._is_dead(signed):
                    reason = "dead"
                elif self._admit is not None:
                    reason = self._admit(signed)
            if reason is not None:
                self.keyset.add(key, withheld=True)
                c[_C["refused"]] += 1
                self._events.append(Refused(key, reason, session.peer_key))
                continue
            self._store[key] = signed
            self.keyset.add(key)
            accepted.append(signed)
            relay.append((key, (session, *sources)))
        if relay:
            self._announce(relay)
        if accepted:
            self._events.append(Accepted(tuple(accepted), session.peer_key))

    def _announce(self, batch: list[tuple[bytes, Iterable[PeerSession]]]) -> None:
        """Announce keys, each to ``fanout`` open sessions that did not announce it to us.

        One shuffled order of the sessions serves the whole batch, so keys that arrived together
        leave together, to the same peers, in one Announce -- a revocation received with the
        lesson it revokes is never announced to a peer without it, and so never falls behind it.
        """
        sessions = [s for s in self._sessions.values() if s.state is SessionState.OPEN]
        if len(sessions) > self.params.fanout:
            self.rng.shuffle(sessions)
        for key, skip in batch:
            skip = set(skip)
            sent = 0
            for session in sessions:
                if session not in skip:
                    session._enqueue_announce(key)
                    sent += 1
                    if sent == self.params.fanout:
                        break
