"""Revocation: who may revoke what, and everything a revocation takes down with it.

Pure functions over the records a node holds; nothing here is stored as truth. Every call works
out again, from scratch, which revocations apply and what they take down, so a lesson that arrives
after its parent was revoked is revoked the moment it is evaluated, and a revocation whose target
arrives later applies the moment the target is held.

The rules (docs/trust.md explains the reasons):

- **Authority.** A record's author may revoke it (:attr:`Ruling.AUTHOR`); a key may revoke itself
  (:attr:`Ruling.KEY_ITSELF`); the keys of ``revocation_authorities`` may revoke any record or key
  once ``revocation_threshold`` distinct ones have signed a revocation of the same target
  (:attr:`Ruling.AUTHORITIES`). Anything else is validly signed but not applied: the gossip layer
  relays it, this module ignores it. A revocation cannot itself be revoked (forever means forever).
- **Takedown.** A revoked record is dead. A revoked key kills every record it signed, before or
  after its revocation, except revocations: those are the death certificates themselves and keep
  travelling. A revoked lesson kills every lesson whose provenance (``parents``) reaches it,
  transitively, whenever the derived lesson arrived. ``supersedes`` is not revocation: a superseded
  lesson and its derivatives stay alive.
- **Death certificates.** :attr:`Revocations.dead_ids` and :attr:`Revocations.dead_keys` are what
  intake refuses for good; :meth:`Revocations.refuses` is the admission check a store can call.
"""

from __future__ import annotations

import enum
from collections import defaultdict, deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from commons.core.records import Lesson, RecordType, Revocation, SignedRecord, TargetKind


class Ruling(enum.Enum):
    """What this node made of one validly signed revocation."""

    AUTHOR = "author"  # applied: the target record's own author revoked it
    KEY_ITSELF = "key-itself"  # applied: the key revoked itself
    AUTHORITIES = "authorities"  # applied: revocation_threshold distinct authorities signed it
    BELOW_THRESHOLD = "below-threshold"  # an authority signed, but too few distinct ones so far
    TARGET_UNKNOWN = "target-unknown"  # the target record is not held: its author can't be checked yet
    UNAUTHORIZED = "unauthorized"  # neither the target's author, nor the key itself, nor an authority
    IRREVOCABLE = "irrevocable"  # the target is a revocation: a death certificate cannot be undone

    @property
    def applied(self) -> bool:
        return self in _APPLIED


_APPLIED = frozenset({Ruling.AUTHOR, Ruling.KEY_ITSELF, Ruling.AUTHORITIES})


class Cause(enum.Enum):
    """Why a record is dead."""

    REVOKED = "revoked"  # an applied revocation names it
    KEY_REVOKED = "key-revoked"  # its author key was revoked
    PROVENANCE = "provenance"  # a lesson its provenance reaches is dead
    # Its provenance reaches a record this node never held, which a revocation names: most likely
    # the record was refused everywhere as dead, so it will never come to settle the question.
    # Taken down (not rendered, not counted) but no death certificate: it lives again if the
    # record arrives and the revocation turns out not to apply.
    UNRESOLVED = "unresolved"


@dataclass(frozen=True)
class RevocationVerdict:
    id: bytes
    signer: bytes
    target: bytes
    target_kind: TargetKind
    ruling: Ruling

    @property
    def applied(self) -> bool:
        return self.ruling.applied


@dataclass(frozen=True)
class Takedown:
    """Why one record is dead, and which revocation records did it.

    ``chain`` is empty for a record revoked directly or through its key; for a lesson taken down
    through its provenance it is the path of lesson ids from the dead ancestor (first) down to this
    lesson's parent (last), shortest first.
    """

    cause: Cause
    revocations: tuple[bytes, ...]  # the applied revocation records at the origin of it
    chain: tuple[bytes, ...] = ()
    key: bytes | None = None  # the revoked key, for Cause.KEY_REVOKED (and a chain that began there)


class Refusal(enum.Enum):
    """Why intake refuses a record for good (the store's Admission returns the value)."""

    DEAD_ID = "revoked record"
    DEAD_KEY = "signed by a revoked key"
    REVOKED_BY_AUTHOR = "its author has revoked it"
    DEAD_PARENT = "derived from a revoked lesson"


