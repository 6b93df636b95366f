"""Independence counting, trust policies, promotion and fade-out (commons.core.trust.evaluation).

Every record is really signed, with keys from fixed seeds; :class:`World` builds them.
"""

from __future__ import annotations

import dataclasses

import nacl.signing
import pytest
from blake3 import blake3

from commons.config import TrustConfig
from commons.core.records import (
    Lesson,
    LessonKind,
    Outcome,
    Prediction,
    Revocation,
    Scope,
    SignedRecord,
    TargetKind,
    Verification,
    Vouch,
    sign,
)
from commons.core.trust.evaluation import LessonStatus, Policy, Reason, TrustPolicy, TrustView, evaluate

NETWORK = bytes(range(32))
DAY = 20_000  # the day most records are created on


class World:
    """A node's holdings, built from real signed records. Key 0 is the node itself ("me")."""

    def __init__(self) -> None:
        self.records: list[SignedRecord] = []
        self._keys: dict[int, nacl.signing.SigningKey] = {}
        self._serial = 0

    def key(self, n: int) -> nacl.signing.SigningKey:
        if n not in self._keys:
            self._keys[n] = nacl.signing.SigningKey(blake3(b"trust-test-key" + n.to_bytes(4, "big")).digest())
        return self._keys[n]

    def pk(self, n: int) -> bytes:
        return bytes(self.key(n).verify_key)

    def _add(self, record, signer: int) -> SignedRecord:
        signed = sign(record, self.key(signer))
        self.records.append(signed)
        return signed

    def _next(self) -> int:
        self._serial += 1
        return self._serial

    def lesson(
        self,
        author: int,
        *,
        text: str | None = None,
        parents: tuple[SignedRecord, ...] = (),
        supersedes: SignedRecord | None = None,
        created: int = DAY,
        prediction: Prediction | None = None,
    ) -> SignedRecord:
        n = self._next()
        record = Lesson(
            network=NETWORK,
            author=self.pk(author),
            created=created,
            kind=LessonKind.ERROR,
            text=text or f"pip {n} fails behind the proxy without the index url.",
            scope=Scope.SHARED,
            topics=("pip",),
            prediction=prediction or Prediction(f"installing package {n}", f"error {n}"),
            parents=tuple(sorted(p.id for p in parents)),
            supersedes=supersedes.id if supersedes else None,
        )
        return self._add(record, author)

    def verify(
        self,
        verifier: int,
        lesson: SignedRecord,
        outcome: Outcome = Outcome.CONFIRMED,
        *,
        received: int = DAY + 1,
        observed: int = DAY + 2,
        naive: bool = True,
        created: int | None = None,
    ) -> SignedRecord:
        record = Verification(
            network=NETWORK,
            author=self.pk(verifier),
            created=created if created is not None else observed,
            lesson=lesson.id,
            outcome=outcome,
            evidence=blake3(b"evidence" + self._next().to_bytes(4, "big")).digest(),
            received=received,
            observed=observed,
            naive=naive,
        )
        return self._add(record, verifier)

    def vouch(self, voucher: int, subject: int) -> SignedRecord:
        return self._add(Vouch(network=NETWORK, author=self.pk(voucher), created=DAY, subject=self.pk(subject)), voucher)

    def revoke(self, signer: int, target: bytes, kind: TargetKind = TargetKind.RECORD, created: int = DAY + 5):
        record = Revocation(
            network=NETWORK, author=self.pk(signer), created=created, target=target, target_kind=kind, reason="wrong"
        )
        return self._add(record, signer)

    def trust_directly(self, *keys: int) -> None:
        """The node vouches for each key: each is one hop from the root and its own anchor."""
        for key in keys:
            self.vouch(0, key)

    def reasons_by_key(self, view: TrustView, lesson: SignedRecord) -> dict[int, Reason | None]:
        """Each verifier's (latest) verdict on a lesson, by key number."""
        numbers = {pk: n for n in self._keys for pk in [self.pk(n)]}
        return {numbers[v.verifier]: v.reason for v in view.lessons[lesson.id].verdicts}

    def evaluate(self, policy: TrustPolicy | None = None, **kwargs) -> TrustView:
        return evaluate(self.records, me=self.pk(0), policy=policy or TrustPolicy(), **kwargs)


def reasons(view: TrustView, lesson: SignedRecord) -> list[Reason | None]:
    return [v.reason for v in view.lessons[lesson.id].verdicts]


@pytest.fixture
def world() -> World:
    return World()


