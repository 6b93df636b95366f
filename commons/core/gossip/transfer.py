"""Records crossing one gossip connection: Wants asked and served, pushes sent and awaited,
Records taken (sans-I/O).

:class:`RecordTransfer` is the part of a :class:`~commons.core.gossip.session.PeerSession` that
moves record bodies, and owns all the state that takes: the two token buckets (records we take
from the peer, records we serve it), the keys to ask the peer for (a queue, a spill behind it, and
those held back while another peer's push may bring them), the keys asked and not yet answered,
the keys a reconciliation said to push the peer, and the places it said the peer pushes us
(``PushWindow``). It knows nothing of the node or of the session's other parts: what it needs of
them it asks its :class:`TransferHost` (the session), and a test builds one alone on a fake host.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from commons.core import records as rec
from commons.core.gossip.key_queue import KeyQueue
from commons.core.gossip.messages import MAX_RECORDS, MAX_WANT_KEYS, Message, Records, Want
from commons.core.reconcile import KEY_SIZE, PushWindow, make_item

if TYPE_CHECKING:
    from commons.core.gossip.peers import GossipParams
    from commons.core.reconcile import KeySet

SPILL_KEYS = 1 << 20  # keys a reconciliation may leave waiting beyond the want queue (33 MB at most)


class Served(Protocol):
    """What a peer is sent for a key: a record's body and signature (as stored, or decoded)."""

    body: bytes
    signature: bytes


class TransferHost(Protocol):
    """What the transfer asks of its session (which asks its node on the transfer's behalf)."""

    @property
    def closed(self) -> bool: ...
    @property
    def syncing(self) -> bool: ...  # a reconciliation of ours is running
    def send(self, message: Message) -> None: ...
    def penalise(self, amount: float, reason: str, now: float) -> None: ...
    def start_sync(self, now: float) -> bool: ...
    def record_for(self, key: bytes) -> Served | None: ...  # what to send the peer; None: missing
    def take_records(self, bodies: list[tuple[bytes, bytes]], now: float, keys: list[bytes | None]) -> None: ...
    def fetch(self, keys: Iterable[bytes]) -> None: ...  # the peer holds these (named, not announced)
    def claim(self, key: bytes) -> bool: ...  # may we ask the peer for key now?
    def release(self, key: bytes, now: float) -> bool: ...  # the peer will not deliver key
    def push_awaited(self) -> bool: ...  # does any peer's announced push remain to arrive?
    def pushed_elsewhere(self, item: bytes) -> bool: ...  # may a record at item still come as a push?
    def pushes_settled(self, now: float) -> None: ...  # this peer's announced push is over


