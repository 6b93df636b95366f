"""One gossip connection: the per-peer protocol state machine (sans-I/O).

:class:`PeerSession` speaks the messages of ``protocol/gossip.md`` over one connection, in either
role: ``receive(frame, now)``, ``tick(now)``, ``outbox()``, ``next_deadline()``. It keeps only
what is per peer -- its queue of keys to ask this peer for, the keys asked and not yet answered,
two token buckets (records we take from the peer, records we serve it), the reconciliations in
flight both ways, the records a reconciliation told us to push to the peer and those it told us
the peer will push to us, and the peer's score. Everything shared -- the records, the key set, which peer
is fetching which key, the peer table -- belongs to :class:`~commons.core.gossip.node.GossipNode`,
which creates sessions (``open_session``) and which each session calls back into, through the
methods :class:`SessionHost` lists and nothing else. Moving record bodies -- serving Wants,
pushing, taking Records -- is its half in ``gossip/transfer.py``; reconciling, in
``gossip/sync.py``; its states and close kinds, in ``gossip/state.py``.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from commons.core.gossip.messages import (
    GOSSIP_VERSION,
    MAX_ANNOUNCE_KEYS,
    MAX_PEER_ENTRIES,
    MAX_REASON_BYTES,
    MAX_WANT_KEYS,
    Announce,
    Bye,
    GossipProtocolError,
    Hello,
    Peers,
    Reconcile,
    Records,
    Want,
    decode,
    encode,
)
from commons.core.gossip.state import CloseKind, SessionState
from commons.core.gossip.sync import SessionSync
from commons.core.gossip.transfer import RecordTransfer
from commons.core.gossip.key_queue import KeyQueue
from commons.core.reconcile import PushWindow
from commons.core.reconcile import KEY_SIZE as KEY_BYTES

if TYPE_CHECKING:
    from commons.core.gossip.peers import GossipParams
    from commons.core.reconcile import KeySet, Reconciler
    from commons.core.records import SignedRecord

SPILL_KEYS = 1 << 20  # keys a reconciliation may leave waiting beyond the want queue (33 MB at most)


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
    def serve(self, key: bytes) -> SignedRecord | None: ...  # or its body and signature as stored; None: missing
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


class PeerSession(RecordTransfer, SessionSync):
    """The gossip protocol over one connection, in either role (``initiator``: we dialed)."""

    __slots__ = ("node", "peer_key", "initiator", "state", "close_reason", "close_kind", "misbehaved", "score", "listen",
                 "context", "contributed", "active_at", "_out", "_announce", "_queue", "_queued", "_outstanding",
                 "_tokens", "_serve_tokens", "_tokens_at", "_sync", "_sync_deadline", "_answer", "_answer_deadline",
                 "_hello_deadline", "_pex_at", "_heard_at", "_keepalive_at", "_sent", "_overflow", "_spill", "_served",
                 "_push", "_pushes", "_pushes_deadline", "_sync_push", "_answer_push", "_peer_holds", "_held_back")

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
        self._out: list[bytes] = []
        self._announce: list[bytes] = []
        self._queue: list[bytes] = []  # heap of keys to Want from this peer (revocations first)
        self._queued: set[bytes] = set()
        self._overflow = False  # the queue was full and dropped keys: reconcile again once it drains
        # Keys a reconciliation named beyond the queue, 33 bytes each in one buffer (no object per
        # key), queued as the queue drains: a node far behind catches up with one reconciliation
        # instead of one per queueful, each over all that is still missing (quadratic: issue #18).
        self._spill = KeyQueue(KEY_BYTES)
        self._served = 0  # records sent to this peer since the node last asked (take_served)
        self._outstanding: dict[bytes, float] = {}  # key -> when we give up waiting for it
        # Reconciliation pushes (protocol/reconcile.md, Diff): keys whose records we send unasked,
        # paced by the serving rate; and the places the peer announced for records it pushes us,
        # no more of them than keys we would have queued or spilled to ask it for (a node far
        # behind is caught up by one reconciliation either way).
        # Keys to push, 33 bytes each end to end in one buffer (as the spill), first out first;
        # bounded as the peer's window for them is.
        self._push = KeyQueue(KEY_BYTES)
        self._pushes = PushWindow(p.max_queued_wants + SPILL_KEYS)
        self._pushes_deadline = 0.0  # pushes not here by then are not waited for (found again later)
        self._sync_push = self._answer_push = False  # whether each reconciliation asked to be pushed
        # Keys the peer announced while we had records to push it: it holds them, so they are not
        # pushed (the receiver announces what arrives to every peer that may push it the same).
        self._peer_holds: set[bytes] = set()
        # Keys this peer's reconciliation named that lie where another peer's push may still
        # bring them: fetched only once no push is awaited (those that came by then are skipped),
        # so a record pushed by one peer is not also asked of another.
        self._held_back = KeyQueue(KEY_BYTES)
        self._tokens = self._serve_tokens = float(p.records_burst)
        self._tokens_at = now
        self._sync: Reconciler | None = None  # the reconciliation we initiated
        self._sync_deadline = 0.0
        self._answer: Reconciler | None = None  # the one the peer initiated
        self._answer_deadline = 0.0
        self._hello_deadline = now + p.hello_timeout
        self._pex_at = now + p.pex_interval
        self._heard_at = now  # the last frame of any kind from the peer (for idle_timeout)
        self._keepalive_at = now + p.keepalive_interval
        self._sent = False  # whether anything was queued since the last keepalive check
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
        node.count_in(len(frame))
        self._heard_at = now
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
        if not (isinstance(message, Announce) and not message.keys):  # an empty Announce is a keepalive
            self.active_at = now
        if isinstance(message, Hello):
            self._on_hello(message, now)
        elif isinstance(message, Announce):
            if self._push and len(self._peer_holds) < len(self._push):
                self._peer_holds.update(message.keys)
            node.learn(message.keys, self)
        elif isinstance(message, Want):
            self._serve(message.keys, now)
        elif isinstance(message, Records):
            self._on_records(message, now)
        elif isinstance(message, Reconcile):
            self._on_reconcile(message, now)
        elif isinstance(message, Peers):
            node.learn_peers(message.entries)
        else:
            self.end(f"peer said bye: {message.reason}", now, CloseKind.PEER_BYE, send_bye=False)
        self.pump(now)

    def tick(self, now: float) -> None:
        """Act on timers: Hello and Want timeouts, stalled reconciliations, peer exchange, refills."""
        if self.closed:
            return
        if self.state is SessionState.HELLO:
            if now >= self._hello_deadline:
                self.end("no Hello in time", now, CloseKind.TIMEOUT)
            return
        late = [k for k, deadline in self._outstanding.items() if deadline <= now]
        for key in late:  # the peer did not answer: ask another peer that announced it
            del self._outstanding[key]
            self.node.release(key, self, now)
        if self._sync is not None and now >= self._sync_deadline:
            self._sync = None
        if self._answer is not None and now >= self._answer_deadline:
            self._answer = None
        if self._pushes.expected and now >= self._pushes_deadline:
            self._pushes = PushWindow(self.node.params.max_queued_wants + SPILL_KEYS)
            self.node.pushes_settled(now)
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
                self._send(Announce(()))
            self._sent = False
        self.pump(now)

    def outbox(self) -> list[bytes]:
        """Frames to send, in order (each a message; the driver prefixes it with encode_frame)."""
        if self._announce:
            keys = sorted(set(self._announce))
            self._announce = []
            step = MAX_ANNOUNCE_KEYS
            for i in range(0, len(keys), step):
                self._send(Announce(tuple(keys[i : i + step])))
        out, self._out = self._out, []
        self.node.count_out(sum(map(len, out)), len(out))
        return out

    def next_deadline(self) -> float | None:
        if self.closed:
            return None
        if self.state is SessionState.HELLO:
            return self._hello_deadline
        p = self.node.params
        times = [self._pex_at]
        if p.idle_timeout:
            times.append(self._heard_at + p.idle_timeout)
        if p.keepalive_interval:
            times.append(self._keepalive_at)
        if self._outstanding:
            times.append(min(self._outstanding.values()))
        if self._sync is not None:
            times.append(self._sync_deadline)
        if self._answer is not None:
            times.append(self._answer_deadline)
        if self._pushes.expected:
            times.append(self._pushes_deadline)
        if self._queue and self._tokens < 1:
            times.append(self._tokens_at + (1 - self._tokens) / p.records_per_second)
        if self._push and self._serve_tokens < self._push_spare():
            times.append(self._tokens_at + (self._push_spare() - self._serve_tokens) / p.records_per_second)
        return min(times)

    def close(self, reason: str, now: float) -> None:
        """Our side ends the session (a Bye is queued): the driver sends the outbox, then hangs up."""
        self.end(reason, now, CloseKind.LOCAL)

    def connection_lost(self, now: float) -> None:
        """The transport broke (or ended) under the session: no Bye can be sent."""
        self.end("connection lost", now, CloseKind.CONNECTION_LOST, send_bye=False)

    def penalise(self, amount: float, reason: str, now: float) -> None:
        """Lower the peer's score; past the threshold the session closes as misbehaved."""
        self.score -= amount
        if self.score <= self.node.params.close_score:
            self._misbehaved(reason, now)

    def drop_wants(self) -> list[bytes]:
        """Forget every key asked of this peer or waiting to be (the session ended); returns them."""
        keys = [*self._outstanding, *self._queue]
        self._outstanding.clear()
        self._queue.clear()
        self._queued.clear()
        return keys

    def drop_spill(self) -> bool:
        """Forget the keys waiting in the spill (the session ended); returns whether there were any:
        this peer alone named them, so the node reconciles with another peer for them."""
        spilled = bool(self._spill or self._held_back)
        self._spill.clear()
        self._held_back.clear()
        return spilled

    def asked(self, key: bytes) -> bool:
        """Whether this session asked its peer for ``key`` and is waiting for the answer."""
        return key in self._outstanding

    def take_served(self) -> int:
        """Records sent to this peer since the last call."""
        served, self._served = self._served, 0
        return served

    @property
    def pending_wants(self) -> int:
        """Records still to come from this peer: asked, queued, waiting in the spill, or announced
        as pushed by a reconciliation."""
        return (len(self._outstanding) + len(self._queued) + len(self._spill) + len(self._held_back)
                + self._pushes.expected)

    @property
    def fetching(self) -> bool:
        """Waiting for records asked of the peer."""
        return bool(self._outstanding)

    # -- inside ------------------------------------------------------------------------------------

    def _send(self, message: object) -> None:
        if not self._out and not self._announce:
            self.node.wake(self)
        self._sent = True
        self._out.append(encode(message))

    def enqueue_announce(self, key: bytes) -> None:
        if not self._out and not self._announce:
            self.node.wake(self)
        self._announce.append(key)

    def end(self, reason: str, now: float, kind: CloseKind, send_bye: bool = True) -> None:
        if self.closed:
            return
        if send_bye:
            self._send(Bye(reason.encode()[:MAX_REASON_BYTES].decode("utf-8", "ignore")))
        self.state = SessionState.CLOSED
        self.close_reason = reason
        self.close_kind = kind
        self._sync = self._answer = None
        awaited, self._pushes = self._pushes.expected, PushWindow(0)
        self.node.session_closed(self, now)
        if awaited:
            self.node.pushes_settled(now)

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

    def _spill_keys(self) -> int:
        return SPILL_KEYS  # read when called, so that a test may lower it

    def _refill(self, now: float) -> None:
        p = self.node.params
        elapsed = max(0.0, now - self._tokens_at)
        self._tokens = min(p.records_burst, self._tokens + elapsed * p.records_per_second)
        self._serve_tokens = min(p.records_burst, self._serve_tokens + elapsed * p.records_per_second)
        self._tokens_at = now

    def queue_want(self, key: bytes, spill: bool = False) -> bool:
        """Queue a key to ask this peer for; False if the queue is full (the key is not kept,
        unless ``spill``: a key its reconciliation named waits in the spill, up to SPILL_KEYS)."""
        if key in self._queued:
            return True
        if len(self._queued) >= self.node.params.max_queued_wants:
            if spill and len(self._spill) < SPILL_KEYS:
                self._spill.append(key)
            else:
                self._overflow = True
            return False
        self._queued.add(key)
        heapq.heappush(self._queue, key)
        return True

    def pump(self, now: float) -> None:
        """Turn queued keys into Wants while the peer has room for requests and we have tokens."""
        if self.state is not SessionState.OPEN:
            return
        if not self._queue and self._spill:  # a queueful more of what the reconciliation named
            self.node.learn(self._spill.take(self.node.params.max_queued_wants), self,
                            count=False)
        if self._held_back and not self.node.push_awaited():
            self.node.learn(self._held_back.take(len(self._held_back)), self, count=False)
        if self._push:
            self._send_pushes(now)
        if not self._queue:
            if self._overflow and not self._outstanding and self._sync is None:
                # Keys this peer has were dropped for want of room: a reconciliation names them
                # again, so a node far behind catches up at the rate limit with a queue kept small.
                self._overflow = False
                self.start_sync(now)
            return
        self._refill(now)
        node, p = self.node, self.node.params
        batch: list[bytes] = []
        deadline = now + p.want_timeout
        while self._queue and len(self._outstanding) < p.max_outstanding and self._tokens >= 1:
            key = heapq.heappop(self._queue)
            self._queued.discard(key)
            if not node.claim(key, self):
                continue  # held by now, no longer worth fetching, or asked of another peer
            self._outstanding[key] = deadline
            self._tokens -= 1
            batch.append(key)
        for i in range(0, len(batch), MAX_WANT_KEYS):
            self._send(Want(tuple(batch[i : i + MAX_WANT_KEYS])))

    def send_peers(self) -> None:
        entries = self.node.peers_to_share(self.node.params.pex_size, exclude=self.peer_key)
        if entries:
            self._send(Peers(tuple(entries[:MAX_PEER_ENTRIES])))
