"""Trust kept up to date batch by batch equals the full evaluation (commons.core.trust.incremental).

Random worlds of real signed records (lessons with parents and successors, verifications with
naive and contradicted claims, vouches, revocations of records and keys, future-dated records)
are fed in random batches and random orders; after every batch the incremental view must equal
``evaluate`` over everything added so far.
"""

from __future__ import annotations

import random

import pytest

from commons.core.records import Outcome, Prediction, TargetKind
from commons.core.trust.evaluation import Policy, TrustPolicy, evaluate, web_of_trust
from commons.core.records import Vouch
from commons.core.trust.incremental import EVERY, IncrementalTrust
from commons.core.trust.web import IncrementalWeb
from tests.test_trust import DAY, World


def number(world: World, key: bytes) -> int:
    return next(n for n in world._keys if world.pk(n) == key)


def random_world(rng: random.Random, size: int) -> World:
    world = World()
    lessons, vouches, chain = [], [], []
    for _ in range(size):
        roll = rng.random()
        author = rng.randrange(8)
        if roll < 0.3 or not lessons:
            parents = tuple(rng.sample(lessons, k=min(len(lessons), rng.randrange(3)))) if lessons else ()
            text = rng.choice([None, None, "the same text for everyone.", "a shared observation."])
            supersedes = None
            if lessons and rng.random() < 0.15:
                old = rng.choice(lessons)
                supersedes, author = old, number(world, old.record.author)
            prediction = Prediction("the same situation", "the same outcome") if rng.random() < 0.1 else None
            lessons.append(world.lesson(author, text=text, parents=parents, supersedes=supersedes,
                                        created=DAY + rng.randrange(-2, 4), prediction=prediction))
        elif roll < 0.8:
            received = DAY + rng.randrange(-3, 3)
            world.verify(author, rng.choice(lessons), rng.choice([Outcome.CONFIRMED] * 3 + [Outcome.FAILED]),
                         received=received, observed=received + rng.randrange(0, 4), naive=rng.random() < 0.9)
        elif roll < 0.93:
            if chain and rng.random() < 0.5:  # chains of vouches, reaching past max_depth
                voucher = chain[-1]
            else:
                voucher = rng.choice([0, 0, 1, 2, author])
            subject = rng.choice([k for k in range(1, 10) if k != voucher])
            vouches.append(world.vouch(voucher, subject))
            chain.append(subject)
        else:
            choice = rng.random()
            if choice < 0.2:  # a key revoked: a voucher's, as often as not
                key = rng.choice([number(world, v.record.author) for v in vouches] or [1]) if rng.random() < 0.5 \
                    else rng.randrange(1, 8)
                if key:
                    world.revoke(key, world.pk(key), TargetKind.KEY, created=DAY)
            elif choice < 0.4 and vouches:  # a vouch revoked by its signer: the web shrinks
                vouch = rng.choice(vouches)
                world.revoke(number(world, vouch.record.author), vouch.id, created=DAY)
            else:
                target = rng.choice(world.records)
                signer = number(world, target.record.author)
                world.revoke(rng.choice([signer, signer, 6, 7]), target.id, created=DAY + rng.randrange(-1, 3))
    return world


POLICIES = [
    TrustPolicy(required=2),
    TrustPolicy(required=1, policy=Policy.OPEN, recent_window=3),
    TrustPolicy(required=2, policy=Policy.ALLOWLIST),
    TrustPolicy(required=2, max_depth=3, max_per_voucher=1),
    TrustPolicy(required=1, max_depth=4, max_per_voucher=1),
    TrustPolicy(required=1, max_depth=1),
]


@pytest.mark.parametrize("seed", range(36))
def test_incremental_evaluation_equals_the_full_one_after_every_random_batch(seed: int):
    rng = random.Random(seed)
    world = random_world(rng, rng.randrange(20, 90))
    policy = POLICIES[seed % len(POLICIES)]
    if seed % 3 == 0:  # revocation authorities: rulings by threshold
        policy = TrustPolicy(required=policy.required, policy=policy.policy,
                             revocation_authorities=frozenset({world.pk(6), world.pk(7)}), revocation_threshold=1)
    records = list(world.records)
    if seed % 2:  # arrival order need not be creation order
        rng.shuffle(records)
    today = DAY + 1
    me = world.pk(0)
    trust = IncrementalTrust(me=me, policy=policy, today=today)
    added = []
    while records:
        batch = records[:rng.randrange(1, 8)]
        records = records[len(batch):]
        added += batch
        trust.add(batch)
        assert trust.view == evaluate(added, me=me, policy=policy, today=today)
    assert trust.on_day(today + 5) is EVERY
    assert trust.view == evaluate(added, me=me, policy=policy, today=today + 5)


@pytest.mark.parametrize("seed", range(12))
def test_batches_taken_in_unjudged_leave_the_view_as_it_was_until_judged_then_equal_the_full_evaluation(seed: int):
    rng = random.Random(100 + seed)
    world = random_world(rng, rng.randrange(20, 90))
    policy = POLICIES[seed % len(POLICIES)]
    records = list(world.records)
    rng.shuffle(records)
    today, me = DAY + 1, world.pk(0)
    trust = IncrementalTrust(me=me, policy=policy, today=today)
    added = []
    while records:
        batch = records[:rng.randrange(1, 12)]
        records = records[len(batch):]
        added += batch
        if rng.random() < 0.7:
            before = dict(trust.view.lessons)
            if trust.add(batch, judge=False) is EVERY:  # it moved the dead: judged whole at once
                assert not trust.pending and trust.view == evaluate(added, me=me, policy=policy, today=today)
            else:
                assert dict(trust.view.lessons) == before
        else:
            trust.add(batch)  # a judging batch judges what waited too
            assert not trust.pending and trust.view == evaluate(added, me=me, policy=policy, today=today)
    trust.judge_pending()
    assert not trust.pending and trust.view == evaluate(added, me=me, policy=policy, today=today)


