"""Range-based set reconciliation: both sides end knowing exactly the difference, cheaply, in (day, key) order."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commons.core.reconcile.reconciler import (
    DEFAULT_FRAME_SIZE_LIMIT,
    Expectation,
    MIN_FRAME_SIZE_LIMIT,
    PROTOCOL_VERSION,
    PushWindow,
    TAG_LESSON,
    TAG_REVOCATION,
    KeySet,
    Mode,
    Reconciler,
    ReconcileProtocolError,
    ReconcileUsageError,
    ReconcileVersionError,
    encode_varint,
    fingerprint,
    make_item,
    make_key,
    run_in_memory,
)
from commons.core.reconcile.wire import LISTS, decode_message


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
    push=st.tuples(st.booleans(), st.booleans()),
)
def test_both_sides_learn_exactly_the_set_differences(seed, common, only_a, only_b, limit, push):
    shared, mine, theirs = split_sets(seed, common, only_a, only_b)
    exchange = run_in_memory(
        Reconciler(KeySet(shared + mine), frame_size_limit=limit, ask_push=push[0]),
        Reconciler(KeySet(shared + theirs), frame_size_limit=limit, ask_push=push[1]),
    )
    assert_exact(exchange, mine, theirs)
    assert all(len(m) <= limit for m in exchange.messages)
    assert exchange.unexpected == ([], [])
    for side in (0, 1):  # only a side that asked is pushed anything
        assert push[side] or exchange.received[side] == []


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


def dated(rng: random.Random, keys: list[bytes], days: range) -> list[tuple[bytes, int]]:
    return [(k, rng.choice(days)) for k in keys]


def test_every_side_learns_in_day_then_key_order_with_a_days_revocations_first():
    rng = random.Random(5)
    days = range(20_000, 20_030)
    shared = dated(rng, random_keys(rng, 20_000), days)
    lessons_a = dated(rng, random_keys(rng, 40, (TAG_LESSON,)), days)
    lessons_b = dated(rng, random_keys(rng, 40, (TAG_LESSON,)), days)
    revocations_b = [(k, days[-1]) for k in random_keys(rng, 3, (TAG_REVOCATION,))]
    exchange = run_in_memory(
        Reconciler(KeySet(shared + lessons_a)), Reconciler(KeySet(shared + lessons_b + revocations_b))
    )
    day = dict(shared + lessons_a + lessons_b + revocations_b)
    for steps in (exchange.initiator_steps, exchange.responder_steps):
        order = [(day[k], k) for s in steps for k in sorted(s.have + s.need, key=lambda k: (day[k], k))]
        assert order == sorted(order)
        last_day = [k for _, k in order if day[k] == days[-1]]
        assert last_day[:3] == sorted(k for k, _ in revocations_b)  # tag 0 sorts first within a day
    a_have, a_need, _ = exchange.learned(initiator=True)
    assert sorted(a_have) == sorted(k for k, _ in lessons_a)
    assert sorted(a_need) == sorted(k for k, _ in lessons_b + revocations_b)


def test_missing_the_newest_records_costs_in_proportion_to_how_many():
    rng = random.Random(23)
    items = sorted(dated(rng, random_keys(rng, 50_000), range(20_000, 20_365)), key=lambda e: (e[1], e[0]))
    for missing in (10, 1000):
        exchange = run_in_memory(Reconciler(KeySet(items[:-missing])), Reconciler(KeySet(items)))
        _, need, _ = exchange.learned(initiator=True)
        assert sorted(need) == sorted(k for k, _ in items[-missing:])
        assert exchange.round_trips <= 3
        # one listed item (34 bytes: the day as a gap, then the key) per record, plus one fingerprint
        # path down to the newest day
        assert sum(map(len, exchange.messages)) <= 40 * missing + 2500


def in_item_order(entries: list[tuple[bytes, int]]) -> list[bytes]:
    return [k for k, _ in sorted(entries, key=lambda e: (e[1], e[0]))]


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32),
    common=st.integers(0, 3000),
    only_a=st.integers(0, 300),
    only_b=st.integers(0, 300),
    newer=st.booleans(),
    refused=st.integers(0, 20),
    limit=st.sampled_from([MIN_FRAME_SIZE_LIMIT, 4096, DEFAULT_FRAME_SIZE_LIMIT]),
)
def test_sets_over_many_days_and_healed_partitions_reconcile_exactly_in_item_order(
    seed, common, only_a, only_b, newer, refused, limit
):
    rng = random.Random(seed)
    history = range(20_000, 20_060)
    made_apart = range(20_060, 20_062) if newer else history  # a healed partition, or scattered
    shared = dated(rng, random_keys(rng, common), history)
    mine, theirs = dated(rng, random_keys(rng, only_a), made_apart), dated(rng, random_keys(rng, only_b), made_apart)
    withheld = dated(rng, random_keys(rng, refused), history)
    a = KeySet(shared + mine)
    a.update(withheld, withheld=True)
    exchange = run_in_memory(
        Reconciler(a, frame_size_limit=limit), Reconciler(KeySet(shared + theirs), frame_size_limit=limit)
    )
    a_have, a_need, a_withheld = exchange.learned(initiator=True)
    b_have, b_need, b_withheld = exchange.learned(initiator=False)
    assert a_have == b_need == in_item_order(mine)
    assert a_need == b_have == in_item_order(theirs)
    assert b_withheld == in_item_order(withheld) and a_withheld == []
    assert all(len(m) <= limit for m in exchange.messages)


def test_a_healed_partition_costs_one_listed_item_per_record_in_three_round_trips():
    rng = random.Random(37)
    shared = dated(rng, random_keys(rng, 50_000), range(20_000, 20_365))
    mine = dated(rng, random_keys(rng, 250), range(20_365, 20_367))
    theirs = dated(rng, random_keys(rng, 250), range(20_365, 20_367))
    exchange = run_in_memory(Reconciler(KeySet(shared + mine)), Reconciler(KeySet(shared + theirs)))
    assert exchange.learned(initiator=True)[:2] == (in_item_order(mine), in_item_order(theirs))
    assert exchange.round_trips <= 3
    # 34 bytes a record (its day as a gap from the one before, then the key), plus a fingerprint
    # path down to the newest days and the few shared items of the lowest listed bucket
    assert sum(map(len, exchange.messages)) <= 34 * 500 + 2000
    # The buckets that all differ go as a few long lists (up to 64 items), not one list a bucket.
    lists = [r for m in exchange.messages for r in decode_message(m) if r.mode in LISTS]
    assert sum(len(r.items) for r in lists) / len(lists) > 32


def test_a_lone_difference_is_listed_with_the_short_threshold():
    # Only a range whose neighbours differ too is listed long (up to 64 items). 301 keys split
    # into 6 buckets of 50: the one that differs is split again (5 buckets of 10), not listed
    # whole, so the difference costs a list of at most the id-list threshold (16).
    rng = random.Random(41)
    shared = dated(rng, random_keys(rng, 300), range(20_000, 20_365))
    mine = dated(rng, random_keys(rng, 1), range(20_000, 20_365))
    exchange = run_in_memory(Reconciler(KeySet(shared + mine)), Reconciler(KeySet(shared)))
    assert exchange.learned(initiator=True)[0] == in_item_order(mine)
    lists = [r for m in exchange.messages for r in decode_message(m) if r.mode in LISTS]
    assert lists and max(len(r.items) for r in lists) <= 16


def test_much_to_send_goes_in_frames_up_to_64_kib():
    shared, mine, theirs = split_sets(29, 20_000, 3_000, 3_000)
    exchange = run_in_memory(Reconciler(KeySet(shared + mine)), Reconciler(KeySet(shared + theirs)))
    assert max(map(len, exchange.messages)) > 60_000
    assert all(len(m) <= DEFAULT_FRAME_SIZE_LIMIT == 65536 for m in exchange.messages)
    assert_exact(exchange, mine, theirs)


@pytest.mark.parametrize("empty_side", ["initiator", "responder"])
def test_a_side_holding_nothing_is_pushed_everything_after_one_short_answer(empty_side):
    keys = random_keys(random.Random(37), 10_000)
    sets = (KeySet(), KeySet(keys)) if empty_side == "initiator" else (KeySet(keys), KeySet())
    exchange = run_in_memory(Reconciler(sets[0]), Reconciler(sets[1]))
    pusher = 1 if empty_side == "initiator" else 0
    # The full side names no key: it announces a count per range and pushes the records.
    assert exchange.round_trips <= 1.5 and sum(map(len, exchange.messages)) < 1_000
    assert sorted(exchange.pushed[pusher]) == exchange.received[1 - pusher] == sorted(make_item(0, k) for k in keys)
    assert exchange.unexpected == ([], [])
    assert exchange.learned(initiator=pusher == 1)[1] == sorted(keys)


def test_a_key_added_again_at_another_day_moves_there():
    rng = random.Random(31)
    keys = random_keys(rng, 50)
    ks = KeySet((k, 20_000) for k in keys)
    ks.add(keys[0], time=20_100)
    assert list(ks)[-1] == keys[0] and ks.time_of(keys[0]) == 20_100 and len(ks) == 50
    expected = sorted([make_item(20_000, k) for k in keys[1:]] + [make_item(20_100, keys[0])])
    assert ks.fingerprint_between(0, 50) == fingerprint(expected)


@pytest.mark.parametrize("old", [1, 2])
def test_a_peer_of_an_older_protocol_version_is_refused_naming_both_versions(old):
    with pytest.raises(ReconcileVersionError, match=f"version {old}, this node speaks only {PROTOCOL_VERSION}: the peer"):
        Reconciler(KeySet()).reconcile(bytes([old]) + b"\x00\x01" + bytes(16))


@pytest.mark.parametrize("ask_push", [True, False])
def test_withheld_keys_are_known_to_the_peer_but_never_offered_or_fetched(ask_push):
    shared, mine, theirs = split_sets(13, 500, 30, 30)
    refused = mine[:10]  # held by policy or as death certificates: counted, never sent
    a = KeySet(shared + mine[10:])
    a.update(refused, withheld=True)
    b = KeySet(shared + theirs)
    b.update(refused[:4], withheld=False)  # both know these four: nothing to say about them
    exchange = run_in_memory(Reconciler(a, ask_push=ask_push), Reconciler(b, ask_push=ask_push))
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
    items = [make_item(0, k) for k in expected]  # no day given: day 0
    assert ks.fingerprint_between(10, 90) == fingerprint(items[10:90])
    assert ks.fingerprint_between(0, len(ks)) == fingerprint(items)


def test_same_id_under_two_tags_does_not_cancel_in_fingerprints():
    rid = bytes(range(32))
    assert fingerprint([make_item(7, make_key(0, rid))]) != fingerprint([make_item(7, make_key(2, rid))])


def _message(*ranges: bytes) -> bytes:
    return bytes([PROTOCOL_VERSION]) + b"".join(ranges)


_KEY = make_key(TAG_LESSON, bytes(32))
_ITEM = encode_varint(20_000) + _KEY  # the item at day 20,000, listed from the empty bound
MALFORMED = {
    "empty": b"",
    "unknown version": bytes([PROTOCOL_VERSION + 1]),
    "truncated fingerprint": _message(b"\x00" + encode_varint(Mode.FINGERPRINT) + bytes(8)),
    "unknown mode": _message(b"\x00\x09"),
    "bounds not increasing": _message(b"\x01\x02\x02\x05\x00", b"\x01\x01\x02\x00"),
    "bound sharing more than its lower bound has": _message(b"\x02\x01\x05\x00"),
    "range after infinity": _message(b"\x00\x00", b"\x00\x00"),
    "bound longer than an item": _message(b"\x01" + encode_varint(38) + bytes(38) + b"\x00"),
    "non-minimal varint": _message(b"\x00\x81\x00"),
    "item list truncated": _message(b"\x00\x02\x02" + _ITEM),
    "items not ascending": _message(b"\x00\x02\x02" + _ITEM + b"\x00" + _KEY + b"\x00"),
    "item day beyond the largest": _message(b"\x00\x02\x01" + encode_varint(1 << 32) + _KEY + b"\x00"),
    "item outside its range": _message(b"\x01\x02\x00\x00\x02\x01" + _ITEM + b"\x00"),
    "withheld position out of range": _message(b"\x00\x02\x01" + _ITEM + b"\x01\x01"),
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


def test_a_pushed_record_is_taken_only_inside_an_announced_range_and_within_its_count():
    window = PushWindow(cap=100)
    window.add([Expectation((20_000).to_bytes(4, "big"), (20_001).to_bytes(4, "big"), 2)])  # all of day 20,000
    inside = [make_item(20_000, make_key(TAG_LESSON, bytes([i]) * 32)) for i in range(3)]
    assert not window.admit(make_item(19_999, make_key(TAG_LESSON, bytes(32))))  # below the range
    assert not window.admit(make_item(20_001, make_key(TAG_LESSON, bytes(32))))  # at its upper bound
    assert window.admit(inside[0]) and window.admit(inside[1])
    assert not window.admit(inside[2])  # beyond the count: unrequested, as if nothing was announced
    assert window.expected == 0


def test_a_peer_announcing_more_pushes_than_the_cap_is_expected_only_up_to_the_cap():
    window = PushWindow(cap=5)
    window.add([Expectation(b"", None, 1 << 34), Expectation(b"\x01", None, 3)])
    items = [make_item(20_000, key) for key in random_keys(random.Random(41), 8)]
    assert [window.admit(i) for i in items] == [True] * 5 + [False] * 3


def test_a_forged_push_into_a_peers_announced_range_is_unexpected_in_memory():
    shared, mine, theirs = split_sets(43, 2_000, 0, 40)
    responder = Reconciler(KeySet(shared + theirs))
    exchange = run_in_memory(Reconciler(KeySet(shared)), responder)
    assert exchange.unexpected == ([], []) and sorted(exchange.received[0]) == sorted(make_item(0, k) for k in theirs)
    announced = sum(e.count for s in exchange.initiator_steps for e in s.expect)
    assert announced == len(theirs)  # every announced place was used: one more record has none
    window = PushWindow(cap=10_000)
    for step in exchange.initiator_steps:
        window.add(step.expect)
    for item in exchange.received[0]:
        assert window.admit(item)
    assert not window.admit(exchange.received[0][0])  # the same place twice: refused