# The reason the gossip core gives for a record its ``is_dead`` hook refused.
REFUSED_AS_DEAD = "dead"
_DEATH_REASONS = frozenset({REFUSED_AS_DEAD} | {refusal.value for refusal in Refusal})


def refused_as_dead(reason: str) -> bool:
    """Whether a refusal reason (as a store or the gossip core recorded it) is a death certificate."""
    return reason in _DEATH_REASONS


@dataclass(frozen=True)
class Revocations:
    """The outcome of :func:`resolve`: rulings, takedowns and death certificates."""

    verdicts: Mapping[bytes, RevocationVerdict]  # revocation id -> what was made of it
    takedowns: Mapping[bytes, Takedown]  # dead record id -> why (held records and unheld targets)
    dead_ids: frozenset[bytes]
    dead_keys: frozenset[bytes]
    # Target id -> keys that signed a revocation of it while it was not held: when the record
    # arrives signed by one of them, its author has revoked it.
    pending: Mapping[bytes, frozenset[bytes]] = field(default_factory=lambda: MappingProxyType({}))

    def refusal(self, signed: SignedRecord) -> Refusal | None:
        """Why intake must refuse this record for good, or None.

        Revocations signed by a revoked key are still taken: they can only take things down, and
        a key's own revocation is signed by that key.
        """
        if signed.id in self.dead_ids:
            return Refusal.DEAD_ID
        record = signed.record
        if isinstance(record, Revocation):
            return None
        if record.author in self.dead_keys:
            return Refusal.DEAD_KEY
        if record.author in self.pending.get(signed.id, ()):
            return Refusal.REVOKED_BY_AUTHOR
        if isinstance(record, Lesson) and any(parent in self.dead_ids for parent in record.parents):
            return Refusal.DEAD_PARENT
        return None

    def refuses(self, signed: SignedRecord) -> str | None:
        """The store's ``Admission``: a reason to refuse, or None to accept."""
        refusal = self.refusal(signed)
        return None if refusal is None else refusal.value


def rule(
    revocations: Iterable[SignedRecord],
    authors: Mapping[bytes, bytes],
    *,
    authorities: frozenset[bytes],
    threshold: int,
    irrevocable: frozenset[bytes] = frozenset(),
) -> dict[bytes, RevocationVerdict]:
    """Rule on each revocation: applied (and on what ground) or not (and why not).

    ``authors`` maps the id of every record the node holds to its author key; ``irrevocable`` is
    the set of held revocation ids. Rulings do not depend on each other's order: the threshold is
    counted over all revocations of the same target at once.
    """
    revocations = list(revocations)
    signers: dict[tuple[bytes, TargetKind], set[bytes]] = defaultdict(set)
    for signed in revocations:
        record: Revocation = signed.record
        if record.author in authorities:
            signers[(record.target, record.target_kind)].add(record.author)
    verdicts: dict[bytes, RevocationVerdict] = {}
    for signed in revocations:
        record = signed.record
        target, kind, signer = record.target, record.target_kind, record.author
        if kind is TargetKind.RECORD and target in irrevocable:
            ruling = Ruling.IRREVOCABLE
        elif kind is TargetKind.RECORD and authors.get(target) == signer:
            ruling = Ruling.AUTHOR
        elif kind is TargetKind.KEY and target == signer:
            ruling = Ruling.KEY_ITSELF
        elif signer in authorities:
            enough = len(signers[(target, kind)]) >= threshold
            ruling = Ruling.AUTHORITIES if enough else Ruling.BELOW_THRESHOLD
        elif kind is TargetKind.RECORD and target not in authors:
            ruling = Ruling.TARGET_UNKNOWN
        else:
            ruling = Ruling.UNAUTHORIZED
        verdicts[signed.id] = RevocationVerdict(signed.id, signer, target, kind, ruling)
    return verdicts


