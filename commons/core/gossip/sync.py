"""A gossip session's reconciliations: starting ours, answering the peer's, acting on each step.

:class:`SessionSync` is the part of a :class:`~commons.core.gossip.session.PeerSession` that runs
set reconciliation over the connection, and owns its state: at most one reconciliation each way
(ours, which we started, and theirs, which we answer), when each is given up, and whether each
asked the peer to push (``SyncHost.push_welcome``). What a step teaches it hands to its
:class:`SyncHost` (the session) in the terms of ``commons.core.reconcile.ReconcileStep``: keys to
fetch (``fetch_named``), places for records the peer pushes us (``expect_pushes``), records to push
the peer (``push``), a reconciliation finished (``reconciled``).

It is the seam for another reconciliation protocol: which :class:`Reconciliation` a session runs
comes from the ``reconciler`` factory it is given (``commons.core.reconcile.NegotiatedReconciler``
by default: version 4 with a peer that speaks it, version 3 with any other, chosen by the first
messages, ``protocol/reconcile.md``, Versions); one that speaks in ``ReconcileStep`` and raises
``ReconcileVersionError`` for a message of a version it does not speak needs nothing else changed
here or in the session. What a reconciliation learned of the peer's versions (``speaks_v4``) is
kept for the next one on the same connection, so that it starts in version 4 at once.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from commons.core.gossip.messages import Message, Reconcile, ReconcilePhase
from commons.core.gossip.state import CloseKind
from commons.core.reconcile import (
    NegotiatedReconciler,
    ReconcileProtocolError,
    Reconciler,
    ReconcileStep,
    ReconcileVersionError,
)

if TYPE_CHECKING:
    from commons.core.gossip.peers import GossipParams
    from commons.core.reconcile import KeySet


class Reconciliation(Protocol):
    """One reconciliation, in either role: what :class:`SessionSync` needs of it."""

    def initiate(self) -> bytes: ...  # the initiator's first message
    def reconcile(self, message: bytes) -> ReconcileStep: ...  # take the peer's message


class NewReconciliation(Protocol):
    """Makes a reconciliation over the node's key set (``Reconciler`` is one)."""

    def __call__(self, keyset: KeySet, *, frame_size_limit: int, ask_push: bool,
                 peer_speaks_v4: bool, salt: int) -> Reconciliation: ...


def _version_3(keyset: KeySet, *, frame_size_limit: int, ask_push: bool, peer_speaks_v4: bool,
               salt: int) -> Reconciliation:
    """Version 3 alone, neither offering version 4 nor answering it (``reconcile_v4=False``)."""
    return Reconciler(keyset, frame_size_limit=frame_size_limit, ask_push=ask_push)


class SyncHost(Protocol):
    """What the reconciliations ask of their session."""

    def send(self, message: Message) -> None: ...
    def penalise(self, amount: float, reason: str, now: float) -> None: ...
    def end(self, reason: str, now: float, kind: CloseKind, send_bye: bool = True) -> None: ...
    def push_welcome(self) -> bool: ...  # may this reconciliation ask the peer to push?
    def fetch_named(self, keys: list[bytes], items: list[bytes]) -> None: ...  # the peer has these
    def expect_pushes(self, expectations: list, now: float) -> None: ...  # the peer pushes into these
    def push(self, keys: list[bytes]) -> None: ...  # send the peer these records unasked
    def reconciled(self, ours: bool, now: float) -> None: ...  # one reconciliation finished


