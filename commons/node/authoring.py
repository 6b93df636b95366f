"""Authoring records by hand: vouch for a key, derive a lesson from others, reword an own lesson.

Each signs a record as this node and stores it (origin ``own``) through the same door as a
revocation (``commons.node.revocation.store_own``), so statuses and the memory folder follow at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from commons.core.embedding import embed_many
from commons.core.records import Lesson, RecordUsageError, SignedRecord, Vouch, day_of
from commons.errors import CommonsError, UsageError
from commons.node import publish, rendering, revocation
from commons.node.context import NodeContext
from commons.node.lessons import add_lesson, check_lesson_text
from commons.store import lessons as ls
from commons.store import records as record_store
from commons.store.db import Store


@dataclass(frozen=True)
class Vouched:
    signed: SignedRecord
    subject: bytes
    effect: revocation.IntakeEffect

    def to_json(self) -> dict:
        return {"id": self.signed.id.hex(), "subject": self.subject.hex(),
                "undo": f"commons revoke {self.signed.id.hex()[:16]} --reason '…'", **self.effect.to_json()}


async def vouch(store: Store, node: NodeContext, key: str, now: float) -> Vouched:
    """Vouch for an author key (the web of trust over which independence is counted)."""
    subject = revocation.key_bytes(key)
    identity = node.identity
    try:
        record = Vouch(network=node.config.network.key_bytes, author=identity.author_public,
                       created=day_of(now), subject=subject)
    except RecordUsageError as error:
        raise UsageError(str(error)) from None
    signed = revocation.sign_as(record, identity)
    return Vouched(signed, subject, await revocation.store_own(store, node, [signed], now))


async def derive(store: Store, node: NodeContext, lesson_id: str, parents: Sequence[str], now: float) -> SignedRecord:
    """Publish an own lesson with ``parents``: the lessons (local ids or record ids) it derives from.

    With one parent and no situation of its own, the lesson predicts what its parent predicts.
    Needs publishing on (`commons publish on`): the record leaves the node.
    """
    if not await publish.is_on(store):
        raise CommonsError("a derived lesson is published with its provenance, and publishing is off; "
                           "turn it on first: `commons publish on`")
    ids = sorted({await revocation.resolve_record(store, p) for p in parents})
    held_parents = [await record_store.get(store, rid) for rid in ids]
    (stored,) = await ls.load_lessons(store, ids=[lesson_id])
    made = publish.lesson_record(stored.lesson, node.identity, node.config.network.key_bytes, now)
    if isinstance(made, publish.Skipped):
        raise CommonsError(f"lesson {lesson_id[:12]} cannot be published: {made.reason}")
    lessons = [s.record for s in held_parents if s is not None and isinstance(s.record, Lesson)]
    if len(lessons) == 1 and not stored.lesson.triggers:
        made = replace(made, prediction=lessons[0].prediction)
    signed = revocation.sign_as(replace(made, parents=tuple(ids)), node.identity)
    await record_store.add_own(store, [signed], now)
    async with store.transaction():
        await ls.mark_represented(store, [(lesson_id, signed.id)], now)
    await revocation.after_intake(store, node, now, [signed], rerender=True)
    return signed


@dataclass(frozen=True)
class Reworded:
    """An own lesson's new wording: the lesson that carries it, and, if published, its new record."""

    id: str
    text: str
    record: SignedRecord | None = None  # the new record, which supersedes ``supersedes``
    supersedes: bytes | None = None
    previous_lesson: str | None = None

    def to_json(self) -> dict:
        if self.record is None:
            return {"id": self.id, "text": self.text, "published": False}
        return {"id": self.id, "text": self.text, "published": True, "record_id": self.record.id.hex(),
                "supersedes": self.supersedes.hex(), "previous_lesson": self.previous_lesson}


async def reword(store: Store, node: NodeContext, prefix: str, text: str, now: float) -> Reworded:
    """A new wording of an own lesson. Published: a new record that ``supersedes`` the old one
    (lessons derived from the old one stay alive); unpublished: the local text changes."""
    lid = await ls.resolve_id(store, prefix)
    (stored,) = await ls.load_lessons(store, ids=[lid])
    if stored.origin != "own":
        raise UsageError(f"lesson {lid[:12]} is not this node's: only its author can reword it")
    text = check_lesson_text(text)
    old = await record_store.get(store, stored.record_id) if stored.record_id else None
    if old is None or old.record.author != node.identity.author_public:
        lesson = replace(stored.lesson, text=text)
        async with store.transaction():
            await ls.put_lessons(store, [(lesson, stored.status)], embed_many([ls.recall_text(lesson)]), now)
        await rendering.render(store, node, now)
        return Reworded(lid, text)
    try:
        record = replace(old.record, text=text, created=day_of(now), supersedes=old.id)
    except RecordUsageError as error:
        raise UsageError(str(error)) from None
    new, _ = await add_lesson(store, node, text, stored.lesson.kind, stored.lesson.scope, now)
    signed = await supersede(store, node, record, new.id, now)
    return Reworded(new.id, text, signed, old.id, lid)


async def supersede(store: Store, node: NodeContext, record: Lesson, lesson_id: str, now: float) -> SignedRecord:
    """Sign ``record`` (a lesson record whose ``supersedes`` names this node's earlier record) and
    store it as what the local lesson ``lesson_id`` stands for in the commons."""
    signed = revocation.sign_as(record, node.identity)
    await record_store.add_own(store, [signed], now)
    async with store.transaction():
        await ls.mark_represented(store, [(lesson_id, signed.id)], now)
    await revocation.after_intake(store, node, now, [signed], rerender=True)
    return signed
