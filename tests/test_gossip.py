"""The gossip state machines: sessions between two nodes, validation, limits, scoring, ordering."""

from __future__ import annotations

import random

import msgpack
import nacl.signing
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commons.core import records as rec
from commons.core.gossip.node import Accepted, CloseKind, GossipNode, GossipParams, Refused, SessionState, network_hash
from commons.core.gossip.messages import (
    Announce,
    Bye,
    FrameDecoder,
    GossipProtocolError,
    Hello,
    Peers,
    Reconcile,
    ReconcilePhase,
    Records,
    Want,
    decode,
    encode,
    encode_frame,
)
from commons.core.gossip.memnet import PeerPair

NET = b"\x01" * 32
OTHER_NET = b"\x02" * 32
NOW = 1_800_000_000.0
DAY = rec.day_of(NOW)


def signing_key(n: int) -> nacl.signing.SigningKey:
    return nacl.signing.SigningKey(bytes([n]) * 32)


def lesson(i: int, key: nacl.signing.SigningKey | None = None, text: str | None = None) -> rec.SignedRecord:
    key = key or signing_key(7)
    return rec.sign(
        rec.Lesson(
            network=NET,
            author=bytes(key.verify_key),
            created=DAY,
            kind=rec.LessonKind.ERROR,
            text=text or f"pip install fails on Python 3.13 without a wheel, case {i}",
            scope=rec.Scope.SHARED,
            topics=("pip", "python"),
            prediction=rec.Prediction("running pip install", f"build error {i}"),
        ),
        key,
    )


def revocation(target: rec.SignedRecord, key: nacl.signing.SigningKey | None = None) -> rec.SignedRecord:
    key = key or signing_key(7)
    return rec.sign(
        rec.Revocation(
            network=NET,
            author=bytes(key.verify_key),
            created=DAY,
            target=target.id,
            target_kind=rec.TargetKind.RECORD,
            reason="wrong",
        ),
        key,
    )


# These tests drive reconciliation by hand; sync at open is tested on its own below.
HAND_SYNC = GossipParams(sync_on_open=False)


def node(n: int, **kwargs) -> GossipNode:
    kwargs.setdefault("now", NOW)
    kwargs.setdefault("params", HAND_SYNC)
    return GossipNode(kwargs.pop("network", NET), bytes([n]) * 32, random.Random(n), **kwargs)


def records_of(events) -> list[rec.SignedRecord]:
    return [r for e in events if isinstance(e, Accepted) for r in e.records]


def test_announced_record_is_fetched_and_reported_accepted():
    a, b = node(1), node(2)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    first = lesson(0)
    a.add_local(first)
    pair.run(NOW)
    assert b.get(first.key) == first
    assert [r.key for r in records_of(b.events())] == [first.key]
    assert b.statistics().bodies_received == 1


def test_reconciliation_brings_both_sides_what_they_lack():
    a, b = node(1), node(2)
    a.load([lesson(i) for i in range(30)])
    b.load([lesson(i) for i in range(20, 50)])
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    assert pair.a_session.start_sync(NOW)
    pair.run(NOW)
    assert a.keys() == b.keys() and len(a.keys()) == 50
    assert a.statistics().syncs_completed == 1
    assert b.statistics().announced_keys_received == 0


def test_records_are_served_revocations_first():
    a, b = node(1), node(2)
    lessons = [lesson(i) for i in range(100)]
    revoke = revocation(lessons[50])
    a.load([*lessons, revoke])
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.a_session.start_sync(NOW)
    pair.run(NOW)
    accepted = records_of(b.events())
    assert accepted[0] == revoke
    assert len(accepted) == 101


