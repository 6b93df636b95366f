"""Revocation authority, the provenance cascade and death certificates (commons.core.trust.revocation).

Records are really signed, from fixed seeds, by tests.test_trust.World; key 0 is the node itself.
"""

from __future__ import annotations

import pytest

from commons.core.records import Outcome, Revocation, TargetKind
from commons.core.trust.revocation import Cause, Refusal, Ruling, resolve
from commons.core.trust.evaluation import LessonStatus, Reason, TrustPolicy
from tests.test_trust import DAY, World


@pytest.fixture
def world() -> World:
    return World()


def authorities(world: World, *keys: int, threshold: int = 2) -> TrustPolicy:
    return TrustPolicy(revocation_authorities=frozenset(world.pk(k) for k in keys), revocation_threshold=threshold)


# --- authority ---------------------------------------------------------------------------------------


def test_the_author_alone_may_revoke_its_record(world: World):
    lesson = world.lesson(1)
    revocation = world.revoke(1, lesson.id)
    view = world.evaluate()
    assert view.revocations.verdicts[revocation.id].ruling is Ruling.AUTHOR
    assert view.status(lesson.id) is LessonStatus.REVOKED
    assert view.revoked[lesson.id].cause is Cause.REVOKED
    assert view.revoked[lesson.id].revocations == (revocation.id,)


def test_an_unauthorized_revocation_is_not_applied(world: World):
    lesson = world.lesson(1)
    revocation = world.revoke(2, lesson.id)
    view = world.evaluate()
    assert view.revocations.verdicts[revocation.id].ruling is Ruling.UNAUTHORIZED
    assert not view.revocations.verdicts[revocation.id].applied
    assert view.status(lesson.id) is LessonStatus.CANDIDATE
    assert lesson.id not in view.dead_ids


def test_authorities_revoke_at_exactly_the_threshold_and_not_below(world: World):
    lesson = world.lesson(1)
    policy = authorities(world, 5, 6, 7, threshold=3)
    first = world.revoke(5, lesson.id)
    world.revoke(6, lesson.id)
    world.revoke(6, lesson.id, created=DAY + 6)  # the same authority twice is still one
    below = world.evaluate(policy)
    assert below.revocations.verdicts[first.id].ruling is Ruling.BELOW_THRESHOLD
    assert below.status(lesson.id) is LessonStatus.CANDIDATE

    world.revoke(7, lesson.id)
    at = world.evaluate(policy)
    assert at.revocations.verdicts[first.id].ruling is Ruling.AUTHORITIES
    assert at.status(lesson.id) is LessonStatus.REVOKED
    assert len(at.revoked[lesson.id].revocations) == 4


def test_a_non_authority_adding_its_name_does_not_make_up_the_threshold(world: World):
    lesson = world.lesson(1)
    policy = authorities(world, 5, 6)
    world.revoke(5, lesson.id)
    stranger = world.revoke(9, lesson.id)
    view = world.evaluate(policy)
    assert view.status(lesson.id) is LessonStatus.CANDIDATE
    assert view.revocations.verdicts[stranger.id].ruling is Ruling.UNAUTHORIZED


def test_authorities_can_revoke_a_key(world: World):
    lesson = world.lesson(1)
    policy = authorities(world, 5, 6)
    world.revoke(5, world.pk(1), TargetKind.KEY)
    world.revoke(6, world.pk(1), TargetKind.KEY)
    view = world.evaluate(policy)
    assert view.dead_keys == frozenset({world.pk(1)})
    assert view.revoked[lesson.id].cause is Cause.KEY_REVOKED


def test_a_key_may_revoke_itself_but_not_another(world: World):
    world.revoke(2, world.pk(3), TargetKind.KEY)
    own = world.revoke(2, world.pk(2), TargetKind.KEY)
    view = world.evaluate()
    assert view.revocations.verdicts[own.id].ruling is Ruling.KEY_ITSELF
    assert view.dead_keys == frozenset({world.pk(2)})


def test_a_revocation_cannot_be_revoked(world: World):
    lesson = world.lesson(1)
    revocation = world.revoke(1, lesson.id)
    undo = world.revoke(1, revocation.id)
    view = world.evaluate()
    assert view.revocations.verdicts[undo.id].ruling is Ruling.IRREVOCABLE
    assert view.status(lesson.id) is LessonStatus.REVOKED


