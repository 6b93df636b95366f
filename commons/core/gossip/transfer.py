"""Records crossing one gossip connection: Wants served, pushes sent, Records taken (sans-I/O).

The half of :class:`~commons.core.gossip.session.PeerSession` that moves record bodies, as a mixin
of it (the state is the session's, in its slots): answering the peer's Wants at the serving rate,
pushing what a reconciliation said the peer lacks, cutting Records to the frame and record limits,
and taking the peer's Records -- asked for, pushed into an announced place, duplicate, or
unsolicited -- against the receiving rate. The node validates and stores what is taken
(``SessionHost.take_records``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from commons.core import records as rec
from commons.core.gossip.messages import MAX_RECORDS, MAX_WANT_KEYS, Records
from commons.core.reconcile import make_item

if TYPE_CHECKING:
    from commons.core.gossip.session import SessionHost
    from commons.core.gossip.key_queue import KeyQueue
    from commons.core.reconcile import PushWindow
    from commons.core.records import SignedRecord


class RecordTransfer:
    """Serving and taking records over one session (mixed into PeerSession, which holds the state)."""

    __slots__ = ()

    node: SessionHost
    closed: bool
    _push: KeyQueue
    _pushes: PushWindow
    _outstanding: dict[bytes, float]
    _tokens: float
    _serve_tokens: float
    _served: int
    _peer_holds: set[bytes]
    _pushes_deadline: float

    if TYPE_CHECKING:  # the session's own, which these methods use
        def _refill(self, now: float) -> None: ...
        def _send(self, message: object) -> None: ...
        def penalise(self, amount: float, reason: str, now: float) -> None: ...

    def _serve(self, keys: tuple[bytes, ...], now: float) -> None:
        """Answer a Want: every key either in Records or named as missing, revocations first.

        Keys beyond our serving rate are answered as missing rather than penalised: the asker then
        tries another peer, and a later reconciliation brings the key back if no one had it."""
        self._refill(now)
        node = self.node
        found, missing = [], []
        for key in sorted(set(keys)):
            signed = node.serve(key)
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
            signed = None if key in holds else self.node.serve(key)
            if signed is None:
                # Announced, but not ours to send now (the peer asks elsewhere), or the peer said
                # it holds it meanwhile (from another peer): named, so it frees the place it kept.
                missing.append(key)
            else:
                found.append(self._hand_out(signed))
        if not self._push:
            holds.clear()
        self._send_records(found, missing)

    def _hand_out(self, signed: SignedRecord) -> tuple[bytes, bytes]:
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
        p = self.node.params
        return 1 + min(p.max_outstanding, p.records_burst // 2)

    def _send_records(self, found: list[tuple[bytes, bytes]], missing: list[bytes]) -> None:
        """Records messages that fit a frame and the message's record limit each (a push may send
        many more than a window of Wants); the missing keys go in the last, as many as a message takes."""
        limit = self.node.params.max_frame_bytes - 64
        while len(missing) > MAX_WANT_KEYS:
            self._send(Records((), tuple(missing[:MAX_WANT_KEYS])))
            missing = missing[MAX_WANT_KEYS:]
        batch: list[tuple[bytes, bytes]] = []
        size = 34 * len(missing)
        for body, sig in found:
            if batch and (size + len(body) + len(sig) + 8 > limit or len(batch) == MAX_RECORDS):
                self._send(Records(tuple(batch)))
                batch, size = [], 34 * len(missing)
            batch.append((body, sig))
            size += len(body) + len(sig) + 8
        if batch or missing:
            self._send(Records(tuple(batch), tuple(missing)))

    def _on_records(self, message: Records, now: float) -> None:
        node = self.node
        self._refill(now)
        awaited = self._pushes.expected
        taken: list[tuple[bytes, bytes]] = []
        taken_keys: list[bytes | None] = []  # handed on with the bodies: each is hashed once
        deferred: list[bytes] = []  # announced pushes beyond our rate: fetched later, by key
        for body, sig in message.records:
            key = rec.received_key(body)
            if key is not None and self._outstanding.pop(key, None) is not None:
                pass  # asked for: paid for when we asked
            elif key is not None and key not in node.keyset and self._pushed(key, body):
                # Announced by a reconciliation: paid for as a Want would have been. Beyond our
                # rate it is not refused as the peer's fault (it pushes at its own serving rate):
                # its key is queued and fetched at ours, so a push never outruns the rate limit.
                if self._tokens >= 1:
                    self._tokens -= 1
                else:
                    deferred.append(key)
                    continue
            elif key is not None and key in node.keyset:
                # A copy of a record we hold (or refused): the spec drops duplicates, and an honest
                # peer sends them whenever two of its Wants race, or its push crosses our word that
                # we hold it, so they cost neither tokens nor score (a push still uses its place).
                self._pushed(key, body)
            elif self._tokens >= 1:  # unsolicited (or answered after we gave up): rate-limited
                self._tokens -= 1
            else:
                self.penalise(node.params.penalty_minor, "records beyond the rate limit", now)
                if self.closed:
                    return
                continue
            taken.append((body, sig))
            taken_keys.append(key)
        node.take_records(taken, self, now, taken_keys)
        if deferred and not self.closed:
            node.learn(deferred, self, count=False)
        for key in message.missing:
            if self._outstanding.pop(key, None) is not None:
                node.release(key, self, now)
            elif key not in node.keyset and self._pushes.forgo():
                # An announced push the peer will not make: as if it had answered a Want of ours
                # as missing (another peer that announced the key is asked, or one reconciled with).
                node.learn((key,), self, count=False)
                node.release(key, self, now)
            elif key in node.keyset and self._pushes.expected:
                self._pushes.forgo()  # one we said we hold (it came from another peer): not waited for
        if awaited and not self._pushes.expected and not self.closed:
            node.pushes_settled(now)
        elif self._pushes.expected < awaited:
            # A push in progress is waited for from its last record on, not from its Diff: a
            # long one (a catch-up at the serving rate, or a receiver that stopped reading while
            # its store caught up) must not be dropped half way and its records taken as unasked.
            self._pushes_deadline = now + node.params.reconcile_timeout

    def _pushed(self, key: bytes, body: bytes) -> bool:
        """Whether a record we did not ask for takes a place the peer announced for a push. The day
        is read unchecked: a body that lies about it fails verification, which penalises it."""
        if not self._pushes.expected:
            return False
        day = rec.peek_created(body)
        return day is not None and self._pushes.admit(make_item(day, key))
