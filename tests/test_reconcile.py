"""Range-based set reconciliation: both sides end knowing exactly the difference, cheaply, in order."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commons.core.reconcile import (
    DEFAULT_FRAME_SIZE_LIMIT,
    MIN_FRAME_SIZE_LIMIT,
    PROTOCOL_VERSION,
    TAG_LESSON,
    TAG_REVOCATION,
    KeySet,
    Mode,
    Reconciler,
    ReconcileProtocolError,
    ReconcileUsageError,
    encode_varint,
    fingerprint,
    make_key,
    run_in_memory,
)


def random_keys(rng: random.Random, count: int, tags: tuple[int, ...] = (0, 1, 2, 3)) -> list[bytes]:
    return [make_key(rng.choice(tags), rng.randbytes(32)) for _ in range(count)]


def split_sets(seed: int, common: int, only_a: int, only_b: int) -> tuple[list[bytes], list[bytes], list[bytes]]:
    rng = random.Random(seed)
    keys = random_keys(rng, common + only_a + only_b)
    return keys[:common], keys[common : common + only_a], keys[common + only_a :]


def assert_exact(exchange, only_a: list[bytes], only_b: list[bytes]) -> None:
    a_have, a_need, _ = exchange.learned(initiator=True)
    b_have, b_need, _ = exchange.learned(initiator=False)
    assert a_have == b_need == sorted(only_a)
    assert a_need == b_have == sorted(only_b)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    common=st.integers(0, 3000),
    only_a=st.integers(0, 120),
    only_b=st.integers(0, 120),
    limit=st.sampled_from([MIN_FRAME_SIZE_LIMIT, 4096, DEFAULT_FRAME_SIZE_LIMIT]),
)
def test_both_sides_learn_exactly_the_set_differences(seed, common, only_a, only_b, limit):
    shared, mine, theirs = split_sets(seed, common, only_a, only_b)
    exchange = run_in_memory(
        Reconciler(KeySet(shared + mine), frame_size_limit=limit),
        Reconciler(KeySet(shared + theirs), frame_size_limit=limit),
    )
    assert_exact(exchange, mine, theirs)
    assert all(len(m) <= limit for m in exchange.messages)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    branching=st.integers(2, 16),
    threshold=st.integers(1, 40),
    sizes=st.tuples(st.integers(0, 800), st.integers(0, 300), st.integers(0, 300)),
)
def test_any_branching_and_threshold_reconcile_exactly(seed, branching, threshold, sizes):
    shared, mine, theirs = split_sets(seed, *sizes)
    params = {"branching": branching, "id_list_threshold": threshold, "frame_size_limit": 4096}
    exchange = run_in_memory(Reconciler(KeySet(shared + mine), **params), Reconciler(KeySet(shared + theirs), **params))
    assert_exact(exchange, mine, theirs)
    assert all(len(m) <= 4096 for m in exchange.messages)


def test_two_empty_sets_finish_in_one_round_trip():
    exchange = run_in_memory(Reconciler(KeySet()), Reconciler(KeySet()))
    assert exchange.round_trips == 1
    assert_exact(exchange, [], [])
    assert exchange.initiator_steps[-1].done and exchange.responder_steps[-1].done


@pytest.mark.parametrize("empty_side", ["initiator", "responder"])
def test_one_empty_side_receives_everything_within_the_frame_limit(empty_side):
    _, full, _ = split_sets(7, 0, 3000, 0)
    sets = (KeySet(), KeySet(full)) if empty_side == "initiator" else (KeySet(full), KeySet())
    exchange = run_in_memory(*(Reconciler(s, frame_size_limit=MIN_FRAME_SIZE_LIMIT) for s in sets))
    if empty_side == "initiator":
        assert_exact(exchange, [], full)
    else:
        assert_exact(exchange, full, [])
    assert max(len(m) for m in exchange.messages) <= MIN_FRAME_SIZE_LIMIT
    # Dense differences cost about one key each on the wire.
    assert sum(map(len, exchange.messages)) < 3000 * 40


@pytest.mark.parametrize("size", [5, 20_000])
def test_identical_sets_finish_in_one_round_trip(size):
    shared, _, _ = split_sets(3, size, 0, 0)
    exchange = run_in_memory(Reconciler(KeySet(shared)), Reconciler(KeySet(shared)))
    assert exchange.round_trips == 1
    assert exchange.messages[-1] == bytes([PROTOCOL_VERSION])
    assert_exact(exchange, [], [])


def test_one_difference_in_100000_keys_costs_at_most_3_round_trips_and_4_kilobytes():
    shared, mine, theirs = split_sets(11, 100_000, 1, 0)
    exchange = run_in_memory(Reconciler(KeySet(shared + mine)), Reconciler(KeySet(shared + theirs)))
    assert_exact(exchange, mine, theirs)
    assert exchange.round_trips <= 3
    assert sum(map(len, exchange.messages)) <= 4096


def test_revocations_are_delivered_first_and_every_side_learns_in_key_order():
    rng = random.Random(5)
    shared = random_keys(rng, 20_000)
    lessons_a, lessons_b = random_keys(rng, 40, (TAG_LESSON,)), random_keys(rng, 40, (TAG_LESSON,))
    revocations_b = random_keys(rng, 3, (TAG_REVOCATION,))
    exchange = run_in_memory(
        Reconciler(KeySet(shared + lessons_a)), Reconciler(KeySet(shared + lessons_b + revocations_b))
    )
    for steps in (exchange.initiator_steps, exchange.responder_steps):
        reported = [s for s in steps if s.have or s.need]
        first = reported[0].have + reported[0].need
        assert sorted(revocations_b) == [k for k in sorted(first) if k[0] == TAG_REVOCATION]
        order = [k for s in steps for k in sorted(s.have + s.need)]
        assert order == sorted(order)
    assert_exact(exchange, lessons_a, lessons_b + revocations_b)


def test_withheld_keys_are_known_to_the_peer_but_never_offered_or_fetched():
    shared, mine, theirs = split_sets(13, 500, 30, 30)
    refused = mine[:10]  # held by policy or as death certificates: counted, never sent
    a = KeySet(shared + mine[10:])
    a.update(refused, withheld=True)
    b = KeySet(shared + theirs)
    b.update(refused[:4], withheld=False)  # both know these four: nothing to say about them
    exchange = run_in_memory(Reconciler(a), Reconciler(b))
    a_have, a_need, a_withheld = exchange.learned(initiator=True)
    b_have, b_need, b_withheld = exchange.learned(initiator=False)
    assert a_have == b_need == sorted(mine[10:])
    assert b_withheld == sorted(refused[4:])
    assert a_need == b_have == sorted(theirs) and a_withheld == []


def test_keyset_fingerprints_follow_inserts_and_removals():
    rng = random.Random(17)
    keys = random_keys(rng, 300)
    ks = KeySet(keys[:200])
    for k in keys[200:]:
        ks.add(k)
    for k in keys[:50]:
        ks.discard(k)
    expected = sorted(keys[50:])
    assert list(ks) == expected
    assert ks.fingerprint_between(10, 90) == fingerprint(expected[10:90])
    assert ks.fingerprint_between(0, len(ks)) == fingerprint(expected)


def test_same_id_under_two_tags_does_not_cancel_in_fingerprints():
    rid = bytes(range(32))
    assert fingerprint([make_key(0, rid)]) != fingerprint([make_key(2, rid)])


def _message(*ranges: bytes) -> bytes:
    return bytes([PROTOCOL_VERSION]) + b"".join(ranges)


_KEY = make_key(TAG_LESSON, bytes(32))
MALFORMED = {
    "empty": b"",
    "unknown version": bytes([PROTOCOL_VERSION + 1]),
    "truncated fingerprint": _message(b"\x00" + encode_varint(Mode.FINGERPRINT) + bytes(8)),
    "unknown mode": _message(b"\x00\x09"),
    "bounds not increasing": _message(b"\x03\x02\x05\x00", b"\x02\x02\x00"),
    "range after infinity": _message(b"\x00\x00", b"\x00\x00"),
    "bound longer than a key": _message(encode_varint(35) + bytes(34) + b"\x00"),
    "non-minimal varint": _message(b"\x00\x81\x00"),
    "key list truncated": _message(b"\x00\x02\x02" + _KEY),
    "keys not ascending": _message(b"\x00\x02\x02" + _KEY + _KEY + b"\x00"),
    "key outside its range": _message(b"\x02\x01\x02\x01" + _KEY + b"\x00"),
    "withheld position out of range": _message(b"\x00\x02\x01" + _KEY + b"\x01\x01"),
    "IdList too long": _message(b"\x00\x02" + encode_varint(65)),
    "Diff without an IdList": _message(b"\x00\x03\x00\x00\x00"),
    "too long": _message(bytes(70_000)),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_messages_are_refused_as_the_peers_fault(name):
    with pytest.raises(ReconcileProtocolError):
        Reconciler(KeySet([_KEY])).reconcile(MALFORMED[name])


def test_diff_pointing_past_the_idlist_it_answers_is_refused():
    initiator = Reconciler(KeySet([_KEY]))
    initiator.initiate()  # an IdList of one key over everything
    with pytest.raises(ReconcileProtocolError):
        initiator.reconcile(_message(b"\x00\x03\x00\x00\x01\x01"))


def test_calls_out_of_order_and_bad_keys_are_the_callers_fault():
    a, b = Reconciler(KeySet()), Reconciler(KeySet())
    b.reconcile(a.initiate())
    with pytest.raises(ReconcileUsageError):
        a.initiate()
    with pytest.raises(ReconcileUsageError):
        b.reconcile(bytes([PROTOCOL_VERSION]))  # b sent the final message: the session is over
    with pytest.raises(ReconcileUsageError):
        KeySet([b"short"])
    with pytest.raises(ReconcileUsageError):
        Reconciler(KeySet(), frame_size_limit=100)