def test_refused_record_is_remembered_and_not_fetched_again():
    a = node(1)
    b = node(2, admit=lambda s: "imperative" if "Always" in s.record.text else None)
    bad = lesson(0, text="Always run pip with sudo.")
    a.add_local(bad)
    a.add_local(lesson(1))
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.a_session.start_sync(NOW)
    pair.run(NOW)
    assert [e.reason for e in b.events() if isinstance(e, Refused)] == ["imperative"]
    assert b.get(bad.key) is None and bad.key in b.keys()
    bodies = b.statistics().bodies_received
    for t in (NOW + 1, NOW + 2):
        pair.b_session.start_sync(t)
        pair.run(t)
        pair.a_session.start_sync(t)
        pair.run(t)
    pair.b_session.receive(encode(Announce((bad.key,))), NOW + 3)
    pair.run(NOW + 3)
    assert b.statistics().bodies_received == bodies == 2
    assert b.statistics().refused == 1


def test_refused_record_is_neither_relayed_nor_served():
    a, c = node(1), node(3)
    b = node(2, admit=lambda s: "no")
    pair_ab, pair_bc = PeerPair(a, b, NOW), PeerPair(b, c, NOW)
    pair_ab.run(NOW)
    pair_bc.run(NOW)
    a.add_local(lesson(0))
    for t in (NOW, NOW + 1):
        pair_ab.run(t)
        pair_bc.run(t)
        pair_bc.b_session.start_sync(t)  # c reconciles with b: the key is withheld, not offered
        pair_bc.run(t)
    assert len(b.keys()) == 1 and b.record_keys() == set()
    assert c.keys() == [] and c.statistics().bodies_received == 0


def test_validly_signed_revocation_is_kept_and_relayed_despite_policy():
    a, c = node(1), node(3)
    b = node(2, admit=lambda s: "refuse everything", is_dead=lambda s: True)
    pair_ab, pair_bc = PeerPair(a, b, NOW), PeerPair(b, c, NOW)
    for pair in (pair_ab, pair_bc):
        pair.run(NOW)
    revoke = revocation(lesson(0))
    a.add_local(revoke)
    for _ in range(3):
        pair_ab.run(NOW)
        pair_bc.run(NOW)
    assert b.get(revoke.key) == revoke
    assert c.get(revoke.key) == revoke


def test_dead_record_is_withheld_not_stored():
    a = node(1)
    doomed = lesson(0)
    b = node(2, is_dead=lambda s: s.id == doomed.id)
    a.add_local(doomed)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.a_session.start_sync(NOW)
    pair.run(NOW)
    assert b.get(doomed.key) is None
    assert [e.reason for e in b.events() if isinstance(e, Refused)] == ["dead"]


def test_duplicate_announcements_fetch_a_body_once():
    a, b, c = node(1), node(2), node(3)
    record = lesson(0)
    a.add_local(record)
    c.add_local(record)
    pair_ab, pair_cb = PeerPair(a, b, NOW), PeerPair(c, b, NOW)
    pair_ab.step(NOW)  # Hellos and Peers
    pair_cb.step(NOW)
    pair_ab.step(NOW)
    pair_cb.step(NOW)
    for _ in range(5):
        pair_ab.step(NOW)
        pair_cb.step(NOW)
    pair_ab.a_session.start_sync(NOW)
    pair_cb.a_session.start_sync(NOW)
    pair_ab.run(NOW)
    pair_cb.run(NOW)
    assert b.get(record.key) == record
    assert b.statistics().bodies_received == 1
    assert b.statistics().duplicate_bodies == 0


def test_badly_signed_records_get_the_peer_cut_off_and_backed_off():
    a, b = node(1), node(2)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    forged = [(lesson(i).body, bytes(64)) for i in range(3)]
    pair.b_session.receive(encode(Records(tuple(forged))), NOW)
    session = pair.b_session
    assert session.closed and session.misbehaved and session.close_kind is CloseKind.PEER_MISBEHAVED
    assert "signature" in session.close_reason
    assert b.statistics().invalid_received == 2  # the second one crossed the threshold
    info = b.peer(a.transport_key)
    assert info.strikes == 1 and info.backoff_until > NOW
    assert b.peers_to_dial(NOW) == []