def resolve(
    records: Iterable[SignedRecord],
    *,
    authorities: frozenset[bytes] = frozenset(),
    threshold: int = 2,
    refused: Iterable[bytes] = (),
) -> Revocations:
    """Which revocations apply among the records held, and everything they take down.

    ``refused`` are the ids of records this node refused at intake as dead (``refused_as_dead``):
    it never held them, so no held record says they are dead any more, but they are, and so is
    every lesson derived from them — including one that arrives later, or arrived first.
    """
    held: dict[bytes, SignedRecord] = {}
    revocations: list[SignedRecord] = []
    for signed in records:
        if isinstance(signed.record, Revocation):
            revocations.append(signed)
        else:
            held[signed.id] = signed
    authors = {rid: signed.record.author for rid, signed in held.items()}
    irrevocable = frozenset(signed.id for signed in revocations)
    verdicts = rule(revocations, authors, authorities=authorities, threshold=threshold, irrevocable=irrevocable)

    by_target: dict[bytes, list[bytes]] = defaultdict(list)
    by_key: dict[bytes, list[bytes]] = defaultdict(list)
    pending: dict[bytes, set[bytes]] = defaultdict(set)
    for verdict in sorted(verdicts.values(), key=lambda v: v.id):
        if verdict.applied:
            (by_key if verdict.target_kind is TargetKind.KEY else by_target)[verdict.target].append(verdict.id)
        elif verdict.ruling is Ruling.TARGET_UNKNOWN:
            pending[verdict.target].add(verdict.signer)
    dead_keys = frozenset(by_key)

    takedowns: dict[bytes, Takedown] = {}
    for target in sorted(by_target):
        takedowns[target] = Takedown(Cause.REVOKED, tuple(by_target[target]))
    revoking: dict[bytes, list[bytes]] = defaultdict(list)
    for verdict in sorted(verdicts.values(), key=lambda v: v.id):
        revoking[verdict.target].append(verdict.id)
    for rid in sorted(set(refused) - set(held) - set(takedowns)):
        takedowns[rid] = Takedown(Cause.REVOKED, tuple(revoking.get(rid, ())))
    if dead_keys:
        for rid in sorted(rid for rid, signed in held.items() if signed.record.author in dead_keys):
            author = held[rid].record.author
            takedowns.setdefault(rid, Takedown(Cause.KEY_REVOKED, tuple(by_key[author]), key=author))
    lessons = {rid: s.record for rid, s in held.items() if s.type is RecordType.LESSON}  # records or trust's facts
    _cascade(lessons, takedowns)
    unresolved = {target: Takedown(Cause.UNRESOLVED, tuple(revoking[target]))
                  for target in sorted(pending) if target not in held and target not in takedowns}
    if unresolved:
        _cascade(lessons, unresolved)
        for rid, takedown in unresolved.items():
            if rid in lessons and rid not in takedowns:
                takedowns[rid] = Takedown(Cause.UNRESOLVED, takedown.revocations, takedown.chain, takedown.key)
    return Revocations(
        verdicts=MappingProxyType(verdicts),
        takedowns=MappingProxyType(takedowns),
        dead_ids=frozenset(rid for rid, takedown in takedowns.items() if takedown.cause is not Cause.UNRESOLVED),
        dead_keys=dead_keys,
        pending=MappingProxyType({target: frozenset(keys) for target, keys in pending.items()}),
    )


def _cascade(lessons: Mapping[bytes, Lesson], takedowns: dict[bytes, Takedown]) -> None:
    """Kill every held lesson whose provenance reaches a dead id (multi-source BFS: shortest chains)."""
    children: dict[bytes, list[bytes]] = defaultdict(list)
    for rid in sorted(lid for lid, lesson in lessons.items() if lesson.parents):
        for parent in lessons[rid].parents:
            children[parent].append(rid)
    queue = deque(rid for rid in takedowns if rid in children)  # takedowns is already in a fixed order
    while queue:
        parent = queue.popleft()
        origin = takedowns[parent]
        for child in children.get(parent, ()):
            if child in takedowns:
                continue
            takedowns[child] = Takedown(Cause.PROVENANCE, origin.revocations, origin.chain + (parent,), origin.key)
            queue.append(child)
