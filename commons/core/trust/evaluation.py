"""Trust: which confirmations count, and so which lessons are common, as this node sees it.

Trust is local and derived. :func:`evaluate` takes every record the node holds (already verified:
valid signature, right network), the node's own author key and its :class:`TrustPolicy`, and
recomputes from scratch what each lesson's status is and why. Nothing here is stored as truth;
the store keeps records, this module says what they amount to. docs/trust.md holds the attack
model and the reasons for the defaults; the rules, in the order they are applied:

1. **Revocation** (:mod:`commons.core.trust.revocation`): dead records and dead keys are worked out
   first; nothing dead counts, and a vouch that is dead gives no trust.
2. **Web of trust**: the roots are this node's own key, ``roots`` and ``authors``. A key
   reachable over live vouches within ``max_depth`` hops is trusted; its *anchors* are the keys
   one hop from a root through which it is reached (a key one hop away is its own anchor).
3. **Independence**, per verification of a lesson: it counts unless the lesson or the verifier's
   key or the verification itself is revoked, the verifier is the lesson's author or an author
   anywhere in its provenance, the policy does not trust the key, a later verification by the
   same key replaces it, it claims a receipt before the lesson was created, or — unless it reports
   a test of the fix the lesson names (rule 5: the fix ran after receipt, whatever the verifier
   knew before) — it says it was not naive, or the checkable naivety rule contradicts it
   (``commons.core.trust.naivety``: the verifier authored a similar lesson before the day it claims
   to have received this one).
4. **Cap** (web-of-trust only): each anchor vouches for at most ``max_per_voucher`` counted
   outcomes per lesson; keys are matched to their anchors, most recent outcome first, so any set
   of keys hanging from E anchors adds at most ``E * max_per_voucher`` outcomes. Roots are not
   capped.
5. **The fix** (``commons.core.trust.fixes``): for a lesson that names a fix, a verification counts
   as a confirmation only when the verifier's sessions ran that fix and saw the failing step then
   succeed (``fix-confirmed``); one resolved another way or that saw the fix fail counts against;
   meeting the failure alone (and every version 1 verification) does not count. A lesson naming
   no fix counts every verification by its prediction. Checked before the cap: a verification
   that does not count takes no anchor's slot.
6. **Status**: a lesson is common when, among its latest ``max(recent_window, required)`` counted
   outcomes, confirmations outnumber failures by at least ``required`` (one by an ``authors`` key:
   unless failures outnumber confirmations by ``required``). The same rule promotes a
   candidate and fades a common lesson back out, and promotes it again when outcomes recover.
"""

from __future__ import annotations

import enum
import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from commons.core.records import FUTURE_TOLERANCE_DAYS, Lesson, Outcome, SignedRecord, Verification, Vouch
from commons.core.trust.fixes import claim_of, counted_outcome, tests_fix
from commons.core.trust.naivety import Naivety, Similar, same_lesson
from commons.core.trust.revocation import Revocations, Takedown, resolve


class Policy(enum.Enum):
    OPEN = "open"  # any valid key counts: for private networks whose every key is known
    WEB_OF_TRUST = "web-of-trust"  # keys reachable from the roots over vouches, capped per anchor
    ALLOWLIST = "allowlist"  # only the roots (this node, `roots`, `authors`)


@dataclass(frozen=True)
class TrustPolicy:
    """The trust settings :func:`evaluate` needs (keys as bytes); see ``TrustConfig`` for each."""

    required: int = 3
    policy: Policy = Policy.WEB_OF_TRUST
    roots: frozenset[bytes] = frozenset()
    authors: frozenset[bytes] = frozenset()
    max_depth: int = 2
    max_per_voucher: int = 2
    revocation_authorities: frozenset[bytes] = frozenset()
    revocation_threshold: int = 2
    recent_window: int = 10

    def __post_init__(self) -> None:
        for name in ("required", "max_per_voucher", "revocation_threshold", "recent_window"):
            if getattr(self, name) < 1:
                raise ValueError(f"TrustPolicy.{name} must be at least 1")
        if self.max_depth < 0:
            raise ValueError("TrustPolicy.max_depth must not be negative")

    @property
    def window(self) -> int:
        """How many latest counted outcomes decide status: never fewer than ``required``."""
        return max(self.recent_window, self.required)


