"""Records a node takes from its peers: validated, then stored and relayed, or refused (sans-I/O).

:class:`RecordIntake` is the part of a :class:`~commons.core.gossip.node.GossipNode` that takes in
what sessions received: each body verified (canonical form, signature, network, limits), then
judged by the death certificates and the local policy (a revocation skips both), handed to the
node to hold, reported (``Accepted`` / ``Refused``) and announced to ``fanout`` peers -- a
revocation to every peer, and a record to each peer whose push to us it was waited in. It owns the
hooks that judge and its counters; it asks the node to hold a record and to report an event
(:class:`IntakeHost`), and the node's fetch book to stop or hand on fetching a key
(:class:`KeyBook`), so a test builds one on fakes of each.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from commons.core import records as rec
from commons.core.gossip.events import Accepted, Event, Refused
from commons.core.gossip.state import SessionState
from commons.core.reconcile import make_item
from commons.core.trust import REFUSED_AS_DEAD

if TYPE_CHECKING:
    from commons.core.gossip.peers import GossipParams
    from commons.core.reconcile import KeySet

# Problems a relaying peer could not have caused on purpose get the minor penalty.
_MINOR_PROBLEMS = {rec.Problem.FUTURE}

Admit = Callable[[rec.SignedRecord], "str | None"]  # a reason to refuse the record, or None
Verify = Callable[..., rec.SignedRecord]  # records.verify, or one that measures it


class IntakeSession(Protocol):
    """What intake asks of a session (``PeerSession`` is one)."""

    peer_key: bytes
    state: SessionState
    contributed: bool  # set once its peer delivered a record we accepted

    @property
    def closed(self) -> bool: ...
    @property
    def awaiting_pushes(self) -> bool: ...
    def may_push(self, item: bytes) -> bool: ...
    def penalise(self, amount: float, reason: str, now: float) -> None: ...
    def enqueue_announce(self, key: bytes) -> None: ...


class IntakeHost(Protocol):
    """What intake asks of its node."""

    def hold(self, signed: rec.SignedRecord) -> None: ...  # keep it and serve it from now on
    def report(self, event: Event) -> None: ...


class KeyBook(Protocol):
    """What intake asks of the node's fetch book (``FetchBook`` is one)."""

    def forget(self, key: bytes) -> tuple[IntakeSession, ...]: ...  # it arrived; who had announced it
    def release(self, key: bytes, session: IntakeSession, now: float, resync: bool = True) -> bool: ...


