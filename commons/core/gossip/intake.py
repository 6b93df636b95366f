"""Records a node takes from its peers: validated, then stored and relayed, or refused (sans-I/O).

The half of :class:`~commons.core.gossip.node.GossipNode` that takes in what sessions received, as a
mixin of it (the state is the node's): each body verified (canonical form, signature, network,
limits), then judged by the death certificates and the local policy (a revocation skips both),
stored, reported (``Accepted`` / ``Refused``) and announced to ``fanout`` peers -- a revocation to
every peer, and a record to each peer whose push to us it was waited in.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from commons.core import records as rec
from commons.core.gossip.events import COUNTER_INDEX, Accepted, Event, Refused
from commons.core.gossip.session import PeerSession, SessionState
from commons.core.reconcile import make_item
from commons.core.trust import REFUSED_AS_DEAD

if TYPE_CHECKING:
    from commons.core.gossip.peers import GossipParams
    from commons.core.reconcile import KeySet

# Problems a relaying peer could not have caused on purpose get the minor penalty.
_MINOR_PROBLEMS = {rec.Problem.FUTURE}


class RecordIntake:
    """Validating, storing and relaying received records (mixed into GossipNode, which holds the state)."""

    params: GossipParams
    network: bytes
    keyset: KeySet
    rng: random.Random
    free_rider: bool
    _count: list[int]
    _events: list[Event]
    _sessions: dict[bytes, PeerSession]
    _store: dict[bytes, rec.SignedRecord]
    _verify: Callable[..., rec.SignedRecord]
    _admit: Callable[[rec.SignedRecord], str | None] | None
    _is_dead: Callable[[rec.SignedRecord], bool] | None

    if TYPE_CHECKING:  # the node's own (gossip_fetch), which these methods use
        def release(self, key: bytes, session: PeerSession, now: float, resync: bool = True) -> bool: ...
        def _forget(self, key: bytes) -> tuple[PeerSession, ...]: ...

    def take_records(self, bodies: list[tuple[bytes, bytes]], session: PeerSession, now: float,
                     keys: list[bytes | None] | None = None) -> None:
        """Validate, then store and relay, or remember a refusal; penalise invalid ones.

        ``keys``: each body's reconciliation key as the session read it (``records.received_key``),
        so that no body is hashed twice; computed here when not given."""
        p, c = self.params, self._count
        accepted: list[rec.SignedRecord] = []
        relay: list[tuple[bytes, tuple[PeerSession, ...]]] = []
        today = rec.day_of(now)
        for n, (body, sig) in enumerate(bodies):
            if session.closed:  # cut off mid-message: the rest is not trusted, ask others for it
                for m in range(n, len(bodies)):
                    rest = keys[m] if keys is not None else rec.received_key(bodies[m][0])
                    if rest is not None:
                        self.release(rest, session, now)
                break
            c[COUNTER_INDEX["bodies_received"]] += 1
            key = keys[n] if keys is not None else rec.received_key(body)
            if key is not None and key in self.keyset:
                c[COUNTER_INDEX["duplicate_bodies"]] += 1
                self._forget(key)  # held since it was asked for (added locally meanwhile)
                continue
            try:
                signed = self._verify(body, sig, network=self.network, today=today,
                                      body_id=None if key is None else key[1:])
            except rec.InvalidRecord as error:
                c[COUNTER_INDEX["invalid_received"]] += 1
                if key is not None:
                    self.release(key, session, now)
                minor = error.problem in _MINOR_PROBLEMS
                session.penalise(p.penalty_minor if minor else p.penalty_invalid, f"invalid record: {error}", now)
                continue
            key = signed.key
            sources = self._forget(key)
            reason = None
            if signed.type is not rec.RecordType.REVOCATION:  # revocations are always kept and relayed
                if self._is_dead is not None and self._is_dead(signed):
                    reason = REFUSED_AS_DEAD
                elif self._admit is not None:
                    reason = self._admit(signed)
            if reason is not None:
                self.keyset.add(key, withheld=True, time=signed.record.created)
                c[COUNTER_INDEX["refused"]] += 1
                self._events.append(Refused(key, reason, session.peer_key))
                continue
            self._store[key] = signed
            self.keyset.add(key, time=signed.record.created)
            accepted.append(signed)
            session.contributed = True
            relay.append((key, (session, *sources)))
        if relay:
            self._announce(relay)
        if accepted:
            self._events.append(Accepted(tuple(accepted), session.peer_key))

    def _announce(self, batch: list[tuple[bytes, Iterable[PeerSession]]]) -> None:
        """Announce keys, each to ``fanout`` open sessions that did not announce it to us, and a
        revocation to every open session: it is flooded, since what it takes down should not
        live a round longer than it must.

        One shuffled order of the sessions serves the whole batch, so keys that arrived together
        leave together, to the same peers, in one Announce -- a revocation received with the
        lesson it revokes is never announced to a peer without it, and so never falls behind it.
        """
        if self.free_rider:
            return
        sessions = [s for s in self._sessions.values() if s.state is SessionState.OPEN]
        if len(sessions) > self.params.fanout:
            self.rng.shuffle(sessions)
        # A peer pushing us records hears of each one that arrives from elsewhere inside a range
        # it announced it pushes, beyond the fanout: it names instead of pushing what it hears we
        # hold (33 bytes instead of a body twice). Only those: announcing every arrival to every
        # peer that may push, beyond the fanout, changed which paths records took and made the
        # 10,000-node spread's last node a round later (13 rounds to 100% at seed 1, not 12).
        pushers = [s for s in sessions if s.awaiting_pushes]
        for key, skip in batch:
            skip = set(skip)
            limit = len(sessions) if key[0] == rec.RecordType.REVOCATION.tag else self.params.fanout
            sent = 0
            for session in sessions:
                if session not in skip:
                    session.enqueue_announce(key)
                    skip.add(session)
                    sent += 1
                    if sent == limit:
                        break
            if pushers:
                item = make_item(self.keyset.time_of(key) or 0, key)
                for session in pushers:
                    if session not in skip and session.may_push(item):
                        session.enqueue_announce(key)