def test_garbage_frames_close_the_session_with_a_bye():
    a, b = node(1), node(2)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.b_session.receive(b"\xc1\xc1", NOW)
    assert not pair.b_session.closed
    pair.b_session.receive(msgpack.packb([99, 1]), NOW)
    assert pair.b_session.closed and pair.b_session.misbehaved
    frames = b.drain_outboxes()[0][1]
    assert isinstance(decode(frames[-1]), Bye)


def test_message_before_hello_is_misbehaviour():
    b = node(2)
    session = b.open_session(bytes([1]) * 32, False, NOW)
    session.receive(encode(Want((bytes(33),))), NOW)
    assert session.closed and session.misbehaved


def test_wrong_network_hello_closes_without_penalty():
    a, b = node(1, network=OTHER_NET), node(2)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    assert pair.b_session.closed and not pair.b_session.misbehaved
    assert pair.b_session.close_reason == "wrong network"
    assert pair.b_session.close_kind is CloseKind.INCOMPATIBLE
    assert pair.a_session.closed


def test_frames_over_the_limit_are_refused():
    params = GossipParams(max_frame_bytes=4096)
    decoder = FrameDecoder(4096)
    with pytest.raises(GossipProtocolError) as excinfo:
        decoder.feed((5000).to_bytes(4, "big") + b"x" * 10)
    assert excinfo.value.problem == "oversize"
    a, b = node(1), node(2, params=params)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.b_session.receive(encode(Announce(tuple(bytes([2]) + bytes([i]) * 32 for i in range(200)))), NOW)
    assert pair.b_session.closed and pair.b_session.misbehaved


def test_frame_decoder_reassembles_frames_split_anywhere():
    messages = [encode(Hello(1, bytes(32), "tcp:127.0.0.1:8008")), encode(Bye("done")), encode(Want((bytes(33),)))]
    stream = b"".join(encode_frame(m) for m in messages)
    for chunk in (1, 3, 7, len(stream)):
        decoder = FrameDecoder()
        out = []
        for i in range(0, len(stream), chunk):
            out += decoder.feed(stream[i : i + chunk])
        assert out == messages and decoder.buffered == 0


def test_unsolicited_records_are_rate_limited():
    params = GossipParams(records_per_second=10, records_burst=20)
    a, b = node(1), node(2, params=params)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    flood = [lesson(i) for i in range(60)]
    for i in range(0, 60, 10):
        pair.b_session.receive(encode(Records(tuple((r.body, r.signature) for r in flood[i : i + 10]))), NOW)
    assert len(b.record_keys()) <= 20
    assert pair.b_session.closed and pair.b_session.misbehaved


def test_resent_copies_of_a_held_record_are_dropped_without_penalty():
    params = GossipParams(records_per_second=10, records_burst=20)
    a, b = node(1), node(2, params=params)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    record = lesson(0)
    copies = encode(Records(((record.body, record.signature),) * 10))
    for _ in range(50):  # 500 copies, 25 times the bucket: none of them costs anything
        pair.b_session.receive(copies, NOW)
    assert not pair.b_session.closed and pair.b_session.score == 0
    assert b.record_keys() == {record.key}
    assert b.statistics().duplicate_bodies == 499
    fresh = lesson(1)  # the bucket is still full for a record that is new
    pair.b_session.receive(encode(Records(((fresh.body, fresh.signature),))), NOW)
    assert fresh.key in b.record_keys()


def test_an_announcement_flood_is_bounded_by_the_queue_and_released_when_the_session_ends():
    bound = 300
    a, b = node(1), node(2, params=GossipParams(sync_on_open=False, max_queued_wants=bound, records_per_second=1,
                                                 records_burst=1))
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    flood = [bytes([2]) + stand_in_id(i) for i in range(5 * bound)]
    for i in range(0, len(flood), 500):
        pair.b_session.receive(encode(Announce(tuple(flood[i : i + 500]))), NOW)
    assert b.statistics().announced_keys_received == 5 * bound
    assert b.statistics().wanted <= bound + GossipParams().max_outstanding
    pair.b_session.connection_lost(NOW)
    assert b.statistics().wanted == 0 and b.sessions() == []


