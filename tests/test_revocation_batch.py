"""Intake's admission within one incoming batch (commons.node.revocation.Admission).

A batch (an export, a peer's reconciliation) carries revocations before what they revoke, so the
rulings a batch can settle alone apply to the records after them in the same batch: a key that
revoked itself, a record its own author revoked, and a lesson derived from either. Nothing is
stored yet, so the stored certificates (``resolve(())``) say nothing: only the batch rules can refuse.
Records are really signed, from fixed seeds, by tests.test_trust.World.
"""

from __future__ import annotations

import pytest

from commons.core.records import TargetKind
from commons.core.trust import Refusal, resolve
from commons.node.revocation import Admission
from tests.test_trust import World


@pytest.fixture
def world() -> World:
    return World()


def admit_in_order(*batch) -> list[str | None]:
    admit = Admission(resolve(()))
    return [admit(signed) for signed in batch]


def test_a_key_that_revoked_itself_earlier_in_the_batch_has_its_later_records_refused(world: World):
    lesson = world.lesson(1)
    itself = world.revoke(1, world.pk(1), TargetKind.KEY)
    assert admit_in_order(itself, lesson) == [None, Refusal.DEAD_KEY.value]


def test_a_key_revoked_by_another_key_in_the_batch_is_not_settled_by_the_batch(world: World):
    lesson = world.lesson(1)
    by_stranger = world.revoke(2, world.pk(1), TargetKind.KEY)  # needs authorities: not for the batch to rule
    assert admit_in_order(by_stranger, lesson) == [None, None]


def test_a_record_its_author_revoked_earlier_in_the_batch_is_refused(world: World):
    lesson = world.lesson(1)
    other = world.lesson(1)
    revocation = world.revoke(1, lesson.id)
    assert admit_in_order(revocation, lesson, other) == [None, Refusal.REVOKED_BY_AUTHOR.value, None]


def test_a_revocation_in_the_batch_by_someone_other_than_the_author_does_not_refuse(world: World):
    lesson = world.lesson(1)
    revocation = world.revoke(2, lesson.id)
    assert admit_in_order(revocation, lesson) == [None, None]


def test_a_lesson_derived_from_one_the_batch_refused_by_its_author_is_refused(world: World):
    root = world.lesson(1)
    child = world.lesson(2, parents=(root,))
    grandchild = world.lesson(3, parents=(child,))
    sibling = world.lesson(2)
    revocation = world.revoke(1, root.id)
    assert admit_in_order(revocation, root, child, grandchild, sibling) == [
        None, Refusal.REVOKED_BY_AUTHOR.value, Refusal.DEAD_PARENT.value, Refusal.DEAD_PARENT.value, None]


def test_a_lesson_derived_from_one_by_a_self_revoked_key_in_the_batch_is_refused(world: World):
    root = world.lesson(1)
    child = world.lesson(2, parents=(root,))
    itself = world.revoke(1, world.pk(1), TargetKind.KEY)
    assert admit_in_order(itself, root, child) == [None, Refusal.DEAD_KEY.value, Refusal.DEAD_PARENT.value]


def test_a_lesson_derived_from_one_dead_in_the_stored_certificates_is_refused(world: World):
    root = world.lesson(1)
    revocation = world.revoke(1, root.id)
    stored = resolve([root, revocation])
    child = world.lesson(2, parents=(root,))
    assert Admission(stored)(child) == Refusal.DEAD_PARENT.value


def test_revocations_in_a_batch_are_never_refused_even_by_a_key_that_revoked_itself(world: World):
    lesson = world.lesson(1)
    itself = world.revoke(1, world.pk(1), TargetKind.KEY)
    later = world.revoke(1, lesson.id)
    assert admit_in_order(itself, later) == [None, None]