class Reason(enum.Enum):
    """Why a verification did not count (``commons why`` prints these), in the order checked."""

    LESSON_UNKNOWN = "the lesson it verifies is not held"
    LESSON_REVOKED = "the lesson is revoked"
    REVOKED_KEY = "the verifier's key is revoked"
    REVOKED_RECORD = "the verification itself is revoked"
    AUTHOR = "the verifier wrote the lesson"
    PROVENANCE_AUTHOR = "the verifier wrote a lesson this one derives from"
    UNTRUSTED = "the trust policy does not trust the verifier's key"
    DUPLICATE_KEY = "a later verification by the same key replaces it"
    # Only for what a verification says of the prediction: a test of the named fix needs no naivety.
    NOT_NAIVE = "the verifier had met the surprise before receiving the lesson"
    # It wrote a similar lesson before the day it claims to have received this one, or it claims a
    # receipt before the lesson was created (beyond a day of clock tolerance).
    CONTRADICTED_NAIVETY = "the verifier's claim of naivety is contradicted by the records"
    # The lesson names a fix, and this verification does not say the fix was run (a version 1
    # verifier, a failure met and not resolved, a prevention), or confirms a fix no one can check.
    PREDICTION_ONLY = "the lesson names a fix and this verification does not show that fix working or failing"
    VOUCHER_CAP = "its anchor already vouches for max_per_voucher outcomes of this lesson"


class LessonStatus(enum.Enum):
    """A lesson's standing at this node. OWN is the personal layer; the rest are the commons layer."""

    OWN = "own"  # signed by this node's key: the person's own lesson, never earns or loses trust
    CANDIDATE = "candidate"  # received, not (or no longer) enough independent support
    COMMON = "common"  # by one of the person's `authors`, or supported by independent outcomes
    SUPERSEDED = "superseded"  # its author published a newer version; derivatives stay
    REVOKED = "revoked"  # dead: itself, its key or its provenance revoked


@dataclass(frozen=True)
class WebOfTrust:
    roots: frozenset[bytes]  # live roots: this node, `roots`, `authors`, minus revoked keys
    depth: Mapping[bytes, int]  # reachable non-root key -> fewest vouches from a root
    anchors: Mapping[bytes, frozenset[bytes]]  # reachable non-root key -> the keys it hangs from

    def trusts(self, key: bytes) -> bool:
        return key in self.roots or key in self.depth


@dataclass(frozen=True, slots=True)  # one per verification held: slots keep 10^6 of them small
class VerificationVerdict:
    id: bytes
    lesson: bytes
    verifier: bytes
    outcome: Outcome  # what it counts as (for a lesson naming a fix, what it saw of the fix)
    counted: bool
    reason: Reason | None  # why it did not count; None when it counted
    recent: bool = False  # counted and among the latest outcomes that decide the lesson's status
    anchor: bytes | None = None  # the anchor it was charged to under the cap (web-of-trust, non-root)


@dataclass(frozen=True, slots=True)  # one per lesson held
class LessonState:
    id: bytes
    author: bytes
    status: LessonStatus
    confirmations: int  # counted confirmations (one per independent key)
    failures: int  # counted failures
    recent_confirmations: int  # within the deciding window
    recent_failures: int
    verdicts: tuple[VerificationVerdict, ...]  # every verification of it held, oldest first
    trusted_author: bool = False  # by one of the person's `authors`: common on arrival
    superseded_by: bytes | None = None
    takedown: Takedown | None = None

    @property
    def independent(self) -> int:
        """Distinct independent keys whose latest outcome counted."""
        return self.confirmations + self.failures


@dataclass(frozen=True)
class TrustView:
    """Everything :func:`evaluate` concluded; frozen and derived, recomputed rather than updated."""

    lessons: Mapping[bytes, LessonState]
    verifications: Mapping[bytes, VerificationVerdict]
    revocations: Revocations
    web: WebOfTrust

    @property
    def dead_ids(self) -> frozenset[bytes]:
        return self.revocations.dead_ids

    @property
    def dead_keys(self) -> frozenset[bytes]:
        return self.revocations.dead_keys

    @property
    def revoked(self) -> Mapping[bytes, Takedown]:
        """Every dead record id with the revocation (and provenance chain) that took it down."""
        return self.revocations.takedowns

    def status(self, lesson_id: bytes) -> LessonStatus | None:
        state = self.lessons.get(lesson_id)
        return None if state is None else state.status

    def with_status(self, status: LessonStatus) -> tuple[bytes, ...]:
        return tuple(sorted(lid for lid, state in self.lessons.items() if state.status is status))

    def refuses(self, signed: SignedRecord) -> str | None:
        """Intake's admission check: why a record must be refused for good, or None."""
        return self.revocations.refuses(signed)