# --- promotion -------------------------------------------------------------------------------------


def test_lesson_becomes_common_at_exactly_required_confirmations(world: World):
    world.trust_directly(2, 3, 4)
    lesson = world.lesson(1)
    world.verify(2, lesson)
    world.verify(3, lesson)
    before = world.evaluate()
    assert before.status(lesson.id) is LessonStatus.CANDIDATE
    assert before.lessons[lesson.id].confirmations == 2

    world.verify(4, lesson)
    after = world.evaluate()
    assert after.status(lesson.id) is LessonStatus.COMMON
    assert after.lessons[lesson.id].independent == 3


def test_own_lessons_are_own_and_authors_lessons_are_common_on_arrival(world: World):
    mine = world.lesson(0)
    by_my_other_agent = world.lesson(7)
    by_stranger = world.lesson(8)
    view = world.evaluate(TrustPolicy(authors=frozenset({world.pk(7)})))
    assert view.status(mine.id) is LessonStatus.OWN
    assert view.status(by_my_other_agent.id) is LessonStatus.COMMON
    assert view.lessons[by_my_other_agent.id].trusted_author
    assert view.status(by_stranger.id) is LessonStatus.CANDIDATE


# --- what does not count -----------------------------------------------------------------------------


def test_authors_own_confirmation_does_not_count(world: World):
    world.trust_directly(1)
    lesson = world.lesson(1)
    world.verify(1, lesson)
    assert reasons(world.evaluate(), lesson) == [Reason.AUTHOR]


def test_provenance_authors_confirmation_does_not_count(world: World):
    world.trust_directly(1, 2, 3)
    grandparent = world.lesson(1)
    parent = world.lesson(2, parents=(grandparent,))
    child = world.lesson(3, parents=(parent,))
    world.verify(1, child)
    world.verify(2, child)
    assert reasons(world.evaluate(), child) == [Reason.PROVENANCE_AUTHOR, Reason.PROVENANCE_AUTHOR]


def test_non_naive_confirmation_does_not_count(world: World):
    world.trust_directly(2)
    lesson = world.lesson(1)
    world.verify(2, lesson, naive=False)
    assert reasons(world.evaluate(), lesson) == [Reason.NOT_NAIVE]


def test_naivety_is_contradicted_by_a_similar_lesson_the_verifier_wrote_before_receipt(world: World):
    world.trust_directly(2, 3)
    lesson = world.lesson(1, text="The build cache goes stale after a compiler upgrade.")
    world.lesson(2, text="the build cache goes STALE after a compiler upgrade", created=DAY - 3)
    world.lesson(3, text="The build cache goes stale after a compiler upgrade!", created=DAY + 1)  # on receipt day
    world.verify(2, lesson, received=DAY + 1)
    world.verify(3, lesson, received=DAY + 1)
    assert world.reasons_by_key(world.evaluate(), lesson) == {2: Reason.CONTRADICTED_NAIVETY, 3: None}


def test_naivety_is_contradicted_by_a_receipt_claimed_before_the_lesson_existed(world: World):
    world.trust_directly(2, 3)
    lesson = world.lesson(1, created=DAY)
    world.verify(2, lesson, received=DAY - 5)
    world.verify(3, lesson, received=DAY - 1)  # a day of clock tolerance, as for any record
    assert world.reasons_by_key(world.evaluate(), lesson) == {2: Reason.CONTRADICTED_NAIVETY, 3: None}


def test_equal_prediction_is_similar_and_a_caller_may_supply_its_own_similarity(world: World):
    world.trust_directly(2)
    prediction = Prediction("running the test suite", "the fixture times out")
    lesson = world.lesson(1, prediction=prediction)
    world.lesson(2, text="Something worded quite differently.", prediction=prediction, created=DAY - 1)
    world.verify(2, lesson)
    assert reasons(world.evaluate(), lesson) == [Reason.CONTRADICTED_NAIVETY]
    assert reasons(world.evaluate(similar=lambda a, b: False), lesson) == [None]


def test_a_keys_latest_verification_replaces_its_earlier_ones(world: World):
    world.trust_directly(2)
    lesson = world.lesson(1)
    first = world.verify(2, lesson, Outcome.CONFIRMED, observed=DAY + 2)
    last = world.verify(2, lesson, Outcome.FAILED, observed=DAY + 9)
    view = world.evaluate()
    assert view.verifications[first.id].reason is Reason.DUPLICATE_KEY
    assert view.verifications[last.id].counted
    assert (view.lessons[lesson.id].confirmations, view.lessons[lesson.id].failures) == (0, 1)


