"""Which reconcile version a session speaks: 4 with a peer that speaks it, 3 with any other.

A session is one reconciliation; the version is chosen by its first messages, never guessed:

* An initiator that knows its peer speaks version 4 (a message of version 4, or the offer, came
  from it earlier on the same connection) starts in version 4 (an estimate), unless its set is
  small (at most ``SMALL_SET`` items: one version 3 list says it all, cheaper than an estimate).
* Otherwise it starts in version 3, opening its message with the *offer* (a Skip range up to
  ``OFFER_V4``, below every item: a version 3 peer passes over it and answers in version 3).
* A responder that reads the offer answers in version 4 and takes the initiator's role in it (its
  first message is the estimate), unless its own set is small, the offer's message lists the
  initiator's whole set (then version 3 settles it at once), or only its last fingerprint (up to
  +infinity) differs (the newest missing on one side, which version 3 finds in a few fingerprints); one that reads version 3 without the
  offer answers in version 3, and one that reads version 4 answers in version 4.
* An initiator whose version 3 offer is answered in version 4 goes on as that session's
  responder; answered in version 3, it goes on in version 3.

So two version 4 nodes reconcile in version 4 from their first session (half a round trip and
one version 3 message more for that first one), and a version 3 peer keeps working unchanged.
``protocol/reconcile.md`` (Versions) and ``protocol/gossip.md`` say the same for the wire.
"""

from __future__ import annotations

from commons.core.reconcile.coded import MIN_CODED_FRAME, CodedReconciler
from commons.core.reconcile.keyset import KeySet, ReconcileProtocolError, ReconcileUsageError
from commons.core.reconcile.reconciler import Reconciler, ReconcileStatistics, ReconcileStep
from commons.core.reconcile.wire import OFFER_V4, PROTOCOL_VERSION, Mode, decode_message
from commons.core.reconcile.wire4 import VERSION as VERSION_4


SMALL_SET = 64  # a set this small is one version 3 list (MAX_ID_LIST): cheaper than an estimate and symbols


def offers_v4(message: bytes) -> bool:
    """Whether a version 3 message opens with the offer of version 4 (checked whole first)."""
    ranges = decode_message(message)
    return bool(ranges) and ranges[0].mode is Mode.SKIP and ranges[0].upper == OFFER_V4


def _lists_everything(message: bytes) -> bool:
    """Whether a version 3 first message lists its sender's whole set (no fingerprint in it): then
    answering it in version 3 settles the session at once."""
    return not any(r.mode is Mode.FINGERPRINT for r in decode_message(message))


class NegotiatedReconciler:
    """One reconciliation that speaks version 4 when the peer does, version 3 otherwise (either role).

    ``peer_speaks_v4``: what the caller learned of this peer before (``speaks_v4`` of an earlier
    session with it). After the first message each way, ``version`` is the one spoken."""

    def __init__(self, keyset: KeySet, *, frame_size_limit: int = 65536, ask_push: bool = True,
                 peer_speaks_v4: bool = False, salt: int | None = None) -> None:
        self._keys = keyset
        self._limit = frame_size_limit
        self._ask_push = ask_push
        self._salt = salt
        self.speaks_v4 = peer_speaks_v4
        self._inner: Reconciler | CodedReconciler | None = None
        self._offered = False  # we sent the offer in version 3 and have had no answer yet

    @property
    def version(self) -> int | None:
        if self._inner is None:
            return None
        return VERSION_4 if isinstance(self._inner, CodedReconciler) else PROTOCOL_VERSION

    @property
    def done(self) -> bool:
        return self._inner is not None and self._inner.done

    def statistics(self) -> ReconcileStatistics:
        return self._inner.statistics() if self._inner is not None else ReconcileStatistics(0, 0, 0, 0)

    def initiate(self) -> bytes:
        if self._inner is not None:
            raise ReconcileUsageError("initiate() starts a session and may only be called first")
        if self.speaks_v4 and self._limit >= MIN_CODED_FRAME and len(self._keys) > SMALL_SET:
            self._inner = self._coded()
        else:
            self._inner = Reconciler(self._keys, frame_size_limit=self._limit, ask_push=self._ask_push,
                                     offer_v4=self._limit >= MIN_CODED_FRAME)
            self._offered = self._limit >= MIN_CODED_FRAME
        return self._inner.initiate()

    def reconcile(self, message: bytes) -> ReconcileStep:
        version = message[0] if message else None
        if self._inner is None:  # the responder's first message chooses
            if version == VERSION_4 and self._limit >= MIN_CODED_FRAME:
                self.speaks_v4 = True
                self._inner = self._coded()
            elif (version == PROTOCOL_VERSION and self._limit >= MIN_CODED_FRAME and offers_v4(message)
                  and len(self._keys) > SMALL_SET and not _lists_everything(message)
                  and not self._differs_at_the_end_only(message)):
                self.speaks_v4 = True
                self._inner = self._coded()  # take the initiator's role in version 4
                return ReconcileStep(reply=self._inner.initiate())
            else:
                self._inner = Reconciler(self._keys, frame_size_limit=self._limit, ask_push=self._ask_push)
        elif self._offered:
            self._offered = False
            if version == VERSION_4:  # the peer took the offer: its estimate, we answer it
                self.speaks_v4 = True
                self._inner = self._coded()
            elif version != PROTOCOL_VERSION:
                raise ReconcileProtocolError(f"the answer to a version 3 offer is of version {version}")
        return self._inner.reconcile(message)

    def _differs_at_the_end_only(self, message: bytes) -> bool:
        """Whether, of the offer's fingerprints, only the last (up to +infinity) differs from mine: the
        newest records are missing on one side (a node back from being away), which version 3 finds
        in a few fingerprints; coded symbols would pay for each of them."""
        keys, differing = self._keys, []
        for r in decode_message(message):
            if r.mode is Mode.FINGERPRINT:
                start, end = keys.position(r.lower), keys.position(r.upper)
                if keys.fingerprint_between(start, end) != r.fingerprint:
                    differing.append(r)
        return len(differing) == 1 and differing[0].upper is None

    def _coded(self) -> CodedReconciler:
        return CodedReconciler(self._keys, frame_size_limit=self._limit, ask_push=self._ask_push, salt=self._salt)