# --- the web of trust ----------------------------------------------------------------------------


def web_of_trust(vouches: Iterable[Vouch], roots: frozenset[bytes], max_depth: int) -> WebOfTrust:
    """Keys reachable from ``roots`` over ``vouches`` (all live) within ``max_depth`` hops, with anchors.

    A key's anchors are the first hops (keys vouched for by a root) of every path of at most
    ``max_depth`` vouches that reaches it. Roots are never anchored: they are trusted outright.
    """
    vouched: dict[bytes, set[bytes]] = defaultdict(set)
    for vouch in vouches:
        vouched[vouch.author].add(vouch.subject)
    depth: dict[bytes, int] = {}
    anchors: dict[bytes, set[bytes]] = defaultdict(set)
    layer: dict[bytes, set[bytes]] = {}
    for root in sorted(roots):
        for subject in vouched.get(root, ()):
            if subject not in roots:
                layer[subject] = {subject}
    hops = 1
    while layer and hops <= max_depth:
        following: dict[bytes, set[bytes]] = defaultdict(set)
        for key, reached_through in layer.items():
            depth.setdefault(key, hops)
            anchors[key] |= reached_through
            if hops < max_depth:
                for subject in vouched.get(key, ()):
                    if subject not in roots:
                        following[subject] |= reached_through
        layer, hops = following, hops + 1
    return WebOfTrust(
        roots=roots,
        depth=MappingProxyType(depth),
        anchors=MappingProxyType({key: frozenset(found) for key, found in anchors.items()}),
    )


@functools.lru_cache(maxsize=1 << 14)
def _in_order(anchors: frozenset[bytes]) -> tuple[bytes, ...]:
    """A key's anchors in a fixed order; the same few sets recur for every verification a key signs."""
    return tuple(sorted(anchors))


def _match_anchors(keys: list[bytes], anchors: Mapping[bytes, frozenset[bytes]], capacity: int) -> dict[bytes, bytes]:
    """Charge keys (in priority order) to anchors, at most ``capacity`` per anchor.

    A key is taken when it can be matched, moving earlier keys between their anchors if need be
    (augmenting paths), so the keys taken are the greedy-by-priority maximum matching: no honest
    key is refused while an assignment that takes it and every earlier one exists.
    """
    if len(keys) <= capacity:  # no anchor can fill: each key goes to its first anchor, as ``place`` would put it
        return {key: order[0] for key in keys if (order := _in_order(anchors[key]))}
    holders: dict[bytes, list[bytes]] = defaultdict(list)
    charged: dict[bytes, bytes] = {}

    def place(key: bytes, seen: set[bytes]) -> bool:
        for anchor in _in_order(anchors[key]):
            if anchor in seen:
                continue
            seen.add(anchor)
            if len(holders[anchor]) < capacity:
                holders[anchor].append(key)
                charged[key] = anchor
                return True
            for other in list(holders[anchor]):
                if place(other, seen):
                    holders[anchor].remove(other)
                    holders[anchor].append(key)
                    charged[key] = anchor
                    return True
        return False

    for key in keys:
        place(key, set())
    return charged


# --- evaluation ----------------------------------------------------------------------------------


def _provenance_authors(lessons: Mapping[bytes, Lesson]) -> dict[bytes, frozenset[bytes]]:
    """For each lesson, the authors of it and of every ancestor the node holds."""
    found: dict[bytes, frozenset[bytes]] = {}
    for start in lessons:
        provenance_of(start, lessons, found)
    return found


def provenance_of(start: bytes, lessons: Mapping[bytes, Lesson], found: dict[bytes, frozenset[bytes]]) -> frozenset[bytes]:
    """The authors of lesson ``start`` and of every ancestor held (iterative, cycle-safe), memoised in ``found``."""
    stack = [(start, False)]
    opened: set[bytes] = set()
    while stack:
        lid, ready = stack.pop()
        if lid in found:
            continue
        lesson = lessons[lid]
        if not ready:
            opened.add(lid)
            stack.append((lid, True))
            stack.extend((p, False) for p in lesson.parents if p in lessons and p not in found and p not in opened)
            continue
        authors = {lesson.author}
        for parent in lesson.parents:
            authors |= found.get(parent, frozenset())
        found[lid] = frozenset(authors)
    return found[start]


def _recency(signed: SignedRecord) -> tuple[int, int, bytes]:
    record: Verification = signed.record
    return record.observed, record.created, signed.id