def test_a_verification_taken_in_unjudged_is_judged_with_the_next_batch():
    world = World()
    lessons = [world.lesson(n % 5 + 1) for n in range(20)]
    trust = IncrementalTrust(me=world.pk(0), policy=TrustPolicy(), today=DAY + 2)
    trust.add(world.records)
    before = trust.view.lessons[lessons[7].id]
    trust.add([world.verify(3, lessons[7])], judge=False)
    assert trust.pending and trust.view.lessons[lessons[7].id] == before
    assert trust.add([world.verify(4, lessons[2])]) == {lessons[7].id, lessons[2].id}
    assert not trust.pending and trust.view.lessons[lessons[7].id] != before


def test_a_verification_recomputes_only_the_lesson_it_verifies():
    world = World()
    lessons = [world.lesson(n % 5 + 1) for n in range(50)]
    trust = IncrementalTrust(me=world.pk(0), policy=TrustPolicy(), today=DAY + 2)
    trust.add(world.records)
    assert trust.add([world.verify(3, lessons[7])]) == {lessons[7].id}


def test_a_vouch_from_a_key_the_web_does_not_reach_recomputes_nothing():
    world = World()
    lessons = [world.lesson(n % 5 + 1) for n in range(20)]
    trust = IncrementalTrust(me=world.pk(0), policy=TrustPolicy(), today=DAY + 2)
    trust.add(world.records)
    assert trust.add([world.vouch(4, 5)]) == set()
    touched = trust.add([world.vouch(0, 4)])  # the node's own vouch: every lesson 4 or 5 verified may count anew
    assert touched == set()  # nobody has verified anything yet: no verdict can move
    assert trust.view == evaluate(world.records, me=world.pk(0), policy=TrustPolicy(), today=DAY + 2)


def test_a_vouch_recomputes_only_the_lessons_verified_by_the_keys_it_brings_into_the_web():
    world = World()
    lessons = [world.lesson(n % 3 + 1) for n in range(30)]
    by_four = {world.verify(4, lessons[n]).record.lesson for n in (0, 3, 6)}
    by_five = {world.verify(5, lessons[n]).record.lesson for n in (1, 4)}
    world.verify(6, lessons[2])  # its verdict stays: key 6 stays out of reach
    world.vouch(4, 5)
    world.vouch(5, 6)  # three hops from the node: beyond max_depth 2
    trust = IncrementalTrust(me=world.pk(0), policy=TrustPolicy(), today=DAY + 2)
    trust.add(world.records)
    assert trust.add([world.vouch(0, 4)]) == by_four | by_five
    assert trust.view.web.depth == {world.pk(4): 1, world.pk(5): 2}
    assert trust.view == evaluate(world.records, me=world.pk(0), policy=TrustPolicy(), today=DAY + 2)


def test_a_revocation_re_evaluates_everything_from_memory():
    world = World()
    lesson = world.lesson(1)
    trust = IncrementalTrust(me=world.pk(0), policy=TrustPolicy(), today=DAY + 9)
    trust.add(world.records)
    assert trust.add([world.revoke(1, lesson.id)]) is EVERY
    assert trust.view.status(lesson.id).value == "revoked"


def test_a_similar_lesson_by_the_verifier_arriving_late_contradicts_its_earlier_claim_of_naivety():
    world = World()
    policy = TrustPolicy(required=1, policy=Policy.OPEN)
    lesson = world.lesson(1, text="the proxy drops the index url.", created=DAY)
    verification = world.verify(2, lesson, received=DAY + 1, observed=DAY + 1)
    trust = IncrementalTrust(me=world.pk(0), policy=policy, today=DAY + 2)
    trust.add(world.records)
    assert trust.view.status(lesson.id).value == "common"
    own_first = world.lesson(2, text="The proxy drops the index URL", created=DAY - 1)
    assert trust.add([own_first]) is not EVERY
    assert trust.view.verifications[verification.id].reason.name == "CONTRADICTED_NAIVETY"
    assert trust.view == evaluate(world.records, me=world.pk(0), policy=policy, today=DAY + 2)


@pytest.mark.parametrize("seed", range(40))
def test_the_web_grown_one_vouch_at_a_time_equals_the_web_made_from_every_vouch(seed: int):
    rng = random.Random(seed)
    keys = [bytes([n]) * 32 for n in range(rng.randrange(4, 30))]
    roots = frozenset(rng.sample(keys, k=rng.randrange(0, 4)))
    depth = rng.randrange(0, 5)
    web, edges = IncrementalWeb(roots, depth), []
    for _ in range(rng.randrange(1, 120)):
        voucher, subject = rng.sample(keys, k=2)
        before = web_of_trust(edges, roots, depth)
        moved = web.add_edge(voucher, subject)
        edges.append(Vouch(network=bytes(32), author=voucher, created=DAY, subject=subject))
        after = web_of_trust(edges, roots, depth)
        assert web.web == after
        assert moved == {k for k in after.depth if (after.depth[k], after.anchors[k])
                         != (before.depth.get(k), before.anchors.get(k))}
