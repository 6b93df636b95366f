"""What the records held amount to: trust's evaluation of every record, and its status changes.

    every record held ──core.trust.evaluate──▶ status: own | candidate | common | superseded | revoked

The evaluation is the core's (docs/trust.md); this module loads its inputs from the store, keeps the
latest evaluation until a record is added, and logs the status changes the morning report lists.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

import trio

from commons.core.records import Lesson, SignedRecord, day_of
from commons.core.revocation import Cause
from commons.core.trust import LessonState, LessonStatus, TrustPolicy, TrustView, evaluate
from commons.store import records as record_store
from commons.store import reviews as review_store
from commons.store.db import Store


# --------------------------------------------------------------------------------------------
# What the records amount to


@dataclass(frozen=True)
class Held:
    """Every record the node holds, when each arrived and how, and what trust makes of them."""

    view: TrustView
    records: Mapping[bytes, SignedRecord]
    received: Mapping[bytes, float]  # record id -> records.received_at
    origin: Mapping[bytes, str]  # record id -> own | peer | import
    me: bytes

    def lesson(self, rid: bytes) -> Lesson | None:
        signed = self.records.get(rid)
        return signed.record if signed is not None and isinstance(signed.record, Lesson) else None

    def state(self, rid: bytes) -> LessonState | None:
        return self.view.lessons.get(rid)

    def received_lessons(self, *statuses: LessonStatus) -> list[SignedRecord]:
        """Lessons by other authors with one of ``statuses``, in the order they arrived."""
        found = [self.records[rid] for rid, state in self.view.lessons.items()
                 if state.author != self.me and state.status in statuses]
        return sorted(found, key=lambda s: (self.received[s.id], s.id))


class TrustEvaluation:
    """The latest evaluation of every record held, for one node under one policy.

    A ``NodeContext`` owns one. Records are never changed, only added (or refused as dead), and a
    lesson's standing depends on the day, so an evaluation is right until the store's generation,
    the set of ids refused as dead, or the day moves; then it is made again from the store.
    """

    def __init__(self, me: bytes, policy: TrustPolicy) -> None:
        self.me = me
        self.policy = policy
        self._made_at: tuple | None = None
        self._held: Held | None = None

    async def held(self, store: Store, now: float) -> Held:
        """Every record held and what trust makes of them, today."""
        generation = await record_store.generation(store)
        refused = await record_store.refused_dead_ids(store)
        made_at = (str(store.path), generation, len(refused), day_of(now))
        if self._held is not None and made_at == self._made_at:
            return self._held
        records = await record_store.all_records(store)
        arrivals = await record_store.arrivals(store)
        view = await trio.to_thread.run_sync(partial(evaluate, records, me=self.me, policy=self.policy,
                                                     today=day_of(now), refused=refused))
        self._held = Held(view, {s.id: s for s in records}, {rid: a.received_at for rid, a in arrivals.items()},
                          {rid: a.origin for rid, a in arrivals.items()}, self.me)
        self._made_at = made_at
        return self._held


def describe_takedown(held: Held, rid: bytes) -> str:
    """Why a record is dead, in words (the revocation's reason, and the chain that carried it)."""
    takedown = held.view.revoked.get(rid)
    if takedown is None:
        return ""
    reasons = [held.records[r].record.reason for r in takedown.revocations if r in held.records]
    because = "; ".join(dict.fromkeys(reasons)) or "revoked"
    if takedown.cause is Cause.KEY_REVOKED:
        return f"its author key was revoked: {because}"
    if takedown.cause is Cause.PROVENANCE:
        origin = takedown.chain[0].hex()[:12] if takedown.chain else "?"
        return f"derived from revoked lesson {origin} (through {len(takedown.chain)} step(s)): {because}"
    if takedown.cause is Cause.UNRESOLVED:
        origin = takedown.chain[0].hex()[:12] if takedown.chain else "?"
        return (f"derived from lesson {origin}, which this node never received and a revocation names "
                f"(held back until it arrives): {because}")
    return f"revoked: {because}"


def status_why(held: Held, state: LessonState) -> str:
    if state.status is LessonStatus.REVOKED:
        return describe_takedown(held, state.id)
    if state.status is LessonStatus.SUPERSEDED and state.superseded_by:
        return f"superseded by {state.superseded_by.hex()[:12]}"
    if state.status is LessonStatus.COMMON and state.trusted_author:
        return "by one of [trust] authors: common on arrival"
    return (f"{state.recent_confirmations} confirmation(s) and {state.recent_failures} failure(s) among the "
            f"latest counted outcomes; {state.confirmations} independent confirmation(s) in all")


async def refresh(store: Store, evaluation: TrustEvaluation, now: float) -> list[review_store.TrustChange]:
    """Log every lesson whose status changed since the last refresh (promoted, faded, revoked…).

    A lesson's first status is remembered silently unless it arrives common or revoked.
    """
    held = await evaluation.held(store, now)
    previous = await review_store.trust_statuses(store)
    changes = []
    for rid, state in sorted(held.view.lessons.items()):
        before, after = previous.get(rid), state.status.value
        if before == after:
            continue
        text = held.records[rid].record.text
        changes.append(review_store.TrustChange(rid, before, after, text, status_why(held, state), now))
    if changes:
        async with store.transaction():
            await review_store.add_trust_changes(store, changes)
    return [c for c in changes if c.before is not None or c.after in ("common", "revoked")]


def change_dict(change: review_store.TrustChange) -> dict:
    return {"lesson": change.record_id.hex(), "from": change.before, "to": change.after,
            "text": change.text, "why": change.why}