def evaluate(
    records: Iterable[SignedRecord],
    *,
    me: bytes,
    policy: TrustPolicy,
    similar: Similar = same_lesson,
    today: int | None = None,
    refused: Iterable[bytes] = (),
) -> TrustView:
    """What every record the node holds amounts to, under ``policy``, for the node whose key is ``me``.

    ``records`` must already be verified (signature, network). ``today`` evaluates as of that day:
    records dated later (beyond the one day of clock tolerance) are left out. ``refused``: ids
    the node refused at intake as dead (see ``revocation.resolve``).
    """
    held = [s for s in records if today is None or s.record.created <= today + FUTURE_TOLERANCE_DAYS]
    revocations = resolve(held, authorities=policy.revocation_authorities, threshold=policy.revocation_threshold,
                          refused=refused)
    dead_ids, dead_keys = revocations.dead_ids, revocations.dead_keys

    lessons: dict[bytes, Lesson] = {}
    verifications: dict[bytes, list[SignedRecord]] = defaultdict(list)
    vouches: list[Vouch] = []
    for signed in held:
        record = signed.record
        if isinstance(record, Lesson):
            lessons[signed.id] = record
        elif isinstance(record, Verification):
            verifications[record.lesson].append(signed)
        elif isinstance(record, Vouch) and signed.id not in dead_ids:
            vouches.append(record)

    roots = frozenset({me} | policy.roots | policy.authors) - dead_keys
    web = web_of_trust(vouches, roots, policy.max_depth)
    if policy.policy is Policy.OPEN:
        trusts: Callable[[bytes], bool] = lambda key: True  # noqa: E731
    elif policy.policy is Policy.ALLOWLIST:
        trusts = roots.__contains__
    else:
        trusts = web.trusts
    provenance = _provenance_authors(lessons)
    naivety = Naivety(lessons, similar)

    superseded_by: dict[bytes, bytes] = {}
    for lid in sorted(lessons, key=lambda i: (lessons[i].created, i)):  # the latest successor wins
        old = lessons[lid].supersedes
        if old in lessons and lessons[old].author == lessons[lid].author and lid not in dead_ids:
            superseded_by[old] = lid

    verdicts: dict[bytes, VerificationVerdict] = {}
    states: dict[bytes, LessonState] = {}
    for lid, group in verifications.items():
        lesson = lessons.get(lid)
        if lesson is None:
            for signed in group:
                verdicts[signed.id] = _verdict(signed, Reason.LESSON_UNKNOWN)
            continue
        group.sort(key=_recency)  # oldest first, here and in every LessonState
        _judge(lid, lesson, group, verdicts, dead_ids, dead_keys, provenance[lid], trusts, naivety, web, policy)
    for lid, lesson in lessons.items():
        states[lid] = _state(lid, lesson, verifications.get(lid, ()), verdicts, me, policy, revocations, superseded_by)
    return TrustView(
        lessons=MappingProxyType(states),
        verifications=MappingProxyType(verdicts),
        revocations=revocations,
        web=web,
    )


def _verdict(
    signed: SignedRecord, reason: Reason | None, *, recent: bool = False, anchor: bytes | None = None
) -> VerificationVerdict:
    record: Verification = signed.record
    return VerificationVerdict(
        signed.id, record.lesson, record.author, record.outcome, reason is None, reason, recent, anchor
    )


def _refused(signed: SignedRecord, reason: Reason) -> VerificationVerdict:
    """A verdict that did not count, made positionally (most verifications a catch-up judges get one)."""
    record: Verification = signed.record
    return VerificationVerdict(signed.id, record.lesson, record.author, record.outcome, False, reason, False, None)


