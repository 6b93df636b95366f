"""A gossip session's reconciliations: starting ours, answering the peer's, acting on each step.

The half of :class:`~commons.core.gossip.session.PeerSession` that runs ``commons.core.reconcile.reconciler``
over the connection, as a mixin of it (the state is the session's, in its slots): at most one
reconciliation each way; whether each asks the peer to push (``SessionHost.push_welcome``); and
what a step names: keys to fetch (held back while another peer's push may bring them), records
to push the peer, places for records the peer pushes us (``reconcile_push.PushWindow``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from commons.core.gossip.messages import Reconcile, ReconcilePhase
from commons.core.gossip.state import CloseKind, SessionState
from commons.core.reconcile import Reconciler, ReconcileProtocolError, ReconcileStep, ReconcileVersionError

if TYPE_CHECKING:
    from commons.core.gossip.session import SessionHost
    from commons.core.gossip.key_queue import KeyQueue
    from commons.core.reconcile import PushWindow


class SessionSync:
    """Reconciliation over one session (mixed into PeerSession, which holds the state)."""

    __slots__ = ()

    node: SessionHost
    contributed: bool
    _sync: Reconciler | None
    _sync_deadline: float
    _sync_push: bool
    _answer: Reconciler | None
    _answer_deadline: float
    _answer_push: bool
    _push: KeyQueue
    _pushes: PushWindow
    _pushes_deadline: float
    _held_back: KeyQueue

    if TYPE_CHECKING:  # the session's own, which these methods use
        state: SessionState
        def _send(self, message: object) -> None: ...
        def _spill_keys(self) -> int: ...
        def penalise(self, amount: float, reason: str, now: float) -> None: ...
        def end(self, reason: str, now: float, kind: CloseKind, send_bye: bool = True) -> None: ...

    def start_sync(self, now: float) -> bool:
        """Start a reconciliation with this peer (the node calls this every sync_interval)."""
        if self.state is not SessionState.OPEN or self._sync is not None:
            return False
        self._sync_push = self.node.push_welcome(self)
        self._sync = Reconciler(self.node.keyset, frame_size_limit=self.node.params.reconcile_frame_bytes,
                                ask_push=self._sync_push)
        self._sync_deadline = now + self.node.params.reconcile_timeout
        self._send(Reconcile(ReconcilePhase.START, self._sync.initiate()))
        return True

    @property
    def push_pending(self) -> bool:
        """Whether the peer may be pushing us records: a reconciliation of ours asked it to, or a
        push it announced has not all arrived."""
        return (self._pushes.expected > 0 or (self._sync is not None and self._sync_push)
                or (self._answer is not None and self._answer_push))

    @property
    def awaiting_pushes(self) -> bool:
        """Whether records the peer announced it pushes us have not all arrived."""
        return self._pushes.expected > 0

    def may_push(self, item: bytes) -> bool:
        """Whether a record at ``item`` may still arrive from the peer as a push it announced."""
        return self._pushes.covers(item)

    @property
    def syncing(self) -> bool:
        return self._sync is not None

    @property
    def reconciling(self) -> bool:
        """Reconciling with the peer either way, or waiting for records it said it would push."""
        return self._sync is not None or self._answer is not None or self._pushes.expected > 0

    def _on_reconcile(self, message: Reconcile, now: float) -> None:
        p = self.node.params
        if message.phase is ReconcilePhase.START:
            self._answer_push = self.node.push_welcome(self)
            self._answer = Reconciler(self.node.keyset, frame_size_limit=p.reconcile_frame_bytes,
                                      ask_push=self._answer_push)
            self._answer_deadline = now + p.reconcile_timeout
        mine = message.phase is ReconcilePhase.RESPONDER
        reconciler = self._sync if mine else self._answer
        if reconciler is None:  # we gave up on that reconciliation (timeout): not worth a penalty
            return
        try:
            step: ReconcileStep = reconciler.reconcile(message.data)
        except ReconcileVersionError as error:  # an old or newer peer, not a malicious one
            self.end(f"reconcile: {error}", now, CloseKind.INCOMPATIBLE)
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
            self._learn_named(step, now)
        if step.expect:
            self._pushes.add(step.expect)
            self._pushes_deadline = now + p.reconcile_timeout
        if step.push:
            # Sent after the reply that announces them, in item order, after any still to send.
            room = self.node.params.max_queued_wants + self._spill_keys() - len(self._push)
            self._push.extend(step.push[:max(room, 0)])
        if step.done:
            self.contributed = True
            if mine:
                self._sync = None
                self.node.session_synced(self, now)
            else:
                self._answer = None

    def _learn_named(self, step: ReconcileStep, now: float) -> None:
        """Fetch what the peer's reconciliation named that we lack, but not what a push of another
        peer (or of this one, answering our other reconciliation) may still bring: that waits in
        ``_held_back`` until no push is awaited (protocol/reconcile.md, When to ask)."""
        node = self.node
        if not node.push_awaited():
            node.learn(step.need, self, count=False)
            return
        fetch = []
        for key, item in zip(step.need, step.need_items, strict=True):
            if not node.pushed_elsewhere(item):
                fetch.append(key)
            elif len(self._held_back) < self._spill_keys():
                self._held_back.append(key)
        node.learn(fetch, self, count=False)