def test_a_revocation_that_arrives_before_its_target_applies_once_the_target_is_held(world: World):
    other = World()
    lesson = other.lesson(1)
    world.revoke(1, lesson.id)
    early = world.evaluate()
    assert early.revocations.pending == {lesson.id: frozenset({world.pk(1)})}
    assert early.revocations.refusal(lesson) is Refusal.REVOKED_BY_AUTHOR

    world.records.append(lesson)
    assert world.evaluate().status(lesson.id) is LessonStatus.REVOKED


# --- the cascade -------------------------------------------------------------------------------------


def test_revoking_a_lesson_takes_down_a_chain_of_derived_lessons(world: World):
    root = world.lesson(1)
    middle = world.lesson(2, parents=(root,))
    leaf = world.lesson(3, parents=(middle,))
    bystander = world.lesson(4)
    revocation = world.revoke(1, root.id)
    view = world.evaluate()
    assert {view.status(x.id) for x in (root, middle, leaf)} == {LessonStatus.REVOKED}
    assert view.status(bystander.id) is LessonStatus.CANDIDATE
    assert view.revoked[leaf.id].cause is Cause.PROVENANCE
    assert view.revoked[leaf.id].chain == (root.id, middle.id)
    assert view.revoked[leaf.id].revocations == (revocation.id,)


def test_revoking_one_side_of_a_diamond_takes_down_the_join_but_not_the_other_side(world: World):
    top = world.lesson(1)
    left = world.lesson(2, parents=(top,))
    right = world.lesson(3, parents=(top,))
    bottom = world.lesson(4, parents=(left, right))
    world.revoke(2, left.id)
    one_side = world.evaluate()
    assert one_side.status(bottom.id) is LessonStatus.REVOKED
    assert one_side.status(right.id) is LessonStatus.CANDIDATE
    assert one_side.status(top.id) is LessonStatus.CANDIDATE

    world.revoke(1, top.id)
    whole = world.evaluate()
    assert {whole.status(x.id) for x in (top, left, right, bottom)} == {LessonStatus.REVOKED}
    assert whole.revoked[bottom.id].chain == (left.id,)  # the shortest path from a directly revoked ancestor
    assert whole.revoked[right.id].chain == (top.id,)


def test_a_derived_lesson_arriving_after_its_parent_was_revoked_is_revoked(world: World):
    parent = world.lesson(1)
    world.revoke(1, parent.id)
    before = world.evaluate()
    late = world.lesson(2, parents=(parent,))
    assert before.refuses(late) == Refusal.DEAD_PARENT.value  # intake would refuse it...
    assert world.evaluate().status(late.id) is LessonStatus.REVOKED  # ...and held anyway, it is dead


def test_a_lesson_derived_from_one_refused_at_intake_as_dead_is_dead_in_either_order(world: World):
    # The revocation came first, so the parent was refused on arrival and never held.
    other = World()
    parent = other.lesson(1)
    world.revoke(1, parent.id)
    assert world.evaluate().revocations.refusal(parent) is Refusal.REVOKED_BY_AUTHOR
    child = other.lesson(2, parents=(parent,))
    refused = resolve(world.records, refused=[parent.id])
    assert refused.refusal(child) is Refusal.DEAD_PARENT  # a child arriving later is refused too
    world.records.append(child)  # a child that arrived before its parent was refused...
    after = resolve(world.records, refused=[parent.id])
    assert after.takedowns[child.id].cause is Cause.PROVENANCE  # ...dies with it
    assert after.takedowns[child.id].chain == (parent.id,)
    # Without the refusal, only a revocation naming an id never held is known: the child is taken
    # down as unresolved (not rendered), but not refused for good.
    unresolved = resolve(world.records)
    assert unresolved.takedowns[child.id].cause is Cause.UNRESOLVED and child.id not in unresolved.dead_ids


def test_an_unresolved_lesson_lives_again_when_its_parent_arrives_and_the_revocation_does_not_apply(world: World):
    parent = world.lesson(1)  # held by nobody yet, in this world
    world.records.remove(parent)
    world.revoke(2, parent.id)  # signed by someone else than the parent's author
    child = world.lesson(3, parents=(parent,))
    assert world.evaluate().status(child.id) is LessonStatus.REVOKED
    world.records.append(parent)
    view = world.evaluate()
    assert view.status(child.id) is LessonStatus.CANDIDATE and view.status(parent.id) is LessonStatus.CANDIDATE


