"""One gossip connection: the per-peer protocol state machine (sans-I/O).

:class:`PeerSession` speaks the messages of ``protocol/gossip.md`` over one connection, in either
role: ``receive(frame, now)``, ``tick(now)``, ``outbox()``, ``next_deadline()``. It keeps what is
the connection's own -- its state, its Hello, its score, its frames to send, its timers for Hello,
silence, keepalives and peer exchange -- and is built of two parts that own the rest:

* ``transfer`` (:class:`~commons.core.gossip.transfer.RecordTransfer`): record bodies both ways --
  the queue of keys to ask this peer for and those asked and not yet answered, the two token
  buckets, the records to push the peer and the places it announced for records it pushes us;
* ``sync`` (:class:`~commons.core.gossip.sync.SessionSync`): the reconciliations in flight both ways.

The session dispatches each message to the part it is for, and is the host of both
(``TransferHost``, ``SyncHost``): what a part needs of the node or of the other part, it asks the
session, which asks the node or routes it. Everything shared -- the records, the key set, which
peer is fetching which key, the peer table -- belongs to :class:`~commons.core.gossip.node.GossipNode`,
which creates sessions (``open_session``) and which each session calls back into, through the
methods :class:`SessionHost` lists and nothing else. Its states and close kinds: ``gossip/state.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, assert_never

from commons.core.gossip.messages import (
    GOSSIP_VERSION,
    MAX_ANNOUNCE_KEYS,
    MAX_PEER_ENTRIES,
    MAX_REASON_BYTES,
    Announce,
    Bye,
    GossipProtocolError,
    Hello,
    Message,
    Peers,
    Reconcile,
    Records,
    Want,
    decode,
    encode,
)
from commons.core.gossip.state import CloseKind, SessionState
from commons.core.gossip.sync import SessionSync
from commons.core.gossip.transfer import SPILL_KEYS, RecordTransfer, Served

if TYPE_CHECKING:
    from commons.core.gossip.peers import GossipParams
    from commons.core.reconcile import KeySet

__all__ = ["SPILL_KEYS", "CloseKind", "PeerSession", "SessionHost", "SessionState"]


class SessionHost(Protocol):
    """What a session needs of its node: the whole seam between the two (GossipNode implements it).

    Sessions call nothing else of the node, and the node calls only the public methods of its
    sessions, so either side can change inside, and a simulation configures behaviour (a free
    rider: ``GossipNode(free_rider=True)``) instead of overriding private methods.
    """

    params: GossipParams
    network_hash: bytes
    listen: str | None
    keyset: KeySet

    def count_in(self, nbytes: int) -> None: ...
    def count_out(self, nbytes: int, frames: int) -> None: ...
    def wake(self, session: PeerSession) -> None: ...  # the session has frames to send
    def serve(self, key: bytes) -> Served | None: ...  # its body and signature, as stored; None: missing
    # count=False: keys a reconciliation named (they may wait in the spill)
    def learn(self, keys: Iterable[bytes], session: PeerSession, count: bool = True) -> None: ...
    def claim(self, key: bytes, session: PeerSession) -> bool: ...  # may this session ask for key now?
    def push_welcome(self, session: PeerSession) -> bool: ...  # may it ask its peer to push records?
    def push_awaited(self) -> bool: ...  # is any session awaiting records its peer announced it pushes?
    def pushed_elsewhere(self, item: bytes) -> bool: ...  # may a record at item still come as a push?
    def pushes_settled(self, now: float) -> None: ...  # a session awaits no more pushes
    def release(self, key: bytes, session: PeerSession, now: float) -> bool: ...  # it will not deliver key
    def take_records(self, bodies: list[tuple[bytes, bytes]], session: PeerSession, now: float,
                     keys: list[bytes | None] | None = None) -> None: ...
    def learn_peers(self, entries: Iterable[tuple[str, bytes]]) -> None: ...
    def peers_to_share(self, count: int, exclude: bytes) -> list[tuple[str, bytes]]: ...
    def session_opened(self, session: PeerSession, now: float) -> None: ...
    def session_closed(self, session: PeerSession, now: float) -> None: ...
    def session_synced(self, session: PeerSession, now: float) -> None: ...


class PeerSession:
    """The gossip protocol over one connection, in either role (``initiator``: we dialed)."""

    __slots__ = ("node", "peer_key", "initiator", "state", "close_reason", "close_kind", "misbehaved", "score", "listen",
                 "context", "contributed", "active_at", "_transfer", "_sync", "_out", "_announce", "_hello_deadline",
                 "_pex_at", "_heard_at", "_keepalive_at", "_sent")

    def __init__(self, node: SessionHost, peer_key: bytes, initiator: bool, now: float) -> None:
        p = node.params
        self.node, self.peer_key, self.initiator = node, peer_key, initiator
        self.state = SessionState.HELLO
        self.close_reason: str | None = None
        self.close_kind: CloseKind | None = None
        self.misbehaved = False
        self.score = 0.0
        self.listen: str | None = None  # the peer's listen address, from its Hello
        self.context: object = None  # free for the driver (memnet keeps the other end here)
        # Merit, for choosing whose slot a newcomer takes when every slot is full: whether the peer
        # ever delivered a record we accepted or finished a reconciliation with us, and when it
        # last sent anything but a keepalive.
        self.contributed = False
        self.active_at = now
        # SPILL_KEYS is read here, from this module, so that a test may lower it.
        self._transfer = RecordTransfer(self, p, node.keyset, now, spill_keys=SPILL_KEYS)
        self._sync = SessionSync(self, p, node.keyset, salts=node.salts)
        self._out: list[bytes] = []
        self._announce: list[bytes] = []
        self._hello_deadline = now + p.hello_timeout
        self._pex_at = now + p.pex_interval
        self._heard_at = now  # the last frame of any kind from the peer (for idle_timeout)
        self._keepalive_at = now + p.keepalive_interval
        self._sent = False  # whether anything was queued since the last keepalive check
        self.send(Hello(GOSSIP_VERSION, node.network_hash, node.listen))

    # -- the driver's surface ----------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self.state is SessionState.CLOSED

    def receive(self, frame: bytes, now: float) -> None:
        """Take one whole frame (a message, without its length header) from the peer."""
        if self.closed:
            return
        node = self.node
        node.count_in(len(frame))
        self._heard_at = now
        try:
            message = decode(frame, node.params.max_frame_bytes)
        except GossipProtocolError as error:
            if error.problem == "oversize":
                self._misbehaved(f"frame over the limit: {error}", now)
            elif error.problem == "unknown-type":
                # Its Hello said our version, whose messages are all known: not a glitch to score.
                self._misbehaved(str(error), now)
            else:
                self.penalise(node.params.penalty_malformed, str(error), now)
            return
        if self.state is SessionState.HELLO and not isinstance(message, Hello | Bye):
            self._misbehaved(f"{type(message).__name__} before Hello", now)
            return
        if not (isinstance(message, Announce) and not message.keys):  # an empty Announce is a keepalive
            self.active_at = now
        if isinstance(message, Hello):
            self._on_hello(message, now)
        elif isinstance(message, Announce):
            self._transfer.peer_holds(message.keys)
            node.learn(message.keys, self)
        elif isinstance(message, Want):
            self._transfer.serve(message.keys, now)
        elif isinstance(message, Records):
            self._transfer.take(message, now)
        elif isinstance(message, Reconcile):
            self._sync.receive(message, now)
        elif isinstance(message, Peers):
            node.learn_peers(message.entries)
        elif isinstance(message, Bye):
            self.end(f"peer said bye: {message.reason}", now, CloseKind.PEER_BYE, send_bye=False)
        else:  # a message type the decoder knows and this dispatch does not: a type checker names it
            assert_never(message)
        self.pump(now)

    def tick(self, now: float) -> None:
        """Act on timers: Hello and Want timeouts, stalled reconciliations, peer exchange, refills."""
        if self.closed:
            return
        if self.state is SessionState.HELLO:
            if now >= self._hello_deadline:
                self.end("no Hello in time", now, CloseKind.TIMEOUT)
            return
        # In this order: a key the peer did not answer is handed to another peer (which may start
        # a reconciliation there) while this session's own reconciliation still counts as running.
        self._transfer.expire_wants(now)
        if now >= self._sync.deadline:
            self._sync.expire(now)
        self._transfer.expire_pushes(now)
        p = self.node.params
        if p.idle_timeout and now >= self._heard_at + p.idle_timeout:
            self.end(f"nothing from the peer for {now - self._heard_at:.0f} s", now, CloseKind.TIMEOUT)
            return
        if now >= self._pex_at:
            self._pex_at = now + p.pex_interval
            self.send_peers()
        if p.keepalive_interval and now >= self._keepalive_at:
            self._keepalive_at = now + p.keepalive_interval
            if not self._sent:
                self.send(Announce(()))
            self._sent = False
        self.pump(now)

    def outbox(self) -> list[bytes]:
        """Frames to send, in order (each a message; the driver prefixes it with encode_frame)."""
        if self._announce:
            keys = sorted(set(self._announce))
            self._announce = []
            step = MAX_ANNOUNCE_KEYS
            for i in range(0, len(keys), step):
                self.send(Announce(tuple(keys[i : i + step])))
        out, self._out = self._out, []
        self.node.count_out(sum(map(len, out)), len(out))
        return out

    def next_deadline(self) -> float | None:
        if self.closed:
            return None
        if self.state is SessionState.HELLO:
            return self._hello_deadline
        p = self.node.params
        deadline = self._pex_at  # asked of every session each time the driver sleeps: no list, no min()
        if p.idle_timeout and self._heard_at + p.idle_timeout < deadline:
            deadline = self._heard_at + p.idle_timeout
        if p.keepalive_interval and self._keepalive_at < deadline:
            deadline = self._keepalive_at
        transfer = self._transfer.next_deadline()
        if transfer < deadline:
            deadline = transfer
        if self._sync.deadline < deadline:
            deadline = self._sync.deadline
        return deadline

    def close(self, reason: str, now: float) -> None:
        """Our side ends the session (a Bye is queued): the driver sends the outbox, then hangs up."""
        self.end(reason, now, CloseKind.LOCAL)

    def connection_lost(self, now: float) -> None:
        """The transport broke (or ended) under the session: no Bye can be sent."""
        self.end("connection lost", now, CloseKind.CONNECTION_LOST, send_bye=False)

    # -- the node's surface ------------------------------------------------------------------------

    def penalise(self, amount: float, reason: str, now: float) -> None:
        """Lower the peer's score; past the threshold the session closes as misbehaved."""
        self.score -= amount
        if self.score <= self.node.params.close_score:
            self._misbehaved(reason, now)

    def start_sync(self, now: float) -> bool:
        """Start a reconciliation with this peer (the node calls this every sync_interval)."""
        return self.state is SessionState.OPEN and self._sync.start(now)

    @property
    def syncing(self) -> bool:
        """Whether a reconciliation this side started is running."""
        return self._sync.syncing

    @property
    def reconciling(self) -> bool:
        """Reconciling with the peer either way, or waiting for records it said it would push."""
        return self._sync.running or self._transfer.awaiting_pushes

    @property
    def push_pending(self) -> bool:
        """Whether the peer may be pushing us records: a reconciliation of ours asked it to, or a
        push it announced has not all arrived."""
        return self._transfer.awaiting_pushes or self._sync.asked_push

    @property
    def awaiting_pushes(self) -> bool:
        """Whether records the peer announced it pushes us have not all arrived."""
        return self._transfer.awaiting_pushes

    def may_push(self, item: bytes) -> bool:
        """Whether a record at ``item`` may still arrive from the peer as a push it announced."""
        return self._transfer.may_push(item)

    def queue_want(self, key: bytes, spill: bool = False) -> bool:
        """Queue a key to ask this peer for; False if the queue is full (the key is not kept,
        unless ``spill``: a key its reconciliation named waits in the spill, up to SPILL_KEYS)."""
        return self._transfer.queue_want(key, spill)

    def pump(self, now: float) -> None:
        """Turn queued keys into Wants while the peer has room for requests and we have tokens."""
        if self.state is SessionState.OPEN:
            self._transfer.pump(now)

    def asked(self, key: bytes) -> bool:
        """Whether this session asked its peer for ``key`` and is waiting for the answer."""
        return self._transfer.asked(key)

    @property
    def fetching(self) -> bool:
        """Waiting for records asked of the peer."""
        return self._transfer.fetching

    @property
    def pending_wants(self) -> int:
        """Records still to come from this peer: asked, queued, waiting in the spill, or announced
        as pushed by a reconciliation."""
        return self._transfer.pending

    def take_served(self) -> int:
        """Records sent to this peer since the last call."""
        return self._transfer.take_served()

    def drop_wants(self) -> list[bytes]:
        """Forget every key asked of this peer or waiting to be (the session ended); returns them."""
        return self._transfer.drop_wants()

    def drop_spill(self) -> bool:
        """Forget the keys waiting in the spill (the session ended); returns whether there were any:
        this peer alone named them, so the node reconciles with another peer for them."""
        return self._transfer.drop_spill()

    def enqueue_announce(self, key: bytes) -> None:
        if not self._out and not self._announce:
            self.node.wake(self)
        self._announce.append(key)

    def send_peers(self) -> None:
        entries = self.node.peers_to_share(self.node.params.pex_size, exclude=self.peer_key)
        if entries:
            self.send(Peers(tuple(entries[:MAX_PEER_ENTRIES])))

    # -- the parts' host (TransferHost, SyncHost): what they ask of the session --------------------

    def send(self, message: Message) -> None:
        """Queue a message to the peer."""
        if not self._out and not self._announce:
            self.node.wake(self)
        self._sent = True
        self._out.append(encode(message))

    def end(self, reason: str, now: float, kind: CloseKind, send_bye: bool = True) -> None:
        if self.closed:
            return
        if send_bye:
            self.send(Bye(reason.encode()[:MAX_REASON_BYTES].decode("utf-8", "ignore")))
        self.state = SessionState.CLOSED
        self.close_reason = reason
        self.close_kind = kind
        self._sync.stop()
        awaited = self._transfer.stop_pushes()
        self.node.session_closed(self, now)
        if awaited:
            self.node.pushes_settled(now)

    def record_for(self, key: bytes) -> Served | None:
        return self.node.serve(key)

    def take_records(self, bodies: list[tuple[bytes, bytes]], now: float, keys: list[bytes | None]) -> None:
        self.node.take_records(bodies, self, now, keys)

    def fetch(self, keys: Iterable[bytes]) -> None:
        self.node.learn(keys, self, count=False)

    def claim(self, key: bytes) -> bool:
        return self.node.claim(key, self)

    def release(self, key: bytes, now: float) -> bool:
        return self.node.release(key, self, now)

    def push_awaited(self) -> bool:
        return self.node.push_awaited()

    def pushed_elsewhere(self, item: bytes) -> bool:
        return self.node.pushed_elsewhere(item)

    def pushes_settled(self, now: float) -> None:
        self.node.pushes_settled(now)

    def push_welcome(self) -> bool:
        return self.node.push_welcome(self)

    def fetch_named(self, keys: list[bytes], items: list[bytes]) -> None:
        self._transfer.fetch_named(keys, items)

    def expect_pushes(self, expectations: list, now: float) -> None:
        self._transfer.expect(expectations, now)

    def push(self, keys: list[bytes]) -> None:
        self._transfer.push(keys)

    def reconciled(self, ours: bool, now: float) -> None:
        self.contributed = True
        if ours:
            self.node.session_synced(self, now)

    # -- inside ------------------------------------------------------------------------------------

    def _misbehaved(self, reason: str, now: float) -> None:
        self.misbehaved = True
        self.end(f"misbehaved: {reason}", now, CloseKind.PEER_MISBEHAVED)

    def _on_hello(self, hello: Hello, now: float) -> None:
        if self.state is not SessionState.HELLO:
            self._misbehaved("second Hello", now)
        elif hello.version != GOSSIP_VERSION:
            self.end(f"gossip version {hello.version} is not spoken here (this node speaks {GOSSIP_VERSION})", now,
                      CloseKind.INCOMPATIBLE)
        elif hello.network_hash != self.node.network_hash:
            self.end("wrong network", now, CloseKind.INCOMPATIBLE)
        else:
            self.state = SessionState.OPEN
            self.listen = hello.listen
            self.node.session_opened(self, now)