def _judge(
    lid: bytes,
    lesson: Lesson,
    group: list[SignedRecord],
    verdicts: dict[bytes, VerificationVerdict],
    dead_ids: frozenset[bytes],
    dead_keys: frozenset[bytes],
    provenance: frozenset[bytes],
    trusts: Callable[[bytes], bool],
    naivety: Naivety,
    web: WebOfTrust,
    policy: TrustPolicy,
) -> None:
    """Verdicts for every verification of one held lesson.

    Run for every lesson a batch touches while a node catches up, so it is written for speed: one
    pass over the group, positional constructors, no matching when the anchors cannot run out."""
    author = lesson.author
    if lid in dead_ids:
        for signed in group:
            verdicts[signed.id] = _refused(signed, Reason.LESSON_REVOKED)
        return
    latest: dict[bytes, SignedRecord] = {}  # verifier -> its latest verification (the group is in recency order)
    for signed in group:
        verifier = signed.record.author
        if verifier in dead_keys:
            reason = Reason.REVOKED_KEY
        elif signed.id in dead_ids:
            reason = Reason.REVOKED_RECORD
        elif verifier == author:
            reason = Reason.AUTHOR
        elif verifier in provenance:
            reason = Reason.PROVENANCE_AUTHOR
        elif not trusts(verifier):
            reason = Reason.UNTRUSTED
        else:
            older = latest.get(verifier)
            if older is not None:
                verdicts[older.id] = _refused(older, Reason.DUPLICATE_KEY)
            latest[verifier] = signed
            continue
        verdicts[signed.id] = _refused(signed, reason)

    eligible: dict[bytes, Outcome] = {}  # id -> what it counts as
    created = lesson.created
    claim = claim_of(lesson)
    for verifier, signed in latest.items():
        record: Verification = signed.record
        tested = tests_fix(claim, record.fix)  # what the fix did after receipt: naivety not needed
        if not record.naive and not tested:
            verdicts[signed.id] = _refused(signed, Reason.NOT_NAIVE)
        elif record.received + FUTURE_TOLERANCE_DAYS < created or (not tested and naivety.contradicted(
            verifier, lid, record.received
        )):  # a receipt claimed before the lesson existed is as false as one after writing it oneself
            verdicts[signed.id] = _refused(signed, Reason.CONTRADICTED_NAIVETY)
        elif (counted := counted_outcome(claim, record.outcome, record.fix)) is None:
            verdicts[signed.id] = _refused(signed, Reason.PREDICTION_ONLY)
        else:
            eligible[signed.id] = counted
    if not eligible:
        return

    # Most recent first: under the cap, fresh outcomes win the anchors' slots.
    ranked = [signed for signed in reversed(group) if signed.id in eligible]
    capped_policy = policy.policy is Policy.WEB_OF_TRUST
    charged: dict[bytes, bytes] = {}
    roots = web.roots
    if capped_policy:
        capped = [s.record.author for s in ranked if s.record.author not in roots]
        charged = _match_anchors(capped, web.anchors, policy.max_per_voucher)
    window = policy.window
    rank = 0  # among the counted, most recent first
    for signed in ranked:
        record = signed.record
        verifier = record.author
        if capped_policy and verifier not in roots and verifier not in charged:
            verdicts[signed.id] = _refused(signed, Reason.VOUCHER_CAP)
        else:
            verdicts[signed.id] = VerificationVerdict(signed.id, record.lesson, verifier, eligible[signed.id], True,
                                                      None, rank < window, charged.get(verifier))
            rank += 1


def _state(
    lid: bytes,
    lesson: Lesson,
    group: Iterable[SignedRecord],
    verdicts: Mapping[bytes, VerificationVerdict],
    me: bytes,
    policy: TrustPolicy,
    revocations: Revocations,
    superseded_by: Mapping[bytes, bytes],
) -> LessonState:
    mine = tuple([verdicts[s.id] for s in group])  # evaluate() sorted the group
    confirmed = failed = recent_confirmed = recent_failed = 0
    for verdict in mine:
        if verdict.counted:
            if verdict.outcome is _CONFIRMED:
                confirmed += 1
                recent_confirmed += verdict.recent
            else:
                failed += 1
                recent_failed += verdict.recent
    takedown = revocations.takedowns.get(lid)
    author = lesson.author
    trusted_author = author in policy.authors
    if takedown is not None:
        status = LessonStatus.REVOKED
    elif lid in superseded_by:
        status = LessonStatus.SUPERSEDED
    elif author == me:
        status = LessonStatus.OWN
    # A trusted author's lesson needs no confirmations, but the same margin of independent failures
    # that would promote a stranger's lesson takes it back out: trust in the author is not proof
    # that the lesson holds on every machine.
    elif (trusted_author and recent_failed - recent_confirmed < policy.required) \
            or recent_confirmed - recent_failed >= policy.required:
        status = LessonStatus.COMMON
    else:
        status = LessonStatus.CANDIDATE
    # Positional, in LessonState's field order: made for every lesson a batch touches, and the
    # keywords cost half as much again as the object.
    return LessonState(lid, author, status, confirmed, failed, recent_confirmed, recent_failed, mine, trusted_author,
                       superseded_by.get(lid), takedown)


_CONFIRMED = Outcome.CONFIRMED  # an enum member read from its class costs a lookup each time