class RecordIntake:
    """Validating, storing and relaying the records a node receives and makes."""

    __slots__ = ("_host", "_book", "_network", "_keyset", "_sessions", "_params", "_rng", "_free_rider",
                 "_verify", "_admit", "_is_dead", "bodies_received", "duplicate_bodies", "invalid_received",
                 "refused")

    def __init__(self, host: IntakeHost, book: KeyBook, network: bytes, keyset: KeySet,
                 sessions: Mapping[bytes, IntakeSession], params: GossipParams, rng: random.Random, *,
                 verify: Verify = rec.verify, admit: Admit | None = None,
                 is_dead: Callable[[rec.SignedRecord], bool] | None = None, free_rider: bool = False) -> None:
        """``keyset`` and ``sessions``: the node's (read here; a refusal is marked withheld in the
        key set); ``free_rider``: announce nothing (``GossipNode``'s)."""
        self._host, self._book, self._network, self._keyset = host, book, network, keyset
        self._sessions, self._params, self._rng, self._free_rider = sessions, params, rng, free_rider
        self._verify, self._admit, self._is_dead = verify, admit, is_dead
        self.bodies_received = 0  # statistics: every body taken from a session
        self.duplicate_bodies = 0  # of those, records already held
        self.invalid_received = 0  # of those, records that failed verification
        self.refused = 0  # of those, valid records refused by a death certificate or the policy

    def take(self, bodies: list[tuple[bytes, bytes]], session: IntakeSession, now: float,
             keys: list[bytes | None] | None = None) -> None:
        """Validate, then store and relay, or remember a refusal; penalise invalid ones.

        ``keys``: each body's reconciliation key as the session read it (``records.received_key``),
        so that no body is hashed twice; computed here when not given."""
        p, book, keyset = self._params, self._book, self._keyset
        accepted: list[rec.SignedRecord] = []
        relay: list[tuple[bytes, tuple[IntakeSession, ...]]] = []
        today = rec.day_of(now)
        for n, (body, sig) in enumerate(bodies):
            if session.closed:  # cut off mid-message: the rest is not trusted, ask others for it
                for m in range(n, len(bodies)):
                    rest = keys[m] if keys is not None else rec.received_key(bodies[m][0])
                    if rest is not None:
                        book.release(rest, session, now)
                break
            self.bodies_received += 1
            key = keys[n] if keys is not None else rec.received_key(body)
            if key is not None and key in keyset:
                self.duplicate_bodies += 1
                book.forget(key)  # held since it was asked for (added locally meanwhile)
                continue
            try:
                signed = self._verify(body, sig, network=self._network, today=today,
                                      body_id=None if key is None else key[1:])
            except rec.InvalidRecord as error:
                self.invalid_received += 1
                if key is not None:
                    book.release(key, session, now)
                minor = error.problem in _MINOR_PROBLEMS
                session.penalise(p.penalty_minor if minor else p.penalty_invalid, f"invalid record: {error}", now)
                continue
            key = signed.key
            sources = book.forget(key)
            reason = None
            if signed.type is not rec.RecordType.REVOCATION:  # revocations are always kept and relayed
                if self._is_dead is not None and self._is_dead(signed):
                    reason = REFUSED_AS_DEAD
                elif self._admit is not None:
                    reason = self._admit(signed)
            if reason is not None:
                keyset.add(key, withheld=True, time=signed.record.created)
                self.refused += 1
                self._host.report(Refused(key, reason, session.peer_key))
                continue
            self._host.hold(signed)
            accepted.append(signed)
            session.contributed = True
            relay.append((key, (session, *sources)))
        if relay:
            self.announce(relay)
        if accepted:
            self._host.report(Accepted(tuple(accepted), session.peer_key))

    def announce(self, batch: list[tuple[bytes, Iterable[IntakeSession]]]) -> None:
        """Announce keys, each to ``fanout`` open sessions other than those given with it (the
        ones that announced it to us), and a revocation to every open session: it is flooded,
        since what it takes down should not live a round longer than it must.

        One shuffled order of the sessions serves the whole batch, so keys that arrived together
        leave together, to the same peers, in one Announce -- a revocation received with the
        lesson it revokes is never announced to a peer without it, and so never falls behind it.
        """
        if self._free_rider:
            return
        sessions = [s for s in self._sessions.values() if s.state is SessionState.OPEN]
        if len(sessions) > self._params.fanout:
            self._rng.shuffle(sessions)
        # A peer pushing us records hears of each one that arrives from elsewhere inside a range
        # it announced it pushes, beyond the fanout: it names instead of pushing what it hears we
        # hold (33 bytes instead of a body twice). Only those: announcing every arrival to every
        # peer that may push, beyond the fanout, changed which paths records took and made the
        # 10,000-node spread's last node a round later (13 rounds to 100% at seed 1, not 12).
        pushers = [s for s in sessions if s.awaiting_pushes]
        for key, skip in batch:
            skip = set(skip)
            limit = len(sessions) if key[0] == rec.RecordType.REVOCATION.tag else self._params.fanout
            sent = 0
            for session in sessions:
                if session not in skip:
                    session.enqueue_announce(key)
                    skip.add(session)
                    sent += 1
                    if sent == limit:
                        break
            if pushers:
                item = make_item(self._keyset.time_of(key) or 0, key)
                for session in pushers:
                    if session not in skip and session.may_push(item):
                        session.enqueue_announce(key)
