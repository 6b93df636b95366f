"""One gossip connection: the per-peer protocol state machine (sans-I/O).

:class:`PeerSession` speaks the messages of ``protocol/gossip.md`` over one connection, in either
role: ``receive(frame, now)``, ``tick(now)``, ``outbox()``, ``next_deadline()``. It keeps only
what is per peer -- its queue of keys to ask this peer for, the keys asked and not yet answered,
two token buckets (records we take from the peer, records we serve it), the reconciliations in
flight both ways, and the peer's score. Everything shared -- the records, the key set, which peer
is fetching which key, the peer table -- belongs to :class:`~commons.core.gossip.GossipNode`,
which creates sessions (``open_session``) and which each session calls back into.
"""

from __future__ import annotations

import enum
import heapq
from typing import TYPE_CHECKING

from commons.core import records as rec
from commons.core.gossip_messages import (
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
    ReconcilePhase,
    Records,
    Want,
    decode,
    encode,
)
from commons.core.reconcile import Reconciler, ReconcileProtocolError, ReconcileStep, ReconcileVersionError

if TYPE_CHECKING:
    from commons.core.gossip import GossipNode


class SessionState(enum.Enum):
    HELLO = "hello"  # our Hello is queued; the peer's has not arrived (nothing else is accepted)
    OPEN = "open"  # Hellos exchanged: announcements, Wants, Records, Reconcile, Peers flow
    CLOSED = "closed"  # Bye sent or received, or the connection is gone; send the outbox, then hang up


class CloseKind(enum.Enum):
    """Why a session ended, for the driver and the peer table (``close_reason`` has the details)."""

    LOCAL = "local"  # our side closed it (close())
    PEER_BYE = "peer-bye"  # the peer sent Bye
    PEER_MISBEHAVED = "peer-misbehaved"  # the peer's score fell to close_score, or it broke the protocol
    CONNECTION_LOST = "connection-lost"  # the transport ended under us
    TIMEOUT = "timeout"  # no Hello in time
    INCOMPATIBLE = "incompatible"  # another gossip version or another network
    DUPLICATE = "duplicate"  # a second connection to the same peer
    BUSY = "busy"  # we hold max_sessions already


class PeerSession:
    """The gossip protocol over one connection, in either role (``initiator``: we dialed)."""

    __slots__ = ("node", "peer_key", "initiator", "state", "close_reason", "close_kind", "misbehaved", "score", "listen",
                 "context", "_out", "_announce", "_queue", "_queued", "_outstanding", "_tokens", "_serve_tokens",
                 "_tokens_at", "_sync", "_sync_deadline", "_answer", "_answer_deadline", "_hello_deadline", "_pex_at")

    def __init__(self, node: GossipNode, peer_key: bytes, initiator: bool, now: float) -> None:
        p = node.params
        self.node, self.peer_key, self.initiator = node, peer_key, initiator
        self.state = SessionState.HELLO
        self.close_reason: str | None = None
        self.close_kind: CloseKind | None = None
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
            self._end(f"peer said bye: {message.reason}", now, CloseKind.PEER_BYE, send_bye=False)
        self._pump(now)

    def tick(self, now: float) -> None:
        """Act on timers: Hello and Want timeouts, stalled reconciliations, peer exchange, refills."""
        if self.closed:
            return
        if self.state is SessionState.HELLO:
            if now >= self._hello_deadline:
                self._end("no Hello in time", now, CloseKind.TIMEOUT)
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
            step = MAX_ANNOUNCE_KEYS
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
        self._end(reason, now, CloseKind.LOCAL)

    def connection_lost(self, now: float) -> None:
        """The transport broke (or ended) under the session: no Bye can be sent."""
        self._end("connection lost", now, CloseKind.CONNECTION_LOST, send_bye=False)

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

    def _end(self, reason: str, now: float, kind: CloseKind, send_bye: bool = True) -> None:
        if self.closed:
            return
        if send_bye:
            self._send(Bye(reason.encode()[:MAX_REASON_BYTES].decode("utf-8", "ignore")))
        self.state = SessionState.CLOSED
        self.close_reason = reason
        self.close_kind = kind
        self._sync = self._answer = None
        self.node._closed(self, now)

    def _misbehaved(self, reason: str, now: float) -> None:
        self.misbehaved = True
        self._end(f"misbehaved: {reason}", now, CloseKind.PEER_MISBEHAVED)

    def _on_hello(self, hello: Hello, now: float) -> None:
        if self.state is not SessionState.HELLO:
            self._misbehaved("second Hello", now)
        elif hello.version != GOSSIP_VERSION:
            self._end(f"gossip version {hello.version} is not spoken here (this node speaks {GOSSIP_VERSION})", now,
                      CloseKind.INCOMPATIBLE)
        elif hello.network_hash != self.node.network_hash:
            self._end("wrong network", now, CloseKind.INCOMPATIBLE)
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
            if pending is None:
                continue  # held by now, or no longer worth fetching
            owner = pending[0]
            if owner is not None and key in owner._outstanding:
                continue  # being fetched from another peer (we stay a fallback)
            pending[0] = self
            self._outstanding[key] = deadline
            self._tokens -= 1
            batch.append(key)
        for i in range(0, len(batch), MAX_WANT_KEYS):
            self._send(Want(tuple(batch[i : i + MAX_WANT_KEYS])))

    def _serve(self, keys: tuple[bytes, ...], now: float) -> None:
        """Answer a Want: every key either in Records or named as missing, revocations first.

        Keys beyond our serving rate are answered as missing rather than penalised: the asker then
        tries another peer, and a later reconciliation brings the key back if no one had it."""
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
        except ReconcileVersionError as error:  # an old or newer peer, not a malicious one
            self._end(f"reconcile: {error}", now, CloseKind.INCOMPATIBLE)
            return
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