def test_a_superseded_lessons_derivatives_survive(world: World):
    old = world.lesson(1)
    new = world.lesson(1, supersedes=old)
    derived = world.lesson(2, parents=(old,))
    view = world.evaluate()
    assert view.status(old.id) is LessonStatus.SUPERSEDED
    assert view.lessons[old.id].superseded_by == new.id
    assert view.status(new.id) is LessonStatus.CANDIDATE
    assert view.status(derived.id) is LessonStatus.CANDIDATE
    assert not view.dead_ids


def test_supersedes_by_another_author_is_ignored(world: World):
    old = world.lesson(1)
    world.lesson(2, supersedes=old)
    assert world.evaluate().status(old.id) is LessonStatus.CANDIDATE


# --- key revocation ----------------------------------------------------------------------------------


def test_a_key_revocation_takes_down_its_lessons_and_refuses_its_later_records(world: World):
    before = world.lesson(1, created=19_990)
    derived = world.lesson(2, parents=(before,))
    vouch = world.vouch(1, 3)
    world.revoke(1, world.pk(1), TargetKind.KEY)
    view = world.evaluate()
    assert view.status(before.id) is LessonStatus.REVOKED
    assert view.revoked[before.id].cause is Cause.KEY_REVOKED
    assert view.revoked[derived.id].cause is Cause.PROVENANCE
    assert vouch.id in view.dead_ids

    later = world.lesson(1)
    assert view.refuses(later) == Refusal.DEAD_KEY.value
    assert view.refuses(world.lesson(4)) is None


def test_revocations_signed_by_a_revoked_key_are_still_admitted(world: World):
    lesson = world.lesson(1)
    world.revoke(1, world.pk(1), TargetKind.KEY)
    view = world.evaluate()
    own_revocation = world.revoke(1, lesson.id)
    assert view.refuses(own_revocation) is None
    revocations = [r.id for r in world.records if isinstance(r.record, Revocation)]
    assert len(revocations) == 2 and not view.dead_ids.intersection(revocations)


def test_verifications_by_revoked_keys_stop_counting_and_the_promotion_resting_on_them_is_undone(world: World):
    world.trust_directly(2, 3, 4)
    lesson = world.lesson(1)
    for verifier in (2, 3, 4):
        world.verify(verifier, lesson)
    assert world.evaluate().status(lesson.id) is LessonStatus.COMMON

    world.revoke(4, world.pk(4), TargetKind.KEY)
    view = world.evaluate()
    assert view.status(lesson.id) is LessonStatus.CANDIDATE
    assert world.reasons_by_key(view, lesson)[4] is Reason.REVOKED_KEY


def test_a_revoked_key_gives_no_trust_through_its_vouches(world: World):
    world.trust_directly(2)
    world.vouch(2, 3)
    lesson = world.lesson(1)
    world.verify(3, lesson)
    assert world.reasons_by_key(world.evaluate(), lesson)[3] is None
    world.revoke(2, world.pk(2), TargetKind.KEY)
    assert world.reasons_by_key(world.evaluate(), lesson)[3] is Reason.UNTRUSTED


def test_verifications_of_a_revoked_lesson_and_revoked_verifications_stop_counting(world: World):
    world.trust_directly(2, 3)
    lesson = world.lesson(1)
    other = world.lesson(5)
    world.verify(2, lesson)
    withdrawn = world.verify(3, other, Outcome.FAILED)
    world.revoke(3, withdrawn.id)
    world.revoke(1, lesson.id)
    view = world.evaluate()
    assert world.reasons_by_key(view, lesson) == {2: Reason.LESSON_REVOKED}
    assert view.verifications[withdrawn.id].reason is Reason.REVOKED_RECORD
    assert view.lessons[lesson.id].confirmations == 0


def test_resolve_alone_gives_the_death_certificates(world: World):
    lesson = world.lesson(1)
    world.revoke(1, lesson.id)
    world.revoke(2, world.pk(2), TargetKind.KEY)
    certificates = resolve(world.records)
    assert certificates.dead_ids == frozenset({lesson.id})
    assert certificates.dead_keys == frozenset({world.pk(2)})
    assert certificates.refuses(lesson) == Refusal.DEAD_ID.value