def test_untrusted_keys_confirmation_does_not_count_under_web_of_trust(world: World):
    lesson = world.lesson(1)
    world.verify(2, lesson)
    assert reasons(world.evaluate(), lesson) == [Reason.UNTRUSTED]


def test_open_policy_counts_any_key_and_allowlist_only_the_roots(world: World):
    lesson = world.lesson(1)
    for verifier in (2, 3, 4):
        world.verify(verifier, lesson)
    world.trust_directly(2, 3, 4)  # vouches mean nothing to an allowlist
    open_view = world.evaluate(TrustPolicy(policy=Policy.OPEN))
    assert open_view.status(lesson.id) is LessonStatus.COMMON

    allow = TrustPolicy(policy=Policy.ALLOWLIST, roots=frozenset({world.pk(2)}), authors=frozenset({world.pk(3)}))
    assert world.reasons_by_key(world.evaluate(allow), lesson) == {2: None, 3: None, 4: Reason.UNTRUSTED}
    assert world.evaluate(allow).status(lesson.id) is LessonStatus.CANDIDATE


def test_keys_beyond_max_depth_are_untrusted(world: World):
    world.vouch(0, 2)
    world.vouch(2, 3)
    world.vouch(3, 4)  # three hops from the root: beyond the default max_depth of 2
    lesson = world.lesson(1)
    for verifier in (2, 3, 4):
        world.verify(verifier, lesson)
    view = world.evaluate()
    assert dict(view.web.depth) == {world.pk(2): 1, world.pk(3): 2}
    assert world.reasons_by_key(view, lesson) == {2: None, 3: None, 4: Reason.UNTRUSTED}


# --- the cap: sybils and attack edges --------------------------------------------------------------


def test_fifty_fresh_keys_vouched_only_by_one_key_cannot_promote_a_lesson(world: World):
    world.vouch(0, 2)  # key 2 is trusted; it vouches for fifty fresh keys
    lesson = world.lesson(1)
    for fresh in range(100, 150):
        world.vouch(2, fresh)
        world.verify(fresh, lesson)
    world.verify(2, lesson)
    view = world.evaluate()
    state = view.lessons[lesson.id]
    assert state.confirmations == TrustPolicy().max_per_voucher == 2
    assert state.status is LessonStatus.CANDIDATE
    assert [v.reason for v in state.verdicts].count(Reason.VOUCHER_CAP) == 49


def test_a_sybil_crowd_behind_few_attack_edges_is_capped(world: World):
    edges = range(2, 12)  # ten honest keys the node trusts, each vouching for a hundred sybils
    world.trust_directly(*edges)
    false_lesson = world.lesson(1)
    sybils = range(1000, 2000)
    for sybil in sybils:
        world.vouch(edges[sybil % 10], sybil)
        world.verify(sybil, false_lesson)
    state = world.evaluate().lessons[false_lesson.id]
    assert state.confirmations == 2 * len(edges)  # max_per_voucher per attack edge, not a thousand

    # A node whose web does not reach the edges within max_depth is not moved at all.
    elsewhere = evaluate(world.records, me=world.pk(500), policy=TrustPolicy())
    assert elsewhere.lessons[false_lesson.id].confirmations == 0
    assert elsewhere.status(false_lesson.id) is LessonStatus.CANDIDATE


def test_one_attack_edge_alone_cannot_promote_but_sybils_vouched_by_two_edges_share_their_capacity(world: World):
    world.trust_directly(2, 3)
    lesson = world.lesson(1)
    for sybil in range(100, 120):
        world.vouch(2, sybil)
        world.vouch(3, sybil)
        world.verify(sybil, lesson)
    state = world.evaluate(TrustPolicy(required=5)).lessons[lesson.id]
    assert state.confirmations == 4  # two anchors, two each: doubly-vouched keys are still capped
    assert state.status is LessonStatus.CANDIDATE


def test_cap_moves_keys_between_anchors_so_no_honest_key_is_lost(world: World):
    world.trust_directly(2, 3)
    world.vouch(2, 10)
    world.vouch(3, 10)  # key 10 hangs from anchors 2 and 3
    world.vouch(2, 11)  # key 11 only from anchor 2
    lesson = world.lesson(1)
    world.verify(11, lesson, observed=DAY + 2)
    world.verify(10, lesson, observed=DAY + 3)  # most recent: matched first, to anchor 2
    state = world.evaluate(TrustPolicy(max_per_voucher=1)).lessons[lesson.id]
    assert state.confirmations == 2
    assert {v.anchor for v in state.verdicts} == {world.pk(2), world.pk(3)}