def stand_in_id(i: int) -> bytes:
    return rec.record_id(i.to_bytes(8, "big"))


def test_a_free_rider_takes_records_but_never_announces_or_serves_them():
    rider, other = node(1, free_rider=True), node(2)
    pair = PeerPair(other, rider, NOW)
    pair.run(NOW)
    gift, own = lesson(0), lesson(1)
    other.add_local(gift)
    pair.run(NOW)
    assert gift.key in rider.record_keys()
    rider.add_local(own)
    pair.run(NOW)
    assert own.key not in other.keyset  # never announced
    pair.b_session.receive(encode(Want((gift.key,))), NOW)
    answer = decode(rider.drain_outboxes()[0][1][-1])
    assert answer == Records((), (gift.key,))


def test_fetching_respects_the_rate_limit():
    params = GossipParams(records_per_second=50, records_burst=100, max_outstanding=64)
    a, b = node(1), node(2, params=params)
    a.load([lesson(i) for i in range(400)])
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    pair.b_session.start_sync(NOW)
    pair.run(NOW)
    assert len(b.record_keys()) <= 100
    t = NOW
    for step in range(1, 9):
        t = NOW + step
        pair.tick(t)
        pair.run(t)
        assert len(b.record_keys()) <= 100 + 50 * step
    assert len(b.record_keys()) == 400
    assert b.next_deadline() is not None


def test_want_timeout_asks_another_peer():
    a, b, c = node(1), node(2), node(3)
    record = lesson(0)
    a.add_local(record)
    c.add_local(record)
    pair_ab, pair_cb = PeerPair(a, b, NOW), PeerPair(c, b, NOW)
    pair_ab.run(NOW)
    pair_cb.run(NOW)
    pair_ab.b_session.receive(encode(Announce((record.key,))), NOW)
    pair_cb.b_session.receive(encode(Announce((record.key,))), NOW)
    b.drain_outboxes()  # the Want to a is lost (a never answers)
    later = NOW + GossipParams().want_timeout + 1
    b.tick(later)
    pair_cb.run(later)
    assert b.get(record.key) == record


def test_simultaneous_dials_keep_one_session():
    a, b = node(1), node(2)
    a_out = a.open_session(b.transport_key, True, NOW)
    b_out = b.open_session(a.transport_key, True, NOW)
    a_in = a.open_session(b.transport_key, False, NOW)
    b_in = b.open_session(a.transport_key, False, NOW)
    # a's key is lower: the connection a dialed survives on both sides.
    assert not a_out.closed and a_in.closed
    assert not b_in.closed and b_out.closed
    assert a.sessions() == [a_out] and b.sessions() == [b_in]


def test_peer_exchange_lists_known_peers_with_addresses():
    a, b = node(1), node(2)
    for n in range(3, 8):
        a.add_peer(bytes([n]) * 32, f"tcp:10.0.0.{n}:8008")
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    learned = {p.transport_key for p in b.known_peers() if p.source == "exchange"}
    assert learned == {bytes([n]) * 32 for n in range(3, 8)}


def test_hello_network_hash_hides_the_network_key():
    assert network_hash(NET) != NET and len(network_hash(NET)) == 32


@pytest.mark.parametrize(
    "message",
    [
        Hello(1, bytes(32), None),
        Hello(1, bytes(32), "tcp:[::1]:8008"),
        Announce((bytes(33), b"\x02" * 33)),
        Want(()),
        Records(((b"body", bytes(64)),), (bytes(33),)),
        Reconcile(ReconcilePhase.RESPONDER, b"\x01"),
        Peers((("tcp:127.0.0.1:1", bytes(32)),)),
        Bye("busy"),
    ],
)
def test_messages_survive_a_round_trip(message):
    assert decode(encode(message)) == message