class SessionSync:
    """The reconciliations of one session, at most one each way: each instance is one session's."""

    __slots__ = ("_host", "_params", "_keyset", "_new", "_ours", "_ours_deadline", "_ours_push",
                 "_theirs", "_theirs_deadline", "_theirs_push", "_peer_v4", "_salts", "deadline")

    def __init__(self, host: SyncHost, params: GossipParams, keyset: KeySet,
                 reconciler: NewReconciliation | None = None, salts: Callable[[], int] | None = None) -> None:
        """``keyset``: the node's, reconciled as it is (read only). ``reconciler``: by default version
        4 when the peer speaks it (``params.reconcile_v4``), else version 3 alone. ``salts``: a fresh
        64-bit salt for each version 4 session's hashes (by default from ``os.urandom``; simulations
        pass their seeded generator so that a run repeats)."""
        self._salts = salts or (lambda: int.from_bytes(os.urandom(8), "big"))
        if reconciler is None:
            reconciler = NegotiatedReconciler if params.reconcile_v4 else _version_3
        self._host, self._params, self._keyset, self._new = host, params, keyset, reconciler
        self._ours: Reconciliation | None = None  # the reconciliation we initiated
        self._ours_deadline = 0.0
        self._ours_push = False  # whether it asked the peer to push
        self._theirs: Reconciliation | None = None  # the one the peer initiated
        self._theirs_deadline = 0.0
        self._theirs_push = False
        self._peer_v4 = False  # the peer showed it speaks reconcile version 4 (offer or message)
        # When :meth:`expire` gives up on a running one (inf: none runs). An attribute, kept by
        # _reckon on every change, because the session reads it each time the driver sleeps.
        self.deadline = math.inf

    @property
    def syncing(self) -> bool:
        """Whether a reconciliation we started is running."""
        return self._ours is not None

    @property
    def running(self) -> bool:
        """Whether a reconciliation is running either way."""
        return self._ours is not None or self._theirs is not None

    @property
    def asked_push(self) -> bool:
        """Whether a running reconciliation asked the peer to push us what we lack."""
        return (self._ours is not None and self._ours_push) or (self._theirs is not None and self._theirs_push)

    def start(self, now: float) -> bool:
        """Start a reconciliation with the peer (the session is open); False if ours still runs."""
        if self._ours is not None:
            return False
        self._ours_push = self._host.push_welcome()
        self._ours = self._open(self._ours_push)
        self._ours_deadline = now + self._params.reconcile_timeout
        self._reckon()
        self._host.send(Reconcile(ReconcilePhase.START, self._ours.initiate()))
        return True

    def receive(self, message: Reconcile, now: float) -> None:
        """Take one of the peer's Reconcile messages: starting theirs, or a step of either."""
        host, p = self._host, self._params
        if message.phase is ReconcilePhase.START:
            self._theirs_push = host.push_welcome()
            self._theirs = self._open(self._theirs_push)
            self._theirs_deadline = now + p.reconcile_timeout
            self._reckon()
        ours = message.phase is ReconcilePhase.RESPONDER
        reconciliation = self._ours if ours else self._theirs
        if reconciliation is None:  # we gave up on that reconciliation (timeout): not worth a penalty
            return
        try:
            step = reconciliation.reconcile(message.data)
        except ReconcileVersionError as error:  # an old or newer peer, not a malicious one
            host.end(f"reconcile: {error}", now, CloseKind.INCOMPATIBLE)
            return
        except ReconcileProtocolError as error:
            self._drop(ours)
            host.penalise(p.penalty_malformed, f"reconcile: {error}", now)
            return
        self._peer_v4 = self._peer_v4 or getattr(reconciliation, "speaks_v4", False)
        phase = ReconcilePhase.INITIATOR if ours else ReconcilePhase.RESPONDER
        for reply in step.replies:  # version 4 may answer with a turn of several messages
            host.send(Reconcile(phase, reply))
        if step.need:
            host.fetch_named(step.need, step.need_items)
        if step.expect:
            host.expect_pushes(step.expect, now)
        if step.push:
            host.push(step.push)
        if step.done:
            self._drop(ours)
            host.reconciled(ours, now)

    def expire(self, now: float) -> None:
        """Give up on a reconciliation past its deadline (either role), with no penalty."""
        if now < self.deadline:
            return
        if self._ours is not None and now >= self._ours_deadline:
            self._ours = None
        if self._theirs is not None and now >= self._theirs_deadline:
            self._theirs = None
        self._reckon()

    def stop(self) -> None:
        """The session ended: both reconciliations with it."""
        self._ours = self._theirs = None
        self.deadline = math.inf

    def _drop(self, ours: bool) -> None:
        if ours:
            self._ours = None
        else:
            self._theirs = None
        self._reckon()

    def _reckon(self) -> None:
        self.deadline = min(math.inf if self._ours is None else self._ours_deadline,
                            math.inf if self._theirs is None else self._theirs_deadline)

    def _open(self, ask_push: bool) -> Reconciliation:
        return self._new(self._keyset, frame_size_limit=self._params.reconcile_frame_bytes, ask_push=ask_push,
                         peer_speaks_v4=self._peer_v4, salt=self._salts())