def test_roots_are_not_capped(world: World):
    roots = frozenset(world.pk(n) for n in (2, 3, 4))
    lesson = world.lesson(1)
    for verifier in (0, 2, 3, 4):
        world.verify(verifier, lesson)
    state = world.evaluate(TrustPolicy(roots=roots, max_per_voucher=1)).lessons[lesson.id]
    assert state.confirmations == 4


def test_revoking_a_vouch_removes_the_trust_it_gave(world: World):
    world.trust_directly(2, 3)
    vouch = world.vouch(0, 4)
    lesson = world.lesson(1)
    for verifier in (2, 3, 4):
        world.verify(verifier, lesson)
    assert world.evaluate().status(lesson.id) is LessonStatus.COMMON

    world.revoke(0, vouch.id)
    view = world.evaluate()
    assert world.pk(4) not in view.web.depth
    assert view.status(lesson.id) is LessonStatus.CANDIDATE
    assert world.reasons_by_key(view, lesson)[4] is Reason.UNTRUSTED


# --- fade-out ----------------------------------------------------------------------------------------


def test_common_lesson_fades_out_when_outcomes_turn_to_failures_and_returns_when_they_recover(world: World):
    verifiers = range(2, 20)
    world.trust_directly(*verifiers)
    lesson = world.lesson(1)
    for verifier in verifiers[:4]:
        world.verify(verifier, lesson, observed=DAY + 2)
    assert world.evaluate().status(lesson.id) is LessonStatus.COMMON

    for verifier in verifiers[4:6]:
        world.verify(verifier, lesson, Outcome.FAILED, observed=DAY + 10)
    faded = world.evaluate().lessons[lesson.id]
    assert (faded.recent_confirmations, faded.recent_failures) == (4, 2)
    assert faded.status is LessonStatus.CANDIDATE  # 4 - 2 < 3

    for verifier in verifiers[6:9]:
        world.verify(verifier, lesson, observed=DAY + 20)
    assert world.evaluate().status(lesson.id) is LessonStatus.COMMON  # 7 - 2 >= 3


def test_only_the_latest_window_of_outcomes_decides(world: World):
    verifiers = range(2, 40)
    world.trust_directly(*verifiers)
    lesson = world.lesson(1)
    for verifier in verifiers[:20]:  # a long record of confirmations...
        world.verify(verifier, lesson, observed=DAY + 2)
    for verifier in verifiers[20:26]:  # ...then the world changes
        world.verify(verifier, lesson, Outcome.FAILED, observed=DAY + 30)
    state = world.evaluate().lessons[lesson.id]
    assert (state.confirmations, state.failures) == (20, 6)
    assert (state.recent_confirmations, state.recent_failures) == (4, 6)
    assert state.status is LessonStatus.CANDIDATE


# --- inputs ------------------------------------------------------------------------------------------


def test_today_leaves_out_records_dated_later(world: World):
    world.trust_directly(2, 3, 4)
    lesson = world.lesson(1)
    for verifier in (2, 3):
        world.verify(verifier, lesson, observed=DAY + 2)
    world.verify(4, lesson, observed=DAY + 30)
    assert world.evaluate(today=DAY + 10).status(lesson.id) is LessonStatus.CANDIDATE
    assert world.evaluate(today=DAY + 30).status(lesson.id) is LessonStatus.COMMON


def test_policy_is_built_from_the_config_section():
    key = "ab" * 32
    config = TrustConfig(required=4, policy="allowlist", roots=(key,), recent_window=7, revocation_authorities=(key,))
    policy = config.trust_policy()
    assert policy.policy is Policy.ALLOWLIST and policy.roots == frozenset({bytes.fromhex(key)})
    assert (policy.required, policy.recent_window, policy.window) == (4, 7, 7)
    assert dataclasses.replace(policy, recent_window=2).window == 4  # never narrower than required
    assert TrustConfig().trust_policy() == TrustPolicy()


def test_verification_of_a_lesson_not_held_is_reported_and_counts_for_nothing(world: World):
    other = World()
    absent = other.lesson(1)
    verification = world.verify(2, absent)
    view = world.evaluate()
    assert view.verifications[verification.id].reason is Reason.LESSON_UNKNOWN
    assert absent.id not in view.lessons