@pytest.mark.parametrize(
    "raw, problem",
    [
        (b"\xc1", "malformed"),
        (msgpack.packb({"a": 1}), "malformed"),
        (msgpack.packb([42]), "unknown-type"),
        (msgpack.packb([1, [b"short"]]), "bad-field"),
        (msgpack.packb([0, 1, bytes(31), None]), "bad-field"),
        (msgpack.packb([6, "x", "extra"]), "bad-field"),
        (msgpack.packb([4, 3, b"\x01"]), "bad-field"),
        (msgpack.packb([5, [["addr", bytes(31)]]]), "bad-field"),
    ],
)
def test_malformed_messages_are_the_peers_fault(raw, problem):
    with pytest.raises(GossipProtocolError) as excinfo:
        decode(raw)
    assert excinfo.value.problem == problem


def test_session_states_follow_the_lifecycle():
    a, b = node(1), node(2)
    pair = PeerPair(a, b, NOW)
    assert pair.a_session.state is SessionState.HELLO
    pair.run(NOW)
    assert pair.a_session.state is SessionState.OPEN
    pair.a_session.close("shutting down", NOW)
    pair.run(NOW)
    assert pair.b_session.state is SessionState.CLOSED
    assert pair.b_session.close_reason == "peer said bye: shutting down"


def test_missing_hello_times_out():
    b = node(2)
    session = b.open_session(bytes([1]) * 32, False, NOW)
    assert session.next_deadline() == NOW + GossipParams().hello_timeout
    b.tick(NOW + GossipParams().hello_timeout)
    assert session.closed and not session.misbehaved


_VALID_FRAMES = [
    encode(Announce((bytes([2]) + bytes(32),))),
    encode(Want((bytes([0]) + bytes(32),))),
    encode(Records(((lesson(0).body, lesson(0).signature),), (bytes(33),))),
    encode(Reconcile(ReconcilePhase.START, b"\x01")),
    encode(Reconcile(ReconcilePhase.RESPONDER, b"\x01\x00\x01")),
    encode(Peers((("mem:1", bytes(32)),))),
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=64), st.tuples(st.sampled_from(_VALID_FRAMES), st.integers(0, 200),
                                                              st.integers(0, 255))), max_size=8))
def test_no_frame_a_peer_sends_can_raise_out_of_receive(frames):
    a, b = node(1), node(2)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    for item in frames:
        if isinstance(item, tuple):  # a valid frame with one byte changed
            frame, pos, value = item
            frame = bytearray(frame)
            frame[pos % len(frame)] = value
            item = bytes(frame)
        if item:
            pair.b_session.receive(item, NOW)
    b.tick(NOW + 100)
    pair.run(NOW + 100)
    assert b.statistics().frames_in >= 1


def test_withdrawn_records_are_neither_served_nor_fetched_back():
    a, b = node(1), node(2)
    mine = lesson(1)
    a.add_local(mine)
    assert a.withdraw([mine.key]) == 1
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    a.sessions()[0].start_sync(NOW)  # a full reconciliation, not only announcements
    pair.run(NOW)
    assert b.get(mine.key) is None and a.get(mine.key) is None


def test_a_withdrawn_record_added_again_is_announced_again():
    a, b = node(1), node(2)
    mine = lesson(1)
    a.add_local(mine)
    a.withdraw([mine.key])
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    assert a.add_local(mine) == 1
    pair.run(NOW)
    assert b.get(mine.key) == mine


def test_a_removed_peer_is_disconnected_and_not_dialed_again():
    a, b = node(1), node(2)
    a.add_peer(b.transport_key, "127.0.0.1:9", "added")
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    a.remove_peer(b.transport_key, NOW)
    pair.run(NOW)
    assert all(s.closed for s in a.sessions()) and a.sessions() == []
    assert a.peer(b.transport_key) is None
    assert b.transport_key not in [p.transport_key for p in a.peers_to_dial(NOW + 10_000)]


def test_a_dialed_session_reconciles_as_soon_as_it_opens():
    a = node(1, params=GossipParams())
    b = node(2, params=GossipParams())
    b.load([lesson(i) for i in range(5)])
    pair = PeerPair(a, b, NOW)  # a dials b
    pair.run(NOW)  # no anti-entropy round is due yet
    assert len(a.record_keys()) == 5 and a.statistics().syncs_completed == 1


