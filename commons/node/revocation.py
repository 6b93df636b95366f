"""Revocation at this node: signing revocations, death certificates at intake, immediate effect.

The rules (who may revoke, what a revocation takes down) are the core's
(``commons.core.trust.revocation``, docs/trust.md); this module is where they meet the store and the
memory folder:

* :func:`revoke` signs a revocation of a record (a lesson by its local id or record id prefix, a
  vouch, any record) or of an author key, stores it (origin ``own``: the daemon relays it; no
  publishing opt-in is needed to take something down) and re-renders the memory folder at once.
* :func:`admission` is intake's death-certificate check, built from the revocations the store
  holds: a revoked record, anything by a revoked key, a record its own author revoked before it
  arrived, a lesson derived from a revoked one — from a peer, ``commons import`` or a restored
  backup — is refused and remembered in ``refused``. Revocations are never refused, never
  deleted, and the certificates are derived from them, so they survive restarts.
  (A lesson naming a dangerous fix is refused by the door policy, :mod:`commons.node.door`.)
* :func:`after_intake` is what to call after records were stored (an import, a peer's batch):
  statuses recomputed, the memory folder re-rendered when anything it shows may have changed.
* :func:`derive`, :func:`reword` and :func:`vouch` sign the other records a person asks for:
  a lesson with ``parents``, a new version that ``supersedes`` the old (updating is not revoking:
  derived lessons stay), a vouch (undone by revoking it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from commons.core.records import Lesson, RecordType, RecordUsageError, Revocation, SignedRecord, TargetKind, day_of, sign
from commons.core.trust import Refusal, Revocations
from commons.core.policy import ScrubbedTextRequired
from commons.errors import UsageError
from commons.identity import Identity
from commons.node import rendering, trust
from commons.node.context import NodeContext
from commons.node.rendering import RenderSummary
from commons.store import lessons as ls
from commons.store import records as record_store
from commons.store.reviews import TrustChange
from commons.store.db import Store


# --------------------------------------------------------------------------------------------
# Intake: the death certificates


class Admission:
    """Intake's admission check: the stored certificates, plus revocations earlier in the same batch.

    Exports and reconciliation put revocations first, so a batch that carries a revocation and a
    copy of what it revokes refuses the copy too (for the rulings a batch can settle alone: a
    record's author, a key revoking itself).
    """

    def __init__(self, revocations: Revocations):
        self.revocations = revocations
        self._keys: set[bytes] = set()  # keys that revoked themselves in this batch
        self._by_author: dict[bytes, set[bytes]] = defaultdict(set)  # record id -> keys revoking it
        self._dead: set[bytes] = set()

    def __call__(self, signed: SignedRecord) -> str | None:
        reason = self.revocations.refuses(signed)
        if reason is not None:
            return reason
        record = signed.record
        if isinstance(record, Revocation):
            if record.target_kind is TargetKind.KEY and record.target == record.author:
                self._keys.add(record.target)
            elif record.target_kind is TargetKind.RECORD:
                self._by_author[record.target].add(record.author)
            return None
        if record.author in self._keys:
            self._dead.add(signed.id)
            return Refusal.DEAD_KEY.value
        if record.author in self._by_author.get(signed.id, ()):
            self._dead.add(signed.id)
            return Refusal.REVOKED_BY_AUTHOR.value
        if isinstance(record, Lesson) and any(p in self._dead or p in self.revocations.dead_ids
                                              for p in record.parents):
            self._dead.add(signed.id)
            return Refusal.DEAD_PARENT.value
        return None


async def admission(store: Store, node: NodeContext, now: float) -> Admission:
    """The admission check for records arriving now (from a peer, an import, a backup)."""
    held = await node.trust.held(store, now)
    return Admission(held.view.revocations)


@dataclass(frozen=True)
class IntakeEffect:
    """What records arriving did at once: the status changes, and the render (None: nothing to do)."""

    status_changes: tuple[TrustChange, ...]
    render: RenderSummary | None

    def to_json(self) -> dict:
        return {"status_changes": [trust.change_dict(c) for c in self.status_changes],
                "render": self.render.to_json() if self.render is not None else None}


async def after_intake(store: Store, node: NodeContext, now: float, accepted: Sequence[SignedRecord] = (), *,
                       refused_dead: bool = False, rerender: bool = False) -> IntakeEffect:
    """Records were stored (or refused as dead): statuses follow, and the memory folder is
    re-rendered at once when a status it shows changed, or when ``rerender`` (the person's own
    records: what they just did shows). Otherwise not: intake stays in proportion to what arrived."""
    if node.trust is None or not (accepted or refused_dead or node.trust.pending):
        return IntakeEffect((), None)
    node.trust.offer(accepted)  # decoded already: the catch-up need not read them back
    logged = await trust.log_changes(store, node.trust, now)
    render = await rendering.render(store, node, now) if rerender or logged.shown else None
    return IntakeEffect(logged.changes, render)


async def take_in_unjudged(store: Store, node: NodeContext, now: float, accepted: Sequence[SignedRecord]) -> None:
    """Records were stored while more wait to be (a node far behind): trust takes in their facts,
    and the lessons they touch are judged, their changes logged and shown, at the next
    :func:`after_intake` (called with nothing new, it judges what waits)."""
    if node.trust is not None and accepted:
        node.trust.offer(accepted)
        await node.trust.take_in(store, now)


# --------------------------------------------------------------------------------------------
# Signing


def _hex(text: str, what: str) -> str:
    text = text.strip().lower()
    if len(text) < 6 or any(c not in "0123456789abcdef" for c in text):
        raise UsageError(f"{text!r} is not {what}: give at least 6 hex characters")
    return text


async def resolve_record(store: Store, text: str) -> bytes:
    """A record id from a local lesson id (prefix) or a record id (prefix); UsageError says why not."""
    prefix = _hex(text, "a lesson or record id")
    if len(prefix) == 64 and await record_store.get(store, bytes.fromhex(prefix)) is not None:
        return bytes.fromhex(prefix)
    try:
        lid = await ls.resolve_id(store, prefix)
    except ValueError:
        lid = None
    if lid is not None:
        (stored,) = await ls.load_lessons(store, ids=[lid])
        if stored.record_id is None:
            raise UsageError(f"lesson {lid[:12]} was never published, so there is no record to revoke; "
                             f"`commons forget {lid[:12]}` removes it from the memory folder for good")
        return stored.record_id
    found = await record_store.find_by_prefix(store, prefix)
    if len(found) > 1:
        raise UsageError(f"{prefix!r} names more than one record; give more of the id")
    if found:
        return found[0].id
    if len(prefix) == 64:  # not held (yet): the revocation waits for it (a pending revocation)
        return bytes.fromhex(prefix)
    raise UsageError(f"no lesson or record has an id starting with {prefix!r} "
                     "(see `commons lessons --status all` and `commons why`)")


def sign_as(record, identity: Identity) -> SignedRecord:
    try:
        return sign(record, identity.author_key)
    except ScrubbedTextRequired as refused:  # words the person gave: theirs to change
        raise UsageError(f"{refused.what} still holds a secret or personal detail "
                         f"({', '.join(sorted({f.kind.name.lower() for f in refused.found}))}); "
                         "write it without, nothing was signed") from None


async def store_own(store: Store, node: NodeContext, signed: Sequence[SignedRecord], now: float) -> IntakeEffect:
    await record_store.add_own(store, signed, now)
    return await after_intake(store, node, now, signed, rerender=True)


async def revoke(store: Store, node: NodeContext, *, reason: str, now: float, target: str | None = None,
                 key: str | None = None) -> Revoked:
    """Sign, store and apply a revocation of a record (``target``) or an author key (``key``)."""
    if (target is None) == (key is None):
        raise UsageError("name what to revoke: a lesson or record id, or --key AUTHOR_KEY")
    identity, config = node.identity, node.config
    if key is not None:
        subject, kind = key_bytes(key), TargetKind.KEY
    else:
        subject, kind = await resolve_record(store, target), TargetKind.RECORD
    try:
        record = Revocation(network=config.network.key_bytes, author=identity.author_public, created=day_of(now),
                            target=subject, target_kind=kind, reason=" ".join(reason.split()))
    except RecordUsageError as error:
        raise UsageError(str(error)) from None
    signed = sign_as(record, identity)
    effect = await store_own(store, node, [signed], now)
    return Revoked(describe_revocation(await node.trust.held(store, now), signed), effect)


@dataclass(frozen=True)
class Revoked:
    """A revocation just signed: its ruling and what it took down, and what it did at once."""

    revocation: RevocationView
    effect: IntakeEffect

    def to_json(self) -> dict:
        return dict(self.revocation.to_json(), **self.effect.to_json())


def key_bytes(text: str) -> bytes:
    try:
        key = bytes.fromhex(text.strip())
    except ValueError:
        key = b""
    if len(key) != 32:
        raise UsageError(f"{text!r} is not an author key: 64 hex characters (see `commons id`)")
    return key


# --------------------------------------------------------------------------------------------
# Reading: revocations and what they took down


@dataclass(frozen=True)
class TakenDown:
    """A record a revocation killed, and how (directly, through its key, through provenance)."""

    id: bytes
    type: str | None  # None: not held here
    text: str | None
    cause: str
    chain: tuple[bytes, ...]

    def to_json(self) -> dict:
        return {"id": self.id.hex(), "type": self.type, "text": self.text, "cause": self.cause,
                "chain": [c.hex() for c in self.chain]}


@dataclass(frozen=True)
class RevocationView:
    """One revocation as `commons revocations` shows it: its ruling, and everything it took down."""

    signed: SignedRecord
    mine: bool
    received: float | None
    ruling: str | None  # None: no verdict (not evaluated)
    applied: bool
    why_not: str | None
    took_down: tuple[TakenDown, ...]

    def to_json(self) -> dict:
        record: Revocation = self.signed.record
        return {
            "id": self.signed.id.hex(), "signer": record.author.hex(), "mine": self.mine,
            "target": record.target.hex(), "target_kind": record.target_kind.value, "reason": record.reason,
            "created": record.created, "received": self.received, "applied": self.applied, "ruling": self.ruling,
            "why_not": self.why_not, "took_down": [d.to_json() for d in self.took_down],
            "dead_key": record.target.hex() if self.applied and record.target_kind is TargetKind.KEY else None,
        }


def describe_revocation(held: trust.Held, signed: SignedRecord) -> RevocationView:
    record: Revocation = signed.record
    verdict = held.view.revocations.verdicts.get(signed.id)
    down = []
    for rid in sorted(rid for rid, td in held.view.revoked.items() if signed.id in td.revocations):
        target = held.records.get(rid)
        takedown = held.view.revoked[rid]
        down.append(TakenDown(rid, target.type.value if target else None,
                              getattr(target.record, "text", None) if target else None,
                              takedown.cause.value, tuple(takedown.chain)))
    applied = verdict is not None and verdict.applied
    why_not = None if applied or verdict is None else _WHY_NOT.get(verdict.ruling.value, verdict.ruling.value)
    return RevocationView(signed, record.author == held.me, held.received.get(signed.id),
                          verdict.ruling.value if verdict else None, applied, why_not, tuple(down))


_WHY_NOT = {
    "below-threshold": "an authority signed it, but fewer than [trust] revocation_threshold distinct ones so far",
    "target-unknown": "the target is not held yet: it is refused on arrival if its author signed this",
    "unauthorized": "the signer is neither the target's author, nor the key itself, nor a revocation authority",
    "irrevocable": "the target is a revocation: a death certificate cannot be undone",
}


async def revocations(store: Store, node: NodeContext, now: float) -> list[RevocationView]:
    held = await node.trust.held(store, now)
    found = held.records.of_type(RecordType.REVOCATION)
    found.sort(key=lambda s: (held.received.get(s.id, 0.0), s.id))
    return [describe_revocation(held, s) for s in found]


async def dead_but_present(store: Store, node: NodeContext, now: float) -> list[str]:
    """Problems for `commons store check`: what a stored revocation kills but is still live here.

    A dead record that arrived *after* the revocation that kills it came through a door that
    skipped the admission check; a dead lesson still in the memory folder was not re-rendered.
    """
    held = await node.trust.held(store, now)
    problems = []
    for rid, takedown in sorted(held.view.revoked.items()):
        if rid not in held.received:
            continue
        revoked_at = min((held.received[r] for r in takedown.revocations if r in held.received), default=None)
        if revoked_at is not None and held.received[rid] > revoked_at:
            problems.append(f"{held.records[rid].type.value} {rid.hex()}: held although it arrived after the "
                            f"revocation that kills it ({takedown.cause.value}); intake should have refused it")
    own = {s.lesson.id: s.record_id for s in await ls.load_lessons(store)}
    for row in await ls.rendered(store):
        rid = own.get(row.lesson_id) or (bytes.fromhex(row.lesson_id) if len(row.lesson_id) == 64 else None)
        if rid is not None and rid in held.view.dead_ids:
            problems.append(f"lesson {row.lesson_id}: revoked but still rendered in {row.folder}; run `commons render`")
    return problems