class RecordTransfer:
    """Serving and taking records over one session: each instance is one session's."""

    __slots__ = ("_host", "_params", "_keyset", "_spill_keys", "_tokens", "_serve_tokens", "_tokens_at",
                 "_queue", "_queued", "_outstanding", "_overflow", "_spill", "_held_back", "_served",
                 "_push", "_peer_holds", "_pushes", "_pushes_deadline")

    def __init__(self, host: TransferHost, params: GossipParams, keyset: KeySet, now: float,
                 spill_keys: int = SPILL_KEYS) -> None:
        """``keyset``: the node's, which says which keys it holds (read only); ``spill_keys``: how
        many keys a reconciliation may leave waiting beyond the queue (and so how many may be
        pushed, held back, or awaited as pushes)."""
        self._host, self._params, self._keyset, self._spill_keys = host, params, keyset, spill_keys
        self._tokens = self._serve_tokens = float(params.records_burst)
        self._tokens_at = now
        self._queue: list[bytes] = []  # heap of keys to Want from this peer (revocations first)
        self._queued: set[bytes] = set()
        self._outstanding: dict[bytes, float] = {}  # key -> when we give up waiting for it
        self._overflow = False  # the queue was full and dropped keys: reconcile again once it drains
        # Keys a reconciliation named beyond the queue, 33 bytes each in one buffer (no object per
        # key), queued as the queue drains: a node far behind catches up with one reconciliation
        # instead of one per queueful, each over all that is still missing (quadratic: issue #18).
        self._spill = KeyQueue(KEY_SIZE)
        # Keys this peer's reconciliation named that lie where another peer's push may still
        # bring them: fetched only once no push is awaited (those that came by then are skipped),
        # so a record pushed by one peer is not also asked of another.
        self._held_back = KeyQueue(KEY_SIZE)
        self._served = 0  # records sent to this peer since the node last asked (take_served)
        # Reconciliation pushes (protocol/reconcile.md, Diff): keys whose records we send unasked,
        # paced by the serving rate, 33 bytes each end to end in one buffer, first out first,
        # bounded as the peer's window for them is; and the places the peer announced for records
        # it pushes us, no more of them than keys we would have queued or spilled to ask it for (a
        # node far behind is caught up by one reconciliation either way).
        self._push = KeyQueue(KEY_SIZE)
        # Keys the peer announced while we had records to push it: it holds them, so they are not
        # pushed (the receiver announces what arrives to every peer that may push it the same).
        self._peer_holds: set[bytes] = set()
        self._pushes = self._new_window()
        self._pushes_deadline = 0.0  # pushes not here by then are not waited for (found again later)

    def _new_window(self) -> PushWindow:
        return PushWindow(self._params.max_queued_wants + self._spill_keys)

    # -- what the session asks of it ---------------------------------------------------------------

    @property
    def awaiting_pushes(self) -> bool:
        """Whether records the peer announced it pushes us have not all arrived."""
        return self._pushes.expected > 0

    def may_push(self, item: bytes) -> bool:
        """Whether a record at ``item`` may still arrive from the peer as a push it announced."""
        return self._pushes.covers(item)

    def asked(self, key: bytes) -> bool:
        """Whether we asked the peer for ``key`` and are waiting for the answer."""
        return key in self._outstanding

    @property
    def fetching(self) -> bool:
        """Waiting for records asked of the peer."""
        return bool(self._outstanding)

    @property
    def pending(self) -> int:
        """Records still to come from this peer: asked, queued, waiting in the spill or held back,
        or announced as pushed by a reconciliation."""
        return (len(self._outstanding) + len(self._queued) + len(self._spill) + len(self._held_back)
                + self._pushes.expected)

    def take_served(self) -> int:
        """Records sent to this peer since the last call."""
        served, self._served = self._served, 0
        return served

    def queue_want(self, key: bytes, spill: bool = False) -> bool:
        """Queue a key to ask this peer for; False if the queue is full (the key is not kept,
        unless ``spill``: a key its reconciliation named waits in the spill, up to spill_keys)."""
        if key in self._queued:
            return True
        if len(self._queued) >= self._params.max_queued_wants:
            if spill and len(self._spill) < self._spill_keys:
                self._spill.append(key)
            else:
                self._overflow = True
            return False
        self._queued.add(key)
        heapq.heappush(self._queue, key)
        return True

    def fetch_named(self, keys: list[bytes], items: list[bytes]) -> None:
        """Fetch what a reconciliation named that we lack (``items``: their places, in order), but
        not what a push of another peer (or of this one, answering our other reconciliation) may
        still bring: that waits until no push is awaited (protocol/reconcile.md, When to ask)."""
        host = self._host
        if not host.push_awaited():
            host.fetch(keys)
            return
        fetch = []
        for key, item in zip(keys, items, strict=True):
            if not host.pushed_elsewhere(item):
                fetch.append(key)
            elif len(self._held_back) < self._spill_keys:
                self._held_back.append(key)
        host.fetch(fetch)

    def expect(self, expectations: list, now: float) -> None:
        """A reconciliation told us the peer pushes records into these places (a step's
        ``expect``: ``commons.core.reconcile``'s expectations, each a range and a count)."""
        self._pushes.add(expectations)
        self._pushes_deadline = now + self._params.reconcile_timeout

    def push(self, keys: list[bytes]) -> None:
        """A reconciliation told the peer to expect these records: sent after the reply that
        announced them, in item order, after any still to send, as the serving rate allows."""
        room = self._params.max_queued_wants + self._spill_keys - len(self._push)
        self._push.extend(keys[:max(room, 0)])

    def peer_holds(self, keys: Iterable[bytes]) -> None:
        """The peer announced these: while records wait to be pushed, the ones it holds are not."""
        if self._push and len(self._peer_holds) < len(self._push):
            self._peer_holds.update(keys)

    def pump(self, now: float) -> None:
        """Turn queued keys into Wants while the peer has room for requests and we have tokens,
        and push what the serving rate allows (the session is open)."""
        host, p = self._host, self._params
        if not self._queue and self._spill:  # a queueful more of what the reconciliation named
            host.fetch(self._spill.take(p.max_queued_wants))
        if self._held_back and not host.push_awaited():
            host.fetch(self._held_back.take(len(self._held_back)))
        if self._push:
            self._send_pushes(now)
        if not self._queue:
            if self._overflow and not self._outstanding and not host.syncing:
                # Keys this peer has were dropped for want of room: a reconciliation names them
                # again, so a node far behind catches up at the rate limit with a queue kept small.
                self._overflow = False
                host.start_sync(now)
            return
        self._refill(now)
        batch: list[bytes] = []
        deadline = now + p.want_timeout
        while self._queue and len(self._outstanding) < p.max_outstanding and self._tokens >= 1:
            key = heapq.heappop(self._queue)
            self._queued.discard(key)
            if not host.claim(key):
                continue  # held by now, no longer worth fetching, or asked of another peer
            self._outstanding[key] = deadline
            self._tokens -= 1
            batch.append(key)
        for i in range(0, len(batch), MAX_WANT_KEYS):
            host.send(Want(tuple(batch[i : i + MAX_WANT_KEYS])))

    def expire_wants(self, now: float) -> None:
        """Keys the peer did not answer in time: ask another peer that announced them."""
        if not self._outstanding:
            return
        late = [k for k, deadline in self._outstanding.items() if deadline <= now]
        for key in late:
            del self._outstanding[key]
            self._host.release(key, now)

    def expire_pushes(self, now: float) -> None:
        """An announced push not finished in time is not waited for (a later reconciliation
        finds what it did not bring)."""
        if self._pushes.expected and now >= self._pushes_deadline:
            self._pushes = self._new_window()
            self._host.pushes_settled(now)

    def next_deadline(self) -> float:
        """When :meth:`pump`, :meth:`expire_wants` or :meth:`expire_pushes` has work next (inf: none).

        Asked of every session each time the driver sleeps: no list, no call it can spare."""
        deadline = math.inf
        if self._outstanding:
            deadline = min(self._outstanding.values())
        if self._pushes.expected and self._pushes_deadline < deadline:
            deadline = self._pushes_deadline
        if self._queue and self._tokens < 1:
            deadline = min(deadline, self._tokens_at + (1 - self._tokens) / self._params.records_per_second)
        if self._push:
            spare = self._push_spare()
            if self._serve_tokens < spare:
                deadline = min(deadline, self._tokens_at + (spare - self._serve_tokens) / self._params.records_per_second)
        return deadline

    def stop_pushes(self) -> bool:
        """The session ended: no push is awaited any more; returns whether one was."""
        awaited, self._pushes = self._pushes.expected, PushWindow(0)
        return awaited > 0

    def drop_wants(self) -> list[bytes]:
        """Forget every key asked of this peer or waiting to be (the session ended); returns them."""
        keys = [*self._outstanding, *self._queue]
        self._outstanding.clear()
        self._queue.clear()
        self._queued.clear()
        return keys

    def drop_spill(self) -> bool:
        """Forget the keys waiting in the spill or held back (the session ended); returns whether
        there were any: this peer alone named them, so the node reconciles with another for them."""
        spilled = bool(self._spill or self._held_back)
        self._spill.clear()
        self._held_back.clear()
        return spilled

    # -- serving -----------------------------------------------------------------------------------

    def serve(self, keys: tuple[bytes, ...], now: float) -> None:
        """Answer a Want: every key either in Records or named as missing, revocations first.

        Keys beyond our serving rate are answered as missing rather than penalised: the asker then
        tries another peer, and a later reconciliation brings the key back if no one had it."""
        self._refill(now)
        host = self._host
        found, missing = [], []
        for key in sorted(set(keys)):
            signed = host.record_for(key)
            if signed is None or self._serve_tokens < 1:
                missing.append(key)
            else:
                found.append(self._hand_out(signed))
                if self._push and len(self._peer_holds) < len(self._push):
                    self._peer_holds.add(key)  # it has it now: not pushed again if still to push
        self._send_records(found, missing)

    def _send_pushes(self, now: float) -> None:
        """Push what reconciliation said the peer lacks and expects, at the rate Wants are served.

        What the rate leaves waits for the next refill; what the node no longer holds is skipped
        (the peer's next reconciliation settles it, as it settles a push lost with the session)."""
        self._refill(now)
        found, missing = [], []
        spare, holds = self._push_spare(), self._peer_holds
        while self._push and self._serve_tokens >= spare:
            key = self._push.pop()
            signed = None if key in holds else self._host.record_for(key)
            if signed is None:
                # Announced, but not ours to send now (the peer asks elsewhere), or the peer said
                # it holds it meanwhile (from another peer): named, so it frees the place it kept.
                missing.append(key)
            else:
                found.append(self._hand_out(signed))
        if not self._push:
            holds.clear()
        self._send_records(found, missing)

    def _hand_out(self, signed: Served) -> tuple[bytes, bytes]:
        """A record going to the peer, asked for or pushed: it costs one serving token and counts
        as served (what keeps anti-entropy off a peer in a catch-up with us)."""
        self._serve_tokens -= 1
        self._served += 1
        return signed.body, signed.signature

    def _push_spare(self) -> float:
        """The serving tokens a push must leave for the peer's Wants (it keeps at most
        max_outstanding in flight, by default as ours; at most half the bucket, so pushes still
        go out): a Want answered "missing" for want of tokens is lost until the next
        reconciliation, a push that waits only waits."""
        p = self._params
        return 1 + min(p.max_outstanding, p.records_burst // 2)

    def _send_records(self, found: list[tuple[bytes, bytes]], missing: list[bytes]) -> None:
        """Records messages that fit a frame and the message's record limit each (a push may send
        many more than a window of Wants); the missing keys go in the last, as many as a message takes."""
        send = self._host.send
        limit = self._params.max_frame_bytes - 64
        while len(missing) > MAX_WANT_KEYS:
            send(Records((), tuple(missing[:MAX_WANT_KEYS])))
            missing = missing[MAX_WANT_KEYS:]
        batch: list[tuple[bytes, bytes]] = []
        size = 34 * len(missing)
        for body, sig in found:
            if batch and (size + len(body) + len(sig) + 8 > limit or len(batch) == MAX_RECORDS):
                send(Records(tuple(batch)))
                batch, size = [], 34 * len(missing)
            batch.append((body, sig))
            size += len(body) + len(sig) + 8
        if batch or missing:
            send(Records(tuple(batch), tuple(missing)))

    # -- taking ------------------------------------------------------------------------------------

    def take(self, message: Records, now: float) -> None:
        """Take the peer's Records: asked for, pushed into an announced place, duplicate, or
        unsolicited (against the receiving rate); the host validates and stores what is taken."""
        host, keyset = self._host, self._keyset
        self._refill(now)
        awaited = self._pushes.expected
        taken: list[tuple[bytes, bytes]] = []
        taken_keys: list[bytes | None] = []  # handed on with the bodies: each is hashed once
        deferred: list[bytes] = []  # announced pushes beyond our rate: fetched later, by key
        for body, sig in message.records:
            key = rec.received_key(body)
            if key is not None and self._outstanding.pop(key, None) is not None:
                pass  # asked for: paid for when we asked
            elif key is not None and key not in keyset and self._pushed(key, body):
                # Announced by a reconciliation: paid for as a Want would have been. Beyond our
                # rate it is not refused as the peer's fault (it pushes at its own serving rate):
                # its key is queued and fetched at ours, so a push never outruns the rate limit.
                if self._tokens >= 1:
                    self._tokens -= 1
                else:
                    deferred.append(key)
                    continue
            elif key is not None and key in keyset:
                # A copy of a record we hold (or refused): the spec drops duplicates, and an honest
                # peer sends them whenever two of its Wants race, or its push crosses our word that
                # we hold it, so they cost neither tokens nor score (a push still uses its place).
                self._pushed(key, body)
            elif self._tokens >= 1:  # unsolicited (or answered after we gave up): rate-limited
                self._tokens -= 1
            else:
                host.penalise(self._params.penalty_minor, "records beyond the rate limit", now)
                if host.closed:
                    return
                continue
            taken.append((body, sig))
            taken_keys.append(key)
        host.take_records(taken, now, taken_keys)
        if deferred and not host.closed:
            host.fetch(deferred)
        for key in message.missing:
            if self._outstanding.pop(key, None) is not None:
                host.release(key, now)
            elif key not in keyset and self._pushes.forgo():
                # An announced push the peer will not make: as if it had answered a Want of ours
                # as missing (another peer that announced the key is asked, or one reconciled with).
                host.fetch((key,))
                host.release(key, now)
            elif key in keyset and self._pushes.expected:
                self._pushes.forgo()  # one we said we hold (it came from another peer): not waited for
        if awaited and not self._pushes.expected and not host.closed:
            host.pushes_settled(now)
        elif self._pushes.expected < awaited:
            # A push in progress is waited for from its last record on, not from its Diff: a
            # long one (a catch-up at the serving rate, or a receiver that stopped reading while
            # its store caught up) must not be dropped half way and its records taken as unasked.
            self._pushes_deadline = now + self._params.reconcile_timeout

    def _pushed(self, key: bytes, body: bytes) -> bool:
        """Whether a record we did not ask for takes a place the peer announced for a push. The day
        is read unchecked: a body that lies about it fails verification, which penalises it."""
        if not self._pushes.expected:
            return False
        day = rec.peek_created(body)
        return day is not None and self._pushes.admit(make_item(day, key))

    def _refill(self, now: float) -> None:
        p = self._params
        elapsed = max(0.0, now - self._tokens_at)
        self._tokens = min(p.records_burst, self._tokens + elapsed * p.records_per_second)
        self._serve_tokens = min(p.records_burst, self._serve_tokens + elapsed * p.records_per_second)
        self._tokens_at = now