def live_until(pair: PeerPair, start: float, end: float, step: float = 30.0) -> None:
    """Both nodes of a pair run their timers and trade frames (keepalives too) from start to end."""
    now = start
    while now < end:
        now = min(end, now + step)
        pair.a.tick(now)
        pair.b.tick(now)
        pair.run(now)


def test_a_node_with_every_slot_taken_drops_one_dialed_session_each_rotation():
    params = GossipParams(max_peers=1, rotate_interval=600.0)
    a, b = node(1, params=params), node(2, params=params)
    a.add_peer(node(3).transport_key, "127.0.0.1:9", "exchange")  # someone else to meet
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    live_until(pair, NOW, NOW + 599)
    assert not a.sessions()[0].closed
    a.tick(NOW + 600)
    pair.run(NOW + 600)
    assert a.sessions() == [] and "rotation" in pair.a_session.close_reason
    assert node(3).transport_key in [p.transport_key for p in a.peers_to_dial(NOW + 600)]


def test_rotation_leaves_a_node_alone_when_it_knows_nobody_else():
    params = GossipParams(max_peers=1, rotate_interval=600.0)
    a, b = node(1, params=params), node(2, params=params)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    live_until(pair, NOW, NOW + 600)
    assert not a.sessions()[0].closed


def test_a_revocation_is_announced_to_every_open_session_beyond_the_fanout():
    params = GossipParams(fanout=2, sync_on_open=False)
    hub = node(1, params=params)
    spokes = [node(n, params=params) for n in range(2, 7)]
    pairs = [PeerPair(spoke, hub, NOW) for spoke in spokes]  # each spoke dials the hub
    for pair in pairs:
        pair.run(NOW)
    target = lesson(0)
    hub.add_local(target)
    hub.add_local(revocation(target))
    for pair in pairs:
        pair.run(NOW)
    revocation_key = revocation(target).key
    assert sum(s.statistics().announced_keys_received for s in spokes) >= len(spokes)
    assert all(s.get(revocation_key) is not None for s in spokes)
    assert sum(s.get(target.key) is not None for s in spokes) < len(spokes)  # lessons stop at the fanout


def test_a_key_a_peer_will_not_serve_is_fetched_from_another_at_once():
    # The free rider claims the key in reconciliation, then answers "missing".
    me, stingy, generous = node(1), node(2, free_rider=True), node(3)
    wanted = lesson(1)
    stingy.load([wanted])
    generous.load([wanted])
    with_stingy, with_generous = PeerPair(me, stingy, NOW), PeerPair(me, generous, NOW)
    for pair in (with_stingy, with_generous):
        pair.run(NOW)
    with_stingy.a_session.start_sync(NOW)
    for _ in range(5):  # no anti-entropy round is due: only the lost want can start the second sync
        with_stingy.run(NOW)
        with_generous.run(NOW)
    assert me.get(wanted.key) == wanted
    assert me.statistics().syncs_completed == 2


def test_a_session_silent_for_the_idle_timeout_is_closed_without_penalty():
    params = GossipParams(sync_on_open=False, idle_timeout=120.0, keepalive_interval=0)
    a, b = node(1), node(2, params=params)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    assert pair.b_session.next_deadline() <= NOW + 120
    b.tick(NOW + 119)
    assert not pair.b_session.closed
    b.tick(NOW + 120)
    assert pair.b_session.closed and pair.b_session.close_kind is CloseKind.TIMEOUT
    assert not pair.b_session.misbehaved and b.peer(a.transport_key) is None  # nothing kept of it


def test_keepalives_keep_a_quiet_honest_session_open_past_the_idle_timeout():
    params = GossipParams(sync_on_open=False, sync_interval=10_000.0, idle_timeout=120.0, keepalive_interval=40.0)
    a, b = node(1, params=params), node(2, params=params)
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    live_until(pair, NOW, NOW + 1000, step=10.0)
    assert not pair.a_session.closed and not pair.b_session.closed
    assert pair.b_session.active_at == NOW  # keepalives keep it open, but do not count as activity


