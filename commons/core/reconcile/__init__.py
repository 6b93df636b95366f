"""Set reconciliation: which record keys two nodes lack of each other's, at a cost that grows
with the difference, not with the store.

- ``reconciler``: the range-based protocol (:class:`Reconciler`, one step per message, its errors);
- ``keyset``: the sorted key set with range fingerprints (:class:`KeySet`, ``make_item``);
- ``wire``: the reconcile message's encoding and the checks on what a peer sent;
- ``push``: what a receiver was told to expect after a Diff (:class:`PushWindow`);
- ``coded``: version 4, an estimate then rateless coded symbols (:class:`CodedReconciler`), with
  ``riblt`` (the coded symbols), ``estimate`` (the difference's size) and ``wire4`` (its turns);
- ``negotiate``: version 4 with a peer that speaks it, 3 otherwise (:class:`NegotiatedReconciler`).

``protocol/reconcile.md`` is the normative description, with vectors.
"""

from commons.core.reconcile.coded import CodedReconciler
from commons.core.reconcile.keyset import KEY_SIZE, make_item
from commons.core.reconcile.negotiate import NegotiatedReconciler
from commons.core.reconcile.reconciler import (
    KeySet,
    PushWindow,
    ReconcileProtocolError,
    ReconcileStep,
    ReconcileVersionError,
    Reconciler,
    make_key,
    run_in_memory,
)

__all__ = [
    "KEY_SIZE",
    "CodedReconciler",
    "NegotiatedReconciler",
    "KeySet",
    "PushWindow",
    "ReconcileProtocolError",
    "ReconcileStep",
    "ReconcileVersionError",
    "Reconciler",
    "make_item",
    "make_key",
    "run_in_memory",
]