def idle_inbound(hub: GossipNode, n: int, now: float) -> PeerPair:
    """A peer that dials the hub, says Hello, and says nothing more."""
    pair = PeerPair(node(n, params=HAND_SYNC), hub, now)
    pair.run(now)
    return pair


def test_a_new_peer_takes_the_slot_of_the_longest_idle_inbound_session_when_all_are_full():
    params = GossipParams(sync_on_open=False, max_sessions=4, evict_idle=5.0)
    hub = node(1, params=params)
    squatters = [idle_inbound(hub, 10 + i, NOW + i) for i in range(4)]
    assert len(hub.sessions()) == 4
    early = idle_inbound(hub, 20, NOW + 4.5)  # nobody has been idle for evict_idle yet
    assert early.b_session.close_kind is CloseKind.BUSY
    honest = idle_inbound(hub, 21, NOW + 10)
    assert not honest.b_session.closed
    assert squatters[0].b_session.close_kind is CloseKind.EVICTED  # the one idle the longest
    assert all(not s.b_session.closed for s in squatters[1:])


def test_eviction_spares_a_peer_that_contributed_and_takes_a_low_scored_one_first():
    params = GossipParams(sync_on_open=False, max_sessions=3, evict_idle=5.0)
    hub = node(1, params=params)
    helper, squatter, rude = (idle_inbound(hub, n, NOW) for n in (10, 11, 12))
    gift = lesson(0, signing_key(10))
    helper.a.add_local(gift)
    helper.run(NOW)
    assert gift.key in hub.record_keys() and helper.b_session.contributed
    rude.b_session.penalise(5, "over the rate limit", NOW)
    idle_inbound(hub, 13, NOW + 60)
    assert rude.b_session.close_kind is CloseKind.EVICTED
    idle_inbound(hub, 14, NOW + 61)
    assert squatter.b_session.close_kind is CloseKind.EVICTED and not helper.b_session.closed


def test_a_flood_of_fresh_inbound_keys_leaves_no_trace_in_the_peer_table():
    hub = node(1, params=GossipParams(sync_on_open=False, max_known_peers=10))
    for n in range(10, 60):
        pair = idle_inbound(hub, n, NOW)
        pair.a_session.close("bye", NOW)
        pair.run(NOW)
    assert hub.known_peers() == [] and hub.sessions() == []


def test_a_node_with_a_small_queue_still_fetches_everything_a_reconciliation_names():
    a, b = node(1, params=GossipParams(max_queued_wants=8)), node(2)
    shared = [lesson(i) for i in range(100)]
    a.load(shared)
    # b's 50 more lie among the 100 both hold, so b answers a's fingerprints with IdLists naming
    # them (a fetches them by key) rather than a listing ranges for b to push into.
    b.load(shared + [lesson(i) for i in range(1000, 1050)])
    pair = PeerPair(a, b, NOW)  # a dials and reconciles at once; 42 of the 50 keys wait in the spill
    pair.run(NOW)
    assert len(a.record_keys()) == 150 and a.statistics().syncs_completed == 1  # one reconciliation, not 7


def test_keys_beyond_the_spill_are_named_again_by_another_reconciliation(monkeypatch):
    from commons.core.gossip import session as gossip_session

    monkeypatch.setattr(gossip_session, "SPILL_KEYS", 10)  # 8 queued, 10 spilled, 32 forgotten
    # Version 3 (version 4 pushes the 50 after decoding the difference: nothing is named to forget).
    a, b = node(1, params=GossipParams(max_queued_wants=8, reconcile_v4=False)), node(2)
    shared = [lesson(i) for i in range(100)]
    a.load(shared)
    b.load(shared + [lesson(i) for i in range(1000, 1050)])
    pair = PeerPair(a, b, NOW)
    pair.run(NOW)
    assert len(a.record_keys()) == 150 and a.statistics().syncs_completed >= 3
